"""Layout recall with clients that cooperate.

* An admin recall (`dbus-send ... recall_file string:/path`) makes a guest
  that keeps a file open for write return its layout at once: returned
  goes up, segments down, nobody is fenced, and the guest's next write
  gets a new layout.  `recall_client` does the same by the client's
  address as the manager sees it.
* Two guests: A holds a write layout on a file while B truncates it.
  B's SETATTR is answered NFS4ERR_DELAY until A has returned its layout
  (a recall), then completes; A writes on with a new layout, and the file
  is exactly what that order of events gives.  Then the same as a race: A
  streams a large file while B truncates it again and again; every byte of
  the result is A's data or a hole, and both mirrors agree.
"""
from __future__ import annotations

import os
import time
from typing import Callable

import pytest

from pando_testing.e2e import KernelClient
from pando_testing.pnfs_guest import DROP, REPORT, chunk_loop, reports, values
from pando_testing.pnfs_tools import PnfsCluster, sha256
from pando_testing.vm import Scenario, wait_all

MIB = 1 << 20
RECALL_TIMEOUT = 3


def admin_recall_script(gate_lib: str) -> str:
    return gate_lib + REPORT + DROP + """
getdata a /tmp/a; getdata b /tmp/b; getdata c /tmp/c
exec 3>f
cat /tmp/a >&3
sync
arrive holding "ino=$(stat -c %i f)"
cat /tmp/b >&3
sync
arrive holding-again
cat /tmp/c >&3
exec 3>&-
drop
report f
"""


@pytest.mark.parametrize("version", [pytest.param("6.12", marks=pytest.mark.slow), "7.x"])
def test_admin_recall_returns_layout_without_fencing(
        version: str, pnfs_cluster: Callable[..., PnfsCluster],
        guest: Callable[..., KernelClient]) -> None:
    c = pnfs_cluster(recall_timeout=RECALL_TIMEOUT)
    gate = c.gate
    assert gate is not None
    a, b, cc = os.urandom(2 * MIB), os.urandom(MIB + 123), os.urandom(3 * MIB)
    gate.data.update(a=a, b=b, c=cc)
    kc = guest(version, c)
    vm = kc.start(Scenario().step("sh", "v4.1", admin_recall_script(gate.guest_lib())),
                  timeout=300)
    path = f"/{vm.name}/s1-sh/f"
    ino = int(gate.wait("holding", vms=[vm]).query["ino"])
    osd0 = c.osd_stats()
    ls0 = c.layout_status()
    assert ls0.segments >= 1 and ls0.files == 1, f"the guest holds no layout: {ls0}"

    ok, msg = c.recall_file(path)
    assert ok and "recalling" in msg, f"recall_file {path}: {ok} {msg!r}"
    # Returned at once (the guest is idle); a layout still out at the
    # deadline would be fenced, which the end of the test rules out.
    ls1 = c.wait_layouts(lambda s: s.segments == 0, 20, "the guest returning its recalled layout")
    assert ls1.returned > ls0.returned and ls1.recalls == ls0.recalls + 1, f"{ls0} -> {ls1}"
    assert ls1.fenced == 0, f"the guest was fenced although it returned the layout: {ls1}"
    ok, msg = c.recall_file(path)
    assert ok and "no layouts" in msg, f"a second recall_file: {ok} {msg!r}"
    ok, msg = c.recall_file("/no/such/file")
    assert not ok, f"recall_file of a missing path: {ok} {msg!r}"

    # The guest writes on: a new layout.  Then a recall by client address.
    gate.release("holding")
    gate.wait("holding-again", vms=[vm])
    ls2 = c.layout_status()
    assert ls2.segments >= 1 and ls2.granted > ls1.granted, f"no new layout after the recall: {ls2}"
    # Every guest reaches the manager through qemu's user network from the
    # pod's loopback, and Ganesha's dual-stack socket sees the IPv4-mapped
    # address (ganesha_mgr show clients: ::ffff:127.0.0.1).  The guest's
    # own address (10.0.2.15) is not what the manager sees.
    ok, msg, files = c.recall_client("10.0.2.15")
    assert ok and files == 0, (msg, files)
    ok, msg, files = c.recall_client("::ffff:127.0.0.1")
    assert ok and files == 1, f"recall_client ::ffff:127.0.0.1: {msg!r} ({files} files)"
    ls3 = c.wait_layouts(lambda s: s.segments == 0, 20,
                         "the guest returning layouts recalled by client address")
    assert ls3.recalls == ls2.recalls + 1 and ls3.returned > ls2.returned and ls3.fenced == 0, ls3
    gate.release("holding-again")
    res = vm.wait()
    vm.kill()
    print(res.report())
    res.assert_ok()
    time.sleep(RECALL_TIMEOUT + 1.5)      # past both recalls' deadlines: nothing to fence
    ls4 = c.layout_status()
    assert ls4.fenced == 0 and ls4.segments == 0, ls4
    # Each return revoked the guest's write handles (the version moved
    # on); no fence took the read handles (the read floor stayed).
    assert all(k.read_floor == 1 < k.cap_version for k in c.components(ino)), \
        c.components(ino)
    d = c.stats_delta(osd0, c.osd_stats())
    assert c.total(d, "nfs_err_rejected") == 0, f"a recalled (not fenced) client was refused: {d}"
    assert not c.damage(), f"an admin recall left damage records: {c.damage()}"
    want = a + b + cc
    r = reports(res.steps[0])["f"]
    assert (r.size, r.sha256) == (len(want), sha256(want)), f"the guest reads back {r}"
    _, images = c.mirrors(ino, len(want), copies=2)
    assert all(img == want for img in images), "a mirror differs from what the guest wrote"


