"""The rest of the e2e scenario library, on every kernel (marked slow:
`python3 -m pytest -m slow tests/e2e`).  Timings are printed (-s shows them)."""
from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Callable

import pytest

from pando_testing.e2e import KERNEL_IDS, KernelClient, timing_line
from pando_testing.ganesha import GaneshaVfs
from pando_testing.mountstats import ops_by_server, parse_mountstats
from pando_testing.pod import Pod
from pando_testing.vm import NfsServerHandle, Scenario, wait_all

pytestmark = pytest.mark.slow

VERSIONS = ("v3", "v4.1")
FILE_OPS = ("sparse", "append", "truncate", "rename", "unlink_open", "tree")


@pytest.mark.parametrize("version", KERNEL_IDS)
def test_file_operations(version: str, kernel_client: Callable[..., KernelClient]) -> None:
    sc = Scenario()
    for vers in VERSIONS:
        for name in FILE_OPS:
            sc.step(name, vers)
    res = kernel_client(version).run(sc, timeout=400).assert_ok()
    assert len(res.steps) == len(VERSIONS) * len(FILE_OPS)
    for vers in VERSIONS:
        sparse = res.step("sparse", vers).metrics
        assert sparse["apparent_bytes"] == 32 << 20
        # Ganesha VFS on a local file system keeps holes: far less is allocated.
        assert sparse["allocated_bytes"] < 1 << 20, sparse
        assert res.step("tree", vers).metrics["entries"] == 1 + 2 * (3 + 9 + 27)
    print(timing_line(res))


@pytest.mark.parametrize("version", KERNEL_IDS)
def test_metadata_storm(version: str, kernel_client: Callable[..., KernelClient]) -> None:
    n = 500
    sc = Scenario()
    for vers in VERSIONS:
        sc.step("metastorm", vers, n)
    res = kernel_client(version).run(sc, timeout=400).assert_ok()
    for vers in VERSIONS:
        m = res.step("metastorm", vers).metrics
        print(f"{version} {vers} metadata storm, {n} files: create {m['creates_per_s']}/s, "
              f"stat {m['stats_per_s']}/s, unlink {m['unlinks_per_s']}/s, readdir {m['readdir_s']} s")
        assert m["create_s"] > 0 and m["unlinks_per_s"] > 0


@pytest.mark.parametrize("version", KERNEL_IDS)
def test_dd_throughput(version: str, kernel_client: Callable[..., KernelClient]) -> None:
    mib = 128
    sc = Scenario()
    for vers in VERSIONS:
        sc.step("dd", vers, mib)
    res = kernel_client(version).run(sc, timeout=400).assert_ok()
    for vers in VERSIONS:
        m = res.step("dd", vers).metrics
        print(f"{version} {vers} dd {mib} MiB: write {m['write_MBps']} MB/s (conv=fsync), "
              f"read {m['read_MBps']} MB/s (after remount)")
        assert m["write_MBps"] > 0 and m["read_MBps"] > 0


@pytest.mark.parametrize("version", KERNEL_IDS)
def test_mountstats_show_where_the_data_went(version: str,
                                             kernel_client: Callable[..., KernelClient]) -> None:
    """Ganesha VFS hands out no layouts: all READs and WRITEs go to the server
    the client mounted, and no pNFS operation is sent."""
    size = 3 << 20
    sc = Scenario()
    for vers in VERSIONS:
        sc.step("io", vers, size)
    sc.step("mountstats", "-")
    res = kernel_client(version).run(sc, timeout=300).assert_ok()
    text = res.step("mountstats").output
    mounts = {m.mountpoint: m for m in parse_mountstats(text)}
    assert set(mounts) == {"/mnt/v3", "/mnt/v4.1"}
    per = ops_by_server(text)
    assert list(per) == ["10.0.2.2"]
    for mp, m in mounts.items():
        assert m.count("WRITE") >= 3, (mp, m.counts())
        assert m.count("READ") >= 3, (mp, m.counts())
        assert m.bytes["serverwritebytes"] == size and m.bytes["serverreadbytes"] == size
    v41 = mounts["/mnt/v4.1"]
    assert v41.nfsv4["pnfs"] == "not configured"
    assert {op: v41.count(op) for op in ("LAYOUTGET", "GETDEVICEINFO", "LAYOUTCOMMIT",
                                          "LAYOUTRETURN")} == dict.fromkeys(
        ("LAYOUTGET", "GETDEVICEINFO", "LAYOUTCOMMIT", "LAYOUTRETURN"), 0)


