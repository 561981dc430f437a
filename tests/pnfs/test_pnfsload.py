"""pnfsload (tests/bench/pnfsload/), the host-speed pNFS load generator,
against a real Pando manager over pando-osd targets and against Ganesha VFS:
its bytes reach every mirror's object, its LAYOUTCOMMITs leave the right
sizes, its namespace operations leave the namespace they should, and it
fails with a clear message where it cannot work."""
from __future__ import annotations

import hashlib
import os
import signal
import socket
import threading
import time
from pathlib import Path
from typing import Callable

import pytest

from pando_testing import mds_files
from pando_testing.mds_files import file_bytes, lookup_path
from pando_testing.e2e import KernelClient
from pando_testing.ganesha import GaneshaServer, GaneshaVfs
from pando_testing.layout_policy import layout_set, mkdir
from pando_testing.mds import PandoMds
from pando_testing.pnfsload import (PnfsloadError, PnfsloadResult, pattern, pnfsload_argv,
                                    progress_lines, stop_writer,
                                    run_pnfsload, start_pnfsload, wait_pnfsload)
from pando_testing.pnfs_tools import CallbackBlocker, PnfsCluster
from pando_testing.pod import Pod
from pando_testing.threads import RaisingThread
from pando_testing.vm import Scenario

MiB = 1 << 20
BLOCK = 4 * MiB
PROXY_PORT = 2149          # CallbackBlocker's, in the test's pod


def pando(mds_factory: Callable[..., PandoMds], osds: int = 4) -> PandoMds:
    return mds_factory(osds, pnfs=True, mirrors=2)


def load(m: GaneshaServer, directory: str, **kw: object) -> PnfsloadResult:
    argv = pnfsload_argv(m.nfs_addr, directory, export=m.pseudo, **kw)  # type: ignore[arg-type]
    return run_pnfsload(argv, pod=m.pod, timeout=120)


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def names_in(m: GaneshaServer, path: str) -> set[str]:
    with mds_files.connect(m) as c:
        fh = lookup_path(c, m.root_handle(), path)
        return {e.name.decode() for e in c.readdir_all(fh)} - {".", ".."}


def test_ior_file_per_process_writes_every_mirror_through_layouts_and_reads_back_verified(
        mds_factory: Callable[..., PandoMds]) -> None:
    m = pando(mds_factory)
    w = load(m, "fpp", clients=3, ior="write", block=BLOCK, verify=True)
    assert (w.bytes, w.layouts, w.mds_io_bytes) == (3 * BLOCK, 3, 0)
    assert w.ds_io_bytes == 2 * 3 * BLOCK, "every byte goes to both mirrors"
    for i in range(3):
        want = sha(pattern(i + 1, 0, BLOCK))
        comps = mds_files.components(m, f"/fpp/ior.{i}")
        assert len(comps) == 2, comps
        for osd, oid in comps:
            assert sha(mds_files.object_bytes(m, osd, oid)) == want, (i, osd, oid)
    r = load(m, "fpp", clients=3, ior="read", block=BLOCK, verify=True)
    assert (r.bytes, r.layouts, r.mds_io_bytes, r.ds_io_bytes) == (3 * BLOCK, 3, 0, 3 * BLOCK)


@pytest.mark.parametrize("no_layouts", [False, True], ids=["pnfs", "through_mds"])
def test_verify_names_the_first_wrong_byte(mds_factory: Callable[..., PandoMds],
                                           no_layouts: bool) -> None:
    m = pando(mds_factory)
    load(m, "v", ior="write", block=MiB)
    with mds_files.connect(m) as c:
        fh = lookup_path(c, m.root_handle(), "/v/ior.0")
        c.write_all(fh, 300001, b"pando!")
    with pytest.raises(PnfsloadError, match="client 0: READ ior.0 offset 0 .*data mismatch at "
                                            "file offset 300001"):
        load(m, "v", ior="read", block=MiB, verify=True, no_layouts=no_layouts)


