"""The pNFS data path with every kernel: files written and read over
NFSv4.2 (what a mount without vers= gets) go straight to the OSDs,
mirrored, and the manager moves no data.

Each kernel (6.1, 6.12, 7.x) writes files of several sizes over a
whole-file mirrored flexfiles layout (4 OSDs, 2 mirrors), drops its cache
and reads them back; then the test checks from the server side: the OSDs'
NFSv3 data-server counters, the manager's own byte counters
(layout_status), both mirrors' objects byte for byte, and the same files
read over an NFSv3 mount of the same guest."""
from __future__ import annotations

from typing import Callable

import pytest

from pando_testing.e2e import KERNEL_IDS, KernelClient
from pando_testing.mountstats import parse_mountstats
from pando_testing.pnfs_guest import report_over_v3, reports, write_and_report
from pando_testing.pnfs_tools import PnfsCluster, sha256
from pando_testing.vm import Scenario

# One page (a new file gets objects at its first write layout, however
# small), just over the 64 KiB inline threshold, just over one 1 MiB
# stripe unit / wsize, and several MiB ending in a partial page.
SIZES = (4096, 100000, 1048577, 5 * 1048576 + 3)
MDS_SHARE = 0.03    # the most of the data the manager may move itself


@pytest.mark.parametrize("version", KERNEL_IDS)
def test_pnfs_data_path(version: str, pnfs_cluster: Callable[..., PnfsCluster],
                        guest: Callable[..., KernelClient]) -> None:
    c = pnfs_cluster(mirrors=2)
    gate = c.gate
    assert gate is not None
    kc = guest(version, c)
    run = kc.next_vm_name()
    sc = (Scenario()
          .step("sh", "v4.2", write_and_report(SIZES, gate.guest_lib(), "pnfs-done"))
          .step("mountstats", "v4.2")
          .step("sh", "v3", report_over_v3(run, SIZES)))
    osd0, ls0 = c.osd_stats(), c.layout_status()
    vm = kc.start(sc, timeout=400)
    # The guest stops at the gate after its pNFS I/O: the server side is
    # measured before the NFSv3 reads (which go through the manager).
    gate.wait("pnfs-done", timeout=300, vms=[vm])
    osd1, ls1 = c.osd_stats(), c.layout_status()
    gate.release("pnfs-done")
    res = vm.wait()
    vm.kill()
    print(res.report())
    res.assert_ok()
    ls2 = c.layout_status()

    wrote = {line.split()[1]: line.split()[2] for line in res.steps[0].output.splitlines()
             if line.startswith("wrote ")}
    got = reports(res.steps[0])
    assert set(got) == {f"f.{s}" for s in SIZES}, res.steps[0].output
    for s in SIZES:
        r = got[f"f.{s}"]
        assert r.size == s and r.sha256 == wrote[r.name], \
            f"{r.name} read back over pNFS as {r.size} bytes sha256 {r.sha256}, " \
            f"wrote {s} bytes {wrote[r.name]}"
    total = sum(SIZES)

    # The guest's own view.  mountstats counts a COMPOUND under its first
    # operation.  Linux sends its first LAYOUTGET inside OPEN (OPEN +
    # LAYOUTGET), and with return-on-close layouts the LAYOUTRETURN rides
    # in the CLOSE compound: with whole-file layouts both often stay at 0
    # here although layouts were granted and returned (layout_status
    # counts them server-side, below).  GETDEVICEINFO and LAYOUTCOMMIT
    # are sent on their own.
    mounts = {m.mountpoint: m for m in parse_mountstats(res.step("mountstats").output)}
    v42 = mounts["/mnt/v4.2"]
    print(f"{version} mountstats: {v42.counts()}")
    for op in ("GETDEVICEINFO", "LAYOUTCOMMIT"):
        assert v42.count(op) > 0, f"{op} never sent by {version}: {v42.counts()}"
    assert v42.count("LAYOUTCOMMIT") >= len(SIZES), v42.counts()

    # The manager granted layouts and moved (almost) no data itself.
    assert ls1.granted - ls0.granted >= len(SIZES), f"layouts granted: {ls0} -> {ls1}"
    # Layouts are not return-on-close: the guest keeps them across its
    # opens and returns them when its inodes go (at the unmount).
    assert ls2.returned - ls0.returned == ls2.granted - ls0.granted > 0 and ls2.segments == 0, \
        f"layouts still out after the guest unmounted: {ls2}"
    mds_w = ls1.mds_write_bytes - ls0.mds_write_bytes
    mds_r = ls1.mds_read_bytes - ls0.mds_read_bytes
    assert mds_w <= MDS_SHARE * total and mds_r <= MDS_SHARE * total, \
        f"the manager moved {mds_w} bytes written and {mds_r} read of {total} (pNFS I/O should bypass it)"

    # The OSDs' data-server endpoints took every byte twice (two mirrors)
    # and served the reads.
    d = c.stats_delta(osd0, osd1)
    print(f"{version} OSD deltas: " + ", ".join(
        f"osd{i}: w {v['nfs_write_bytes']} r {v['nfs_read_bytes']}" for i, v in sorted(d.items())))
    assert c.total(d, "nfs_write_bytes") == 2 * total, \
        f"OSDs took {c.total(d, 'nfs_write_bytes')} bytes over NFSv3, want 2 x {total}"
    assert c.total(d, "nfs_read_bytes") >= total, \
        f"OSDs served {c.total(d, 'nfs_read_bytes')} bytes, the guest read {total}"
    assert c.total(d, "nfs_err_rejected") == 0
    assert sum(1 for v in d.values() if v["nfs_write_bytes"]) >= 2

    # Both mirrors of every file hold exactly what the guest wrote.
    for s in SIZES:
        r = got[f"f.{s}"]
        comps, images = c.mirrors(r.ino, s, copies=2)
        assert comps[0].osd_id != comps[1].osd_id, f"{r.name}: both mirrors on one OSD: {comps}"
        for k, img in zip(comps, images):
            assert k.length == s, f"{r.name}: object {k} is {k.length} bytes, the file {s}"
            assert sha256(img) == r.sha256, \
                f"{r.name}: mirror on OSD {k.osd_id} differs from what the guest wrote"

    assert not c.damage(), f"damage recorded in a run without failures: {c.damage()}"

    # The same files over NFSv3 (through the manager as a gateway).
    v3 = reports(res.steps[2])
    for s in SIZES:
        r, r3 = got[f"f.{s}"], v3[f"f.{s}"]
        assert (r3.ino, r3.size, r3.sha256) == (r.ino, r.size, r.sha256), \
            f"{r.name} over NFSv3: {r3}, over pNFS: {r}"
    # ...which the manager's counters do see: the near-zero above is real.
    assert ls2.mds_read_bytes - ls1.mds_read_bytes >= total, f"{ls1} -> {ls2}"


