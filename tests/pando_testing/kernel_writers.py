"""Two writers in a stock kernel guest that create files, rewrite 64 KiB
blocks of them in place (each `dd` with fsync) and read them back over
pNFS the whole time, until the host says stop; then every file is read
back after a cache drop and its sha256 handed to the host.  The host
publishes a phase through the rendezvous, so that a failure names the
phase it happened in (an OSD killed, a manager restarted).

Used by tests/pnfs/test_rebuild_kernel.py (an OSD killed and rebuilt
under them) and tests/pnfs/test_fsync_writers.py (nothing injected: no
write may fail)."""
from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest

from pando_testing.e2e import KernelClient
from pando_testing.mgr_cluster import assert_writes_go_on, wait_until, written_bytes
from pando_testing.pnfs_guest import DROP, values
from pando_testing.pnfs_tools import PnfsCluster, Rendezvous
from pando_testing.vm import Scenario

BLOCK = 64 << 10
BLOCKS = 16             # the guest's pool of distinct 64 KiB blocks
MAX_FILES = 24          # per writer; past that it only rewrites and reads


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