def test_eight_clients_writing_disjoint_segments_of_one_file_leave_its_size_and_bytes_right(
        mds_factory: Callable[..., PandoMds]) -> None:
    m = pando(mds_factory)
    block = 2 * MiB
    w = load(m, "shared", clients=8, ior="write", shared=True, block=block, transfer=256 * 1024)
    assert (w.bytes, w.layouts, w.mds_io_bytes) == (8 * block, 8, 0)
    want = pattern(0, 0, 8 * block)
    size, data = file_bytes(m, "/shared/ior.shared")
    assert size == 8 * block, "every client's LAYOUTCOMMIT counted, none shrank the file"
    assert sha(data) == sha(want), "the bytes read through the manager"
    comps = mds_files.components(m, "/shared/ior.shared")
    assert [sha(mds_files.object_bytes(m, osd, oid)) for osd, oid in comps] == [sha(want)] * 2
    r = load(m, "shared", clients=8, ior="read", shared=True, block=block, verify=True)
    assert (r.bytes, r.layouts, r.ds_io_bytes) == (8 * block, 8, 8 * block)
    g = load(m, "shared", clients=8, ior="read", shared=True, block=block, verify=True,
             no_layouts=True)
    assert (g.bytes, g.layouts, g.mds_io_bytes, g.ds_io_bytes) == (8 * block, 0, 8 * block, 0)


def test_interleaved_transfers_of_four_clients_fill_one_file_as_ior_hard_does(
        mds_factory: Callable[..., PandoMds]) -> None:
    """IO500's ior-hard: 47,008-byte transfers, client i's j-th at
    (j * 4 + i) * 47008, each client's layout spanning the others'."""
    m = pando(mds_factory)
    transfer, per_client = 47008, 12
    block = transfer * per_client
    kw: dict[str, object] = dict(clients=4, shared=True, transfer=transfer, block=block,
                                 interleave=4)
    w = load(m, "hard", ior="write", **kw)
    assert (w.bytes, w.ops, w.mds_io_bytes) == (4 * block, 4 * per_client, 0)
    assert w.layouts == 4 and w.ds_io_bytes == 2 * 4 * block
    want = pattern(0, 0, 4 * block)
    size, data = file_bytes(m, "/hard/ior.shared")
    assert size == 4 * block and sha(data) == sha(want)
    comps = mds_files.components(m, "/hard/ior.shared")
    assert [sha(mds_files.object_bytes(m, osd, oid)) for osd, oid in comps] == [sha(want)] * 2
    r = load(m, "hard", ior="read", verify=True, **kw)
    assert (r.bytes, r.ds_io_bytes) == (4 * block, 4 * block)


def test_interleave_is_refused_where_it_means_nothing_or_leaves_clients_out(
        mds_factory: Callable[..., PandoMds]) -> None:
    m = pando(mds_factory)
    for kw, says in ((dict(ior="write", interleave=2), "--interleave is for --ior --shared"),
                     (dict(ior="write", shared=True, clients=3, interleave=2),
                      "fewer than the clients"),
                     (dict(ior="write", shared=True, interleave=1, transfer=47008,
                           block=100000), "a multiple of --transfer")):
        with pytest.raises(PnfsloadError, match=says):
            load(m, "bad", **kw)


def test_striped_layouts_put_each_stripe_unit_on_its_column_of_every_mirror(
        mds_factory: Callable[..., PandoMds]) -> None:
    """Two mirrors of two columns (1 MiB stripe unit, RFC 8435 sparse: each
    object keeps file offsets); client segments of 1.5 MiB + 1 byte, so
    transfers cross stripe-unit boundaries and are split there."""
    m = mds_factory(4, pnfs=True, mirrors=2,
                    extra_fsal='Stripe_Width = 2;\nStriped_Clients = "*";')
    block, unit = 3 * MiB // 2 + 1, MiB
    w = load(m, "striped", clients=3, ior="write", shared=True, block=block,
             transfer=512 * 1024)
    assert (w.bytes, w.layouts, w.mds_io_bytes, w.ds_io_bytes) == (3 * block, 3, 0, 6 * block)
    size = 3 * block
    want = pattern(0, 0, size)
    assert file_bytes(m, "/striped/ior.shared") == (size, want)
    comps = mds_files.components(m, "/striped/ior.shared")
    assert len(comps) == 4, comps
    for index, (osd, oid) in enumerate(comps):
        column, data = index % 2, mds_files.object_bytes(m, osd, oid)
        for off in range(column * unit, size, 2 * unit):
            end = min(off + unit, size)
            assert data[off:end] == want[off:end], (index, off)
    r = load(m, "striped", clients=3, ior="read", shared=True, block=block, verify=True)
    assert (r.bytes, r.layouts, r.mds_io_bytes) == (3 * block, 3, 0)


