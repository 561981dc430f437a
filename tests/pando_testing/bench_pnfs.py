"""Pieces of tests/bench/pnfs_throughput: the guest script that mounts
several NFS servers from one kernel client and runs timed `dd`s and a
LAYOUTGET/GETATTR probe, the VM that carries it, a second Pando MDS for
range-segment layouts, and the parsing of what the guest reports.

The guest script is sourced by tests/e2e/guest/lib.sh's pando_main once
the modules are loaded and the network is up (emit, say, now, elapsed,
json_str and fatal come from there).  It is a list of item lines:

    io_item ID LABEL write|read NFILES MIB PARALLEL DIR
        mounts LABEL afresh; write: NFILES new files DIR/f.N, each by
        `dd if=/dev/zero of=F bs=1M count=MIB conv=fsync`; read: drops
        the page cache, then `dd if=F of=/dev/null bs=1M` of each of
        them (written by the write item before it); PARALLEL=1 runs the dds at once (one stream per file),
        0 one after another.  Timed from the first dd's start to the last
        one's exit (so a write includes its fsync and close).
    probe_item ID LABEL MIB N FILE
        mounts LABEL (mounted with actimeo=0: every stat is a GETATTR),
        writes FILE (new, MIB MiB), mounts again (the client holds no layout),
        then N times: read 4 KiB at the next stripe-unit offset (a
        LAYOUTGET for that segment, on a range-segment export) and stat
        the file (a GETATTR).

Each item reports one `PANDO {"event":"item",...}` line on the results
port with the guest-measured seconds, each dd's status line, the mount's
per-op statistics (from /proc/self/mountstats) before and after the timed
part, and eth0's byte counters (what crossed the guest's NIC).
"""
from __future__ import annotations

import shlex
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from .bench_metadata import OPSTATS_SH, GuestMount, OpCount, parse_opstats
from .initramfs import build_initrd
from .mds import PandoMds, write_cluster_conf
from .vm import Vm, guest_scripts
from .vmnet import GUEST_NET_SH

MIB = 1 << 20
PROBE_BS = 4096

