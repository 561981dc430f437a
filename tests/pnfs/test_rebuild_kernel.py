"""Rebuild under stock kernel clients (issue 12, "What it must show"):
real etcd, pando-mgr, six pando-osd targets with presence, Ganesha
following the map with two mirrors per file, and a 6.12 guest whose two
writers keep creating files, rewriting 64 KiB blocks of them in place
and reading them back over pNFS the whole time.

An OSD is killed (kill -9) and goes out (the mgr's down-out interval, or
`POST /api/osd/<id>/out`); the mgr writes a recovery job in the same txn
and the manager rebuilds every file that had a component there while the
writers go on.  Once the job is done (the manager's progress idle with
the job in `jobs_done`, or the mgr retired it), the writers stop, and:

* the guest reads every file back, after dropping its caches, with the
  sha256 it computed from the bytes it wrote (it composes each file from
  64 KiB blocks it holds, so it knows every file's bytes without asking a
  server);
* the manager: no stale component recorded, every file's two components
  `ok` on two different live OSDs, none on a dead one;
* every copy of every file, read straight from its OSD over the control
  RPC, holds exactly the bytes whose sha256 the guest recorded;
* pando-fsck, with the manager stopped and each dead OSD's disk replaced
  by an empty one (so a map still naming it shows as a missing object),
  finds nothing: no stale component, none on an out OSD, none missing,
  no orphan object ("every file has every copy its scheme wants").

The rebuild is capped at 1 MB/s so that it lasts long enough (10-20 s)
for the writers to rewrite files while they are being copied: the
handoff's second copy under the freeze runs for a dozen files a run.

The second test does it again for a second OSD killed after the first
rebuild finished: nothing lost with two of six OSDs gone.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from pando_testing.daemons import OsdProcess
from pando_testing.e2e import KernelClient
from pando_testing.etcd import EtcdCluster
from pando_testing.logs import keep_logs
from pando_testing.mds import PandoMds
from pando_testing.mgr import MgrApi, MgrProcess
from pando_testing.mgr_cluster import (MDS_NAME, PREFIX, assert_writes_go_on, dbus_json,
                                       fsal_osd_states, start_cluster, wait_until,
                                       written_bytes)
from pando_testing.osdctl import OsdCtl
from pando_testing.pnfs_guest import DROP, values
from pando_testing.pnfs_tools import PARTITION, PnfsCluster, Rendezvous
from pando_testing.pod import Pod
from pando_testing.vm import Scenario

BLOCK = 64 << 10
BLOCKS = 16             # the guest's pool of distinct 64 KiB blocks
MAX_FILES = 24          # per writer; past that it only rewrites and reads
OSDS = 6
DOWN_OUT = 5            # the mgr's --down-out-interval where the interval outs the OSD
REBUILD = "Rebuild_Parallel = 4;\nRebuild_Bandwidth_Mb = 1;"   # ~10 s of copying: writes meet it


def writers_script(gate_lib: str, port: int) -> str:
    """Two writers (w0, w1) in the background until the host's phase is
    `stop`.  Each iteration creates a file of 4..16 blocks from the pool
    (while a writer has fewer than MAX_FILES) or rewrites one block of one
    of its files in place, each dd with fsync and retried every second
    until it succeeds (a write the death of an OSD interrupted gets EIO);
    then reads one of its files and compares the sha256 with the one of
    the blocks it holds; every 8th iteration it drops the page cache so
    that reads go to the servers.  /tmp/m<w>/f<n> lists file n's blocks.
    Then: every file read back after a cache drop, and put to the host
    (`put sums`) with the size and sha256 the guest computed."""
    return gate_lib + DROP + f"""
G=http://10.0.2.2:{port}
getdata blocks /tmp/blocks
k=0
while [ $k -lt {BLOCKS} ]; do
  dd if=/tmp/blocks of=/tmp/b$k bs={BLOCK} skip=$k count=1 2>/dev/null; k=$((k + 1))
