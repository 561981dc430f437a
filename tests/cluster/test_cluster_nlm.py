"""NFSv3 locking in a cluster `pando-cluster up` started, inside a pod: the
rpc.statd it runs beside Ganesha (state in DIR/mds/statd) monitors the
hosts that lock; a Ganesha that died is started again with a fresh statd,
and sm-notify tells the hosts of the last instance to reclaim; `down`
stops both.  Slow: production's grace period (45 s, never shortened while
NLM is on) passes before the first lock."""
from __future__ import annotations

import json
import os
import signal
import socket
import sys
import time
from pathlib import Path
from typing import Iterator

import pytest
from pando_testing.logs import keep_logs
from pando_testing.nfs3_setup import Nfs3Setup, mount_root
from pando_cluster.ganesha_conf import GRACE_PERIOD_S
from pando_testing.nlm import (
    NLM4_DENIED_GRACE_PERIOD,
    NLM4_GRANTED,
    NLM4_VERS,
    NLM_PROG,
    SM_PROG,
    SM_VERS,
    NlmHost,
    getport,
)
from pando_testing.pod import Pod

HOST = "127.0.0.1"
CLIENT = "127.0.0.2"   # the NLM host: the pod's other loopback address


@pytest.fixture
def cdir(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Path]:
    d = tmp_path / "cluster"
    yield d
    keep_logs(request, [d / "mds" / n for n in ("ganesha.log", "statd.out", "sm-notify.out")])


def _cli(pod: Pod, cdir: Path, *args: str) -> str:
    cp = pod.run([sys.executable, "-m", "pando_cluster.cli", *args], check=False, timeout=120,
                 env={**os.environ, "PANDO_CLUSTER_DIR": str(cdir)})
    assert cp.returncode == 0, cp.stdout + cp.stderr
    return cp.stdout


def _state(cdir: Path) -> dict:
    return json.loads((cdir / "cluster.json").read_text())


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[0] != "Z"
    except OSError:
        return False


def _lock(pod: Pod, name: str) -> NlmHost:
    """A file `name` in /pando, locked W 0:100 by an NLM host at CLIENT;
    the host (its connection) is returned, still holding the lock."""
    s = pod.connect(HOST, 20048)    # once: `up` returns when the export answers
    root = mount_root(s, "/pando")
    s.close()
    setup = Nfs3Setup.over(pod.connect(HOST, 2049))
    fh = setup.create(root, name)
    setup.close()
    s = pod.connect(HOST, 111)
    nlm_port, statd_port = getport(s, NLM_PROG, NLM4_VERS), getport(s, SM_PROG, SM_VERS)
    s.close()
    assert nlm_port and statd_port, (nlm_port, statd_port)

    def dial() -> socket.socket:
        c = socket.socket()
        c.bind((CLIENT, 0))
        c.connect((HOST, nlm_port))
        return c
    host = NlmHost(pod.call_inside(dial), "nlm-host")
    # With NLM on, Ganesha 4.3 keeps every grace period for its whole
    # length (45 s), even after a first start: no client may lock before.
    deadline = time.monotonic() + GRACE_PERIOD_S + 15
    while (status := host.lock(fh, 0, 100)) == NLM4_DENIED_GRACE_PERIOD:
        assert time.monotonic() < deadline, "still in the grace period"
        time.sleep(1)
    assert status == NLM4_GRANTED, status
    return host


def _entries(d: Path) -> list[str]:
    return sorted(p.name for p in d.iterdir())


@pytest.mark.slow
def test_statd_monitors_lockers_and_restarts_with_ganesha(pod: Pod, cdir: Path) -> None:
    statd_dir = cdir / "mds" / "statd"
    try:
        out = _cli(pod, cdir, "up", "--osds", "3")
        assert "rpc.statd: started pid" in out, out
        assert "mount -t nfs -o vers=3,port=2049,mountport=20048 127.0.0.1:/pando" in out, out
        st = _state(cdir)
        statd_pid, mds_pid = st["statd"]["pid"], st["mds"]["pid"]
        assert st["statd"]["address"] == str(statd_dir)
        host = _lock(pod, "f")
        assert _entries(statd_dir / "sm") == [CLIENT]
        assert "rpc.statd" in _cli(pod, cdir, "status")

        # Ganesha dies holding the lock; `up` starts it again, with a fresh
        # statd whose notify list is the host that locked.
        host.close()
        os.kill(mds_pid, signal.SIGKILL)
        out = _cli(pod, cdir, "up", "--osds", "3")
        st = _state(cdir)
        assert not _alive(statd_pid) and st["statd"]["pid"] != statd_pid, out
        assert "sm-notify: pid" in out, out
        # (Here the host's statd is the pod's own: it answers for 127.0.0.2.)
        notified = f"Host {CLIENT} notified successfully"
        deadline = time.monotonic() + 20
        while notified not in (cdir / "mds" / "sm-notify.out").read_text():
            assert time.monotonic() < deadline, (cdir / "mds" / "sm-notify.out").read_text()
            time.sleep(0.2)
        assert _entries(statd_dir / "sm.bak") == []
    finally:
        out = _cli(pod, cdir, "down")
    pids = [d["pid"] for d in (st["statd"], st["mds"], st["dbus"], st["rpcbind"])]
    assert not any(_alive(p) for p in pids), out
    assert "rpc.statd" in out and "stopped" in out, out

