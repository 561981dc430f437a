"""The rest of the e2e scenario library, on every kernel, over NFSv3 and
NFSv4.2, against a Pando cluster (`nfs_server`); marked slow:
`python3 -m pytest -m slow tests/e2e -s` (-s shows the timings).  The few
tests about Ganesha 4.3 itself or the harness use `ganesha_vfs`."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import pytest

from pando_testing.e2e import KERNEL_IDS, KernelClient, check_xproto_on_server, timing_line
from pando_testing.ganesha import GaneshaVfs
from pando_testing.mountstats import ops_by_server, parse_mountstats
from pando_testing.pod import Pod
from pando_testing.vm import NfsServerHandle, Scenario, VmResult, wait_all

pytestmark = pytest.mark.slow

# NFSv4.2: what a Linux mount without vers= gets from `pando-cluster up`
# (NFSv4.1 has the quick set, test_quick.py, and the pNFS tests).
V4 = "v4.2"
VERSIONS = ("v3", V4)
FILE_OPS = ("sparse", "append", "truncate", "rename", "unlink_open", "tree")
INLINE_MAX = 65536     # PandoMds.inline_max: files up to this size stay in the store
MIRRORS = 2            # PandoMds.mirrors
XPROTO_SIZES = (0, 1, 4096, 65535, 65536, 65537, 1048576, 1048577, 8 << 20)
BIGDIR_ENTRIES = 10_000


def on_both(client: KernelClient, timeout: int, name: str,
            *args: object) -> tuple[VmResult, dict[str, dict[str, Any]]]:
    """Scenario NAME ARGS... over NFSv3 and NFSv4.2 in one VM, which must
    pass: the result, and each step's metrics by version."""
    sc = Scenario()
    for vers in VERSIONS:
        sc.step(name, vers, *args)
    res = client.run(sc, timeout=timeout).assert_ok()
    return res, {vers: res.step(name, vers).metrics for vers in VERSIONS}


@pytest.mark.parametrize("version", KERNEL_IDS)
def test_file_operations(version: str, kernel_client: Callable[..., KernelClient],
                         nfs_server: NfsServerHandle) -> None:
    sc = Scenario()
    for vers in VERSIONS:
        for name in FILE_OPS:
            sc.step(name, vers)
    res = kernel_client(version).run(sc, timeout=400).assert_ok()
    assert len(res.steps) == len(VERSIONS) * len(FILE_OPS)
    for vers in VERSIONS:
        sparse = res.step("sparse", vers).metrics
        assert sparse["apparent_bytes"] == 32 << 20
        if nfs_server.reports_holes:
            # A local file system behind the export keeps holes: far less is allocated.
            assert sparse["allocated_bytes"] < 1 << 20, sparse
        assert res.step("tree", vers).metrics["entries"] == 1 + 2 * (3 + 9 + 27)
    print(timing_line(res))


@pytest.mark.parametrize("version", KERNEL_IDS)
def test_posix_namespace(version: str, kernel_client: Callable[..., KernelClient]) -> None:
    """mkdir -p, rename over files and empty directories, ENOTEMPTY and the
    other rename errors, hard links and link counts, symlinks, unlink of an
    open file (silly rename), chmod/chown/truncate/touch -d, set-id bits,
    what a non-owner may not change; on each protocol, checked again after
    a remount.  Then unlink of open files on both sides of the inline
    threshold."""
    sc = Scenario()
    for vers in VERSIONS:
        sc.step("namespace", vers).step("attrs", vers)
    for vers in VERSIONS:
        sc.step("unlink_open", vers, 4096).step("unlink_open", vers, 3 << 20)
    res = kernel_client(version).run(sc, timeout=400).assert_ok()
    for vers in VERSIONS:
        assert res.step("namespace", vers).metrics["entries"] > 15
    print(timing_line(res))


@pytest.mark.parametrize("version", KERNEL_IDS)
def test_directory_permissions(version: str, kernel_client: Callable[..., KernelClient]) -> None:
    """A user without write permission on a directory changes none of its
    names (create, mkdir, symlink, mknod, link, rename, unlink, rmdir);
    sticky directories protect other users' files.  The Linux client leaves
    these checks to the server.  A set-gid directory passes on its group,
    and its set-gid bit to subdirectories."""
    sc = Scenario()
    for vers in VERSIONS:
        sc.step("perms", vers).step("sgid", vers)
    res = kernel_client(version).run(sc, timeout=300).assert_ok()
    print(timing_line(res))


