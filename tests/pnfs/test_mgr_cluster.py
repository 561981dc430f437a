"""The whole cluster on etcd under a pNFS write storm from a stock kernel:
real etcd, pando-mgr, pando-osd with presence, Ganesha following the map.

A guest creates 1 MiB files one after another (dd conv=fsync), tagging
each with the phase the test has published; the test breaks things under
it.  What must hold, whatever broke:

* writes go on: a dd fails only while an OSD holding a mirror of that very
  file dies (EIO, never anything else), and every file written reads back
  with the bytes it was given;
* a killed OSD is marked down by the mgr within its lease and a few
  seconds, and out after the down-out interval; files created once the
  manager applied the map that says so have no component on it;
* the mgr leader killed, the standby leads and marks that OSD down;
* one etcd member of three killed, nothing stops;
* etcd unreachable for a while: the data path goes on, and an OSD started
  meanwhile joins the map when etcd is back and takes new files.
"""
from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from pando_testing.daemons import OsdProcess
from pando_testing.e2e import KernelClient
from pando_testing.etcd import EtcdCluster
from pando_testing.logs import keep_logs
from pando_testing.mds import PandoMds
from pando_testing.mgr import MgrApi, MgrProcess
from pando_testing.mgr_cluster import (LEASE, assert_writes_go_on, dbus_json, fsal_osd_states,
                                       osd_args, start_cluster, wait_until)
from pando_testing.pnfs_guest import DROP, values
from pando_testing.pnfs_tools import PnfsCluster, Rendezvous
from pando_testing.pod import Pod
from pando_testing.vm import Scenario

MIB = 1 << 20
BLOB_MIB = 17
DOWN_OUT = 15           # the mgr's --down-out-interval in these tests


def storm_script(gate_lib: str, port: int) -> str:
    """Creates f0, f1, ... (1 MiB each: MiB i % 16 of blob d) until the
    phase the host publishes is `stop`.  The output stays small whatever
    the count (the harness keeps the tail of a step's output): a line when
    the phase changes, one per failed dd, then the read-back check of
    every file against the blob's MiB, mismatches by name."""
    return gate_lib + DROP + f"""
getdata d /tmp/d
for k in $(seq 0 15); do
  echo "ref $k $(dd if=/tmp/d bs=1M skip=$k count=1 2>/dev/null | sha256sum | cut -d' ' -f1)"
done > /tmp/ref
cat /tmp/ref
echo "dir ${{PWD#/mnt/$VERS}}"
arrive started
i=0; last=
while :; do
  phase=$(wget -q -O - http://10.0.2.2:{port}/data/phase 2>/dev/null || echo none)
  [ "$phase" = stop ] && break
  [ "$phase" = "$last" ] || echo "phase $phase $i"
  last=$phase
  dd if=/tmp/d of=f$i bs=1M skip=$((i % 16)) count=1 conv=fsync 2>/tmp/dd.err ||
    echo "failed $i $phase $(tr '\n' ' ' < /tmp/dd.err)"
  i=$((i + 1))
done
echo "count $i"
arrive written "n=$i"
drop
j=0; bad=0
while [ $j -lt $i ]; do
  want=$(grep "^ref $((j % 16)) " /tmp/ref | cut -d' ' -f3)
  got=$(sha256sum < f$j | cut -d' ' -f1)
  [ "$(stat -c %s f$j)" = 1048576 ] && [ "$got" = "$want" ] || {{ echo "mismatch $j"; bad=$((bad + 1)); }}
  j=$((j + 1))
done
echo "verified $i $bad"
"""


@dataclass
class StormResult:
    count: int
    phases: list[tuple[str, int]]       # (phase, first file index)
    failed: dict[int, str]              # file index: "PHASE dd's error"
    mismatched: list[int]               # files (dd succeeded or not) whose bytes differ
    dir: str                            # where the files are, under the export

    def path(self, i: int) -> str:
        return f"{self.dir}/f{i}"

    def files_in(self, phase: str) -> list[int]:
        out: list[int] = []
        for k, (p, first) in enumerate(self.phases):
            end = self.phases[k + 1][1] if k + 1 < len(self.phases) else self.count
            if p == phase:
                out += range(first, end)
        return out