def test_blocks_that_do_not_start_on_a_word_still_carry_the_pattern(
        mds_factory: Callable[..., PandoMds]) -> None:
    m = pando(mds_factory)
    block = 100003
    w = load(m, "odd", clients=3, ior="write", shared=True, block=block, transfer=65536)
    assert w.bytes == 3 * block
    size, data = file_bytes(m, "/odd/ior.shared")
    assert (size, sha(data)) == (3 * block, sha(pattern(0, 0, 3 * block)))
    assert pattern(0, 5, 20) == pattern(0, 0, 32)[5:25]
    load(m, "odd", clients=3, ior="read", shared=True, block=block, transfer=65536, verify=True)


def test_small_files_the_manager_keeps_inline_are_written_through_it(
        mds_factory: Callable[..., PandoMds]) -> None:
    """A refused LAYOUTGET (a small file stays inline) sends that file's
    I/O through the manager, as Linux does."""
    m = pando(mds_factory)
    w = load(m, "small", clients=4, ior="write", block=4096, transfer=4096)
    assert (w.bytes, w.layouts, w.mds_io_bytes, w.ds_io_bytes) == (4 * 4096, 0, 4 * 4096, 0)
    for i in range(4):
        size, data = file_bytes(m, f"/small/ior.{i}")
        assert (size, data) == (4096, pattern(i + 1, 0, 4096))
    r = load(m, "small", clients=4, ior="read", block=4096, transfer=4096, verify=True)
    assert (r.bytes, r.layouts, r.mds_io_bytes) == (4 * 4096, 0, 4 * 4096)


def test_two_processes_started_at_one_time_share_a_file_by_their_global_client_indexes(
        mds_factory: Callable[..., PandoMds]) -> None:
    m = pando(mds_factory)
    start_at = time.time() + 3.0
    procs = [start_pnfsload(pnfsload_argv(m.nfs_addr, "two", 2, export=m.pseudo, ior="write",
                                          shared=True, block=MiB, client_base=base,
                                          start_at=start_at), pod=m.pod)
             for base in (0, 2)]
    results = [wait_pnfsload(p, timeout=60) for p in procs]
    assert all(r.t_start >= start_at for r in results), "set-up is not timed"
    assert max(r.t_start for r in results) - start_at < 1.0
    size, data = file_bytes(m, "/two/ior.shared")
    assert (size, sha(data)) == (4 * MiB, sha(pattern(0, 0, 4 * MiB)))


def test_a_recalled_layout_is_committed_and_returned_and_the_rest_goes_through_the_manager(
        mds_factory: Callable[..., PandoMds]) -> None:
    """CB_LAYOUTRECALL on the back channel in the middle of a write: the
    client answers it, commits what reached the OSDs, returns the layout
    and writes the rest through the manager; size and bytes stay right."""
    m = mds_factory(4, pnfs=True, mirrors=2, osd_args=["--write-bandwidth", "8M"])
    block = 16 * MiB

    def recall() -> None:
        time.sleep(0.8)
        m.pod.run(["dbus-send", "--system", "--print-reply", "--dest=org.ganesha.nfsd",
                   "/org/ganesha/nfsd/pando", "org.ganesha.nfsd.pando.recall_file",
                   "string:/rc/ior.0"], env={**os.environ, **m.dbus_env()}, timeout=30)

    t = RaisingThread(target=recall)
    t.start()
    w = load(m, "rc", ior="write", block=block, transfer=256 * 1024, depth=4)
    t.join()
    assert w.layouts == 1
    assert 0 < w.mds_io_bytes < block and 0 < w.ds_io_bytes, w.raw
    size, data = file_bytes(m, "/rc/ior.0")
    assert (size, sha(data)) == (block, sha(pattern(1, 0, block)))


