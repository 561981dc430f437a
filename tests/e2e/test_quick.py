"""The quick e2e set (runs in ci/test), against a Pando cluster (1 MDS, 4
OSDs): every kernel mounts NFSv3, NFSv4.1 and NFSv4.2, passes the
data-verification scenario on each, and reads what it wrote over NFSv4.2
back byte-identical over NFSv3 and the other way, in one boot per kernel;
the server's copies are read again from this machine.  A namespace and
lock smoke test on the newest kernel.  And the harness proves it can fail
when the server corrupts data.  About 1.5-2 minutes on 2 cores (the slow
set has the rest)."""
from __future__ import annotations

import dataclasses
from typing import Callable

import pytest

from pando_testing.e2e import (KERNEL_IDS, SIZES, KernelClient, check_on_server,
                               check_xproto_on_server, timing_line)
from pando_testing.nfsproxy import RecordProxy, flip_last_byte
from pando_testing.pod import Pod
from pando_testing.vm import NfsServerHandle, Scenario

VERSIONS = ("v3", "v4.1", "v4.2")
# Both sides of the 64 KiB inline threshold, and one object-backed file
# with a partial last stripe unit.
XPROTO_SIZES = (0, 1, 65536, 65537, 1048577)


@pytest.mark.parametrize("version", KERNEL_IDS)
def test_data_verification(version: str, kernel_client: Callable[..., KernelClient],
                           nfs_server: NfsServerHandle) -> None:
    sc = Scenario()
    for vers in VERSIONS:
        sc.step("verify", vers, *SIZES)
    sc.step("xproto", "v4.2", "v3", *XPROTO_SIZES).step("xproto", "v3", "v4.2", *XPROTO_SIZES)
    res = kernel_client(version).run(sc, timeout=300)
    res.assert_ok()
    assert [(s.scenario, s.vers) for s in res.steps] == [
        *(("verify", v) for v in VERSIONS), ("xproto", "v4.2"), ("xproto", "v3")]
    for step in res.steps[:len(VERSIONS)]:
        check_on_server(nfs_server, res, step)
    check_xproto_on_server(nfs_server, res)
    print(timing_line(res))


def test_namespace_and_locks_smoke(kernel_client: Callable[..., KernelClient],
                                   nfs_server: NfsServerHandle) -> None:
    """A taste of the slow POSIX scenarios, on the newest kernel: the
    namespace scenario (renames, links, symlinks, silly rename) over both
    protocols, and byte-range locks between two processes over NFSv4.2 and
    over NFSv3 (NLM: the guest runs rpcbind and rpc.statd, and the
    manager's statd monitors it while it locks)."""
    sc = Scenario().step("namespace", "v3").step("namespace", "v4.2").step("locks", "v4.2") \
        .step("nlm", "v3")
    res = kernel_client("7.x").run(sc, timeout=240, nfs3_locks=True).assert_ok()
    assert res.step("locks", "v4.2").metrics["lock_calls"] >= 10
    statd_log = next(p for p in nfs_server.logs if p.name == "statd.log")
    assert "MONITORING" in statd_log.read_text()
    print(timing_line(res))


CHURN_PROCS, CHURN_ROUNDS = 8, 1000


def test_lock_stateids_freed_while_their_file_closes(
        kernel_client: Callable[..., KernelClient]) -> None:
    """Eight processes open, lock, unlock and close their own files 1000
    times each over NFSv4.2: each unlock makes the client FREE_STATEID the
    lock stateid while the CLOSE that deletes it is on its way.  Whichever
    the server handles first, it answers both and stays up (ganesha.nfsd
    died of the race in dec_nfs4_state_ref(): patch 0144)."""
    sc = Scenario().step("lockchurn", "v4.2", CHURN_PROCS, CHURN_ROUNDS)
    res = kernel_client("7.x").run(sc, timeout=150).assert_ok()
    metrics = res.step("lockchurn", "v4.2").metrics
    assert metrics["closes"] >= CHURN_PROCS * CHURN_ROUNDS, metrics
    assert metrics["free_stateids"] >= CHURN_PROCS * CHURN_ROUNDS // 2, metrics
    print(metrics)
    print(timing_line(res))


def test_corrupting_server_fails_the_scenario(pod: Pod, kernel_client: Callable[..., KernelClient],
                                              nfs_server: NfsServerHandle) -> None:
    """A proxy between the guest and the server flips the last byte of every
    large reply (READ data).  The guest must report the verify step FAILED,
    with its own words (the sha256 mismatch it computed).  NFSv3: its data
    always comes through the port the guest mounted (NFSv4 data may come
    from the OSDs, under a pNFS layout)."""
    proxy = RecordProxy(pod, listen_port=2050, upstream_port=nfs_server.target.port,
                        mangle=flip_last_byte(min_size=16384)).start()
    try:
        bad = dataclasses.replace(
            nfs_server, name="corrupting-proxy",
            target=dataclasses.replace(nfs_server.target, port=2050))
        res = kernel_client("6.1", server=bad).run(
            Scenario().step("verify", "v3", 4096, 1048577), timeout=180)
    finally:
        proxy.stop()
    assert proxy.mangled > 0, "the proxy never saw a large reply to damage"
    assert not res.ok
    step = res.step("verify", "v3")
    assert step.status == "fail"
    assert "sha256 mismatch for f.1048577 (v3)" in step.output, step.output
    assert "f.4096" not in step.output  # small reads passed through untouched
    report = res.report()
    assert "FAILED" in report and "sha256 mismatch for f.1048577" in report
