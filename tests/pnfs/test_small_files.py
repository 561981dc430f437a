"""Small files written over pNFS stay inline; large ones still go to the OSDs.

The manager gives every file FATTR4_MDSTHRESHOLD = Inline_Max + 1
(Ganesha patch 0120), so Linux reads and writes a smaller file through
the manager without asking for a layout (`pnfs_within_mdsthreshold`),
and asks at writeback only for larger files, with the first page or
large folio it writes (flexfiles: `ff_layout_pg_init_write`, length
`req->wb_bytes`).  The manager grants such an ask, moving the file to
objects; the whole-file ask in every OPEN for writing (offset 0, all
ones) it refuses (NFS4ERR_BADLAYOUT, which Linux ignores there).

One guest per kernel, one NFSv4.1 mount:
* `small.4096`, `small.61440`: written with dd, no objects, no layout
  granted, no byte on the OSDs' data servers; read back right.
* `big`: 4 MiB `dd bs=1M conv=fsync`: on objects, both mirrors hold it,
  every byte over pNFS, none through the manager, from every kernel (6.1
  asks for one page, 6.12 and 7.x for a 1 MiB folio: both granted).
* `grow`: 4 KiB, then appended past Inline_Max: right sha256, on objects;
  a later append goes over pNFS."""
from __future__ import annotations

import re
from typing import Callable

import pytest

from pando_testing.e2e import KERNEL_IDS, KernelClient
from pando_testing.mountstats import parse_mountstats
from pando_testing.pnfs_guest import DROP, REPORT, reports
from pando_testing.pnfs_tools import PnfsCluster, sha256
from pando_testing.vm import Scenario

INLINE_MAX = 65536   # production's Inline_Max (the pnfs_cluster fixture defaults to 1)

SMALL = (4096, 61440)
BIG = 4 << 20
GROW = (4096, 200000, 1 << 20)      # written, then appended twice
ASK = re.compile(r"LAYOUTGET inode (\d+) (rw|read) offset (\d+) length (\d+) "
                 r"minlength (\d+) size (\d+): (\w+)")


def script(gate_lib: str) -> str:
    return gate_lib + REPORT + DROP + f"""
for s in {' '.join(map(str, SMALL))}; do head -c $s /dev/urandom > /tmp/d.$s; done
head -c {BIG} /dev/urandom > /tmp/d.big
i=0; for s in {' '.join(map(str, GROW))}; do head -c $s /dev/urandom > /tmp/g.$i; i=$((i+1)); done
for s in {' '.join(map(str, SMALL))}; do
  dd if=/tmp/d.$s of=small.$s bs=$s 2>/tmp/dd.err || fail "small.$s: $(cat /tmp/dd.err)"
done
arrive small "a=$(stat -c %i small.{SMALL[0]})&b=$(stat -c %i small.{SMALL[1]})"
dd if=/tmp/d.big of=big bs=1M conv=fsync 2>/tmp/dd.err || fail "big: $(cat /tmp/dd.err)"
arrive big "ino=$(stat -c %i big)"
cat /tmp/g.0 > grow && sync && cat /tmp/g.1 >> grow && sync || fail "grow"
arrive grown "ino=$(stat -c %i grow)"
cat /tmp/g.2 >> grow && sync || fail "grow again"
arrive again
for s in {' '.join(map(str, SMALL))}; do echo "wrote small.$s $(sha256sum < /tmp/d.$s | cut -d' ' -f1)"; done
echo "wrote big $(sha256sum < /tmp/d.big | cut -d' ' -f1)"
echo "wrote grow $(cat /tmp/g.0 /tmp/g.1 /tmp/g.2 | sha256sum | cut -d' ' -f1)"
drop
for s in {' '.join(map(str, SMALL))}; do report small.$s; done
report big; report grow
"""