def test_layoutget_loop_asks_for_one_stripe_unit_at_a_time_and_all_are_granted(
        mds_factory: Callable[..., PandoMds]) -> None:
    """--layoutget N (tests/bench/layoutget_leak): N READ LAYOUTGETs of
    ior.<client>, one stripe unit each, every one granted and counted by
    the manager as well."""
    m = mds_factory(4, pnfs=True, mirrors=1, stripe_unit=64 * 1024,
                    extra_fsal="Stripe_Width = 3;")
    load(m, "lg", clients=2, ior="write", block=MiB)
    before = PnfsCluster(m.pod, m, list(m.osds)).layout_status().granted
    r = load(m, "lg", clients=2, block=MiB, transfer=64 * 1024, extra=["--layoutget", "40"])
    assert (r.workload, r.layouts, r.ops) == ("layoutget", 80, 80)
    assert PnfsCluster(m.pod, m, list(m.osds)).layout_status().granted - before == 80


def test_a_writer_goes_on_after_the_manager_is_killed_and_restarted(
        mds_factory: Callable[..., PandoMds]) -> None:
    """--writer (tests/bench/mds_restart): after kill -9 and a restart of
    ganesha.nfsd it makes a new session, opens its file again and goes on;
    the file then holds exactly the bytes it acknowledged."""
    m = pando(mds_factory)
    argv = pnfsload_argv(m.nfs_addr, "wr", export=m.pseudo, transfer=64 * 1024, block=64 * MiB,
                         timeout=60, extra=["--writer", "--pace", "10"])
    proc = start_pnfsload(argv, pod=m.pod)
    try:
        progress_lines(proc, lambda t: True)
        m.kill9()
        m.start()
        back = time.monotonic()
        acked = progress_lines(proc, lambda t: t > back)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    acked = max([acked] + [int(ln.split()[3]) for ln in out.splitlines()
                           if ln.startswith("progress")])
    r = PnfsloadResult.parse(out.splitlines()[-1])
    assert (r.workload, r.recoveries) == ("writer", 1), r.raw
    assert "the MDS lost the session" in err
    size, data = file_bytes(m, "/wr/ior.0")
    assert (size, sha(data)) == (acked, sha(pattern(1, 0, acked)))


def verified(m: GaneshaServer, directory: str, clients: int, **kw: object) -> dict[int, int]:
    """pnfsload --verifier: how much of each client's part is the pattern."""
    argv = pnfsload_argv(m.nfs_addr, directory, clients, export=m.pseudo, timeout=60,
                         extra=["--verifier"], **kw)  # type: ignore[arg-type]
    proc = start_pnfsload(argv, pod=m.pod)
    out, err = proc.communicate(timeout=90)
    if proc.returncode != 0:
        raise PnfsloadError(err)
    return {int(ln.split()[1]): int(ln.split()[2]) for ln in out.splitlines()
            if ln.startswith("verified")}


def test_a_writer_rides_through_a_killed_osd_and_the_verifier_reads_every_acknowledged_byte(
        mds_factory: Callable[..., PandoMds]) -> None:
    """--writer (tests/bench/soak) when an OSD holding a mirror of its file
    is killed: the failed write is reported in LAYOUTRETURN and goes
    through the manager, the next ones get a new layout and go on; the
    verifier then reads, through layouts, every byte each writer
    acknowledged, with the OSD still down."""
    m = pando(mds_factory)
    argv = pnfsload_argv(m.nfs_addr, "ride", 2, export=m.pseudo, transfer=64 * 1024,
                         block=64 * MiB, timeout=120, extra=["--writer", "--pace", "10"])
    proc = start_pnfsload(argv, pod=m.pod)
    acked: dict[int, int] = {}
    try:
        progress_lines(proc, lambda t: True, acked)
        victim = mds_files.components(m, "/ride/ior.0")[0][0]
        m.osds[victim - 1].kill9()
        killed, at_kill = time.monotonic(), dict(acked)
        progress_lines(proc, lambda t: t > killed + 3, acked)
        r, err = stop_writer(proc, acked)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert r.ds_errors >= 1 and r.mds_io_bytes > 0, r.raw
    assert "reported, written through the MDS" in err
    assert r.layouts > 2, "a new layout after the failure"
    assert all(acked[i] > at_kill.get(i, 0) for i in (0, 1)), "both writers went on"
    for i in (0, 1):
        size, data = file_bytes(m, f"/ride/ior.{i}")
        assert (size, sha(data)) == (acked[i], sha(pattern(i + 1, 0, acked[i])))
    assert verified(m, "ride", 2, block=64 * MiB, transfer=64 * 1024) == acked
    m.osds[victim - 1].start()