# ---- two guests: a truncate against a write layout ------------------------------------

def writer_script(gate_lib: str) -> str:
    return gate_lib + REPORT + DROP + """
getdata d1 /tmp/d1; getdata d2 /tmp/d2
mkdir -p /mnt/v4.1/shared; cd /mnt/v4.1/shared
exec 3>f
cat /tmp/d1 >&3
sync
arrive a-holding "ino=$(stat -c %i f)"
cat /tmp/d2 >&3
exec 3>&-
drop
report f
"""


def truncater_script(gate_lib: str, size: int) -> str:
    return gate_lib + f"""
arrive b-go
cd /mnt/v4.1/shared
t0=$(cut -d' ' -f1 /proc/uptime)
truncate -s {size} f || fail "truncate failed"
echo "truncated in $(awk -v a=$t0 -v b=$(cut -d' ' -f1 /proc/uptime) 'BEGIN {{ print b - a }}') s to $(stat -c %s f)"
arrive b-done
"""  # noqa: E501 (a guest shell script)


@pytest.mark.slow
def test_truncate_recalls_writer_layout(pnfs_cluster: Callable[..., PnfsCluster],
                                        guest: Callable[..., KernelClient]) -> None:
    """A (6.12) holds a write layout on f (8 MiB written, file still open);
    B (7.x) truncates f to 1 MiB: DELAY until A returns its layout, then
    done.  A writes 8 MiB more at its file offset (8 MiB) with a new
    layout: f = d1[:1 MiB] + 7 MiB of zeros + d2."""
    c = pnfs_cluster(recall_timeout=10)
    gate = c.gate
    assert gate is not None
    d1, d2 = os.urandom(8 * MIB), os.urandom(8 * MIB)
    gate.data.update(d1=d1, d2=d2)
    va = guest("6.12", c, name="writer").start(
        Scenario().step("sh", "v4.1", writer_script(gate.guest_lib())), timeout=400)
    vb = guest("7.x", c, name="truncater").start(
        Scenario().step("sh", "v4.1", truncater_script(gate.guest_lib(), MIB)), timeout=400)
    ino = int(gate.wait("a-holding", timeout=300, vms=[va, vb]).query["ino"])
    gate.wait("b-go", timeout=300, vms=[va, vb])
    ls0 = c.layout_status()
    assert ls0.segments >= 1, ls0
    t0 = time.monotonic()
    gate.release("b-go")
    gate.wait("b-done", timeout=60, vms=[vb])
    took = time.monotonic() - t0
    ls1 = c.layout_status()
    print(f"truncate done after {took:.1f} s; {ls0} -> {ls1}")
    assert ls1.recalls > ls0.recalls and ls1.returned > ls0.returned, f"{ls0} -> {ls1}"
    assert ls1.fenced == 0, f"A returned its layout, yet was fenced: {ls1}"
    assert not c.damage(), f"a cooperative recall left damage records: {c.damage()}"
    gate.release("b-done")
    gate.release("a-holding")
    results = wait_all([va, vb])
    for r in results:
        print(r.report())
    for r in results:
        r.assert_ok()
    assert values(results[1].steps[0], "truncated")[0].endswith(f"to {MIB}")
    want = d1[:MIB] + bytes(7 * MIB) + d2
    got = reports(results[0].steps[0])["f"]
    assert (got.size, got.sha256) == (len(want), sha256(want)), \
        f"A reads back {got.size} bytes; want d1[:1M] + zeros + d2 ({len(want)})"
    assert c.nfs3_read("/shared/f") == want
    _, images = c.mirrors(ino, len(want), copies=2)
    assert all(img == want for img in images), "the mirrors differ from the file"