class Storm:
    def __init__(self, c: PnfsCluster, gate: Rendezvous, guest: Callable[..., KernelClient],
                 version: str) -> None:
        self.c, self.gate = c, gate
        self.blob = os.urandom(BLOB_MIB * MIB)
        gate.data["d"] = self.blob
        self.phase("1")
        gate.open("started")
        script = storm_script(gate.guest_lib(), gate.port)
        self.vm = guest(version, c).start(Scenario().step("sh", "v4.1", script), timeout=1200)
        gate.wait("started", timeout=300, vms=[self.vm])

    def phase(self, p: str) -> None:
        self.gate.data["phase"] = p.encode()
        print(f"phase {p}")

    def finish(self) -> StormResult:
        self.phase("stop")
        self.gate.wait("written", timeout=300, vms=[self.vm])
        self.gate.release("written")
        res = self.vm.wait()
        self.vm.kill()
        res.assert_ok()
        out = res.steps[0]
        refs = {int(k): h for k, h in (v.split() for v in values(out, "ref"))}
        want = {k: hashlib.sha256(self.blob[k * MIB:(k + 1) * MIB]).hexdigest()
                for k in range(16)}
        assert refs == want, "the guest's copy of the blob differs from the host's"
        count = int(values(out, "count")[0])
        verified = values(out, "verified")
        assert verified and int(verified[0].split()[0]) == count, out.output[-2000:]
        phases = [(w[0], int(w[1])) for w in (v.split() for v in values(out, "phase"))]
        failed = {int(v.split()[0]): v.split(None, 1)[1] for v in values(out, "failed")}
        mismatched = [int(v) for v in values(out, "mismatch")]
        return StormResult(count, phases, failed, mismatched, values(out, "dir")[0])

    def check_bytes(self, r: StormResult) -> None:
        """Every file whose dd succeeded reads back as the blob's MiB."""
        lost = [i for i in r.mismatched if i not in r.failed]
        assert not lost, f"files whose dd succeeded read back wrong: {lost}"

    def assert_writes_go_on(self, seconds: float, what: str) -> None:
        assert_writes_go_on(self.c, seconds, what, 2 * MIB)


def osds_of(c: PnfsCluster, path: str) -> set[int]:
    j = dbus_json(c, "file_map", f"string:{path}")
    return {int(k["osd"]) for g in j["groups"] for k in g["components"]}


@pytest.fixture
def mgrs(request: pytest.FixtureRequest, pod: Pod, tmp_path: Path) -> Iterator[list[MgrProcess]]:
    made: list[MgrProcess] = []
    yield made
    codes = {m.name: m.stop() for m in made if m.alive()}
    keep_logs(request, [m.log_path for m in made])
    assert all(c == 0 for c in codes.values()), f"pando-mgr did not exit cleanly: {codes}"


def leader(mgrs: list[MgrProcess]) -> MgrProcess:
    for m in mgrs:
        if m.alive():
            name = m.api().status().get("leader", {}) or {}
            name = name.get("name") if isinstance(name, dict) else name
            for x in mgrs:
                if x.name == name:
                    return x
    raise AssertionError("no mgr names a leader")