GUEST_SCRIPT_HEAD = OPSTATS_SH + r"""# eth0's received and sent bytes ("RX TX").
netbytes() { sed 's/:/ /' /proc/net/dev | awk '$1 == "eth0" { print $2, $10 }'; }
# Every 5 s a console line: PHASE LABEL MiB-done MiB-total seconds.  Bytes
# come from each dd's /proc/PID/io (wchar or rchar); a dd that is gone
# counts as done.
monitor() {  # PHASE LABEL TOTAL_MIB PER_MIB FIELD PIDFILE
  t0m=$(now)
  while sleep 5; do
    sum=0
    for p in $(cat "$6"); do
      b=$(awk -v f="$5:" '$1 == f { print $2 }' "/proc/$p/io" 2>/dev/null)
      [ -n "$b" ] || b=$(($4 * 1048576))
      sum=$((sum + b))
    done
    echo "pnfsbench-progress $1 $2 $((sum / 1048576)) $3 $(elapsed "$t0m" "$(now)")" > /dev/console
  done
}
# One dd (ARGS) as stream I: its pid into /tmp/pids, its stderr into
# /tmp/dd.I, "EXIT-STATUS END-TIME" into /tmp/end.I.
run_dd() {  # I ARGS...
  i=$1; shift
  dd "$@" 2> "/tmp/dd.$i" &
  echo $! >> /tmp/pids
  wait $!
  echo "$? $(now)" > "/tmp/end.$i"
}
mount_item() {  # ID LABEL
  mkdir -p "/mnt/$2"
  if ! "mount_$2" > /tmp/mnt.out 2>&1; then
    emit "{\"event\":\"item\",\"id\":$1,\"rc\":-1,\"error\":$(json_str 2000 < /tmp/mnt.out)}"
    return 1
  fi
}
io_item() {  # ID LABEL PHASE NFILES MIB PARALLEL DIR
  id=$1; label=$2; phase=$3; n=$4; mib=$5; par=$6; d=/mnt/$2/$7
  say "item $id: $label $phase $n x $mib MiB (parallel $par)"
  cd /
  mount_item "$id" "$label" || return
  opts=$(awk -v m="/mnt/$label" '$2 == m { print $4 }' /proc/mounts)
  rc=0; : > /tmp/err
  if [ "$phase" = write ]; then
    mkdir -p "$d" || { rc=2; echo "mkdir $d failed" >> /tmp/err; }
  fi
  sync; echo 3 > /proc/sys/vm/drop_caches
  ops0=$(opstats "/mnt/$label"); net0=$(netbytes)
  : > /tmp/pids; i=0; subs=""
  if [ "$phase" = write ]; then field=wchar; else field=rchar; fi
  t0=$(now)
  monitor "$phase" "$label" $((n * mib)) "$mib" "$field" /tmp/pids & mon=$!
  while [ $i -lt "$n" ]; do
    if [ "$phase" = write ]; then
      set -- if=/dev/zero of="$d/f.$i" bs=1M count="$mib" conv=fsync
    else
      set -- if="$d/f.$i" of=/dev/null bs=1M
    fi
    if [ "$par" = 1 ]; then
      run_dd "$i" "$@" & subs="$subs $!"
    else
      run_dd "$i" "$@"
    fi
    i=$((i + 1))
  done
  for p in $subs; do wait "$p"; done
  t1=$(now)
  kill "$mon" 2>/dev/null; wait "$mon" 2>/dev/null
  ops1=$(opstats "/mnt/$label"); net1=$(netbytes)
  ends=""; i=0
  while [ $i -lt "$n" ]; do
    read -r st end < "/tmp/end.$i" || { st=99; end=0; }
    recs=$(grep -c "^$mib+0 records out" "/tmp/dd.$i")
    if [ "$st" != 0 ] || [ "$recs" != 1 ]; then
      rc=1; { echo "dd $i ($phase, exit $st):"; cat "/tmp/dd.$i"; } >> /tmp/err
    fi
    ends="$ends$(elapsed "$t0" "$end") "
    i=$((i + 1))
  done
  umount "/mnt/$label" > /tmp/umnt.out 2>&1 || echo "umount: $(cat /tmp/umnt.out)" >> /tmp/err
  emit "{\"event\":\"item\",\"id\":$id,\"rc\":$rc,\"seconds\":$(elapsed "$t0" "$t1"),\"ends\":\"$ends\",\"ops0\":\"$ops0\",\"ops1\":\"$ops1\",\"net0\":\"$net0\",\"net1\":\"$net1\",\"mount_opts\":\"$opts\",\"stderr\":$(json_str 2000 < /tmp/err)}"
}
probe_item() {  # ID LABEL MIB N FILE
  id=$1; label=$2; mib=$3; n=$4; f=/mnt/$2/$5; d=${f%/*}
  say "item $id: $label probe: write $mib MiB, then $n x (read 4 KiB at the next 1 MiB offset + stat)"
  cd /
  mount_item "$id" "$label" || return
  opts=$(awk -v m="/mnt/$label" '$2 == m { print $4 }' /proc/mounts)
  rc=0; : > /tmp/err
  mkdir -p "$d" || { rc=2; echo "mkdir $d failed" >> /tmp/err; }
  w0=$(opstats "/mnt/$label"); t0=$(now)
  dd if=/dev/zero of="$f" bs=1M count="$mib" conv=fsync 2>> /tmp/err || { rc=1; echo "dd write failed" >> /tmp/err; }
  t1=$(now); w1=$(opstats "/mnt/$label")
  umount "/mnt/$label" > /tmp/umnt.out 2>&1 || echo "umount: $(cat /tmp/umnt.out)" >> /tmp/err
  if ! "mount_$label" >> /tmp/err 2>&1; then rc=1; n=0; fi
  p0=$(opstats "/mnt/$label"); t2=$(now)
  i=0
  while [ $i -lt "$n" ]; do
    dd if="$f" of=/dev/null bs=4096 count=1 skip=$(( (i % mib) * 256 )) 2>/tmp/dd.err ||
      { rc=1; echo "probe read $i: $(cat /tmp/dd.err)" >> /tmp/err; break; }
    stat -c %s "$f" > /dev/null 2>> /tmp/err || { rc=1; break; }
    i=$((i + 1))
    [ $((i % 20)) -ne 0 ] || echo "pnfsbench-progress probe $label $i $n $(elapsed "$t2" "$(now)")" > /dev/console
  done
  t3=$(now); p1=$(opstats "/mnt/$label")
  umount "/mnt/$label" > /tmp/umnt.out 2>&1 || echo "umount: $(cat /tmp/umnt.out)" >> /tmp/err
  emit "{\"event\":\"item\",\"id\":$id,\"rc\":$rc,\"seconds\":$(elapsed "$t0" "$t1"),\"probe_seconds\":$(elapsed "$t2" "$t3"),\"probes\":$i,\"ops0\":\"$w0\",\"ops1\":\"$w1\",\"probe0\":\"$p0\",\"probe1\":\"$p1\",\"mount_opts\":\"$opts\",\"stderr\":$(json_str 2000 < /tmp/err)}"
}
"""