@pytest.mark.slow
@pytest.mark.parametrize("version", KERNEL_IDS)
def test_small_files_written_over_pnfs_stay_inline(
        version: str, pnfs_cluster: Callable[..., PnfsCluster],
        guest: Callable[..., KernelClient]) -> None:
    c = pnfs_cluster(mirrors=2, inline_max=INLINE_MAX)
    gate = c.gate
    assert gate is not None
    c.set_log("COMPONENT_PNFS", "DEBUG")
    kc = guest(version, c)
    sc = Scenario().step("sh", "v4.1", script(gate.guest_lib())).step("mountstats", "v4.1")
    osd0, ls0 = c.osd_stats(), c.layout_status()
    vm = kc.start(sc, timeout=500)

    q = gate.wait("small", timeout=300, vms=[vm]).query
    osd1, ls1 = c.osd_stats(), c.layout_status()
    small_inos = [int(q["a"]), int(q["b"])]
    for ino in small_inos:
        assert c.components(ino) == [], f"small file inode {ino} moved to objects"
    d = c.stats_delta(osd0, osd1)
    assert ls1.granted == ls0.granted and c.total(d, "nfs_write_bytes") == 0, \
        f"small files got layouts or reached the OSDs: {ls0} -> {ls1}, OSDs {d}"
    assert ls1.mds_write_bytes - ls0.mds_write_bytes >= sum(SMALL), f"{ls0} -> {ls1}"
    gate.release("small")

    big_ino = int(gate.wait("big", timeout=300, vms=[vm]).query["ino"])
    osd2, ls2 = c.osd_stats(), c.layout_status()
    d = c.stats_delta(osd1, osd2)
    via_mds = ls2.mds_write_bytes - ls1.mds_write_bytes
    via_pnfs = c.total(d, "nfs_write_bytes") // 2
    print(f"{version} big file: {via_pnfs} bytes over pNFS, {via_mds} through the manager")
    assert len(c.wait_components(big_ino, 2)) == 2, "the 4 MiB file is not on two mirrors"
    assert via_pnfs == BIG and via_mds == 0 and ls2.granted > ls1.granted, \
        f"the 4 MiB file did not go over pNFS: {ls1} -> {ls2}, OSDs {d}"
    gate.release("big")

    grow_ino = int(gate.wait("grown", timeout=300, vms=[vm]).query["ino"])
    ls3 = c.layout_status()
    assert len(c.wait_components(grow_ino, 2)) == 2, "the grown file is not on objects"
    gate.release("grown")
    gate.wait("again", timeout=300, vms=[vm])
    osd4, ls4 = c.osd_stats(), c.layout_status()
    gate.release("again")
    res = vm.wait()
    vm.kill()
    print(res.report())
    res.assert_ok()

    asks = [m.groups() for m in ASK.finditer(c.log_text())]
    for a in asks:
        print(f"{version} LAYOUTGET inode {a[0]} {a[1]} offset {a[2]} length {a[3]} "
              f"minlength {a[4]} size {a[5]}: {a[6]}")
    # The append to the file already on objects went over pNFS (with the
    # write layout its growth got: the client keeps it past CLOSE), none
    # of it through the manager.
    d = c.stats_delta(osd2, osd4)
    assert c.total(d, "nfs_write_bytes") > 0 and ls4.mds_write_bytes == ls3.mds_write_bytes, \
        f"the append to the grown file did not go over pNFS: {ls3} -> {ls4}, OSDs {d}"

    got = reports(res.steps[0])
    wrote = {line.split()[1]: line.split()[2] for line in res.steps[0].output.splitlines()
             if line.startswith("wrote ")}
    sizes = {**{f"small.{s}": s for s in SMALL}, "big": BIG, "grow": sum(GROW)}
    for name, size in sizes.items():
        assert got[name].size == size and got[name].sha256 == wrote[name], \
            f"{name} read back as {got[name]}, wrote {size} bytes {wrote[name]}"
    v41 = {m.mountpoint: m for m in parse_mountstats(res.step("mountstats").output)}["/mnt/v4.1"]
    print(f"{version} mountstats: {v41.counts()}")
    for name, comps in (("big", c.components(big_ino)), ("grow", c.components(grow_ino))):
        size = got[name].size
        for k in comps:
            assert sha256(c.read_component(k)[:size].ljust(size, b"\0")) == got[name].sha256, \
                f"{name}: component {k} differs from what the guest reads"
    for ino, s in zip(small_inos, SMALL):
        assert got[f"small.{s}"].ino == ino


CREATES = 1000


def create_script(gate_lib: str) -> str:
    """CREATES files of 4 KiB copied by one `cp` (one process: open,
    write, close per file, no fork per file), timed by /proc/uptime."""
    return gate_lib + f"""
mkdir /tmp/src && head -c 4096 /dev/urandom > /tmp/one
i=0; while [ $i -lt {CREATES} ]; do cp /tmp/one /tmp/src/f$i; i=$((i+1)); done
read -r t0 _ < /proc/uptime
cp -r /tmp/src dst || fail "cp"
read -r t1 _ < /proc/uptime
echo "created {CREATES} $t0 $t1"
[ "$(cat dst/f7 | sha256sum)" = "$(sha256sum < /tmp/one)" ] || fail "f7 reads back wrong"
"""