@pytest.mark.parametrize("version", KERNEL_IDS)
def test_big_directory(version: str, kernel_client: Callable[..., KernelClient]) -> None:
    """10,000 entries in one directory: `ls -f | wc -l` after a remount
    (readdir through many pages of cookies), every name exactly once."""
    res, metrics = on_both(kernel_client(version), 590, "bigdir", BIGDIR_ENTRIES)
    for vers, m in metrics.items():
        print(f"{version} {vers} {BIGDIR_ENTRIES} entries: create {m['creates_per_s']}/s, "
              f"readdir {m['readdir_s']} s, unlink {m['unlinks_per_s']}/s")
    print(timing_line(res))


@pytest.mark.parametrize("version", KERNEL_IDS)
def test_locks_and_open_state(version: str, kernel_client: Callable[..., KernelClient]) -> None:
    """Byte-range locks over NFSv4 (NLM is off: NFSv3 mounts use nolock):
    two processes, one holds, the other gets EAGAIN or blocks until it is
    released; ranges, shared and exclusive, flock(2) and OFD locks; on an
    inline and an object-backed file.  Then open state: one file open in
    three modes at once, closed one by one."""
    res = kernel_client(version).run(
        Scenario().step("locks", V4).step("opens", V4), timeout=300).assert_ok()
    m = res.step("locks", V4).metrics
    # The server arbitrated: LOCK requests reached it (no delegation, no local locking).
    assert m["lock_calls"] >= 10, m
    for f in ("f", "big"):
        # B waited for A (at least the 1 s A held the lock after B asked).
        assert 0.9 <= m[f"blocked_wait_s.{f}"] < 60, m
    opens = res.step("opens", V4).metrics
    # The last share mode that goes (write) is dropped with OPEN_DOWNGRADE.
    assert opens["open_downgrades"] >= 1 and opens["closes"] >= 1, opens
    print(f"{version}: blocked lock waits {m['blocked_wait_s.f']} s and {m['blocked_wait_s.big']} s "
          f"(the client polls), LOCK calls {m['lock_calls']}, OPEN_DOWNGRADE {opens['open_downgrades']}")
    print(timing_line(res))


def test_locks_between_two_clients(kernel_client: Callable[..., KernelClient]) -> None:
    """Two guests (6.1 holds, 7.x contends): the lock one client holds
    refuses the other (EAGAIN), and the other's blocking request is granted
    once the first lets go.  Only the server can arbitrate this."""
    a, b = kernel_client("6.1", name="holder"), kernel_client("7.x", name="contender")
    params = {"PANDO_MOUNT_OPTS": "lookupcache=positive"}
    vms = [a.start(Scenario().step("lockpeer", V4, "holder", "pair"), params=params, timeout=400),
           b.start(Scenario().step("lockpeer", V4, "contender", "pair"), params=params,
                   timeout=400)]
    results = wait_all(vms)
    for res in results:
        print(res.report())
    for res in results:
        res.assert_ok()
    wait = results[1].step("lockpeer", V4).metrics["blocked_wait_s"]
    assert 0.9 <= wait < 60, wait


@pytest.mark.parametrize("version", KERNEL_IDS)
def test_inline_and_object_files(version: str, kernel_client: Callable[..., KernelClient]) -> None:
    """Files on both sides of the 64 KiB inline threshold, and every move
    between them (append across it, a hole across it, shrink below it and
    grow again, truncate to 0, overwrite in the middle), made alike in guest
    memory and compared after a remount."""
    res, metrics = on_both(kernel_client(version), 300, "sizes")
    for vers, m in metrics.items():
        # A 50,000-byte inline file with a 40 KiB hole, and a 4 KiB file
        # extended to 200,000 bytes: what the server says they use.
        print(f"{version} {vers}: blocks used by an inline file with a hole "
              f"{m['used_bytes.hole']} B, by a file extended past {INLINE_MAX} B "
              f"{m['used_bytes.extend']} B")
    print(timing_line(res))