def test_a_shared_writer_in_an_rs_directory_writes_through_the_manager_and_is_verified(
        mds_factory: Callable[..., PandoMds]) -> None:
    """--writer --shared: client i writes its part [i * block, (i + 1) *
    block) of ior.shared.  In an RS(4,2) directory every layout is refused
    (no client computes parity): each write goes through the manager.  The
    verifier reads each part up to the file's end: the pattern up to what
    its writer acknowledged, a hole after."""
    m = mds_factory(6, pnfs=True, mirrors=2)
    with mds_files.connect(m) as c:
        mkdir(c, m.root_handle(), "ec")
    ok, msg = layout_set(m, "/ec", {"scheme": "rs", "k": 4, "m": 2, "stripe_unit": 16 * 1024})
    assert ok, msg
    block = 32 * MiB
    argv = pnfsload_argv(m.nfs_addr, "ec", 2, export=m.pseudo, shared=True, transfer=64 * 1024,
                         block=block, timeout=120, extra=["--writer", "--pace", "20"])
    proc = start_pnfsload(argv, pod=m.pod)
    acked: dict[int, int] = {}
    try:
        progress_lines(proc, lambda t: True, acked)
        time.sleep(1.5)
        r, _ = stop_writer(proc, acked)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert (r.layouts, r.ds_io_bytes) == (0, 0) and r.mds_io_bytes == sum(acked.values()), r.raw
    assert 0 < acked[1] < block, "the second part ends inside the file"
    size, data = file_bytes(m, "/ec/ior.shared")
    assert size == block + acked[1]
    want = pattern(0, 0, acked[0]) + bytes(block - acked[0]) + pattern(0, block, acked[1])
    assert sha(data) == sha(want)
    got = verified(m, "ec", 2, shared=True, block=block, transfer=64 * 1024)
    for i in (0, 1):
        # a hole reads as the pattern as far as the pattern's next bytes are zero
        extra = pattern(0, i * block + acked[i], got[i] - acked[i])
        assert got[i] >= acked[i] and extra == bytes(len(extra)), (i, got, acked)


def test_the_verifier_stops_at_a_hole_and_fails_on_bytes_no_writer_wrote(
        mds_factory: Callable[..., PandoMds]) -> None:
    m = pando(mds_factory)
    load(m, "hole", clients=1, ior="write", block=MiB)
    with mds_files.connect(m) as c:
        fh = lookup_path(c, m.root_handle(), "/hole/ior.0")
        c.write_all(fh, 300000, bytes(5000))
    assert verified(m, "hole", 1, block=64 * MiB) == {0: 300000}
    with mds_files.connect(m) as c:
        c.write_all(fh, 700001, b"pando!")
    with pytest.raises(PnfsloadError, match="client 0: READ ior.0: data mismatch at file offset "
                                            "700001 .neither the pattern nor a hole."):
        verified(m, "hole", 1, block=64 * MiB)


def test_a_writer_fenced_for_a_recall_it_never_heard_goes_on(
        pod: Pod, mds_factory: Callable[..., PandoMds]) -> None:
    """--writer whose back channel is cut (a proxy swallows the manager's
    callbacks) while its layout is recalled: after Recall_Timeout the
    manager fences it.  Its writes through the old layout are refused by
    the OSDs (STALE): reported, written through the manager, and it goes
    on through a new layout; the file holds what it acknowledged."""
    m = mds_factory(4, pnfs=True, mirrors=2, extra_fsal="Recall_Timeout = 2;")
    blocker = CallbackBlocker(pod, PROXY_PORT, m.nfs_port)
    blocker.start()
    argv = pnfsload_argv(f"{m.host}:{PROXY_PORT}", "fence", export=m.pseudo,
                         transfer=64 * 1024, block=64 * MiB, timeout=120,
                         extra=["--writer", "--pace", "20"])
    proc = start_pnfsload(argv, pod=m.pod)
    acked: dict[int, int] = {}
    try:
        progress_lines(proc, lambda t: True, acked)
        blocker.blocking = True
        PnfsCluster(m.pod, m, list(m.osds)).recall_file("/fence/ior.0")
        fenced = time.monotonic()
        progress_lines(proc, lambda t: t > fenced + 6, acked)
        r, err = stop_writer(proc, acked)
    finally:
        blocker.stop()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert "in time: fenced" in m.log_text()
    assert blocker.dropped >= 1 and r.ds_errors >= 1, r.raw
    assert "NFS3ERR_STALE (70); reported, written through the MDS" in err, err
    size, data = file_bytes(m, "/fence/ior.0")
    assert (size, sha(data)) == (acked[0], sha(pattern(1, 0, acked[0])))


