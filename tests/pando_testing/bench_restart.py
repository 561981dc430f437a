"""The writers of tests/bench/mds_restart and how long each stalled.

Every writer keeps a list of progress times on this machine's
CLOCK_MONOTONIC (time.monotonic()): one per block it wrote and made
durable.  `stall` is the longest interval without progress around one
restart.  `PnfsloadWriters` runs `pnfsload --writer` and reads its
`progress` lines as they come; `GuestWriters` is the script of one stock
kernel guest that writes one file over pNFS (NFSv4.1) and one over NFSv3,
each in 16 KiB blocks with fsync, and the host's view of it: the sizes of
its files while it runs, its progress logs (guest uptime, mapped to this
clock) and its files checked once it is done.
"""
from __future__ import annotations

import bisect
import os
import signal
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from .e2e import KernelClient
from .nfs3_setup import Nfs3Error
from .pnfs_tools import PnfsCluster, Rendezvous
from .pnfsload import (PnfsloadError, PnfsloadResult, pnfsload_argv, progress_of, run_pnfsload,
                       start_pnfsload)
from .vm import Scenario, Vm

BLOCK = 16 << 10
SOURCE_BLOCKS = 64        # the guest's data: block i of a file is source block i % 64
GUEST_KINDS = ("pnfs", "pnfs_open", "nfs3")


@dataclass
class Progress:
    """Progress times of one writer, in order."""
    name: str
    kind: str
    times: list[float] = field(default_factory=list)

    def after(self, t: float) -> bool:
        return bool(self.times) and self.times[-1] > t


def stall(times: Sequence[float], t_fault: float, t_resumed: float) -> float:
    """The longest interval without progress that overlaps [t_fault,
    t_resumed]: from the last progress before the fault to the first after
    t_resumed, the longest gap between two progress times."""
    lo = max(bisect.bisect_right(times, t_fault) - 1, 0)
    hi = min(bisect.bisect_right(times, t_resumed) + 1, len(times))
    pts = times[lo:hi]
    return max((b - a for a, b in zip(pts, pts[1:])), default=0.0)


def stall_elsewhere(times: Sequence[float], windows: Sequence[tuple[float, float]]) -> float:
    """The longest interval without progress that overlaps none of the
    restart windows: what the writer stalls without a restart."""
    def clear(a: float, b: float) -> bool:
        return all(b < lo or a > hi for lo, hi in windows)
    return max((b - a for a, b in zip(times, times[1:]) if clear(a, b)), default=0.0)


class PnfsloadWriters:
    """`pnfsload --writer` with `clients` clients in `directory`, one
    transfer of BLOCK at most every `pace_ms`, until stop().  Its messages
    (a session made again, an error) go to this process's stderr."""

    def __init__(self, c: PnfsCluster, directory: str, clients: int, pace_ms: int,
                 timeout: float) -> None:
        self.c, self.directory = c, directory
        m = c.mds
        argv = pnfsload_argv(m.nfs_addr, directory, clients, export=m.pseudo, transfer=BLOCK,
                             block=1 << 40, depth=1, timeout=timeout,
                             extra=["--writer", "--pace", str(pace_ms), "--ds-host", m.host])
        self.writers = [Progress(f"pnfsload.{i}", "pnfsload") for i in range(clients)]
        self.acked = [0] * clients
        self.result_line = ""
        self.proc = start_pnfsload(argv, c.pod, progress=True)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if (p := progress_of(line)) is not None:
                i, at, acked = p
                self.writers[i].times.append(at)
                self.acked[i] = acked
            elif line.startswith("{"):
                self.result_line = line

    def check(self) -> None:
        """Raises if pnfsload ended: a writer got an error."""
        if self.proc.poll() is not None:
            raise PnfsloadError(f"pnfsload --writer exited {self.proc.returncode} "
                                "(its message is above)")

    def stop(self) -> PnfsloadResult:
        self.check()
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout=60)
        self._reader.join(timeout=60)
        if self.proc.returncode != 0 or not self.result_line:
            raise PnfsloadError(f"pnfsload --writer exited {self.proc.returncode}")
        return PnfsloadResult.parse(self.result_line)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def verify(self) -> None:
        """Each file has the size its writer acknowledged, and the pattern
        (pnfsload --ior read --verify of exactly that)."""
        m = self.c.mds
        for i, acked in enumerate(self.acked):
            size = self.c.nfs3_lookup(f"{self.directory}/ior.{i}")[1].size
            if size != acked:
                raise AssertionError(f"pnfsload.{i}: the file has {size} bytes, "
                                     f"{acked} were acknowledged")
            argv = pnfsload_argv(m.nfs_addr, self.directory, 1, export=m.pseudo, ior="read",
                                 block=acked, verify=True, client_base=i, timeout=600,
                                 extra=["--ds-host", m.host])
            run_pnfsload(argv, self.c.pod, timeout=630)