def streamer_script(gate_lib: str, mib: int) -> str:
    # 1 MiB at a time through one open file, each fsync'ed: the size the
    # manager knows grows with every LAYOUTCOMMIT, so the truncates cut
    # real data and meet a layout that is out.
    return gate_lib + REPORT + DROP + """
getdata big /tmp/big
mkdir -p /mnt/v4.1/shared; cd /mnt/v4.1/shared
exec 3>g
arrive a-start "ino=$(stat -c %i g)"
""" + chunk_loop(mib, "if=/tmp/big bs=1M skip=$i count=1 conv=fsync", to_fd3=True) + """\
exec 3>&-
arrive a-wrote
drop
report g
"""


def racer_script(gate_lib: str, times: int) -> str:
    return gate_lib + f"""
arrive b-start
cd /mnt/v4.1/shared
i=0
while [ $i -lt {times} ]; do
  truncate -s 1048576 g && echo "truncate $i ok" || echo "truncate $i failed"
  sleep 0.3
  i=$((i + 1))
done
arrive b-done
"""


@pytest.mark.slow
def test_truncate_races_pnfs_writer(pnfs_cluster: Callable[..., PnfsCluster],
                                    guest: Callable[..., KernelClient]) -> None:
    """A (7.x) writes 32 MiB, 1 MiB and one fsync at a time through one open
    file, while B (6.1) truncates the file to 1 MiB every 0.3 s, 8 times.
    Allowed results: A's data up to some size, with holes (zeros) where a
    truncate cut what had landed; never a byte that is neither; [0, 1 MiB)
    always A's; both mirrors the same."""
    c = pnfs_cluster(recall_timeout=10)
    gate = c.gate
    assert gate is not None
    big = os.urandom(32 * MIB)
    gate.data["big"] = big
    va = guest("7.x", c, name="streamer").start(
        Scenario().step("sh", "v4.1", streamer_script(gate.guest_lib(), 32)), timeout=500)
    vb = guest("6.1", c, name="racer").start(
        Scenario().step("sh", "v4.1", racer_script(gate.guest_lib(), 8)), timeout=500)
    ino = int(gate.wait("a-start", timeout=300, vms=[va, vb]).query["ino"])
    gate.wait("b-start", timeout=300, vms=[va, vb])
    ls0 = c.layout_status()
    gate.release("b-start")
    gate.release("a-start")
    gate.wait("a-wrote", timeout=400, vms=[va])
    gate.wait("b-done", timeout=400, vms=[vb])
    ls1 = c.layout_status()
    gate.release("b-done")
    gate.release("a-wrote")     # A reads g back once B is done with it
    results = wait_all([va, vb])
    for r in results:
        print(r.report())
    for r in results:
        r.assert_ok()
    print(f"{ls0} -> {ls1}")
    print("streamer:", values(results[0].steps[0], "chunk"))
    print("racer:", values(results[1].steps[0], "truncate"))
    # A recall that a client answers is not a failure: the writes it
    # interrupted are resent (Linux reports them as NFS4ERR_NXIO in its
    # LAYOUTRETURN), no mirror missed anything.
    damage = [r for r in c.damage() if r.ino == ino]
    assert not damage, f"a cooperative recall left damage records: {damage}"
    chunks = values(results[0].steps[0], "chunk")
    assert len(chunks) == 32 and all(v.endswith(" ok") for v in chunks), \
        f"the writer's writes failed: {chunks}"
    assert all(v.endswith("ok") for v in values(results[1].steps[0], "truncate"))
    assert ls1.fenced == 0, f"cooperating clients were fenced: {ls1}"
    data = c.nfs3_read("/shared/g")
    size = len(data)
    assert MIB <= size <= len(big), f"size {size}"
    assert data[:MIB] == big[:MIB], "the first MiB is not A's data"
    page = 4096
    bad = [off for off in range(0, size, page)
           if data[off:off + page] not in (big[off:off + min(page, size - off)],
                                           bytes(min(page, size - off)))]
    assert not bad, f"{len(bad)} pages are neither A's data nor a hole, first at {bad[0]}"
    holes = sum(1 for off in range(0, size, page) if data[off:off + page].count(0) == page)
    print(f"result: {size} bytes, {holes} hole pages; recalls {ls1.recalls - ls0.recalls}")
    assert ls1.recalls > ls0.recalls, "no truncate met A's layout"
    got = reports(results[0].steps[0])["g"]
    assert (got.size, got.sha256) == (size, sha256(data)), "A and the server disagree on g"
    _, images = c.mirrors(ino, size, copies=2)
    assert all(img == data for img in images), "the mirrors differ"