def test_a_writer_started_while_the_manager_is_down_waits_for_it(
        mds_factory: Callable[..., PandoMds]) -> None:
    """A riding workload that starts while the MDS restarts (connections
    refused, then dropped) waits for it, as a mount does, then writes."""
    m = pando(mds_factory)
    m.kill9()
    argv = pnfsload_argv(m.nfs_addr, "late", export=m.pseudo, transfer=64 * 1024, block=MiB,
                         timeout=60, extra=["--writer"])
    proc = start_pnfsload(argv, pod=m.pod)
    time.sleep(1.5)
    m.start()
    r = wait_pnfsload(proc, timeout=90)
    assert (r.workload, r.bytes) == ("writer", MiB), r.raw
    size, data = file_bytes(m, "/late/ior.0")
    assert (size, sha(data)) == (MiB, sha(pattern(1, 0, MiB)))


def test_a_stonewalled_write_stops_at_its_deadline_and_leaves_a_file_without_holes(
        mds_factory: Callable[..., PandoMds]) -> None:
    """IOR's stonewalling (--stonewall): no transfer starts after the
    deadline, every one started is finished, and the LAYOUTCOMMIT makes
    the size what was written: a prefix of the pattern, no hole."""
    m = mds_factory(4, pnfs=True, mirrors=2, osd_args=["--write-bandwidth", "4M"])
    block = 64 * MiB
    w = load(m, "sw", ior="write", block=block, transfer=256 * 1024, depth=4,
             extra=["--stonewall", "1"])
    assert 0 < w.bytes < block // 4 and w.seconds < 6, w.raw
    size, data = file_bytes(m, "/sw/ior.0")
    assert (size, sha(data)) == (w.bytes, sha(pattern(1, 0, w.bytes)))
    r = load(m, "sw", ior="read", block=w.bytes, verify=True, extra=["--stonewall", "30"])
    assert r.bytes == w.bytes


@pytest.mark.parametrize("unique", [False, True], ids=["shared_dir", "unique_dirs"])
def test_mdtest_creates_stats_and_removes_every_file_it_names(
        mds_factory: Callable[..., PandoMds], unique: bool) -> None:
    m = pando(mds_factory)
    clients, files = 3, 40
    kw: dict[str, object] = dict(clients=clients, files=files, unique_dir=unique)
    created = load(m, "md", mdtest="create", **kw)
    assert (created.ops, created.bytes, created.layouts) == (clients * files, 0, 0)
    if unique:
        assert names_in(m, "/md") == {f"c{i}" for i in range(clients)}
        for i in range(clients):
            assert names_in(m, f"/md/c{i}") == {f"mdtest.{n}" for n in range(files)}
    else:
        assert names_in(m, "/md") == {f"mdtest.{i}.{n}" for i in range(clients)
                                      for n in range(files)}
    assert load(m, "md", mdtest="stat", **kw).ops == clients * files
    assert load(m, "md", mdtest="remove", **kw).ops == clients * files
    assert names_in(m, "/md") == set()


