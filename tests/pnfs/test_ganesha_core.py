"""NFS-Ganesha 4.3's core, as Pando patches it (ganesha-fsal/patches/),
seen from stock Linux clients:

* 0010: a LAYOUTGET carrying a layout stateid (any LAYOUTGET on a file
  whose layout the client holds) dropped the state's reference twice, and
  the next request on it aborted ganesha.nfsd.  Range segments (Mirrors=1,
  Stripe_Width=3) make Linux send one per stripe unit; two guests each get
  several on the same file, and the server stays up.
* 0050: READ_PLUS answered from an io_info nothing filled; a 6.12 client
  over NFSv4.2 read wrong bytes.  It must read back what it wrote.
* 0040-0042: LAYOUTERROR's arguments were decoded as one error instead
  of an array, only logged, and its reply could not be encoded (the
  connection was dropped).  A 6.12 client over NFSv4.2 reports the write
  errors of an OSD killed under it with LAYOUTERROR: Ganesha must answer
  it and hand the errors to the FSAL, which counts them.
* 0060: GET_DIR_DELEGATION was OP_ILLEGAL, which makes a 7.x client's
  stat() of a directory it just changed fail with "Remote I/O error"
  unless the nfsv4 module has directory_delegations=0.  Without it, it
  must work.

To see them fail, run them on Debian's stock Ganesha: unpack its
nfs-ganesha and nfs-ganesha-vfs 4.3-2 (dpkg-deb -x) into a folder and set
PANDO_GANESHA_ROOT to it (pando_testing.ganesha).
"""
from __future__ import annotations

import os
import time
from typing import Callable, Sequence

import pytest

from pando_testing.e2e import KernelClient
from pando_testing.mountstats import parse_mountstats
from pando_testing.pnfs_guest import DROP, REPORT, WRITER_STALL_S, chunk_writer, reports, values
from pando_testing.pnfs_tools import Arrival, PnfsCluster, sha256
from pando_testing.vm import Scenario, Vm, wait_all

MIB = 1 << 20
SHARED = "/mnt/v4.1/shared"


def writer_script(gate_lib: str) -> str:
    return gate_lib + REPORT + DROP + f"""
getdata f /tmp/f
mkdir -p {SHARED}; cd {SHARED}
dd if=/tmp/f of=f bs=1M conv=fsync 2>/tmp/dd.err || fail "writing f: $(cat /tmp/dd.err)"
arrive a-wrote
drop
report f
arrive a-read
"""


def reader_script(gate_lib: str) -> str:
    return gate_lib + REPORT + DROP + f"""
arrive b-start
cd {SHARED}
drop
report f
arrive b-read
"""


def wait_gate(c: PnfsCluster, name: str, vms: Sequence[Vm], timeout: float = 300) -> Arrival:
    """gate.wait, failing at once when ganesha.nfsd dies (its clients then
    retry until the gate's timeout)."""
    assert c.gate is not None
    deadline = time.monotonic() + timeout
    while True:
        try:
            return c.gate.wait(name, timeout=2, vms=vms)
        except TimeoutError:
            assert c.mds.alive(), f"ganesha.nfsd died before gate {name!r}"
            if time.monotonic() > deadline:
                raise


def standalone_layoutgets(step_output: str) -> int:
    v41 = {m.mountpoint: m for m in parse_mountstats(step_output)}["/mnt/v4.1"]
    return v41.count("LAYOUTGET")