KEPT_SCRIPT = """
getdata a /tmp/a
dd if=/tmp/a of=f bs=1M conv=fsync 2>/dev/null || fail "dd f"
arrive closed
echo 3 > /proc/sys/vm/drop_caches
sha256sum f
"""


@pytest.mark.parametrize("version", ["6.12", pytest.param("6.1", marks=pytest.mark.slow)])
def test_nfs3_write_waits_out_a_cooperative_recall_instead_of_jukebox(
        version: str, pnfs_cluster: Callable[..., PnfsCluster],
        guest: Callable[..., KernelClient]) -> None:
    """Layouts outlive the CLOSE, so an NFSv3 write through the manager
    to a file a pNFS client wrote and closed meets that client's write
    layout.  The manager recalls it and waits for it (a client answers in
    milliseconds) instead of answering JUKEBOX at once, which an NFSv3
    client would sit out for 5 s."""
    from pando_testing.nfs3 import FILE_SYNC, NFS3_OK

    c = pnfs_cluster(mirrors=2)
    gate = c.gate
    assert gate is not None
    a, x = os.urandom(2 * MIB), os.urandom(4096)
    gate.data["a"] = a
    kc = guest(version, c)
    vm = kc.start(Scenario().step("sh", "v4.1", gate.guest_lib() + KEPT_SCRIPT), timeout=400)
    gate.wait("closed", timeout=300, vms=[vm])
    ls0 = c.layout_status()
    assert ls0.segments >= 1, f"the guest kept no layout after its CLOSE: {ls0}"
    fh, _ = c.nfs3_lookup(f"{kc.name}/s1-sh/f")
    t0 = time.monotonic()
    with c.nfs3() as n:
        r = n.write(fh, 4096, x, FILE_SYNC)
    took = time.monotonic() - t0
    ls1 = c.layout_status()
    assert r.status == NFS3_OK and r.count == len(x), f"status {r.status} after {took:.1f} s"
    assert ls1.recalls == ls0.recalls + 1 and ls1.fenced == ls0.fenced, f"{ls0} -> {ls1}"
    gate.release("closed")
    res = vm.wait()
    vm.kill()
    res.assert_ok()
    want = a[:4096] + x + a[8192:]
    assert sha256(want) in res.steps[0].output, "the guest did not read the NFSv3 write back"
    assert c.nfs3_read(f"{kc.name}/s1-sh/f") == want
