"""Offsets past 2 and 4 GiB, with truncates between the writes, all on
ONE open descriptor (`ptool io`, tests/e2e/guest/ptool.c), over NFSv4.1
with layouts and over NFSv3 through the manager.

The sequence began as a user's report: a stock 6.1 kernel wrote 5 single
bytes from 2^31-2 with an fstat after each, ftruncate(fd, 0), then one
byte at 0xfffffffe, and that write failed with EFBIG over pNFS.  The
truncate to 0 gave the file's objects to the reaper while the client
that truncated kept its write layout naming them (a client's own layouts
were not recalled by its own size changes): its next write landed in
objects about to be removed (acknowledged, then lost) and its
LAYOUTCOMMIT met a file that was inline again (NS_SET_SIZE_GROW past
Inline_Max: FBIG), or, when the reaper was first, the OSD refused it
(STALE) and the client reported an I/O error.  Here the same descriptor
goes on past 4 GiB and 16 GiB with truncates down, up and to 0 between
the writes; every fstat, every byte read back (in the guest, after a
remount, and from the host over NFSv3) must be what a local file system
gives, with no OSD refusing a handle and no error reported."""
from __future__ import annotations

from typing import Callable

import pytest

from pando_testing.e2e import KernelClient
from pando_testing.pnfs_tools import LayoutStatus, PnfsCluster
from pando_testing.vm import Scenario, StepResult

GIB = 1 << 30
# What the user ran, then edges past 4 GiB and 16 GiB with truncates
# (to 0, up, down) between them.
OPS = ([op for i in range(5) for op in (f"w:{2 * GIB - 2 + i}", "s")]
       + ["t:0", "s", f"w:{4 * GIB - 2}", "s", f"w:{4 * GIB - 1}:2", "s",
          f"t:{4 * GIB + 4097}", "s", f"w:{16 * GIB - 1}", "s",
          f"t:{4 * GIB + 5000}", "s", f"w:{2 * GIB}:3", "s",
          "t:0", "s", f"w:{4 * GIB + 4990}:10", "s", f"w:{2 * GIB - 1}:2", "f", "s"])
# Reads after the writes: each edge, and past the end.
PROBES = [(2 * GIB - 2, 8), (4 * GIB - 2, 5), (4 * GIB + 4985, 20), (16 * GIB - 1, 1)]


class Model:
    """What a local file system holds after OPS: the size and the bytes
    written (each byte (offset & 0xff), as ptool writes them)."""

    def __init__(self) -> None:
        self.size = 0
        self.data: dict[int, int] = {}

    def apply(self, op: str) -> str | None:
        """The line ptool prints for op."""
        kind, *args = op.split(":")
        nums = [int(a) for a in args]
        if kind == "w":
            off, n = nums[0], nums[1] if len(nums) > 1 else 1
            for i in range(n):
                self.data[off + i] = (off + i) & 0xFF
            self.size = max(self.size, off + n)
            return f"w {off} {n}"
        if kind == "t":
            self.size = nums[0]
            self.data = {k: v for k, v in self.data.items() if k < self.size}
            return f"t {self.size}"
        if kind == "s":
            return f"s {self.size}"
        return "f"

    def read(self, off: int, n: int) -> bytes:
        end = min(off + n, self.size)
        return bytes(self.data.get(i, 0) for i in range(off, end))

    def read_line(self, off: int, n: int) -> str:
        got = self.read(off, n)
        return f"r {off} {got.hex() if got else '-'}"


def expected() -> tuple[Model, list[str]]:
    m = Model()
    lines = [m.apply(op) for op in OPS]
    return m, [line for line in lines if line] + [m.read_line(o, n) for o, n in PROBES]


