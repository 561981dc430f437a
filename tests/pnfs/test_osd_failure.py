"""An OSD holding a mirror dies (kill -9) while a guest writes a large file
over pNFS.

The guest writes 40 MiB, 1 MiB at a time, each chunk its own open, write
and fsync (`dd conv=notrunc,fsync`): a chunk whose dd returned 0 is
acknowledged.  After the 4th chunk the test kills the OSD holding mirror 0
of the file.  What must hold:

* the writes go on: every chunk is acknowledged (the file has another
  mirror: ganesha-fsal/README.md, "Degraded writes"), with no pause longer
  than WRITER_STALL_S from the kill to the last chunk; and every chunk reads back
  right afterwards (the OSD restarted), from the guest and over NFSv3;
* each acknowledged chunk is on every mirror the manager has not recorded
  stale (a degraded write marks the missed mirror stale before it is
  acknowledged), and on at least one;
* the manager noticed: cluster_status shows the OSD unreachable while it
  is down (and reachable after the restart), the Ganesha log has the
  "OSD n is unreachable" warning, and layout_status counts the client's
  I/O error reports or the recall of the layouts naming the OSD.
"""
from __future__ import annotations

import hashlib
import os
import time
from typing import Callable

import pytest

from pando_testing.e2e import KernelClient
from pando_testing.pnfs_guest import DROP, WRITER_STALL_S, chunk_writer, values
from pando_testing.pnfs_tools import PnfsCluster
from pando_testing.vm import Scenario

MIB = 1 << 20
CHUNKS = 40
KILL_AFTER = 4


def writer_script(gate_lib: str) -> str:
    return gate_lib + DROP + chunk_writer(CHUNKS, KILL_AFTER) + f"""drop
i=0
while [ $i -lt {CHUNKS} ]; do
  if dd if=f of=/tmp/r bs=1M skip=$i count=1 2>/tmp/dd.err; then
    echo "read $i $(sha256sum < /tmp/r | cut -d' ' -f1)"
  else
    echo "read $i failed: $(tr "\\n" " " < /tmp/dd.err)"
  fi
  i=$((i + 1))
done
"""


@pytest.mark.slow
@pytest.mark.parametrize("version", ["6.1", "7.x"])
def test_osd_killed_during_pnfs_write(version: str, pnfs_cluster: Callable[..., PnfsCluster],
                                      guest: Callable[..., KernelClient]) -> None:
    c = pnfs_cluster(mirrors=2)
    gate = c.gate
    assert gate is not None
    data = os.urandom(CHUNKS * MIB)
    gate.data["d"] = data
    gate.open("started")
    vm = guest(version, c).start(Scenario().step("sh", "v4.1", writer_script(gate.guest_lib())),
                                 timeout=900)
    ino = int(gate.wait("started", timeout=300, vms=[vm]).query["ino"])
    comps = c.components(ino)
    assert len(comps) == 2 and comps[0].osd_id != comps[1].osd_id, comps
    victim = c.osd(comps[0].osd_id)
    ls0 = c.layout_status()
    victim.kill9()
    t_kill = time.monotonic()
    print(f"killed OSD {victim.osd_id} (mirror 0 of inode {ino}); "
          f"the other mirror is on OSD {comps[1].osd_id}")

    # The manager notices within seconds (it probes every OSD each second).
    while c.cluster_status()[victim.osd_id].reachable:
        assert time.monotonic() - t_kill < 10, "cluster_status still shows the dead OSD reachable"
        time.sleep(0.2)
    print(f"cluster_status: OSD {victim.osd_id} unreachable after {time.monotonic() - t_kill:.1f} s")

    written = gate.wait("written", timeout=800, vms=[vm])
    pause = gate.longest_pause("acked", t_kill, written.at)
    print(f"longest pause of the writer after the kill: {pause:.1f} s; "
          f"written {written.at - t_kill:.1f} s after it")
    assert pause <= WRITER_STALL_S, f"the writes stopped for {pause:.0f} s after the kill"
    ls1 = c.layout_status()
    damage = [r for r in c.damage() if r.ino == ino]
    assert not c.cluster_status()[victim.osd_id].reachable
    log = c.log_text()
    print(f"layout_status {ls0} -> {ls1}; damage records {damage}")
    assert f"OSD {victim.osd_id} is unreachable" in log, "no WARN line for the dead OSD"
    assert ls1.io_errors > ls0.io_errors or ls1.recalls > ls0.recalls, \
        f"the manager recorded nothing of the failure: {ls0} -> {ls1}"

    victim.start()
    deadline = time.monotonic() + 15
    while not c.cluster_status()[victim.osd_id].reachable:
        assert time.monotonic() < deadline, "the restarted OSD is still unreachable for the manager"
        time.sleep(0.2)
    gate.release("written")
    res = vm.wait()
    vm.kill()
    print(res.report())
    res.assert_ok()
    out = res.steps[0]

    chunks = values(out, "chunk")
    assert len(chunks) == CHUNKS, out.output
    acked = [i for i, v in enumerate(chunks) if v.endswith(" ok")]
    failed = {i: v for i, v in enumerate(chunks) if i not in acked}
    print(f"{version}: {len(acked)} chunks acknowledged, {len(failed)} failed: {failed}")
    assert not failed, f"writes to a file with a live mirror failed: {failed}"

    # Acknowledged means there: from the guest (after a cache drop) ...
    reads = {int(v.split()[0]): v.split(None, 1)[1] for v in values(out, "read")}
    for i in acked:
        want = hashlib.sha256(data[i * MIB:(i + 1) * MIB]).hexdigest()
        assert reads[i] == want, f"chunk {i} was acknowledged, the guest reads back {reads[i]}"
    # ... over NFSv3 through the manager ...
    server = c.nfs3_read(f"/{vm.name}/s1-sh/f")
    for i in acked:
        assert server[i * MIB:(i + 1) * MIB] == data[i * MIB:(i + 1) * MIB], \
            f"chunk {i} was acknowledged, the server has other bytes"
    # ... and on every mirror not recorded stale.
    damage = [r for r in c.damage() if r.ino == ino]
    stale = {r.osd_id for r in damage if r.stale}
    comps = c.components(ino)
    held = {k.osd_id: c.read_component(k) for k in comps}
    for i in acked:
        chunk = data[i * MIB:(i + 1) * MIB]
        on = [osd for osd, obj in held.items() if obj[i * MIB:(i + 1) * MIB] == chunk]
        assert on, f"acknowledged chunk {i} is on no mirror"
        missing = set(held) - set(on) - stale
        assert not missing, \
            f"acknowledged chunk {i} is missing from OSD {sorted(missing)}, which is not recorded stale " \
            f"(damage: {damage}): a later read could return old bytes"