def test_export_with_pnfs_off_is_a_gateway(pnfs_cluster: Callable[..., PnfsCluster],
                                           guest: Callable[..., KernelClient]) -> None:
    """Pnfs = false in the export: the client is offered no layout type,
    so over NFSv4.1 every byte goes through the manager and none straight
    to an OSD; the files are whole and mirrored all the same."""
    c = pnfs_cluster(mirrors=2, pnfs=False)
    gate = c.gate
    assert gate is not None
    kc = guest("6.12", c)
    sc = (Scenario().step("sh", "v4.1", write_and_report(SIZES, gate.guest_lib(), "pnfs-done"))
          .step("mountstats", "v4.1"))
    osd0, ls0 = c.osd_stats(), c.layout_status()
    vm = kc.start(sc, timeout=400)
    gate.wait("pnfs-done", timeout=300, vms=[vm])
    gate.release("pnfs-done")
    res = vm.wait()
    vm.kill()
    print(res.report())
    res.assert_ok()
    osd1, ls1 = c.osd_stats(), c.layout_status()
    got = reports(res.steps[0])
    wrote = {line.split()[1]: line.split()[2] for line in res.steps[0].output.splitlines()
             if line.startswith("wrote ")}
    assert {n: (r.size, r.sha256) for n, r in got.items()} == \
        {f"f.{s}": (s, wrote[f"f.{s}"]) for s in SIZES}
    v41 = {m.mountpoint: m for m in parse_mountstats(res.step("mountstats").output)}["/mnt/v4.1"]
    assert v41.nfsv4["pnfs"] == "not configured", v41.nfsv4
    assert v41.events["pnfswrite"] == 0 and v41.events["pnfsread"] == 0, v41.events
    assert ls1.granted == ls0.granted, f"layouts granted with Pnfs = false: {ls0} -> {ls1}"
    total = sum(SIZES)
    assert ls1.mds_write_bytes - ls0.mds_write_bytes >= total, f"{ls0} -> {ls1}"
    d = c.stats_delta(osd0, osd1)
    assert c.total(d, "nfs_write_bytes") == 0 and c.total(d, "nfs_read_bytes") == 0, \
        f"a client reached the OSDs' data servers without a layout: {d}"
    for s in SIZES[1:]:
        r = got[f"f.{s}"]
        _, images = c.mirrors(r.ino, s, copies=2)
        assert all(sha256(img) == r.sha256 for img in images), f"{r.name}: a mirror differs"