@pytest.mark.parametrize("version", KERNEL_IDS)
def test_cross_protocol(version: str, kernel_client: Callable[..., KernelClient],
                        nfs_server: NfsServerHandle) -> None:
    """One guest, two mounts of the export: files written over NFSv4.2 read
    back byte-identical (sha256) over NFSv3 with the same inode numbers, and
    the other way; a page changed over one protocol reads back over the
    other, whose page cache held the old data.  The server's copies are
    read again from this machine."""
    sc = Scenario().step("xproto", V4, "v3", *XPROTO_SIZES) \
        .step("xproto", "v3", V4, *XPROTO_SIZES)
    res = kernel_client(version).run(sc, timeout=300).assert_ok()
    check_xproto_on_server(nfs_server, res)
    print(timing_line(res))


@pytest.mark.parametrize("version", KERNEL_IDS)
def test_create_while_removing(version: str, kernel_client: Callable[..., KernelClient]) -> None:
    """New files get objects while other files' objects are being removed
    (the manager's background reaper): 150 small files written over
    NFSv4.2 (each a pNFS writer's new file, object-backed at once) and 60
    files of 100,000 bytes over NFSv3 (moved from inline to objects by the
    gateway), each while another process makes and removes 100 KiB files
    over the other protocol.  Every new file must read back as written."""
    sc = Scenario().step("churn", V4, 150, "v3", 4096).step("churn", "v3", 60, V4, 100000)
    res = kernel_client(version).run(sc, timeout=500).assert_ok()
    print(f"{version}: " + ", ".join(f"{s.vers} {s.metrics['removed']} removals meanwhile"
                                    for s in res.steps))
    print(timing_line(res))


@pytest.mark.parametrize("version", KERNEL_IDS)
def test_metadata_storm(version: str, kernel_client: Callable[..., KernelClient]) -> None:
    n = 500
    _, metrics = on_both(kernel_client(version), 400, "metastorm", n)
    for vers, m in metrics.items():
        print(f"{version} {vers} metadata storm, {n} files: create {m['creates_per_s']}/s, "
              f"stat {m['stats_per_s']}/s, unlink {m['unlinks_per_s']}/s, readdir {m['readdir_s']} s")
        assert m["create_s"] > 0 and m["unlinks_per_s"] > 0


@pytest.mark.parametrize("version", KERNEL_IDS)
def test_dd_throughput(version: str, kernel_client: Callable[..., KernelClient]) -> None:
    mib = 128
    _, metrics = on_both(kernel_client(version), 400, "dd", mib)
    for vers, m in metrics.items():
        print(f"{version} {vers} dd {mib} MiB: write {m['write_MBps']} MB/s (conv=fsync), "
              f"read {m['read_MBps']} MB/s (after remount)")
        assert m["write_MBps"] > 0 and m["read_MBps"] > 0


@pytest.mark.parametrize("version", KERNEL_IDS)
def test_mountstats_show_where_the_data_went(version: str,
                                             kernel_client: Callable[..., KernelClient]) -> None:
    """Where the guest's READs and WRITEs went.  NFSv3: all to the server
    it mounted.  NFSv4.2 from a server that hands out no layouts (Ganesha
    VFS, the Pando MDS with PANDO_E2E_PNFS=0): the same (READ or READ_PLUS,
    as the kernel likes), and no pNFS
    operation.  From the Pando MDS (layouts):
    pNFS reads and writes (the data servers' addresses come from
    GETDEVICEINFO), every byte written once per mirror by the client
    (flexfiles mirroring)."""
    size = 3 << 20
    sc = Scenario()
    for vers in VERSIONS:
        sc.step("io", vers, size)
    sc.step("mountstats", "-")
    res = kernel_client(version).run(sc, timeout=300).assert_ok()
    text = res.step("mountstats").output
    mounts = {m.mountpoint: m for m in parse_mountstats(text)}
    assert set(mounts) == {"/mnt/v3", f"/mnt/{V4}"}
    per = ops_by_server(text)
    assert list(per) == ["10.0.2.2"]
    v3, v4 = mounts["/mnt/v3"], mounts[f"/mnt/{V4}"]
    assert v3.count("WRITE") >= 3 and v3.count("READ") >= 3, v3.counts()
    assert v3.bytes["serverwritebytes"] == size and v3.bytes["serverreadbytes"] == size
    layout_ops = ("LAYOUTGET", "GETDEVICEINFO", "LAYOUTCOMMIT", "LAYOUTRETURN")
    if v4.nfsv4["pnfs"] == "not configured":
        reads = v4.count("READ") + v4.count("READ_PLUS")
        assert v4.count("WRITE") >= 3 and reads >= 3, v4.counts(("READ", "READ_PLUS", "WRITE"))
        assert v4.bytes["serverwritebytes"] == size and v4.bytes["serverreadbytes"] == size
        assert {op: v4.count(op) for op in layout_ops} == dict.fromkeys(layout_ops, 0)
    else:
        # (Linux asks for the layout inside the OPEN compound: LAYOUTGET
        # itself may stay at 0.)
        assert v4.nfsv4["pnfs"] == "LAYOUT_FLEX_FILES", v4.nfsv4
        assert v4.count("GETDEVICEINFO") >= 1, v4.counts()
        assert v4.events["pnfswrite"] > 0 and v4.events["pnfsread"] > 0, v4.events
        assert v4.bytes["serverwritebytes"] == MIRRORS * size, v4.bytes
        assert v4.bytes["serverreadbytes"] == size, v4.bytes
    print(f"{version}: {V4} pnfs={v4.nfsv4['pnfs']}, "
          + ", ".join(f"{op} {v4.count(op)}" for op in ("READ", "READ_PLUS", "WRITE", *layout_ops))
          + f", pNFS reads {v4.events['pnfsread']}, writes {v4.events['pnfswrite']}")