@pytest.mark.slow
@pytest.mark.parametrize("version", ["6.1", "7.x"])
def test_write_storm_survives_an_etcd_member_the_mgr_leader_and_an_osd_killed(
        version: str, pod: Pod, tmp_path: Path, gate: Rendezvous, etcd3: EtcdCluster,
        mds_factory: Callable[..., PandoMds], mgrs: list[MgrProcess],
        guest: Callable[..., KernelClient]) -> None:
    c = start_cluster(pod, tmp_path, gate, etcd3, mds_factory, mgrs, osds=5, nmgrs=2,
                      down_out=DOWN_OUT)
    storm = Storm(c, gate, guest, version)
    storm.assert_writes_go_on(8, "storm")

    etcd3.members[0].kill9()
    print(f"killed etcd member {etcd3.members[0].name}")
    storm.assert_writes_go_on(8, "one etcd member of three killed")

    old = leader(mgrs)
    old.kill9()
    standby = next(m for m in mgrs if m is not old)
    took = wait_until("the standby mgr leading", lambda: leader(mgrs) is standby, 3 * LEASE)
    print(f"mgr leader {old.name} killed; {standby.name} leads after {took:.1f} s")
    api: MgrApi = standby.api()

    victim = c.osd(2)
    victim.kill9()
    down = wait_until("the killed OSD down in the map",
                      lambda: api.osd_states()[victim.osd_id] == (False, True), 2 * LEASE + 5)
    applied = wait_until("the manager applying the down state",
                         lambda: fsal_osd_states(c)[victim.osd_id][0] is False, 10)
    print(f"OSD {victim.osd_id} killed: down in the map after {down:.1f} s, "
          f"applied by the manager {applied:.1f} s later")
    storm.phase("down")
    storm.assert_writes_go_on(6, "an OSD down")
    out = wait_until("the OSD out in the map",
                     lambda: api.osd_states()[victim.osd_id] == (False, False), DOWN_OUT + 10)
    wait_until("the manager applying the out state",
               lambda: fsal_osd_states(c)[victim.osd_id] == (False, False), 10)
    print(f"OSD {victim.osd_id} out {out:.1f} s after it was seen down")
    storm.phase("out")
    storm.assert_writes_go_on(10, "an OSD out")

    r = storm.finish()
    print(f"{r.count} files, phases {r.phases}, {len(r.failed)} failed: {r.failed}")
    # Not even a file being written when its mirror died may fail.
    assert not r.failed, f"writes failed: {r.failed}"
    storm.check_bytes(r)
    later = r.files_in("down") + r.files_in("out")
    assert len(later) >= 4, f"too few files after the OSD went down: {r.phases}"
    sample = later[:: max(1, len(later) // 60)]
    on_victim = [i for i in sample if victim.osd_id in osds_of(c, r.path(i))]
    print(f"{len(sample)} of {len(later)} files made after the OSD went down checked")
    assert not on_victim, f"new files placed on the dead OSD {victim.osd_id}: {on_victim}"


@pytest.mark.slow
def test_osd_started_while_etcd_is_unreachable_joins_when_it_is_back_and_takes_new_files(
        pod: Pod, tmp_path: Path, gate: Rendezvous, etcd: EtcdCluster,
        osd_factory: Callable[..., OsdProcess], mds_factory: Callable[..., PandoMds],
        mgrs: list[MgrProcess], guest: Callable[..., KernelClient]) -> None:
    c = start_cluster(pod, tmp_path, gate, etcd, mds_factory, mgrs, osds=4, nmgrs=1,
                      down_out=DOWN_OUT)
    api = mgrs[0].api()
    epoch0 = api.status()["epoch"]
    storm = Storm(c, gate, guest, "7.x")
    storm.assert_writes_go_on(6, "storm")

    member = etcd.members[0]
    member.pause()
    print("etcd stopped (SIGSTOP)")
    new = osd_factory(5, extra_args=osd_args(etcd)(5))
    c.osds.append(new)
    storm.assert_writes_go_on(15, "etcd unreachable")
    member.resume()
    print("etcd resumed")

    joined = wait_until("OSD 5 up and in the map",
                        lambda: api.osd_states().get(5) == (True, True), 30)
    wait_until("the manager applying OSD 5", lambda: fsal_osd_states(c).get(5) == (True, True),
               10)
    print(f"OSD 5 in the map {joined:.1f} s after etcd came back")
    states = api.osd_states()
    assert all(states[i] == (True, True) for i in range(1, 6)), states
    storm.phase("joined")
    storm.assert_writes_go_on(20, "five OSDs")

    r = storm.finish()
    print(f"{r.count} files, phases {r.phases}, {len(r.failed)} failed: {r.failed}; "
          f"map epoch {epoch0} -> {api.status()['epoch']}")
    assert not r.failed, f"writes failed: {r.failed}"
    storm.check_bytes(r)
    later = r.files_in("joined")
    assert len(later) >= 6, f"too few files after OSD 5 joined: {r.phases}"
    sample = later[:: max(1, len(later) // 60)]
    on_new = [i for i in sample if 5 in osds_of(c, r.path(i))]
    print(f"{len(on_new)} of {len(sample)} new files checked have a component on OSD 5")
    assert on_new, "no new file was placed on the OSD that joined"
    down_flaps = [ln for ln in mgrs[0].log_text().splitlines() if " down" in ln and "osd." in ln]
    assert not down_flaps, f"the etcd outage made the mgr mark OSDs down: {down_flaps}"
