"""Layout shapes per kernel: no client ever gets a layout it cannot handle
(docs/architecture.md, "Stock Linux clients").

* Striped and mirrored files (Stripe_Width=2, Mirrors=2: 4 components on
  the 4 OSDs): Linux 6.18+ (7.x here) named in Striped_Clients gets one
  whole-file striped layout, writes every stripe unit to its column on
  both mirrors, and reads it back; 6.1 and 6.12 (not named) get no layout
  (LAYOUTUNAVAILABLE) and their I/O goes through the manager, correctly
  and without EIO (with a striped layout they would get EIO).
* Unmirrored striped files (Mirrors=1, Stripe_Width=3) on kernels that are
  not named: range segments, one stripe unit each, so one file needs many
  LAYOUTGETs, each carrying the layout stateid: the Ganesha 4.3 double
  unref that patch 0010 fixes.  Ganesha must stay up.
"""
from __future__ import annotations

from typing import Callable

import pytest

from pando_testing.e2e import KernelClient
from pando_testing.mountstats import parse_mountstats
from pando_testing.pnfs_guest import FileReport, report_over_v3, reports, write_and_report
from pando_testing.pnfs_tools import PnfsCluster, sha256
from pando_testing.vm import Scenario

MIB = 1 << 20
STRIPE_UNIT = MIB


def run_io(c: PnfsCluster, kc: KernelClient, sizes: tuple[int, ...]):
    """Writes and reads `sizes` over v4.1 (stopping at a gate so the
    server side can be measured), dumps mountstats, reads over v3.
    (result, OSD counter deltas, layout_status before and after the
    v4.1 part, the guest's reports by name)."""
    gate = c.gate
    assert gate is not None
    run = kc.next_vm_name()
    sc = (Scenario().step("sh", "v4.1", write_and_report(sizes, gate.guest_lib(), "io-done"))
          .step("mountstats", "v4.1").step("sh", "v3", report_over_v3(run, sizes)))
    osd0, ls0 = c.osd_stats(), c.layout_status()
    vm = kc.start(sc, timeout=400)
    gate.wait("io-done", timeout=300, vms=[vm])
    osd1, ls1 = c.osd_stats(), c.layout_status()
    gate.release("io-done")
    res = vm.wait()
    vm.kill()
    print(res.report())
    res.assert_ok()
    wrote = {line.split()[1]: line.split()[2] for line in res.steps[0].output.splitlines()
             if line.startswith("wrote ")}
    got = reports(res.steps[0])
    for s in sizes:
        r = got[f"f.{s}"]
        assert (r.size, r.sha256) == (s, wrote[r.name]), \
            f"{r.name}: read back {r.size} bytes sha256 {r.sha256}, wrote {s} bytes {wrote[r.name]}"
        r3 = reports(res.steps[2])[r.name]
        assert (r3.ino, r3.size, r3.sha256) == (r.ino, r.size, r.sha256), \
            f"{r.name} over NFSv3: {r3}, over NFSv4.1: {r}"
    assert not c.damage(), f"damage recorded in a run without failures: {c.damage()}"
    return res, c.stats_delta(osd0, osd1), ls0, ls1, got