def guest_script(gate: Rendezvous) -> str:
    """Three writers at once until the gate `stop` opens, each appending
    block i (source block i % 64) with dd conv=fsync: `pnfs` (NFSv4.1 with
    layouts, in the step's directory) and `nfs3` (an NFSv3 mount) keep
    their file open, as a log or a database does; `pnfs_open` (NFSv4.1)
    opens its file for every block, as a program making or extending files
    does.  Each completed block appends `N UPTIME` to /tmp/p.KIND, copied
    into the step's directory at the end.  A dd that fails stops its
    writer, puts `werr` and fails the step."""
    kinds = " ".join(GUEST_KINDS)
    counts = "&".join(f"{k}=$(cat /tmp/n.{k})" for k in GUEST_KINDS)
    return gate.guest_lib() + f"""
mount_nfs v3 || fail "mount v3"
D3=/mnt/v3/$PANDO_RUN/v3w
mkdir -p "$D3"
getdata src /tmp/src
up() {{ cut -d' ' -f1 /proc/uptime; }}
block() {{  # KIND DIR MODE I
  if [ $3 = open ]; then
    dd if=/tmp/src of="$2/w.$1" bs={BLOCK} skip=$(($4 % {SOURCE_BLOCKS})) seek=$4 count=1 \
       conv=notrunc,fsync 2>/tmp/dd.$1
  else
    dd if=/tmp/src bs={BLOCK} skip=$(($4 % {SOURCE_BLOCKS})) count=1 conv=fsync 2>/tmp/dd.$1 >&3
  fi
}}
writer() {{  # KIND DIR open|hold
  i=0
  : > /tmp/p.$1
  [ $3 = open ] || exec 3>>"$2/w.$1"
  while [ ! -e /tmp/stop ]; do
    if ! block $1 "$2" $3 $i; then
      echo "$1 block $i: $(cat /tmp/dd.$1)" > /tmp/err.$1
      put werr "w=$1"
      break
    fi
    i=$((i + 1))
    echo "$i $(up)" >> /tmp/p.$1
  done
  [ $3 = open ] || exec 3>&-
  echo $i > /tmp/n.$1
}}
writer pnfs "$PWD" hold &
writer pnfs_open "$PWD" open &
writer nfs3 "$D3" hold &
arrive ready "up=$(up)"
# (a long wait: loop over busybox wget's 900 s read timeout)
until wget -q -O /dev/null "http://10.0.2.2:{gate.port}/arrive/stop"; do sleep 1; done
touch /tmp/stop
wait
for k in {kinds}; do cp /tmp/p.$k p.$k; done
for k in {kinds}; do [ ! -e /tmp/err.$k ] || fail "$(cat /tmp/err.$k)"; done
arrive done "up=$(up)&{counts}"
"""