def script(gate_lib: str, gate: str) -> str:
    reads = " ".join(f"r:{o}:{n}" for o, n in PROBES)
    # The gate is reached whatever happens, so the test does not wait
    # for a guest that already failed.
    return gate_lib + f"""
rc=0
ptool io f {" ".join(OPS)} {reads} || rc=$?
if [ $rc = 0 ]; then remount; echo after-remount; ptool io f s {reads} || rc=$?; fi
arrive {gate} "ino=$(stat -c %i f)&rc=$rc"
[ $rc = 0 ] || fail "ptool io: exit $rc"
"""


def check_guest(step: StepResult, m: Model, want: list[str]) -> None:
    out = [line.strip() for line in step.output.splitlines() if line.strip()]
    assert "after-remount" in out, step.output
    cut = out.index("after-remount")
    assert out[:cut] == want, f"{step.vers}: on one descriptor\n got {out[:cut]}\nwant {want}"
    again = [f"s {m.size}"] + [m.read_line(o, n) for o, n in PROBES]
    assert out[cut + 1:] == again, f"{step.vers}: after a remount\n got {out[cut + 1:]}\nwant {again}"


def check_server(c: PnfsCluster, path: str, ino: int, m: Model) -> None:
    fh, attrs = c.nfs3_lookup(path)
    assert attrs.size == m.size, f"{path}: the manager says {attrs.size} bytes, want {m.size}"
    with c.nfs3() as n3:
        for off, n in PROBES:
            r = n3.read(fh, off, n)
            assert r.data == m.read(off, n), f"{path} at {off}: {r.data.hex()}, want {m.read(off, n).hex()}"
    for k in c.components(ino):
        assert k.length <= m.size, f"{path}: object {k} is longer than the file ({m.size})"


@pytest.mark.parametrize("version", ["6.1", pytest.param("6.12", marks=pytest.mark.slow),
                                     pytest.param("7.x", marks=pytest.mark.slow)])
def test_offsets_past_4gib_with_truncates(version: str, pnfs_cluster: Callable[..., PnfsCluster],
                                          guest: Callable[..., KernelClient]) -> None:
    c = pnfs_cluster(mirrors=2)
    gate = c.gate
    assert gate is not None
    kc = guest(version, c)
    run = kc.next_vm_name()
    m, want = expected()
    sc = (Scenario().step("sh", "v4.1", script(gate.guest_lib(), "pnfs"))
          .step("sh", "v3", script(gate.guest_lib(), "gateway")))
    osd0, ls0 = c.osd_stats(), c.layout_status()
    vm = kc.start(sc, timeout=600)

    def phase(name: str, path: str) -> tuple[dict, LayoutStatus]:
        """The servers' counters when the guest is done with a step."""
        arrival = gate.wait(name, timeout=400, vms=[vm])
        counters = c.osd_stats(), c.layout_status()
        if arrival.query["rc"] == "0":  # else the guest's report says why
            check_server(c, path, int(arrival.query["ino"]), m)
        gate.release(name)
        return counters

    osd1, ls1 = phase("pnfs", f"{run}/s1-sh/f")
    osd2, ls2 = phase("gateway", f"{run}/s2-sh/f")
    res = vm.wait()
    vm.kill()
    print(res.report())
    res.assert_ok()
    check_guest(res.steps[0], m, want)
    check_guest(res.steps[1], m, want)

    # Over NFSv4.1 the bytes went straight to the OSDs, and no OSD ever
    # refused a handle of a layout the client still held.
    d = c.stats_delta(osd0, osd1)
    assert c.total(d, "nfs_write_bytes") > 0 and ls1.granted > ls0.granted, \
        f"no pNFS writes: {d} {ls0} -> {ls1}"
    assert c.total(d, "nfs_err_rejected") == 0, f"an OSD refused a layout's handle: {d}"
    assert ls1.io_errors == ls0.io_errors, f"the client reported I/O errors: {ls0} -> {ls1}"
    # Over NFSv3 the manager moved them.
    d = c.stats_delta(osd1, osd2)
    assert c.total(d, "nfs_write_bytes") == 0 and ls2.mds_write_bytes > ls1.mds_write_bytes, d
    assert not c.damage(), c.damage()