@pytest.mark.slow
@pytest.mark.parametrize("vers,inline_max", [("v4.1", 1), ("v4.1", 65536), ("v3", 65536)],
                         ids=["every-file-to-objects", "inline", "nfs3"])
def test_create_rate_of_4k_files_over_pnfs(vers: str, inline_max: int,
                                           pnfs_cluster: Callable[..., PnfsCluster],
                                           guest: Callable[..., KernelClient]) -> None:
    """Prints 4 KiB creates/s from a 6.12 guest over NFSv4.1 with layouts
    (and over NFSv3 to compare).  Inline_Max = 1 takes the path every new
    file took before small files stayed inline: objects at the OPEN's
    LAYOUTGET, data to the OSDs."""
    c = pnfs_cluster(mirrors=2, inline_max=inline_max)
    gate = c.gate
    assert gate is not None
    kc = guest("6.12", c)
    osd0, ls0 = c.osd_stats(), c.layout_status()
    res = kc.run(Scenario().step("sh", vers, create_script(gate.guest_lib()))
                 .step("mountstats", vers), timeout=600)
    print(res.report())
    res.assert_ok()
    osd1, ls1 = c.osd_stats(), c.layout_status()
    line = next(x for x in res.steps[0].output.splitlines() if x.startswith("created "))
    n, t0, t1 = line.split()[1:]
    rate = int(n) / (float(t1) - float(t0))
    on_osds = c.total(c.stats_delta(osd0, osd1), "nfs_write_bytes")
    print(f"Inline_Max {inline_max}: {rate:.0f} files of 4 KiB/s over {vers} (6.12), "
          f"layouts granted {ls1.granted - ls0.granted}, OSD data-server bytes {on_osds}")
    ms = {m.mountpoint: m for m in parse_mountstats(res.step("mountstats").output)}
    print(f"{vers} mountstats: {ms[f'/mnt/{vers}'].counts()}")
    if inline_max > 4096:
        assert ls1.granted == ls0.granted and on_osds == 0, f"{ls0} -> {ls1}"
    else:
        assert ls1.granted - ls0.granted >= CREATES and on_osds >= 2 * 4096 * CREATES


@pytest.mark.slow
@pytest.mark.parametrize("version,bs,count", [
    ("6.1", "1M", 64), ("6.12", "4k", 16384), ("6.12", "1M", 64)],
    ids=["6.1-1M", "6.12-4k", "6.12-1M"])
def test_a_new_64_mib_file_goes_over_pnfs_whatever_its_first_writeback_ask(
        version: str, bs: str, count: int,
        pnfs_cluster: Callable[..., PnfsCluster], guest: Callable[..., KernelClient]) -> None:
    """A new 64 MiB file written with dd and one `sync` is one writeback
    pass.  Its first ask is one page from 6.1 (no large folios) and from
    6.12 writing 4 KiB blocks, a 1 MiB folio from 6.12 writing 1 MiB
    blocks.  The file is past the MDS threshold, so each ask is for a big
    file: granted, every byte over pNFS.  (Before patch 0120 the one-page
    asks were refused, and all 64 MiB went through the manager.)"""
    c = pnfs_cluster(mirrors=2, inline_max=INLINE_MAX)
    kc = guest(version, c)
    osd0, ls0 = c.osd_stats(), c.layout_status()
    res = kc.run(Scenario().step("sh", "v4.1", f"dd if=/dev/zero of=f bs={bs} count={count} "
                                 "2>/dev/null && sync || fail dd"), timeout=600)
    res.assert_ok()
    osd1, ls1 = c.osd_stats(), c.layout_status()
    size = 64 << 20
    via_pnfs = c.total(c.stats_delta(osd0, osd1), "nfs_write_bytes") // 2
    via_mds = ls1.mds_write_bytes - ls0.mds_write_bytes
    print(f"{version} dd bs={bs}: {via_pnfs} bytes over pNFS, {via_mds} through the manager")
    assert (via_pnfs, via_mds) == (size, 0)
