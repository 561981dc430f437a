"""Erasure-coded files with stock kernel clients (ganesha-fsal/README.md,
"Erasure-coded files"): a directory with an RS(4,2) policy over six OSDs.

* Writes never get a layout (no client computes parity): every kernel
  writes through the manager's gateway, which writes data and parity to
  all six OSDs.
* Reads: 7.x, named in Striped_Clients, gets a read layout of the k data
  components and reads them from the OSDs itself; 6.1 and 6.12 (not
  named: they fail striped layouts with EIO) get none and read through
  the manager.
* One OSD holding a data component killed (kill -9), then a second (m
  lost): every file still reads back byte for byte, after a cache drop,
  with no EIO; 7.x holds its files open and reads right after the first
  kill, with read layouts naming the dead OSD: it falls back to the
  manager.  With both down a rewrite of a
  range of an old file goes through the gateway and reads back right.
* A new file with both OSDs down reads back right: it is born degraded
  (its components on the dead OSDs recorded stale at create).
"""
from __future__ import annotations

import dataclasses
import os
import time
from typing import Callable

import pytest

from pando_testing.cluster_map import file_map
from pando_testing.e2e import KernelClient
from pando_testing.ganesha import STATE_DEBUG
from pando_testing.layout_policy import layout_set, mkdir
from pando_testing.mds import PandoMds
from pando_testing.pnfs_guest import DROP, REPORT, FileReport, reports
from pando_testing.pnfs_tools import PnfsCluster, Rendezvous
from pando_testing.pod import Pod
from pando_testing.vm import GUEST_ADDR, Scenario, StepResult

MIB = 1 << 20
SU = 64 * 1024
ROW = 4 * SU
K, M = 4, 2
SIZES = (100000, 2 * ROW + 12345, 5 * MIB + 777)
# The rewrite with two OSDs down: 100000 bytes from 70000, across units and rows.
PATCH_BS, PATCH_SEEK, PATCH_COUNT = 10000, 7, 10


def ec_cluster(pod: Pod, gate: Rendezvous, mds_factory: Callable[..., PandoMds],
               striped_clients: str) -> PnfsCluster:
    """The pnfs_cluster fixture's manager (Inline_Max 1) over six OSDs,
    with /ec under an RS(4,2) policy."""
    extra = "\n".join(["Recall_Timeout = 10;", f'Striped_Clients = "{striped_clients}";'])
    m = mds_factory(K + M, pseudo="/pando", pnfs=True, advertise_host=GUEST_ADDR, mirrors=2,
                    extra_fsal=extra, inline_max=1, log_components=STATE_DEBUG,
                    log_level=os.environ.get("PANDO_PNFS_MDS_LOG_LEVEL"))
    c = PnfsCluster(pod, m, list(m.osds), gate)
    with c.nfs3() as nfs:
        mkdir(nfs, m.root_handle(), "ec")
    ok, msg = layout_set(m, "/ec", {"scheme": "rs", "k": K, "m": M, "stripe_unit": SU})
    assert ok, msg
    return c


def guest_script(gate_lib: str) -> str:
    s = " ".join(map(str, SIZES))
    return gate_lib + REPORT + DROP + f"""
cd /mnt/v4.1/ec
all() {{ echo "phase $1"; for s in {s}; do report f.$s; done; }}
for s in {s}; do head -c $s /dev/urandom > /tmp/d.$s; done
for s in {s}; do
  dd if=/tmp/d.$s of=f.$s bs=1M conv=fsync 2>/tmp/dd.err || fail "writing f.$s: $(cat /tmp/dd.err)"
  echo "want f.$s $(sha256sum < /tmp/d.$s | cut -d' ' -f1)"
done
arrive written
drop
exec 3<f.{SIZES[0]} 4<f.{SIZES[1]} 5<f.{SIZES[2]}
all read
arrive read
drop
all one-down
arrive one-down
exec 3<&- 4<&- 5<&-
drop
all two-down
p=f.{SIZES[-1]}
head -c {PATCH_BS * PATCH_COUNT} /dev/urandom > /tmp/p
for f in $p /tmp/d.{SIZES[-1]}; do
  dd if=/tmp/p of=$f bs={PATCH_BS} seek={PATCH_SEEK} count={PATCH_COUNT} conv=notrunc,fsync \\
    2>/tmp/dd.err || fail "rewriting $f: $(cat /tmp/dd.err)"
done
echo "rewant $p $(sha256sum < /tmp/d.{SIZES[-1]} | cut -d' ' -f1)"
if dd if=/tmp/d.{SIZES[0]} of=new bs=1M conv=fsync 2>/tmp/dd.err; then
  echo "new written"
else
  echo "new failed: $(tr '\\n' ' ' < /tmp/dd.err)"
fi
drop
echo "phase rewritten"; report $p; report new
"""


def phases(step: StepResult) -> dict[str, dict[str, FileReport]]:
    """The `report` lines after each `phase NAME` line, by phase."""
    out: dict[str, list[str]] = {}
    cur: list[str] = []
    for line in step.output.splitlines():
        if line.startswith("phase "):
            cur = out.setdefault(line.split()[1], [])
        else:
            cur.append(line)
    return {p: reports(dataclasses.replace(step, output="\n".join(lines)))
            for p, lines in out.items()}


def wait_down(c: PnfsCluster, osd_id: int) -> None:
    """Until the manager sees the OSD down (it probes each second)."""
    t0 = time.monotonic()
    while c.cluster_status()[osd_id].reachable:
        assert time.monotonic() - t0 < 10, f"OSD {osd_id} still reachable for the manager"
        time.sleep(0.2)