def test_two_clients_one_server(kernel_client: Callable[..., KernelClient]) -> None:
    """Two VMs at once (6.1 and 7.x), each with its own NFSv4 client id: each
    writes a file, waits for the other's, and checks it; over v4.1 and v3."""
    a, b = kernel_client("6.1", name="alice"), kernel_client("7.x", name="bob")
    params = {"PANDO_MOUNT_OPTS": "lookupcache=positive"}
    vms = []
    for me, other, kc in (("alice", "bob", a), ("bob", "alice", b)):
        sc = Scenario().step("exchange", "v4.1", me, other).step("exchange", "v3", me + "3", other + "3")
        vms.append(kc.start(sc, params=params, timeout=400))
    results = wait_all(vms)
    for res in results:
        print(res.report())
    for res in results:
        res.assert_ok()
    ids = {vm.client_id for vm in vms}
    assert len(ids) == 2
    ready = [next(e for e in r.events if e["event"] == "ready") for r in results]
    assert {e["client_id"] for e in ready} == ids


@pytest.mark.parametrize("version", KERNEL_IDS)
def test_nfs42(version: str, kernel_client: Callable[..., KernelClient],
               nfs_server: NfsServerHandle) -> None:
    if not nfs_server.read_plus_ok or "v4.2" not in nfs_server.target.versions:
        pytest.skip(f"{nfs_server.name} does not serve NFSv4.2 with a correct READ_PLUS "
                    "(Ganesha 4.3 returns wrong data: shared/notes/kernel-client.md)")
    res = kernel_client(version).run(Scenario().step("verify", "v4.2", 0, 1, 4096, 1048577),
                                     timeout=300)
    res.assert_ok()


def test_read_only_export_refuses_writes(tmp_path: Path, kernel_client: Callable[..., KernelClient],
                                         nfs_server: NfsServerHandle) -> None:
    """Second negative check: a server that refuses data (a read-only export,
    in a pod of its own).  The guest's own error text must reach the report."""
    with Pod("read-only") as ro_pod:
        ro = GaneshaVfs(ro_pod, tmp_path / "ro", protocols=(3, 4), pseudo="/ro", access_type="RO")
        ro.start()
        try:
            handle = dataclasses.replace(nfs_server, name="read-only", target=ro.mount_target(),
                                         export_root=ro.export_dir,
                                         logs=[ro.log_path, ro.rpcbind_log_path])
            res = kernel_client("6.12", server=handle, in_pod=ro_pod).run(
                Scenario().step("verify", "v4.1", 4096).step("verify", "v3", 1), timeout=180)
        finally:
            ro.stop()
    assert not res.ok
    for vers in ("v4.1", "v3"):
        step = res.step("verify", vers)
        assert step.status == "fail"
        assert "Read-only file system" in step.output, step.output
    assert "Read-only file system" in res.report()


def test_ganesha43_directory_delegation_bug(kernel_client: Callable[..., KernelClient],
                                            nfs_server: NfsServerHandle) -> None:
    """Why nfs_server passes nfsv4 directory_delegations=0: without it a 7.x
    client's stat() of a directory it just changed fails against Ganesha 4.3
    (GET_DIR_DELEGATION answered with NFS4ERR_OP_ILLEGAL).  When this test
    fails, the server handles it, and the workaround can go."""
    plain = dataclasses.replace(nfs_server, client_modopts={})
    script = "mkdir a; stat -c %F ."
    res = kernel_client("7.x", server=plain).run(Scenario().step("sh", "v4.1", script), timeout=120)
    step = res.step("sh", "v4.1")
    assert step.status == "fail" and "Remote I/O error" in step.output, step
    res = kernel_client("7.x").run(Scenario().step("sh", "v4.1", script), timeout=120)
    res.assert_ok()


def test_timeout_is_reported(kernel_client: Callable[..., KernelClient]) -> None:
    """A guest that never finishes is killed at its timeout, and the report says so."""
    res = kernel_client("6.1").run(Scenario().step("sh", "v3", "sleep 600"), timeout=25)
    assert res.timed_out and res.reached_init and not res.done and not res.ok
    assert "timed out" in res.report()
    assert res.attempts == 1   # /init had started: no retry
