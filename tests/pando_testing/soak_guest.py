"""The stock kernel client of tests/bench/soak: one qemu guest on its own
client machine of the rack (its user-mode network reaches the manager
and the OSDs at their rack addresses; the rendezvous listens in the
machine, where the guest finds it at 10.0.2.2) with two writers, one
over NFSv4.1 with flexfiles layouts (`kernel_pnfs`) and one over NFSv3
(`kernel_nfs3`).  Each makes files of 64 KiB blocks drawn from a pool the
host made (`dd conv=fsync`), rewrites single blocks in place (fsync),
and reads a file back after every write, comparing its sha256 with what
it wrote; every 8th round it drops the page cache so reads go to the
servers.  After each operation it puts `p_<kind>` (its progress, timed
on this machine as it arrives); a write or read that fails puts `err`,
a read that gives other bytes puts `bad`: errors the application saw.

When the host opens the `stop` gate the writers end, the guest drops its
cache, reads every file back once more and puts `file` records: path
under the export, blocks (the pool's block numbers, in order), size,
sha256, and whether its own read matched.  Files whose last write
failed are left out (their bytes are undefined) and counted in `err`."""
from __future__ import annotations

import os
from dataclasses import dataclass

from .e2e import KernelClient
from .pnfs_tools import Rendezvous
from .vm import Scenario, Vm

BLOCK = 64 << 10
POOL = 16                # distinct blocks the guest writes
MAX_FILES = 24           # per writer; past that it only rewrites and reads
KINDS = {"kernel_pnfs": "v4.1", "kernel_nfs3": "v3"}
SETTLE_S = 0.1           # a pause between rounds: the guest shares 2 cores
HUNG_S = 120             # writers not ended this long after the stop: their state to the console


def guest_script(gate: Rendezvous) -> str:
    # Messages travel in a query string: anything but [A-Za-z0-9._-] goes.
    return gate.guest_lib() + f"""
mount_nfs v3 || fail "mount v3"
D3=/mnt/v3/$PANDO_RUN/v3
mkdir -p "$D3" p
getdata blocks /tmp/blocks
k=0
while [ $k -lt {POOL} ]; do
  dd if=/tmp/blocks of=/tmp/b$k bs={BLOCK} skip=$k count=1 2>/dev/null; k=$((k + 1))
done
want() {{ for b in $(cat "$1"); do cat /tmp/b$b; done | sha256sum | cut -d' ' -f1; }}
clean() {{ tr -c 'A-Za-z0-9._-' '_' | cut -c1-200; }}
drop() {{ sync; echo 3 > /proc/sys/vm/drop_caches; }}
err() {{ put err "k=$K&op=$1&f=$2&msg=$(clean < /tmp/e.$K)"; }}
check() {{  # FILE: read back, compare with what was written
  if got=$(sha256sum < $D/$1 2>/tmp/e.$K); then
    [ "${{got%% *}}" = "$(want $M/$1)" ] || put bad "k=$K&f=$1"
  else
    err read $1
  fi
}}
create() {{  # FILE R: a file of 4..16 blocks
  nb=$((4 + $2 % 13)); list=; j=0
  while [ $j -lt $nb ]; do list="$list $(( ($2 / 16 + j * 5) % {POOL} ))"; j=$((j + 1)); done
  for b in $list; do cat /tmp/b$b; done > /tmp/src.$K
  echo $list > $M/$1
  dd if=/tmp/src.$K of=$D/$1 bs={BLOCK} conv=fsync 2>/tmp/e.$K || {{ err create $1; touch $M/$1.x; }}
}}
rewrite() {{  # FILE R: one block in place
  set -- $1 $2 $(cat $M/$1)
  f=$1; r=$2; shift 2
  p=$(( (r / 1024) % $# )); b=$(( (r / 65536) % {POOL} )); list=; j=0
  for x in "$@"; do [ $j = $p ] && list="$list $b" || list="$list $x"; j=$((j + 1)); done
  echo $list > $M/$f
  dd if=/tmp/b$b of=$D/$f bs={BLOCK} seek=$p count=1 conv=notrunc,fsync 2>/tmp/e.$K ||
    {{ err rewrite $f; touch $M/$f.x; }}
}}
writer() {{  # KIND DIR SEED
  K=$1; D=$2; M=/tmp/m.$1; r=$3; n=0; i=0
  mkdir -p $M
  while [ ! -e /tmp/stop ]; do
    echo "round $i since $(cut -d' ' -f1 /proc/uptime)" > /tmp/op.$K
    r=$(( (r * 1103515245 + 12345) % 2147483648 ))
    if [ $n -lt {MAX_FILES} ] && [ $((i % 3)) != 2 ]; then
      create f$n $r; n=$((n + 1))
    else
      f=f$(( (r / 16) % n )); [ -e $M/$f.x ] || rewrite $f $r
    fi
    put p_$K
    f=f$(( (r / 8) % n )); [ -e $M/$f.x ] || check $f
    put p_$K
    [ $((i % 8)) != 7 ] || drop
    i=$((i + 1))
    sleep {SETTLE_S}
  done
}}
report() {{  # KIND DIR PATH: every file's record
  for mf in $(ls /tmp/m.$1 | grep -v '[.]x$'); do
    [ ! -e /tmp/m.$1/$mf.x ] || continue
    sum=$(want /tmp/m.$1/$mf); size=$(( $(wc -w < /tmp/m.$1/$mf) * {BLOCK} ))
    got=$(sha256sum < $2/$mf | cut -d' ' -f1)
    [ "$got" = "$sum" ] && [ "$(stat -c %s $2/$mf)" = $size ] && ok=1 || ok=0
    put file "path=$3/$mf&blocks=$(cat /tmp/m.$1/$mf | tr ' ' '.')&size=$size&sha=$sum&ok=$ok"
  done
}}
hung() {{  # what a writer that has not ended is doing, on the console
  for k in {" ".join(KINDS)}; do echo "$k: $(cat /tmp/op.$k)"; done > /dev/console
  echo w > /proc/sysrq-trigger; dmesg | tail -n 200 > /dev/console
}}
writer kernel_pnfs "$PWD/p" 17 &
W1=$!
writer kernel_nfs3 "$D3" 7919 &
W2=$!
arrive ready
until wget -q -O /dev/null "http://10.0.2.2:{gate.port}/arrive/stop"; do sleep 1; done
touch /tmp/stop
( sleep {HUNG_S}; hung ) &
wait $W1 $W2
kill $! 2>/dev/null || true
drop
report kernel_pnfs "$PWD/p" "$PANDO_RUN/s1-sh/p"
report kernel_nfs3 "$D3" "$PANDO_RUN/v3"
arrive done
"""


