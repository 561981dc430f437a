"""NFSv3 locking on the metadata manager, from NLM clients on this machine
(pando_testing.nlm) inside the test's pod: Ganesha's NLM arbitrates
between hosts, and the pod's rpc.statd monitors each host while it holds
locks.  Hosts are told apart by address (127.0.0.1 and 127.0.0.2, the
pod's loopback addresses), as production's NSM_Use_Caller_Name = false
does.  Two managers in two pods, on the same ports, lock independently.
Kernel clients: tests/e2e/test_nfs3_locks.py; `pando-cluster`:
tests/cluster/test_cluster_nlm.py."""
from __future__ import annotations

import contextlib
import socket
import time
from pathlib import Path
from typing import Iterator

import pytest

from pando_testing.daemons import OsdProcess
from pando_testing.keys import write_cluster_key
from pando_testing.mds import PandoMds
from pando_testing.pod import Pod
from pando_testing.nlm import (
    NLM4_DENIED,
    NLM4_GRANTED,
    NLM_PROG,
    NLM4_VERS,
    SM_PROG,
    SM_VERS,
    Holder,
    NlmHost,
    getport,
)

RPCBIND_PORT = 111


def _ports(mds: PandoMds) -> tuple[int, int]:
    """(NLM, statd) ports as the pod's rpcbind has them."""
    s = mds.pod.connect("127.0.0.1", RPCBIND_PORT)
    try:
        return getport(s, NLM_PROG, NLM4_VERS), getport(s, SM_PROG, SM_VERS)
    finally:
        s.close()


def _host(mds: PandoMds, source: str, name: str) -> NlmHost:
    """An NLM host calling from `source` (one of the pod's addresses)."""
    port, _ = _ports(mds)

    def dial() -> socket.socket:
        s = socket.socket()
        s.bind((source, 0))
        s.connect(("127.0.0.1", port))
        return s
    return NlmHost(mds.pod.call_inside(dial), name)


def _monitored(mds: PandoMds) -> list[str]:
    """The hosts statd's monitor list names (its sm/ directory)."""
    return sorted(p.name for p in (mds.workdir / "statd" / "sm").iterdir())


@pytest.fixture
def fh(mds: PandoMds) -> bytes:
    return mds.create_files(["locked"])[0]


def test_hosts_contend_for_byte_ranges_and_statd_monitors_them(
        mds: PandoMds, fh: bytes) -> None:
    nlm_port, statd_port = _ports(mds)
    assert nlm_port and statd_port, "NLM or statd not registered with the pod's rpcbind"
    a, b = _host(mds, "127.0.0.1", "host-a"), _host(mds, "127.0.0.2", "host-b")
    try:
        assert a.lock(fh, 0, 100) == NLM4_GRANTED
        assert b.lock(fh, 50, 10) == NLM4_DENIED
        assert b.lock(fh, 99, 1, exclusive=False) == NLM4_DENIED
        assert b.lock(fh, 0, 0) == NLM4_DENIED                 # the whole file
        assert b.test(fh, 50, 10) == (NLM4_DENIED, Holder(True, 1, 0, 100))
        assert b.lock(fh, 100, 100) == NLM4_GRANTED            # adjacent
        assert b.lock(fh, 4096, 1, exclusive=False) == NLM4_GRANTED
        assert len(_monitored(mds)) == 2, _monitored(mds)

        assert a.unlock(fh, 0, 100) == NLM4_GRANTED
        assert b.lock(fh, 0, 100) == NLM4_GRANTED
        assert a.test(fh, 0, 1)[0] == NLM4_DENIED
        assert a.lock(fh, 200, 10) == NLM4_GRANTED
        assert a.unlock(fh, 200, 10) == NLM4_GRANTED
        assert b.unlock(fh, 0, 0) == NLM4_GRANTED               # everything b holds
        # A host is unmonitored when its last lock goes.
        assert _monitored(mds) == [], _monitored(mds)
    finally:
        a.close()
        b.close()


def test_sigterm_with_locks_held_is_quick_and_leaves_hosts_to_notify(
        mds: PandoMds, fh: bytes) -> None:
    """Patch 0110: Ganesha 4.3 called SM_UNMON for every host at shutdown,
    after its RPC services had stopped: about 18 s per host (48 s for
    three).  Now the hosts stay on statd's list, for sm-notify after the
    restart (`pando-cluster up` runs it)."""
    hosts = [_host(mds, f"127.0.0.{i + 1}", f"host-{i}") for i in range(2)]
    try:
        for i, h in enumerate(hosts):
            assert h.lock(fh, 10 * i, 10) == NLM4_GRANTED
        held = _monitored(mds)
        assert len(held) == 2, held
        t0 = time.monotonic()
        assert mds.stop() == 0
        took = time.monotonic() - t0
    finally:
        for h in hosts:
            h.close()
    assert took < 10, f"SIGTERM took {took:.1f} s with NLM locks held"
    assert _monitored(mds) == held
    assert "SM_UNMON" not in Path(mds.log_path).read_text()


@contextlib.contextmanager
def _manager(pod: Pod, workdir: Path) -> Iterator[PandoMds]:
    """Four OSDs and a manager in `pod`, as mds_factory makes them; each
    must stop cleanly."""
    workdir.mkdir(parents=True)
    key = write_cluster_key(workdir / "cluster.key", key_id=1)
    osds = [OsdProcess(pod, workdir / "osds", key, osd_id=i) for i in range(1, 5)]
    m = PandoMds(pod, workdir / "mds", osds=osds, key=key, object_pool=0)
    try:
        for o in osds:
            o.format()
            o.start()
        m.start()
        yield m
    finally:
        codes = [m.stop(), *(o.stop() for o in osds if o.alive())]
    assert codes == [0] * len(codes), codes


def test_two_managers_in_two_pods_do_not_collide(tmp_path: Path) -> None:
    """Each pod has its own rpcbind, rpc.statd (state in its test
    directory) and /run (rpc.statd.pid): the same ports and the same host
    addresses, and each statd monitors only its own manager's host."""
    with Pod("a") as pa, Pod("b") as pb, _manager(pa, tmp_path / "a") as a, \
            _manager(pb, tmp_path / "b") as b:
        hosts = []
        for m in (a, b):
            fh = m.create_files(["f"])[0]
            h = _host(m, "127.0.0.2", "host")
            hosts.append(h)
            assert h.lock(fh, 0, 100) == NLM4_GRANTED
        assert _monitored(a) == _monitored(b) == ["127.0.0.2"]
        assert _ports(a)[1] and _ports(b)[1]
        for h in hosts:
            h.close()