def test_two_clients_one_server(kernel_client: Callable[..., KernelClient]) -> None:
    """Two VMs at once (6.1 and 7.x), each with its own NFSv4 client id: each
    writes a file, waits for the other's, and checks it; over v4.2 and v3."""
    a, b = kernel_client("6.1", name="alice"), kernel_client("7.x", name="bob")
    params = {"PANDO_MOUNT_OPTS": "lookupcache=positive"}
    vms = []
    for me, other, kc in (("alice", "bob", a), ("bob", "alice", b)):
        sc = Scenario().step("exchange", V4, me, other).step("exchange", "v3", me + "3", other + "3")
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


def test_read_only_export_refuses_writes(tmp_path: Path,
                                         kernel_client: Callable[..., KernelClient]) -> None:
    """Second negative check: a server that refuses data (Ganesha VFS with a
    read-only export, in a pod of its own).  The guest's own error text
    must reach the report."""
    with Pod("read-only") as ro_pod:
        ro = GaneshaVfs(ro_pod, tmp_path / "ro", protocols=(3, 4), pseudo="/ro", access_type="RO")
        ro.start()
        try:
            handle = NfsServerHandle(name="read-only", target=ro.mount_target(),
                                     export_root=ro.export_dir,
                                     logs=[ro.log_path, ro.rpcbind_log_path])
            res = kernel_client("6.12", server=handle, in_pod=ro_pod).run(
                Scenario().step("verify", V4, 4096).step("verify", "v3", 1), timeout=180)
        finally:
            ro.stop()
    assert not res.ok
    for vers in (V4, "v3"):
        step = res.step("verify", vers)
        assert step.status == "fail"
        assert "Read-only file system" in step.output, step.output
    assert "Read-only file system" in res.report()


@pytest.mark.parametrize("server", ["ganesha_vfs", "nfs_server"])
def test_directory_delegations_default_options(server: str, request: pytest.FixtureRequest,
                                               kernel_client: Callable[..., KernelClient]) -> None:
    """A 7.x client with the nfsv4 module's default options (it asks for
    directory delegations) stats a directory it just changed, against FSAL
    VFS and the Pando MDS alike: our Ganesha answers GET_DIR_DELEGATION with
    NFS4ERR_NOTSUPP (ganesha-fsal/patches/0060; Debian's 4.3 answers
    NFS4ERR_OP_ILLEGAL and stat() fails with "Remote I/O error")."""
    handle: NfsServerHandle = request.getfixturevalue(server)
    script = "mkdir a; stat -c %F ."
    res = kernel_client("7.x", server=handle).run(Scenario().step("sh", V4, script), timeout=120)
    res.assert_ok()


def test_timeout_is_reported(kernel_client: Callable[..., KernelClient]) -> None:
    """A guest that never finishes is killed at its timeout, and the report says so."""
    res = kernel_client("6.1").run(Scenario().step("sh", "v3", "sleep 600"), timeout=25)
    assert res.timed_out and res.reached_init and not res.done and not res.ok
    assert "timed out" in res.report()
    assert res.attempts == 1   # /init had started: no retry