@dataclass
class GuestFile:
    path: str               # under the export
    blocks: list[int]
    size: int
    sha256: str
    read_ok: bool           # the guest's own last read matched


class GuestLoad:
    """The host's side: the pool, the guest, and what it put."""

    def __init__(self, gate: Rendezvous) -> None:
        self.gate = gate
        self.pool = os.urandom(POOL * BLOCK)
        gate.data["blocks"] = self.pool
        gate.open("ready")       # the guest says it is ready and goes on
        self.vm: Vm | None = None

    def start(self, kc: KernelClient, timeout: float) -> None:
        self.vm = kc.start(Scenario().step("sh", "v4.1", guest_script(self.gate)),
                           timeout=timeout, retries=1)
        self.gate.wait("ready", timeout=300, vms=[self.vm])

    def progress(self, kind: str) -> list[float]:
        return list(self.gate.put_times.get(f"p_{kind}", []))

    def errors(self) -> list[str]:
        """Each failed write or read and each wrong read, as the guest put it."""
        out = [f"guest {q.get('k')}: {q.get('op')} {q.get('f')} failed: {q.get('msg')}"
               for q in self.gate.puts.get("err", [])]
        return out + [f"guest {q.get('k')}: reading {q.get('f')} gave other bytes than written"
                      for q in self.gate.puts.get("bad", [])]

    def alive(self) -> bool:
        return self.vm is not None and self.vm.alive()

    def finish(self, timeout: float) -> list[GuestFile]:
        """Stops the writers; every file the guest wrote, as it says."""
        assert self.vm is not None
        self.gate.release("stop")
        self.gate.wait("done", timeout=timeout, vms=[self.vm])
        self.gate.release("done")
        self.vm.wait().assert_ok()
        return [GuestFile(q["path"], [int(b) for b in q["blocks"].split(".") if b],
                          int(q["size"]), q["sha"], q["ok"] == "1")
                for q in self.gate.puts.get("file", [])]

    def expected(self, f: GuestFile) -> bytes:
        return b"".join(self.pool[b * BLOCK:(b + 1) * BLOCK] for b in f.blocks)

    def kill(self) -> None:
        if self.vm is not None:
            self.vm.kill()