@dataclass(frozen=True)
class Item:
    """One timed run in the guest."""
    id: int
    label: str       # the mount: "pnfs", "gateway", "vfs", "probe"
    op: str          # "write", "read", "probe"
    files: int       # io: files (streams); probe: probes
    mib: int         # MiB per file
    rep: int
    parallel: bool = True
    boot: int = 1    # the client boot that runs it: a redone run gets new files

    def line(self) -> str:
        if self.op == "probe":
            return shlex.join(["probe_item", str(self.id), self.label, str(self.mib),
                               str(self.files), f"probe/f.r{self.rep}{self.suffix}"])
        return shlex.join(["io_item", str(self.id), self.label, self.op, str(self.files),
                           str(self.mib), "1" if self.parallel else "0", self.dir])

    @property
    def dir(self) -> str:
        """Where an io item's files are, relative to the mount: a new
        directory per repeat and per path (pnfs and gateway mount the same
        export), so no run deletes or overwrites files: that would load the
        next runs with object removals, and on Pando re-creating a name
        just removed fails now and then (the new file's objects are missing
        on the OSDs: EIO through the gateway, LAYOUTGET -ENOENT with pNFS)."""
        return f"pnfsbench/{self.label}-r{self.rep}{self.suffix}"

    @property
    def suffix(self) -> str:
        return f".b{self.boot}" if self.boot > 1 else ""

    @property
    def bytes(self) -> int:
        return self.files * self.mib * MIB


def guest_script(mounts: Iterable[GuestMount], items: Iterable[Item]) -> str:
    lines = ["# generated by pando_testing.bench_pnfs", GUEST_NET_SH, GUEST_SCRIPT_HEAD]
    for m in mounts:
        lines.append(f"mount_{m.label}() {{ mount -t nfs -o {shlex.quote(m.options())} "
                     f"{shlex.quote(m.source())} {m.mountpoint}; }}")
    lines += [it.line() for it in items]
    return "\n".join(lines) + "\n"


class PnfsVm(Vm):
    """A Vm whose scenario is a ready-made guest script (not Scenario steps)."""

    def __init__(self, *a: Any, script: str, **kw: Any) -> None:
        super().__init__(*a, **kw)
        self.script = script

    def _initrd(self) -> Path:
        files = guest_scripts()
        files["pando/scenario.sh"] = (self.script.encode(), 0o644)
        self._path("scenario.sh").write_text(self.script)
        return build_initrd(self.kernel, self._path("initrd"), files)