def test_mdtest_write_bytes_keeps_small_files_in_the_manager_and_sends_large_ones_to_the_osds(
        mds_factory: Callable[..., PandoMds]) -> None:
    """mdtest -w: each create writes W bytes as Linux would, asking for a
    layout of [0, W).  4 KiB files stay inline (the layout refused, the
    bytes through the manager); 256 KiB files go to both mirrors."""
    m = pando(mds_factory)
    clients, files = 2, 10
    small = load(m, "small", mdtest="create", clients=clients, files=files, depth=4,
                 extra=["--write-bytes", "4K"])
    assert (small.ops, small.bytes, small.layouts) == (clients * files, clients * files * 4096, 0)
    assert (small.mds_io_bytes, small.ds_io_bytes) == (clients * files * 4096, 0)
    assert file_bytes(m, "/small/mdtest.1.7") == (4096, pattern(0, 0, 4096))
    assert mds_files.components(m, "/small/mdtest.1.7") == []
    big = 256 * 1024
    large = load(m, "large", mdtest="create", clients=clients, files=files, depth=4,
                 extra=["--write-bytes", str(big)])
    assert (large.layouts, large.mds_io_bytes) == (clients * files, 0)
    assert large.ds_io_bytes == 2 * clients * files * big
    assert file_bytes(m, "/large/mdtest.0.3") == (big, pattern(0, 0, big))
    comps = mds_files.components(m, "/large/mdtest.0.3")
    assert [sha(mds_files.object_bytes(m, osd, oid)) for osd, oid in comps] == \
        [sha(pattern(0, 0, big))] * 2


def make_io500_tree(m: GaneshaServer) -> None:
    """tree/easy: 3 clients x 20 empty files in a directory each (mdtest
    easy); tree/hard: 2 clients x 600 files of 3,901 bytes in one (hard),
    more than one READDIR reply holds."""
    load(m, "tree/easy", mdtest="create", clients=3, files=20, unique_dir=True)
    load(m, "tree/hard", mdtest="create", clients=2, files=600, depth=8,
         extra=["--write-bytes", "3901"])


@pytest.mark.parametrize("server", ["pando", "vfs"])
def test_find_lists_every_entry_of_the_tree_and_matches_the_hard_files_by_size(
        mds_factory: Callable[..., PandoMds], pod: Pod, tmp_path: Path, server: str) -> None:
    vfs = GaneshaVfs(pod, tmp_path / "vfs", protocols=(3, 4)) if server == "vfs" else None
    m: GaneshaServer = vfs.start() if vfs else pando(mds_factory)
    try:
        make_io500_tree(m)
        f = load(m, "tree", extra=["--find", "--find-size", "3901"], depth=4)
        # easy, hard; c0..c2 and their 60 files; the 1,200 hard files
        assert (f.workload, f.phase, f.ops, f.matches) == ("find", "find", 2 + 3 + 60 + 1200,
                                                           1200)
        assert load(m, "tree/easy", extra=["--find", "--find-size", "3901"]).matches == 0
        with pytest.raises(PnfsloadError, match="--find walks the tree with one client"):
            load(m, "tree", clients=2, extra=["--find"])
    finally:
        if vfs:
            vfs.stop()


def test_no_layouts_moves_every_byte_through_the_pando_manager(
        mds_factory: Callable[..., PandoMds]) -> None:
    m = pando(mds_factory)
    w = load(m, "gw", clients=2, ior="write", block=BLOCK, no_layouts=True)
    assert (w.bytes, w.layouts, w.mds_io_bytes, w.ds_io_bytes) == (2 * BLOCK, 0, 2 * BLOCK, 0)
    for i in range(2):
        size, data = file_bytes(m, f"/gw/ior.{i}")
        assert (size, sha(data)) == (BLOCK, sha(pattern(i + 1, 0, BLOCK)))
    r = load(m, "gw", clients=2, ior="read", block=BLOCK, verify=True)
    assert (r.bytes, r.layouts, r.ds_io_bytes) == (2 * BLOCK, 2, 2 * BLOCK), \
        "a file written through the manager is read over pNFS"


def test_against_ganesha_vfs_every_byte_goes_through_the_server(pod: Pod,
                                                                 tmp_path: Path) -> None:
    with GaneshaVfs(pod, tmp_path / "vfs", protocols=(3, 4)) as vfs:
        w = load(vfs, "vfs", clients=2, ior="write", block=BLOCK, transfer=64 * 1024)
        assert (w.bytes, w.layouts, w.mds_io_bytes) == (2 * BLOCK, 0, 2 * BLOCK)
        assert vfs.export_dir is not None
        for i in range(2):
            data = (Path(vfs.export_dir) / "vfs" / f"ior.{i}").read_bytes()
            assert sha(data) == sha(pattern(i + 1, 0, BLOCK))
        r = load(vfs, "vfs", clients=2, ior="read", block=BLOCK, verify=True, no_layouts=True)
        assert (r.bytes, r.mds_io_bytes) == (2 * BLOCK, 2 * BLOCK)
        md = load(vfs, "vfs-md", clients=2, mdtest="create", files=20)
        assert md.ops == 40 and len(names_in(vfs, "/vfs-md")) == 40