@pytest.mark.slow
def test_two_guests_second_layoutget(pnfs_cluster: Callable[..., PnfsCluster],
                                     guest: Callable[..., KernelClient]) -> None:
    """A (6.12) writes a 6 MiB file and reads it back, B (6.1) reads it at
    the same time: with one stripe unit per segment each LAYOUTGET after a
    guest's first carries its layout stateid.  Both read what A wrote,
    Ganesha stays up."""
    c = pnfs_cluster(mirrors=1, stripe_width=3)
    gate = c.gate
    assert gate is not None
    data = os.urandom(6 * MIB + 4321)
    gate.data["f"] = data
    va = guest("6.12", c, name="a").start(
        Scenario().step("sh", "v4.1", writer_script(gate.guest_lib()))
        .step("mountstats", "v4.1"), timeout=400)
    vb = guest("6.1", c, name="b").start(
        Scenario().step("sh", "v4.1", reader_script(gate.guest_lib()))
        .step("mountstats", "v4.1"), timeout=400)
    wait_gate(c, "a-wrote", [va, vb])
    wait_gate(c, "b-start", [va, vb])
    ls0 = c.layout_status()
    gate.release("a-wrote")
    gate.release("b-start")
    wait_gate(c, "a-read", [va, vb])
    wait_gate(c, "b-read", [va, vb])
    ls1 = c.layout_status()
    gate.release("a-read")
    gate.release("b-read")
    results = wait_all([va, vb])
    for r in results:
        print(r.report())
    log = c.log_text()
    assert "Error 22, acquiring mutex" not in log, "the layout state was freed while in use"
    assert c.mds.alive(), "ganesha.nfsd died"
    for r in results:
        r.assert_ok()
        got = reports(r.steps[0])["f"]
        assert (got.size, got.sha256) == (len(data), sha256(data)), f"{r.name} read {got}"
        n = standalone_layoutgets(r.step("mountstats").output)
        assert n >= 2, f"{r.name}: {n} standalone LAYOUTGETs, want a second one on the file"
    units = -(-len(data) // MIB)
    print(f"layout_status {ls0} -> {ls1}")
    assert ls1.granted - ls0.granted >= 2 * units, \
        f"two guests reading {units} stripe units got {ls1.granted - ls0.granted} segments"


READ_PLUS_SIZES = (1, 4096, 65537, MIB + 1, 3 * MIB + 12345)


def test_read_plus_6_12(pnfs_cluster: Callable[..., PnfsCluster],
                        guest: Callable[..., KernelClient]) -> None:
    """6.12 over NFSv4.2 writes files and reads them back from the server
    (page cache dropped) with READ_PLUS only.  Pnfs = false, so every byte
    goes through the manager; the sizes cover inline and object files."""
    c = pnfs_cluster(pnfs=False, minor_versions=(1, 2))
    s = " ".join(map(str, READ_PLUS_SIZES))
    script = REPORT + DROP + f"""
for s in {s}; do
  head -c $s /dev/urandom > /tmp/d.$s
  dd if=/tmp/d.$s of=f.$s bs=1M conv=fsync 2>/tmp/dd.err || fail "writing f.$s: $(cat /tmp/dd.err)"
  echo "wrote f.$s $(sha256sum < /tmp/d.$s | cut -d' ' -f1)"
done
drop
for s in {s}; do report f.$s; done
"""
    res = guest("6.12", c).run(Scenario().step("sh", "v4.2", script).step("mountstats", "v4.2"),
                               timeout=400)
    res.assert_ok()
    out = res.steps[0].output
    wrote = {line.split()[1]: line.split()[2] for line in out.splitlines()
             if line.startswith("wrote ")}
    got = reports(res.steps[0])
    for size in READ_PLUS_SIZES:
        r = got[f"f.{size}"]
        assert (r.size, r.sha256) == (size, wrote[r.name]), \
            f"{r.name}: read back {r.size} bytes sha256 {r.sha256}, wrote {size} bytes"
    v42 = {m.mountpoint: m for m in parse_mountstats(res.step("mountstats").output)}["/mnt/v4.2"]
    ops = v42.counts(("READ", "READ_PLUS", "WRITE"))
    print(f"6.12 NFSv4.2: mountstats {ops}")
    assert ops["READ_PLUS"] > 0 and ops["READ"] == 0, f"the reads were not all READ_PLUS: {ops}"
    assert v42.ops["READ_PLUS"].errors == 0, f"READ_PLUS errors: {v42.ops['READ_PLUS']}"


def test_stat_changed_directory_7x_default_options(
        pnfs_cluster: Callable[..., PnfsCluster], guest: Callable[..., KernelClient]) -> None:
    """7.x with the nfsv4 module's default options (directory delegations
    asked for): stat() of a directory it just changed works."""
    c = pnfs_cluster()
    script = """
mkdir d
stat -c %F d
touch d/f
stat -c '%F %h' d
ls -l d
"""
    res = guest("7.x", c).run(Scenario().step("sh", "v4.1", script), timeout=200)
    res.assert_ok()
    assert "Remote I/O error" not in res.steps[0].output


@pytest.mark.slow
def test_layouterror_reaches_the_manager(pnfs_cluster: Callable[..., PnfsCluster],
                                         guest: Callable[..., KernelClient]) -> None:
    """6.12 over NFSv4.2 writes 16 MiB a chunk at a time to a mirrored file;
    the OSD of mirror 0 is killed after the 4th chunk.  The writes go on
    (every chunk acknowledged, no pause over WRITER_STALL_S) and the client
    reports its write errors with LAYOUTERROR: every one answered without
    error, Ganesha logs them and the manager counts them (io_errors)."""
    chunks, kill_after = 16, 4
    c = pnfs_cluster(mirrors=2, minor_versions=(1, 2))
    gate = c.gate
    assert gate is not None
    gate.data["d"] = os.urandom(chunks * MIB)
    gate.open("started")
    vm = guest("6.12", c).start(
        Scenario().step("sh", "v4.2", gate.guest_lib() + chunk_writer(chunks, kill_after))
        .step("mountstats", "v4.2"), timeout=900)
    ino = int(gate.wait("started", timeout=300, vms=[vm]).query["ino"])
    victim = c.osd(c.components(ino)[0].osd_id)
    ls0 = c.layout_status()
    victim.kill9()
    t_kill = time.monotonic()
    written = wait_gate(c, "written", [vm], timeout=800)
    pause = gate.longest_pause("acked", t_kill, written.at)
    ls1 = c.layout_status()
    victim.start()
    gate.release("written")
    res = vm.wait()
    vm.kill()
    print(res.report())
    res.assert_ok()
    v42 = {m.mountpoint: m for m in parse_mountstats(res.step("mountstats").output)}["/mnt/v4.2"]
    le = v42.ops.get("LAYOUTERROR")
    acks = values(res.steps[0], "chunk")
    print(f"chunks {acks}; longest pause after the kill {pause:.1f} s; LAYOUTERROR {le}; "
          f"layout_status {ls0} -> {ls1}")
    assert len(acks) == chunks and all(v.endswith(" ok") for v in acks), \
        f"writes to a file with a live mirror failed: {acks}"
    assert pause <= WRITER_STALL_S, f"the writes stopped for {pause:.0f} s after the kill"
    assert le is not None and le.ops > 0, f"the client sent no LAYOUTERROR: {v42.ops.keys()}"
    assert le.errors == 0, f"LAYOUTERROR answered with errors: {le}"
    assert "LAYOUTERROR OP" in c.log_text(), "Ganesha did not take the reported errors"
    assert ls1.io_errors - ls0.io_errors >= le.ops, \
        f"{le.ops} LAYOUTERRORs, the manager counted {ls1.io_errors - ls0.io_errors} errors"