class GuestWriters:
    """The host's side of guest_script: its data, the sizes of its files
    while it runs, its progress and its files at the end."""

    def __init__(self, c: PnfsCluster, gate: Rendezvous) -> None:
        self.c, self.gate = c, gate
        self.source = os.urandom(BLOCK * SOURCE_BLOCKS)
        gate.data["src"] = self.source
        gate.open("ready")
        self.vm: Vm | None = None
        self.writers: list[Progress] = []
        self.anchors: list[tuple[float, float]] = []     # (guest uptime, host monotonic)

    def start(self, kc: KernelClient, timeout: float) -> None:
        self.vm = kc.start(Scenario().step("sh", "v4.1", guest_script(self.gate)),
                           timeout=timeout, nfs3_locks=True, retries=0)
        self.writers = [Progress(f"{self.vm.name}.{k}", k) for k in GUEST_KINDS]
        a = self.gate.wait("ready", timeout=timeout, vms=[self.vm])
        self.anchors.append((float(a.query["up"]), a.at))

    def path(self, kind: str) -> str:
        assert self.vm is not None
        return f"{self.vm.name}/v3w/w.nfs3" if kind == "nfs3" else f"{self.vm.name}/s1-sh/w.{kind}"

    def sizes(self) -> dict[str, int]:
        """Each file's size as the manager has it now (none while it is down)."""
        out = {}
        for k in GUEST_KINDS:
            try:
                out[k] = self.c.nfs3_lookup(self.path(k))[1].size
            except (OSError, AssertionError, Nfs3Error):
                pass
        return out

    def check(self) -> None:
        """Raises if a guest writer failed or the guest ended."""
        assert self.vm is not None
        if self.gate.puts.get("werr"):
            raise AssertionError(f"guest writer failed: {self.gate.puts['werr']}")
        if not self.vm.alive():
            res = self.vm.poll()
            raise AssertionError(f"{self.vm.name} ended:\n" + (res.report() if res else ""))

    def finish(self, timeout: float) -> dict[str, int]:
        """Stops the writers and maps their progress to this clock; the
        blocks each wrote."""
        assert self.vm is not None
        self.gate.release("stop")
        a = self.gate.wait("done", timeout=timeout, vms=[self.vm])
        self.anchors.append((float(a.query["up"]), a.at))
        self.gate.release("done")
        self.vm.wait().assert_ok()
        (u0, h0), (u1, h1) = self.anchors
        rate = (h1 - h0) / (u1 - u0)
        for w in self.writers:
            text = self.c.nfs3_read(f"{self.vm.name}/s1-sh/p.{w.kind}").decode()
            w.times = [h0 + (float(ln.split()[1]) - u0) * rate for ln in text.splitlines()]
        return {k: int(a.query[k]) for k in GUEST_KINDS}

    def verify(self, blocks: dict[str, int]) -> None:
        """Each file holds exactly the blocks its dd's acknowledged."""
        for k, n in blocks.items():
            data = self.c.nfs3_read(self.path(k))
            if len(data) != n * BLOCK:
                raise AssertionError(f"{k}: {len(data)} bytes on the manager, "
                                     f"{n} blocks of {BLOCK} were acknowledged")
            for i in range(n):
                want = self.source[(i % SOURCE_BLOCKS) * BLOCK:][:BLOCK]
                if data[i * BLOCK:(i + 1) * BLOCK] != want:
                    raise AssertionError(f"{k}: block {i} differs from what was written")


def median_interval(writers: Sequence[Progress]) -> float:
    """The median time between two blocks of these writers."""
    gaps = [b - a for w in writers for a, b in zip(w.times, w.times[1:])]
    return sorted(gaps)[len(gaps) // 2] if gaps else 0.0


def wait_progress(guest: GuestWriters | None, pnfsload: PnfsloadWriters | None, since: float,
                  timeout: float, what: str) -> float:
    """Until every writer made progress after `since` (guests: their files
    grew on the manager); the time that was seen."""
    deadline = time.monotonic() + timeout
    base: dict[str, int] = {}
    while True:
        host_ok = pnfsload is None or all(w.after(since) for w in pnfsload.writers)
        if pnfsload:
            pnfsload.check()
        guest_ok = True
        if guest:
            guest.check()
            now = guest.sizes()
            for k, v in now.items():
                base.setdefault(k, v)
            guest_ok = all(k in now and now[k] > base[k] for k in GUEST_KINDS)
        if host_ok and guest_ok:
            return time.monotonic()
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: the writers were not all going in {timeout:.0f} s")
        time.sleep(0.2)