@pytest.mark.slow
@pytest.mark.parametrize("version", ["6.1", "6.12", "7.x"])
def test_rs_files_written_through_the_gateway_read_right_with_up_to_m_osds_down(
        version: str, pod: Pod, gate: Rendezvous, mds_factory: Callable[..., PandoMds],
        guest: Callable[..., KernelClient]) -> None:
    striped = version == "7.x"
    c = ec_cluster(pod, gate, mds_factory, "127.0.0.1" if striped else "192.0.2.1")
    total = sum(SIZES)
    osd0, ls0 = c.osd_stats(), c.layout_status()
    vm = guest(version, c).start(Scenario().step("sh", "v4.1", guest_script(gate.guest_lib())),
                                 timeout=900)

    # Written: through the gateway, data and parity on all six OSDs.
    gate.wait("written", timeout=400, vms=[vm])
    osd1, ls1 = c.osd_stats(), c.layout_status()
    d = c.stats_delta(osd0, osd1)
    maps = {}
    for s in SIZES:
        ok, msg, j = file_map(c.mds, f"/ec/f.{s}")
        assert ok, msg
        assert j["scheme"] == "rs", j
        maps[s] = [k["osd"] for g in j["groups"] for k in g["components"]]
        assert len(set(maps[s])) == K + M, j
    print(f"{version} writes: layout_status {ls0} -> {ls1}; OSDs {d}")
    assert ls1.granted == ls0.granted, f"a layout was granted for writing an RS file: {ls1}"
    assert c.total(d, "nfs_write_bytes") == 0, f"data-server writes without a layout: {d}"
    assert ls1.mds_write_bytes - ls0.mds_write_bytes >= total, f"{ls0} -> {ls1}"
    assert len(d) == K + M and all(v["ctl_write_bytes"] > 0 for v in d.values()), \
        f"the gateway should write to all six OSDs: {d}"
    assert c.total(d, "ctl_write_bytes") >= total * (K + M) // K, f"no parity written: {d}"
    gate.release("written")

    # Read back (files held open): 7.x from the data OSDs, 6.x through the manager.
    t0 = time.monotonic()
    gate.wait("read", timeout=400, vms=[vm])
    print(f"{version} read phase {time.monotonic() - t0:.1f} s")
    osd2, ls2 = c.osd_stats(), c.layout_status()
    d = c.stats_delta(osd1, osd2)
    print(f"{version} reads: layout_status {ls1} -> {ls2}; OSDs {d}")
    if striped:
        assert ls2.granted - ls1.granted >= len(SIZES), f"no read layouts: {ls1} -> {ls2}"
        assert c.total(d, "nfs_read_bytes") >= total, f"7.x did not read from the OSDs: {d}"
        assert ls2.mds_read_bytes - ls1.mds_read_bytes <= 0.03 * total, f"{ls1} -> {ls2}"
    else:
        assert ls2.granted == ls1.granted, f"{version} got a layout for an RS file: {ls2}"
        assert c.total(d, "nfs_read_bytes") == 0, f"data-server reads without a layout: {d}"
        assert ls2.mds_read_bytes - ls1.mds_read_bytes >= total, f"{ls1} -> {ls2}"

    # One data component's OSD down, then a second: m lost.
    big = maps[SIZES[-1]]
    # The guest reads at once: 7.x still holds layouts naming the dead OSD.
    c.osd(big[1]).kill9()
    gate.release("read")
    t0 = time.monotonic()
    gate.wait("one-down", timeout=400, vms=[vm])
    print(f"{version} one-down phase {time.monotonic() - t0:.1f} s")
    ls_one = c.layout_status()
    print(f"{version} one OSD ({big[1]}) down: layout_status {ls_one}")
    if striped:
        # Its reads of units on the dead OSD failed (LAYOUTERROR/LAYOUTRETURN)
        # and went to the manager, or the manager recalled first.
        assert ls_one.io_errors + ls_one.recalls > ls2.io_errors + ls2.recalls, \
            f"7.x read around a dead OSD and the manager heard nothing: {ls2} -> {ls_one}"
    assert ls_one.mds_read_bytes > ls2.mds_read_bytes, \
        f"the manager decoded nothing of f.{SIZES[-1]}, which lost a data unit: {ls_one}"
    wait_down(c, big[1])
    c.osd(big[2]).kill9()
    wait_down(c, big[2])
    gate.release("one-down")
    t0 = time.monotonic()
    res = vm.wait()
    print(f"{version} two-down phase {time.monotonic() - t0:.1f} s")
    vm.kill()
    print(res.report())
    res.assert_ok()
    out = res.steps[0]
    ls3 = c.layout_status()
    print(f"{version} two OSDs ({big[1]}, {big[2]}) down: layout_status {ls3}")

    want = {line.split()[1]: line.split()[2] for line in out.output.splitlines()
            if line.startswith("want ")}
    got = phases(out)
    for phase in ("read", "one-down", "two-down"):
        for s in SIZES:
            r = got[phase][f"f.{s}"]
            assert (r.size, r.sha256) == (s, want[f"f.{s}"]), \
                f"{phase}: f.{s} read back {r.size} bytes sha256 {r.sha256}"
    p = got["rewritten"][f"f.{SIZES[-1]}"]
    rewant = [line.split()[2] for line in out.output.splitlines() if line.startswith("rewant ")]
    assert (p.size, p.sha256) == (SIZES[-1], rewant[0]), \
        f"f.{SIZES[-1]} rewritten with two OSDs down reads back {p}"
    assert c.mds.alive(), "ganesha.nfsd died"
    new = got["rewritten"]["new"]
    assert "new written" in out.output, \
        f"a new file with two OSDs down: {[ln for ln in out.output.splitlines() if 'new ' in ln]}"
    assert (new.size, new.sha256) == (SIZES[0], want[f"f.{SIZES[0]}"]), \
        f"a new file written with two OSDs down reads back {new}"
