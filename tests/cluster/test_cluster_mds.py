"""`pando-cluster up` with the metadata manager, inside a pod: Ganesha with
the Pando FSAL serves /pando over NFSv3 on 127.0.0.1:2049, answers
`ganesha_mgr` on the bus `up` printed, rpc.statd runs beside it for NFSv3
locks (test_cluster_nlm.py), and `down` stops every process by pid.
A broken FSAL makes `up` fail with Ganesha's log and leave nothing running."""
from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from pando_testing.logs import keep_logs
from pando_testing.mgr import MgrApi
from pando_testing.nfs3 import FILE_SYNC, NFS3_OK, Nfs3Client
from pando_testing.nfs3_setup import Nfs3Setup, mount_root
from pando_testing.pod import Pod, build_dir

HOST = "127.0.0.1"
NFS_PORT = 2049
MNT_PORT = 20048


@pytest.fixture
def cdir(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Path]:
    """The cluster directory; its daemons' logs are kept when the test fails."""
    d = tmp_path / "cluster"
    yield d
    keep_logs(request, [d / "mds" / "ganesha.log", *sorted(d.glob("osd.*.log"))])


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "pando_cluster.cli", *args]


def _env(cdir: Path, **extra: str) -> dict[str, str]:
    return {**os.environ, "PANDO_CLUSTER_DIR": str(cdir), **extra}


def _pids(cdir: Path) -> dict[str, int]:
    """Every pid the state file records, by process name."""
    st = json.loads((cdir / "cluster.json").read_text())
    pids = {f"osd.{o['osd_id']}": o["pid"] for o in st["osds"]}
    for name in ("mds", "dbus", "rpcbind", "statd", "etcd", "mgr"):
        if st.get(name):
            pids[name] = st[name]["pid"]
    return {k: v for k, v in pids.items() if v}