done
want() {{ for b in $(cat "$1"); do cat /tmp/b$b; done | sha256sum | cut -d' ' -f1; }}
echo "dir ${{PWD#/mnt/$VERS}}"
try() {{
  f=$1; shift; t=0
  until "$@" 2>/tmp/err$w; do
    t=$((t + 1)); fails=$((fails + 1))
    [ $t -gt 1 ] || echo "failed $w $f $last $(tr '\\n' ' ' < /tmp/err$w)"
    [ $t -lt 120 ] || {{ echo "gaveup $w $f"; return 1; }}
    sleep 1
  done
  [ $t = 0 ] || echo "recovered $w $f after $t"
}}
check() {{
  if got=$(sha256sum < w$w/$1 2>/tmp/rerr$w); then
    [ "${{got%% *}}" = "$(want /tmp/m$w/$1)" ] ||
      {{ echo "badread $w $1 $last ${{got%% *}}"; bad=$((bad + 1)); }}
  else
    echo "readerr $w $1 $last $(tr '\\n' ' ' < /tmp/rerr$w)"; rerr=$((rerr + 1))
  fi
}}
writer() {{
  w=$1; m=/tmp/m$w; mkdir -p w$w $m
  n=0; i=0; r=$((w * 7919 + 17)); last=; fails=0; bad=0; rerr=0; reads=0; rewrites=0
  while :; do
    phase=$(wget -q -O - "$G/data/phase" 2>/dev/null || echo none)
    [ "$phase" != stop ] || break
    [ "$phase" = "$last" ] || echo "phase $w $phase $i $n"
    last=$phase
    r=$(( (r * 1103515245 + 12345) % 2147483648 ))
    if [ $n -lt {MAX_FILES} ] && [ $((i % 3)) != 2 ]; then
      f=f$n; nb=$((4 + r % 13)); list=; k=0
      while [ $k -lt $nb ]; do list="$list $(( (r / 16 + k * 5) % {BLOCKS} ))"; k=$((k + 1)); done
      for b in $list; do cat /tmp/b$b; done > /tmp/src$w
      if try $f dd if=/tmp/src$w of=w$w/$f bs={BLOCK} conv=fsync; then
        echo $list > $m/$f
      else
        echo lost > $m/$f.lost; echo $list > $m/$f
      fi
      n=$((n + 1))
    else
      f=f$(( (r / 16) % n ))
      if [ ! -e $m/$f.lost ]; then
        set -- $(cat $m/$f)
        p=$(( (r / 1024) % $# )); b=$(( (r / 65536) % {BLOCKS} ))
        if try $f dd if=/tmp/b$b of=w$w/$f bs={BLOCK} seek=$p count=1 conv=notrunc,fsync; then
          list=; k=0
          for x in "$@"; do [ $k = $p ] && list="$list $b" || list="$list $x"; k=$((k + 1)); done
          echo $list > $m/$f
        else
          echo lost > $m/$f.lost
        fi
        rewrites=$((rewrites + 1))
      fi
    fi
    f=f$(( (r / 8) % n ))
    [ -e $m/$f.lost ] || {{ check $f; reads=$((reads + 1)); }}
    [ $((i % 8)) != 7 ] || drop
    i=$((i + 1))
  done
  echo "end $w files $n iterations $i rewrites $rewrites reads $reads failed $fails" \
    "badread $bad readerr $rerr"
}}
writer 0 > /tmp/out0 2>&1 &
writer 1 > /tmp/out1 2>&1 &
wait
arrive written
cat /tmp/out0 /tmp/out1 | grep -v -e '^recovered' -e '^end' | tail -c 5000
grep -h '^end' /tmp/out0 /tmp/out1
drop
files=0; bad=0
for w in 0 1; do
  for mf in $(ls /tmp/m$w | grep -v lost); do
    [ ! -e /tmp/m$w/$mf.lost ] || {{ echo "lost w$w/$mf"; continue; }}
    sum=$(want /tmp/m$w/$mf)
    size=$(( $(wc -w < /tmp/m$w/$mf) * {BLOCK} ))
    got=$(sha256sum < w$w/$mf | cut -d' ' -f1)
    [ "$got" = "$sum" ] && [ "$(stat -c %s w$w/$mf)" = $size ] ||
      {{ echo "mismatch w$w/$mf"; bad=$((bad + 1)); }}
    put sums "f=w$w/$mf&size=$size&sha=$sum"
    files=$((files + 1))
  done
done
echo "verified $files $bad"
"""


@dataclass
class WriterEnd:
    files: int
    iterations: int
    rewrites: int
    reads: int
    failed: int
    badread: int
    readerr: int


@dataclass
class Written:
    dir: str                                # under the export
    sums: dict[str, tuple[int, str]]        # "w0/f3": (size, sha256), as the guest computed
    ends: dict[int, WriterEnd]
    failed: list[str]                       # "W FILE PHASE dd's error", once per write
    badreads: list[str]
    readerrs: list[str]
    lost: list[str]
    mismatched: list[str]
    verified: tuple[int, int]
    phases: list[str] = field(default_factory=list)
    kill_phases: list[str] = field(default_factory=list)

    def path(self, name: str) -> str:
        return f"{self.dir}/{name}"


class Writers:
    """The guest and its writers; the host publishes the phase."""

    def __init__(self, c: PnfsCluster, gate: Rendezvous, guest: Callable[..., KernelClient],
                 version: str) -> None:
        self.c, self.gate = c, gate
        self.blocks = os.urandom(BLOCKS * BLOCK)
        self.current = ""
        self.kill_phases: list[str] = []    # the phase each OSD was killed in
        gate.data["blocks"] = self.blocks
        self.phase("1")
        gate.open("written")
        script = writers_script(gate.guest_lib(), gate.port)
        self.t0 = time.monotonic()
        self.vm = guest(version, c).start(Scenario().step("sh", "v4.1", script), timeout=1200)

    def phase(self, p: str) -> None:
        self.current = p
        self.gate.data["phase"] = p.encode()
        print(f"phase {p}")

    def maps(self) -> dict[str, set[int]]:
        """The OSDs of each file the writers have made so far (file_map)."""
        out = {}
        for name in (f"w{w}/f{i}" for w in (0, 1) for i in range(MAX_FILES)):
            v = self.c.dbus("file_map", f"string:/{self.vm.name}/s1-sh/{name}", check=False)
            if len(v) == 3 and v[0] is True:
                j = json.loads(v[2])
                out[name] = {int(k["osd"]) for g in j["groups"] for k in g["components"]}
        return out

    def written_bytes(self) -> int:
        return written_bytes(self.c)

    def assert_writes_go_on(self, seconds: float, what: str) -> None:
        assert_writes_go_on(self.c, seconds, what, BLOCK)

    def wait_writing(self, timeout: float) -> None:
        """Until the guest has booted and its writers put data on the OSDs."""
        wait_until("the guest writing", lambda: self.written_bytes() >= 4 * 2**20 or
                   not self.vm.alive(), timeout)
        if not self.vm.alive():
            res = self.vm.poll()
            pytest.fail(f"the guest ended: {res.report() if res else '(no result)'}")
        print(f"guest writing {time.monotonic() - self.t0:.1f} s after its start")

    def finish(self) -> Written:
        self.phase("stop")
        self.gate.wait("written", timeout=300, vms=[self.vm])
        t = time.monotonic()
        res = self.vm.wait()
        self.vm.kill()
        print(f"guest read back every file in {time.monotonic() - t:.1f} s")
        res.assert_ok()
        out = res.steps[0]
        print(out.output[-3000:])
        ends = {}
        for v in values(out, "end"):
            w = v.split()
            ends[int(w[0])] = WriterEnd(*(int(x) for x in w[2::2]))
        assert set(ends) == {0, 1}, f"a writer did not end:\n{out.output[-3000:]}"
        sums = {q["f"]: (int(q["size"]), q["sha"]) for q in self.gate.puts.get("sums", [])}
        verified = tuple(int(x) for x in values(out, "verified")[0].split())
        assert len(verified) == 2 and verified[0] == len(sums), (verified, len(sums))
        return Written(values(out, "dir")[0], sums, ends, values(out, "failed"),
                       values(out, "badread"), values(out, "readerr"), values(out, "lost"),
                       values(out, "mismatch"), (verified[0], verified[1]),
                       values(out, "phase"), self.kill_phases)


# ---- rebuild ----------------------------------------------------------------------

def progress(etcd: EtcdCluster) -> dict[str, Any]:
    p: dict[str, Any] = etcd.client().get_json(f"{PREFIX}recovery/progress/{MDS_NAME}") or {}
    return p


def jobs(etcd: EtcdCluster) -> dict[int, dict[str, Any]]:
    return {int(k.rsplit("/", 1)[1]): json.loads(v)
            for k, v in etcd.client().get_prefix(f"{PREFIX}recovery/jobs/").items()}


@dataclass
class Rebuilt:
    job: int
    down_s: float           # kill -9 to down in the mgr's map
    out_s: float            # kill -9 to out (and the job) in the mgr's map
    done_s: float           # kill -9 to the job done on the manager
    progress: dict[str, Any]


def kill_and_rebuild(c: PnfsCluster, api: MgrApi, etcd: EtcdCluster, w: Writers,
                     victim: OsdProcess, by_api: bool) -> Rebuilt:
    """kill -9, down, out (by the down-out interval, or by the API), the
    job in etcd, then the manager's rebuild of it to the end."""
    osd = victim.osd_id
    before = w.maps()
    w.kill_phases.append(w.current)
    victim.kill9()
    t0 = time.monotonic()
    print(f"killed OSD {osd}")
    down = wait_until("the killed OSD down in the map",
                      lambda: not api.osd_states()[osd][0], 20)
    w.phase(f"down{osd}")
    if by_api:
        api.post(f"/api/osd/{osd}/out")
    wait_until("the OSD out in the map", lambda: api.osd_states()[osd] == (False, False),
               DOWN_OUT + 15)
    out = time.monotonic() - t0
    found = [j for j, v in jobs(etcd).items() if v.get("osd") == osd]
    assert found, f"no recovery job for OSD {osd} once it is out: {jobs(etcd)}"
    job = max(found)
    wait_until("the manager applying the out state",
               lambda: fsal_osd_states(c)[osd] == (False, False), 15)
    w.phase(f"out{osd}")
    seen: dict[str, Any] = {}

    def done() -> bool:
        p = progress(etcd)
        if p.get("files_done", 0) >= seen.get("files_done", 0):
            seen.update(p)
        return p.get("state") == "idle" and (job in p.get("jobs_done", []) or job not in jobs(etcd))
    try:
        wait_until(f"rebuild job {job} done", done, 150)
    except BaseException:
        print(stuck_report(c, etcd))
        raise
    rb = Rebuilt(job, down, out, time.monotonic() - t0, seen)
    print(f"OSD {osd}: down after {rb.down_s:.1f} s, out (job {job}) after {rb.out_s:.1f} s, "
          f"rebuilt after {rb.done_s:.1f} s: files {seen.get('files_done')} done, "
          f"{seen.get('files_failed')} failed, {seen.get('bytes_done', 0) / 2**20:.1f} MiB, "
          f"rate {seen.get('rate_bps', 0) / 2**20:.1f} MiB/s")
    assert seen.get("files_failed", 0) == 0, f"rebuild job {job}: files failed: {seen}"
    assert seen.get("files_done", 0) >= 1, f"rebuild job {job}: nothing rebuilt off OSD {osd}"
    w.phase(f"rebuilt{osd}")
    print_new_homes(w, before, osd)
    return rb


def print_new_homes(w: Writers, before: dict[str, set[int]], osd: int) -> None:
    """Where the components lost with `osd` went: declustered, several
    OSDs take a share (the files made before the kill)."""
    after = w.maps()
    lost = [n for n, osds in before.items() if osd in osds]
    homes: dict[int, int] = {}
    for n in lost:
        for o in after.get(n, set()) - before[n]:
            homes[o] = homes.get(o, 0) + 1
    print(f"OSD {osd}: {len(lost)} of {len(before)} files had a component there; "
          f"new homes {dict(sorted(homes.items()))}")
    assert len(lost) < 4 or len(homes) >= 2, f"every lost component went to one OSD: {homes}"


def stuck_report(c: PnfsCluster, etcd: EtcdCluster) -> str:
    """What a rebuild that does not end is doing: the recovery keys in
    etcd and the manager's threads that are in rebuild code (gdb)."""
    kv = etcd.client().get_prefix(f"{PREFIX}recovery/")
    lines = [f"{k} = {v.decode(errors='replace')[:400]}" for k, v in sorted(kv.items())]
    proc = c.mds.proc
    if proc is not None and shutil.which("gdb"):
        cp = subprocess.run(["gdb", "-p", str(proc.pid), "-batch", "-ex", "thread apply all bt 16"],
                            capture_output=True, text=True, timeout=120, check=False)
        lines += [t for t in cp.stdout.split("\nThread ") if "rebuild" in t]
    return "\n".join(["the rebuild did not end:", *lines])


# ---- checks -----------------------------------------------------------------------

def check_guest(r: Written) -> None:
    print(f"guest: {len(r.sums)} files; writers {r.ends}; {len(r.failed)} writes failed "
          f"(then retried): {r.failed[:10]}")
    assert not r.lost, f"writes still failing after 120 s of retries: {r.lost}"
    assert not r.badreads, f"reads returned other bytes than written: {r.badreads}"
    assert not r.mismatched and r.verified[1] == 0, \
        f"files read back wrong after the rebuild and a cache drop: {r.mismatched}"
    assert all("Input/output error" in f for f in r.failed), \
        f"writes failed otherwise than with EIO: {r.failed}"
    # Only a write in flight when an OSD died should fail.  Known issue,
    # not the rebuild's (README "Known failures"; it happens with no OSD
    # killed too): in about one run in three one dd's fsync gets EIO, the
    # 6.12 client having sent LAYOUTCOMMIT with a layout stateid Ganesha
    # no longer has (NFS4ERR_BAD_STATEID).  The retry a second later
    # succeeds and every byte is checked below.  Bounded and printed.
    late = [f for f in r.failed if f.split()[2] not in r.kill_phases]
    if late:
        print(f"KNOWN ISSUE: writes failed after the OSD was marked down (it was killed in "
              f"phase {r.kill_phases}), then succeeded when retried: {late}")
    assert len(late) <= 2, f"writes failed after the OSD was marked down: {late}"
    # A read between an OSD's death and the manager noticing may fail; none
    # may return wrong bytes (above).  Seen: none at all.
    assert len(r.readerrs) <= 2, f"reads failing: {r.readerrs}"
    assert sum(e.rewrites for e in r.ends.values()) > 0


def check_maps(c: PnfsCluster, r: Written, dead: list[int]) -> dict[str, list[tuple[int, int]]]:
    """Every file's map at full redundancy on live OSDs: its components."""
    stale = [d for d in c.damage() if d.stale]
    assert not stale, f"stale components recorded after the rebuild: {stale}"
    comps: dict[str, list[tuple[int, int]]] = {}
    for name, (size, _) in sorted(r.sums.items()):
        j = dbus_json(c, "file_map", f"string:{r.path(name)}")
        assert j["size"] == size and not j["inline"], f"{name}: {j}"
        ks = [k for g in j["groups"] for k in g["components"]]
        osds = {k["osd"] for k in ks}
        assert len(ks) == 2 and len(osds) == 2, f"{name}: not two mirrors on two OSDs: {j}"
        assert not osds & set(dead), f"{name}: a component still on dead OSD {osds & set(dead)}"
        assert all(k["state"] == "ok" for k in ks), f"{name}: {j}"
        comps[name] = [(k["osd"], k["object"]) for k in ks]
    return comps


def check_copies(c: PnfsCluster, r: Written, comps: dict[str, list[tuple[int, int]]]) -> None:
    """Each copy, read from its OSD, has exactly the bytes the guest wrote
    (objects keep file offsets; one column, so each holds the whole file)."""
    with ExitStack() as stack:
        ctls: dict[int, OsdCtl] = {}
        for name, ks in comps.items():
            size, want = r.sums[name]
            for osd, obj in ks:
                if osd not in ctls:
                    ctls[osd] = stack.enter_context(c.ctl(c.osd(osd)))
                got = ctls[osd].read_all(PARTITION, obj)
                assert hashlib.sha256(got[:size]).hexdigest() == want and len(got) >= size, \
                    f"{name}: the copy on OSD {osd} (object {obj}, {len(got)} bytes) differs " \
                    f"from what the guest wrote ({size} bytes): first differing block at " \
                    f"{first_difference(c, r, name, got)}"
                assert not got[size:].strip(b"\0"), f"{name}: bytes past its end on OSD {osd}"
    print(f"every copy of {len(comps)} files matches ({2 * len(comps)} objects)")


def first_difference(c: PnfsCluster, r: Written, name: str, got: bytes) -> str:
    """Where an object first differs from what the manager serves (NFSv3)."""
    served = c.nfs3_read(r.path(name))
    for off in range(0, max(len(served), len(got)), BLOCK):
        if got[off:off + BLOCK] != served[off:off + BLOCK]:
            return f"{off} (the manager serves a different block there)"
    return "none against the manager's copy"


def fsck_with_replaced_disks(pod: Pod, tmp_path: Path, m: PandoMds, dead: list[OsdProcess]) -> str:
    """pando-fsck on the stopped manager, each dead OSD back with an empty
    disk at its address: a map still naming it shows as a missing object."""
    code = m.stop()
    assert code == 0, f"ganesha.nfsd exit {code} on SIGTERM"
    fresh = [OsdProcess(pod, tmp_path / "replaced", o.key, osd_id=o.osd_id) for o in dead]
    try:
        for o in fresh:
            o.format()
            o.start()
        t = time.monotonic()
        status, out = m.fsck("-v")
        print(f"pando-fsck: exit {status} in {time.monotonic() - t:.1f} s\n"
              + "\n".join(out.splitlines()[-16:]))
    finally:
        codes = {o.osd_id: o.stop() for o in fresh if o.alive()}
    assert all(v == 0 for v in codes.values()), codes
    assert status == 0, f"pando-fsck found problems after the rebuild (exit {status}):\n{out}"
    assert re.search(r"^  total +0 +0 +0$", out, re.M), out
    assert "redundancy: every file has every copy its scheme wants" in out, out
    return out


def check_all(c: PnfsCluster, pod: Pod, tmp_path: Path, etcd: EtcdCluster, r: Written,
              dead: list[OsdProcess]) -> None:
    t = time.monotonic()
    check_guest(r)
    ids = [o.osd_id for o in dead]
    comps = check_maps(c, r, ids)
    presence = etcd.client().get_json(f"{PREFIX}mds/{MDS_NAME}") or {}
    assert presence.get("degraded", 0) == 0, f"the manager reports degraded files: {presence}"
    check_copies(c, r, comps)
    fsck_with_replaced_disks(pod, tmp_path, c.mds, dead)
    rebuilt_hot = c.log_text().count("was written during its rebuild")
    print(f"checks took {time.monotonic() - t:.1f} s; files written during their rebuild "
          f"(copied again under the freeze): {rebuilt_hot}")


# ---- fixtures and tests -------------------------------------------------------------

@pytest.fixture
def mgrs(request: pytest.FixtureRequest) -> Iterator[list[MgrProcess]]:
    made: list[MgrProcess] = []
    yield made
    codes = {m.name: m.stop() for m in made if m.alive()}
    keep_logs(request, [m.log_path for m in made])
    assert all(c == 0 for c in codes.values()), f"pando-mgr did not exit cleanly: {codes}"


@pytest.mark.slow
def test_osd_killed_and_outed_under_kernel_writers_is_rebuilt_and_every_copy_matches(
        pod: Pod, tmp_path: Path, gate: Rendezvous, etcd: EtcdCluster,
        mds_factory: Callable[..., PandoMds], mgrs: list[MgrProcess],
        guest: Callable[..., KernelClient]) -> None:
    t0 = time.monotonic()
    c = start_cluster(pod, tmp_path, gate, etcd, mds_factory, mgrs, osds=OSDS, nmgrs=1,
                      down_out=DOWN_OUT, extra_fsal=REBUILD)
    api = mgrs[0].api()
    w = Writers(c, gate, guest, "6.12")
    w.wait_writing(180)
    w.assert_writes_go_on(10, "writers")
    victim = c.osd(2)
    kill_and_rebuild(c, api, etcd, w, victim, by_api=False)   # out by the down-out interval
    w.assert_writes_go_on(5, "after the rebuild")
    r = w.finish()
    check_all(c, pod, tmp_path, etcd, r, [victim])
    print(f"test took {time.monotonic() - t0:.1f} s")


@pytest.mark.slow
def test_second_osd_killed_after_the_first_rebuild_loses_nothing(
        pod: Pod, tmp_path: Path, gate: Rendezvous, etcd: EtcdCluster,
        mds_factory: Callable[..., PandoMds], mgrs: list[MgrProcess],
        guest: Callable[..., KernelClient]) -> None:
    t0 = time.monotonic()
    # Outs by `POST /api/osd/<id>/out` (pando osd out) here; the interval is out of reach.
    c = start_cluster(pod, tmp_path, gate, etcd, mds_factory, mgrs, osds=OSDS, nmgrs=1,
                      down_out=600, extra_fsal=REBUILD)
    api = mgrs[0].api()
    w = Writers(c, gate, guest, "6.12")
    w.wait_writing(180)
    w.assert_writes_go_on(10, "writers")
    first, second = c.osd(2), c.osd(5)
    kill_and_rebuild(c, api, etcd, w, first, by_api=True)
    w.assert_writes_go_on(5, "after the first rebuild")
    kill_and_rebuild(c, api, etcd, w, second, by_api=True)
    w.assert_writes_go_on(5, "after the second rebuild")
    r = w.finish()
    check_all(c, pod, tmp_path, etcd, r, [first, second])
    print(f"test took {time.monotonic() - t0:.1f} s")