def check_striped_objects(c: PnfsCluster, r: FileReport, copies: int, columns: int) -> None:
    """Every mirror, rebuilt from its column objects, is the file; each
    column object holds only its own stripe units (zeros elsewhere)."""
    comps, images = c.mirrors(r.ino, r.size, copies=copies, columns=columns,
                              stripe_unit=STRIPE_UNIT)
    osds = [k.osd_id for k in comps]
    assert len(set(osds)) == len(osds), f"{r.name}: two components on one OSD: {comps}"
    for m, img in enumerate(images):
        assert sha256(img) == r.sha256, \
            f"{r.name}: mirror {m} ({comps[m * columns:(m + 1) * columns]}) is not the file"
    for k in comps:
        col = k.index % columns
        obj = c.read_component(k)
        for off in range(0, len(obj), STRIPE_UNIT):
            if (off // STRIPE_UNIT) % columns != col:
                assert obj[off:off + STRIPE_UNIT].count(0) == len(obj[off:off + STRIPE_UNIT]), \
                    f"{r.name}: column {col} object {k} holds data of stripe unit {off // STRIPE_UNIT}"


STRIPED_SIZES = (100000, 3 * MIB + 12345, 6 * MIB)


def test_striped_mirrored_layout_7x(pnfs_cluster: Callable[..., PnfsCluster],
                                    guest: Callable[..., KernelClient]) -> None:
    """7.x named in Striped_Clients: one whole-file layout, 2 data servers
    per mirror, 2 mirrors; all four OSDs take data, both mirrors complete."""
    c = pnfs_cluster(mirrors=2, stripe_width=2, striped_clients="*")
    res, d, ls0, ls1, got = run_io(c, guest("7.x", c), STRIPED_SIZES)
    total = sum(STRIPED_SIZES)
    v41 = {m.mountpoint: m for m in parse_mountstats(res.step("mountstats").output)}["/mnt/v4.1"]
    print(f"7.x striped: mountstats {v41.counts()}, layout_status {ls1}")
    assert v41.count("GETDEVICEINFO") >= 4 and v41.count("LAYOUTCOMMIT") > 0, v41.counts()
    assert ls1.granted - ls0.granted >= len(STRIPED_SIZES), f"{ls0} -> {ls1}"
    assert c.total(d, "nfs_write_bytes") == 2 * total, d
    assert c.total(d, "nfs_read_bytes") >= total, d
    assert all(v["nfs_write_bytes"] > 0 for v in d.values()) and len(d) == 4, \
        f"striped files should reach all 4 OSDs: {d}"
    assert ls1.mds_write_bytes - ls0.mds_write_bytes <= 0.03 * total, f"{ls0} -> {ls1}"
    assert ls1.mds_read_bytes - ls0.mds_read_bytes <= 0.03 * total, f"{ls0} -> {ls1}"
    for r in got.values():
        check_striped_objects(c, r, copies=2, columns=2)


@pytest.mark.parametrize("version", ["6.1", pytest.param("6.12", marks=pytest.mark.slow)])
def test_striped_mirrored_file_old_kernel_gets_no_layout(
        version: str, pnfs_cluster: Callable[..., PnfsCluster],
        guest: Callable[..., KernelClient]) -> None:
    """The same files for a kernel that Striped_Clients does not name
    (another address is listed; every guest reaches the manager from the
    pod's loopback): LAYOUTUNAVAILABLE, I/O through the manager, which
    writes both mirrors itself; right data, no EIO."""
    c = pnfs_cluster(mirrors=2, stripe_width=2, striped_clients="192.0.2.1")
    res, d, ls0, ls1, got = run_io(c, guest(version, c), STRIPED_SIZES)
    total = sum(STRIPED_SIZES)
    v41 = {m.mountpoint: m for m in parse_mountstats(res.step("mountstats").output)}["/mnt/v4.1"]
    print(f"{version} striped, not named: mountstats {v41.counts()}, layout_status {ls1}, OSDs {d}")
    assert ls1.granted == ls0.granted, f"{version} got a layout for a striped mirrored file: {ls0} -> {ls1}"
    assert v41.count("GETDEVICEINFO") == 0 and v41.count("LAYOUTCOMMIT") == 0, v41.counts()
    assert c.total(d, "nfs_write_bytes") == 0 and c.total(d, "nfs_read_bytes") == 0, \
        f"data-server traffic without a layout: {d}"
    assert ls1.mds_write_bytes - ls0.mds_write_bytes >= total, f"{ls0} -> {ls1}"
    assert c.total(d, "ctl_write_bytes") >= 2 * total, f"the gateway wrote both mirrors: {d}"
    for r in got.values():
        check_striped_objects(c, r, copies=2, columns=2)


SEGMENT_SIZES = (6 * MIB + 4321,)


@pytest.mark.parametrize("version", [pytest.param("6.1", marks=pytest.mark.slow), "6.12",
                                     pytest.param("7.x", marks=pytest.mark.slow)])
def test_range_segments_unmirrored(version: str, pnfs_cluster: Callable[..., PnfsCluster],
                                   guest: Callable[..., KernelClient]) -> None:
    """Mirrors=1, Stripe_Width=3, no striped clients: each LAYOUTGET gets
    the stripe unit at its offset, so a 6 MiB file takes several
    LAYOUTGETs, most on a file whose layout the client already holds.
    Ganesha stays up (what this guards against is an abort: "Error 22,
    acquiring mutex (&state->state_mutex)"), the data is right and spread
    over 3 OSDs."""
    c = pnfs_cluster(mirrors=1, stripe_width=3)
    res, d, ls0, ls1, got = run_io(c, guest(version, c), SEGMENT_SIZES)
    total = sum(SEGMENT_SIZES)
    v41 = {m.mountpoint: m for m in parse_mountstats(res.step("mountstats").output)}["/mnt/v4.1"]
    print(f"{version} range segments: mountstats {v41.counts()}, layout_status {ls1}")
    units = -(-total // STRIPE_UNIT)
    assert v41.count("LAYOUTGET") > 0, f"no standalone LAYOUTGET: {v41.counts()}"
    assert ls1.granted - ls0.granted >= units, \
        f"{units} stripe units written and read, {ls1.granted - ls0.granted} segments granted"
    assert c.mds.alive(), "ganesha.nfsd died"
    assert "Error 22, acquiring mutex" not in c.log_text()
    assert c.total(d, "nfs_write_bytes") == total, d
    spread = {i for i, v in d.items() if v["nfs_write_bytes"] > 0}
    assert len(spread) == 3, f"one mirror, 3 columns: 3 OSDs should take data, got {d}"
    assert ls1.mds_write_bytes - ls0.mds_write_bytes <= 0.03 * total, f"{ls0} -> {ls1}"
    for r in got.values():
        check_striped_objects(c, r, copies=1, columns=3)
        assert {k.osd_id for k in c.components(r.ino)} == spread


@pytest.mark.slow
def test_striped_clients_names_ipv4_client(pnfs_cluster: Callable[..., PnfsCluster],
                                           guest: Callable[..., KernelClient]) -> None:
    """Striped_Clients lists clients by address; a 7.x guest connects from
    the pod's 127.0.0.1 over IPv4.  Listed as "127.0.0.1" it must get the
    striped layout (Ganesha's dual-stack socket shows the address as
    ::ffff:127.0.0.1, which an admin does not write)."""
    c = pnfs_cluster(mirrors=2, stripe_width=2, striped_clients="127.0.0.1")
    sizes = (3 * MIB,)
    res, d, ls0, ls1, got = run_io(c, guest("7.x", c), sizes)
    print(f"Striped_Clients=127.0.0.1, 7.x: layout_status {ls1}, OSD writes "
          f"{c.total(d, 'nfs_write_bytes')}")
    assert ls1.granted > ls0.granted and c.total(d, "nfs_write_bytes") == 2 * sum(sizes), \
        f"a client listed in Striped_Clients by its IPv4 address got no layout: {ls0} -> {ls1}"