def _running(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"


def _mount_root(pod: Pod) -> bytes:
    """MNT /pando, once: `up` returns when the export answers, so a user's
    first mount after it works."""
    sock = pod.connect(HOST, MNT_PORT)
    try:
        return mount_root(sock, "/pando")
    finally:
        sock.close()


def _nfs3_roundtrip(pod: Pod) -> None:
    root = _mount_root(pod)
    setup = Nfs3Setup.over(pod.connect(HOST, NFS_PORT))
    nfs = Nfs3Client(setup.rpc)
    try:
        # one file kept inline in the namespace store, one beyond Inline_Max
        for name, data in (("small", b"pando via ganesha\n"),
                           ("large", os.urandom(200_000))):
            fh = setup.create(root, name)
            w = nfs.write(fh, 0, data, stable=FILE_SYNC)
            assert w.status == NFS3_OK and w.count == len(data), w
            assert setup.lookup(root, name) == fh
            assert setup.getattr_size(fh) == len(data)
            assert nfs.read_all(fh, 0, len(data) + 1) == data
    finally:
        setup.close()


def test_up_serves_nfs_through_ganesha_and_down_stops_all(pod: Pod, cdir: Path) -> None:
    pids: dict[str, int] = {}
    try:
        up = pod.run(_cli("up", "--osds", "3"), env=_env(cdir), check=False, timeout=120)
        assert up.returncode == 0, up.stdout + up.stderr
        pids = _pids(cdir)
        assert sorted(pids) == ["dbus", "etcd", "mds", "mgr", "osd.1", "osd.2", "osd.3",
                                "rpcbind", "statd"], pids
        assert "Dashboard: http://127.0.0.1:7480/" in up.stdout, up.stdout
        assert "mount -t nfs -o vers=4.2,port=2049 127.0.0.1:/pando /mnt/pando" in up.stdout
        assert ("mount -t nfs -o vers=3,port=2049,mountport=20048 "
                "127.0.0.1:/pando /mnt/pando") in up.stdout
        bus = re.search(r"export DBUS_SYSTEM_BUS_ADDRESS=(\S+)", up.stdout)
        assert bus, up.stdout
        desc = (cdir / "cluster.conf").read_text()
        assert "osd 2 ctl=127.0.0.1:20592 nfs=127.0.0.1:20492" in desc

        _nfs3_roundtrip(pod)
        # The manager is in etcd under its bound address, at the map's epoch.
        api = MgrApi(pod, "http://127.0.0.1:7480")
        mds = api.wait_for(lambda a: [m for m in a.get("/api/mds")
                                      if m.get("epoch") == a.status()["epoch"]],
                           timeout=15, what="the manager at the map's epoch in /api/mds")
        assert [m["nfs"] for m in mds] == ["127.0.0.1:2049"], mds

        mgr = pod.run(["ganesha_mgr", "show", "exports"], check=False,
                      env={**os.environ, "DBUS_SYSTEM_BUS_ADDRESS": bus.group(1)})
        assert mgr.returncode == 0, mgr.stdout + mgr.stderr
        assert re.search(r"^\s*1,\s+/pando,", mgr.stdout, re.MULTILINE), mgr.stdout

        again = pod.run(_cli("up", "--osds", "3"), env=_env(cdir), check=False, timeout=120)
        assert again.returncode == 0, again.stdout + again.stderr
        assert again.stdout.count("already running") == 6, again.stdout
        assert _pids(cdir) == pids

        st = pod.run(_cli("status"), env=_env(cdir), check=False)
        assert st.returncode == 0, st.stdout + st.stderr
        assert re.search(rf"ganesha\.nfsd\s*│\s*{pids['mds']}\s*│ up ", st.stdout), st.stdout
    finally:
        down = pod.run(_cli("down"), env=_env(cdir), check=False, timeout=120)
    assert down.returncode == 0, down.stdout + down.stderr
    assert down.stdout.count("stopped") == 9, down.stdout
    assert [p for p in pids.values() if _running(p)] == []
    assert (cdir / "mds" / "ganesha.log").read_text().rstrip().endswith("NFS EXIT: regular exit")
    st = pod.run(_cli("status"), env=_env(cdir), check=False)
    assert st.returncode == 1 and st.stdout.count(" down ") == 9, st.stdout


def _broken_build(tmp_path: Path) -> Path:
    """A build tree with the real OSD binaries and an FSAL Ganesha cannot load."""
    fake = tmp_path / "build"
    (fake / "ganesha-fsal" / "fsal").mkdir(parents=True)
    (fake / "ganesha-fsal" / "fsal" / "libfsalpando.so").write_text("not an ELF file\n")
    (fake / "osd-target").symlink_to(build_dir() / "osd-target")
    return fake


def test_up_stops_what_it_started_when_ganesha_fails(pod: Pod, tmp_path: Path,
                                                     cdir: Path) -> None:
    env = _env(cdir, PANDO_BUILD_DIR=str(_broken_build(tmp_path)))
    up = pod.run(_cli("up", "--osds", "1", "--timeout", "20"), env=env, check=False,
                 timeout=120)
    out = up.stdout + up.stderr
    try:
        assert up.returncode == 1, out
        assert "ganesha: exited" in out and "Could not dlopen module" in out, out
        assert ("stopping what this `up` started: etcd, osd.1, rpcbind, rpc.statd, "
                "dbus-daemon, ganesha.nfsd") in out, out
        started = [int(p) for p in re.findall(r": started pid (\d+)", out)]
        assert len(started) == 6, out
        assert [p for p in started if _running(p)] == [], out
        assert _pids(cdir) == {}
        for port in (NFS_PORT, MNT_PORT, 111, 20591, 2379):
            try:
                pod.connect(HOST, port, timeout=1).close()
                raise AssertionError(f"port {port} still open:\n{out}")
            except OSError:
                pass
    finally:
        pod.run(_cli("down"), env=env, check=False)