def http_like_server(pod: Pod) -> socket.socket:
    """A listener in the pod whose peer answers anything with an HTTP error
    and keeps the connection open (bytes that are no RPC record)."""
    listener = pod.call_inside(lambda: socket.create_server(("127.0.0.1", 0)))

    def serve() -> None:
        try:
            conn, _ = listener.accept()
        except OSError:
            return
        with conn:
            try:
                conn.recv(65536)
                conn.sendall(b"HTTP/1.0 400 Bad Request\r\n\r\n")
                conn.recv(65536)
            except OSError:
                pass  # pnfsload hung up: what it should do

    threading.Thread(target=serve, daemon=True).start()
    return listener


def test_a_server_that_is_not_nfs_or_a_missing_export_fails_with_a_clear_message(
        mds_factory: Callable[..., PandoMds]) -> None:
    m = pando(mds_factory, osds=2)
    osd = m.osds[0]
    http = http_like_server(m.pod)
    cases = [(f"{osd.host}:{osd.ctl_port}", "/pando", "not accepted"),
             (f"127.0.0.1:{http.getsockname()[1]}", "/pando", "malformed RPC reply"),
             (f"{m.host}:1", "/pando", "Connection refused"),
             (m.nfs_addr, "/no-such-export", "NFS4ERR_NOENT")]
    for addr, export, message in cases:
        argv = pnfsload_argv(addr, "x", export=export, ior="write", block=MiB)
        with pytest.raises(PnfsloadError, match=message):
            run_pnfsload(argv, pod=m.pod, timeout=60)
    http.close()


@pytest.mark.slow
def test_pnfsload_leaves_on_the_osds_and_in_the_namespace_what_a_6_12_kernel_leaves(
        pnfs_cluster: Callable[..., PnfsCluster], guest: Callable[..., KernelClient]) -> None:
    """A stock 6.12 client writes pnfsload's pattern with dd over pNFS and
    touches mdtest's names; pnfsload does the same in another directory.
    Both files are the same size with the same bytes in both mirrors'
    objects, and both directories hold the same names."""
    c = pnfs_cluster(mirrors=2)
    assert c.gate is not None
    m, size = c.mds, 3 * MiB + 12
    c.gate.data["pattern"] = pattern(1, 0, size)
    kc = guest("6.12", c)
    script = c.gate.guest_lib() + """
getdata pattern /tmp/pattern
dd if=/tmp/pattern of=ior.0 bs=1M conv=fsync 2>/tmp/dd.err || fail "dd: $(cat /tmp/dd.err)"
mkdir md || fail "mkdir md"
for n in 0 1 2 3 4; do touch md/mdtest.0.$n || fail "touch md/mdtest.0.$n"; done
"""
    vm = kc.start(Scenario().step("sh", "v4.2", script), timeout=300)
    res = vm.wait()
    vm.kill()
    res.assert_ok()
    kernel_dir = "/k6_12-1/s1-sh"
    # The OSDs are advertised at the guests' 10.0.2.2: pnfsload, in the
    # pod, reaches the same ports on loopback.
    w = load(m, "p", ior="write", block=size, extra=["--ds-host", "127.0.0.1"])
    assert (w.layouts, w.mds_io_bytes) == (1, 0)
    load(m, "p/md", mdtest="create", files=5)
    want = sha(pattern(1, 0, size))
    for path in (f"{kernel_dir}/ior.0", "/p/ior.0"):
        assert file_bytes(m, path)[0] == size, path
        objects = [mds_files.object_bytes(m, osd, oid)
                   for osd, oid in mds_files.components(m, path)]
        assert [sha(o) for o in objects] == [want, want], path
    assert names_in(m, f"{kernel_dir}/md") == names_in(m, "/p/md") == \
        {f"mdtest.0.{n}" for n in range(5)}