@dataclass
class StripedMds(PandoMds):
    """A second Pando MDS on the same OSDs whose files are unmirrored and
    striped (Mirrors = 1, Stripe_Width = 3 by default): the FSAL answers
    each LAYOUTGET with the one stripe unit that covers the offset (a
    range segment), so a client sends a LAYOUTGET per stripe unit it
    touches, outside OPEN.  Its objects live in their own OSD partition."""

    stripe_width: int = 3
    partition: int = 2

    def __post_init__(self) -> None:
        self.mirrors = 1
        self.extra_fsal = f"Stripe_Width = {self.stripe_width};"
        super().__post_init__()

    def write_config(self) -> None:
        super().write_config()
        assert self.key is not None
        write_cluster_conf(self.cluster_conf, self.key, self.osds, self.advertise_host,
                           partition=self.partition)


# ---- results ---------------------------------------------------------------------

def op_delta(before: str, after: str) -> tuple[dict[str, OpCount], tuple[int, int]]:
    """Per-op counts of `after` minus `before` (opstats strings)."""
    b, bp = parse_opstats(before)
    a, ap = parse_opstats(after)
    out = {}
    for op, c in a.items():
        z = b.get(op, OpCount(0, 0, 0, 0, 0))
        d = OpCount(c.ops - z.ops, c.rtt_ms - z.rtt_ms, c.exec_ms - z.exec_ms,
                    c.sent - z.sent, c.recv - z.recv)
        if d.ops > 0:
            out[op] = d
    return out, (ap[0] - bp[0], ap[1] - bp[1])


@dataclass
class Outcome:
    item: Item
    ok: bool
    seconds: float = 0.0
    ends: list[float] = field(default_factory=list)
    ops: dict[str, OpCount] = field(default_factory=dict)        # the timed part
    pnfs: tuple[int, int] = (0, 0)                                # pnfsread, pnfswrite
    probe_ops: dict[str, OpCount] = field(default_factory=dict)  # probe items
    probes: int = 0
    probe_seconds: float = 0.0
    wire: tuple[int, int] = (0, 0)                                # eth0 rx, tx bytes
    mount_opts: str = ""
    error: str = ""

    @property
    def mb_s(self) -> float:
        return self.item.bytes / self.seconds / 1e6 if self.ok and self.seconds > 0 else float("nan")


def outcome(item: Item, ev: dict[str, Any]) -> Outcome:
    err = str(ev.get("error") or ev.get("stderr") or "").strip()
    if ev.get("rc") != 0:
        return Outcome(item, False, error=err or f"rc {ev.get('rc')}")
    ops, pnfs = op_delta(ev.get("ops0", ""), ev.get("ops1", ""))
    o = Outcome(item, True, float(ev.get("seconds", 0)), ops=ops, pnfs=pnfs,
                mount_opts=ev.get("mount_opts", ""), error=err)
    o.ends = [float(x) for x in str(ev.get("ends", "")).split()]
    if item.op == "probe":
        o.probe_ops, _ = op_delta(ev.get("probe0", ""), ev.get("probe1", ""))
        o.probes = int(ev.get("probes", 0))
        o.probe_seconds = float(ev.get("probe_seconds", 0))
    else:
        try:
            r0, t0 = (int(x) for x in ev["net0"].split())
            r1, t1 = (int(x) for x in ev["net1"].split())
            o.wire = (r1 - r0, t1 - t0)
        except (KeyError, ValueError):
            pass
    return o


def avg_rtt(ops: Iterable[dict[str, OpCount]], op: str) -> tuple[float, int]:
    """(mean RTT in ms, count) of `op` summed over several per-op tables:
    total RTT / calls, as the client measured it (request sent to reply
    received, in the RPC layer)."""
    n = t = 0
    for table in ops:
        c = table.get(op)
        if c is not None:
            n += c.ops
            t += c.rtt_ms
    return (t / n if n else float("nan")), n


def median(xs: list[float]) -> float:
    xs = [x for x in xs if x == x]
    return statistics.median(xs) if xs else float("nan")
