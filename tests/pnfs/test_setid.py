"""A write by anyone but root clears set-user-id, and set-group-id where
group execute is set or the writer is not in the file's group, as a local
file system does (Linux 6.2+, what Ganesha VFS and knfsd give on such a
server); root's writes keep them.

A guest (root) makes files of modes 04777, 02777, 06777 and 02767 owned
by root:root, inline (100 bytes) and on objects (100,000), and a 02767
pair in group 65534; uid 65534 (`ptool as`) writes one byte into each,
then root writes into copies of its own.  Over NFSv4.1 the object files
are written over pNFS: the bytes never pass the manager, which clears the
bits at the write LAYOUTGET of a writer that clears them, and refuses
write layouts (LAYOUTUNAVAILABLE) on files that still have set-id bits,
so root's writes to them come through the manager.  Over NFSv3 every
byte passes the manager.  Each mode is checked from the host (NFSv3
GETATTR) right after each phase, and in the guest after a remount."""
from __future__ import annotations

from typing import Callable

import pytest

from pando_testing.e2e import KernelClient
from pando_testing.pnfs_tools import LayoutStatus, PnfsCluster
from pando_testing.vm import Scenario

MODES = (0o4777, 0o2777, 0o6777, 0o2767)
NOBODY = 65534
# What a write by uid/gid 65534 (no supplementary groups) leaves; the
# "g" files are in its group, the others in root's.
AFTER_NOBODY = {0o4777: 0o777, 0o2777: 0o777, 0o6777: 0o777, 0o2767: 0o767}
INLINE, OBJECTS = 100, 100_000


def files() -> dict[str, int]:
    """Every file the guest makes, with the mode it must end with."""
    want = {}
    for m in MODES:
        for kind in ("in", "ob"):
            want[f"{kind}.{m:o}"] = AFTER_NOBODY[m]
            want[f"root{kind}.{m:o}"] = m
    want["in.2767g"] = want["ob.2767g"] = 0o2767
    return want


def script(gate_lib: str, tag: str) -> str:
    made = [f"mk {kind}.{m:o} {m:o} {n}" for m in MODES for kind, n in (("in", INLINE), ("ob", OBJECTS))]
    made += [f"mk root{kind}.{m:o} {m:o} {n}" for m in MODES for kind, n in (("in", INLINE), ("ob", OBJECTS))]
    made += [f"mk in.2767g 2767 {INLINE} {NOBODY}", f"mk ob.2767g 2767 {OBJECTS} {NOBODY}"]
    # chgrp first: a change of group drops set-id bits.
    return gate_lib + "mk() { head -c $3 /dev/urandom > $1; [ -z \"$4\" ] || chgrp $4 $1; chmod $2 $1; }\n" \
        + "\n".join(made) + f"""
arrive made-{tag}
for f in in.* ob.*; do
  ptool as {NOBODY} {NOBODY} ptool io $f w:5 > /dev/null || fail "uid {NOBODY} cannot write $f"
done
arrive nobody-{tag}
for f in root*; do ptool io $f w:5 > /dev/null || fail "root cannot write $f"; done
arrive root-{tag}
remount
for f in *; do echo "mode $f $(stat -c %a $f)"; done
"""


def modes_on_server(c: PnfsCluster, base: str, names: list[str]) -> dict[str, int]:
    out = {}
    with c.nfs3() as n3:
        for name in names:
            fh, attrs = c.nfs3_lookup(f"{base}/{name}")
            out[name] = attrs.mode & 0o7777
            assert n3.read(fh, 5, 1).data == b"\x05", f"{name}: the byte written at 5 is not there"
    return out


@pytest.mark.parametrize("version", ["6.1", pytest.param("6.12", marks=pytest.mark.slow),
                                     pytest.param("7.x", marks=pytest.mark.slow)])
def test_writes_clear_setid_bits(version: str, pnfs_cluster: Callable[..., PnfsCluster],
                                 guest: Callable[..., KernelClient]) -> None:
    c = pnfs_cluster(mirrors=2)
    gate = c.gate
    assert gate is not None
    kc = guest(version, c)
    run = kc.next_vm_name()
    want = files()
    mine = sorted(n for n in want if not n.startswith("root"))
    roots = sorted(n for n in want if n.startswith("root"))
    sc = (Scenario().step("sh", "v4.1", script(gate.guest_lib(), "v4.1"))
          .step("sh", "v3", script(gate.guest_lib(), "v3")))
    vm = kc.start(sc, timeout=600)

    def phase(name: str) -> tuple[dict, LayoutStatus]:
        gate.wait(name, timeout=200, vms=[vm])
        return c.osd_stats(), c.layout_status()

    for n, vers in enumerate(("v4.1", "v3"), 1):
        base = f"{run}/s{n}-sh"
        osd0, ls0 = phase(f"made-{vers}")
        gate.release(f"made-{vers}")
        osd1, ls1 = phase(f"nobody-{vers}")
        got = modes_on_server(c, base, mine)
        assert got == {k: want[k] for k in mine}, f"{vers}: after uid {NOBODY}'s writes: " + \
            ", ".join(f"{k} {v:o} (want {want[k]:o})" for k, v in got.items() if v != want[k])
        gate.release(f"nobody-{vers}")
        osd2, ls2 = phase(f"root-{vers}")
        got = modes_on_server(c, base, roots)
        assert got == {k: want[k] for k in roots}, f"{vers}: after root's writes: {got}"
        gate.release(f"root-{vers}")
        d1, d2 = c.stats_delta(osd0, osd1), c.stats_delta(osd1, osd2)
        if vers == "v4.1":
            # uid 65534 wrote the object files straight to the OSDs (both
            # mirrors); root's writes to set-id files came through the
            # manager, no write layout being out on them.
            assert c.total(d1, "nfs_write_ops") >= 2 * len(MODES) + 2, f"no pNFS writes: {d1}"
            assert c.total(d2, "nfs_write_ops") == 0, f"root wrote set-id files over pNFS: {d2}"
        else:
            assert c.total(d1, "nfs_write_ops") == c.total(d2, "nfs_write_ops") == 0
        assert ls2.mds_write_bytes > ls1.mds_write_bytes, f"{ls1} -> {ls2}"

    res = vm.wait()
    vm.kill()
    print(res.report())
    res.assert_ok()
    for step in res.steps:
        seen = {line.split()[1]: int(line.split()[2], 8) for line in step.output.splitlines()
                if line.startswith("mode ")}
        assert seen == want, f"{step.vers}, after a remount: " + \
            ", ".join(f"{k} {v:o} (want {want.get(k, 0):o})" for k, v in seen.items() if v != want.get(k))
    assert not c.damage(), c.damage()
