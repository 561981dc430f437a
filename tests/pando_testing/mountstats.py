"""Parser for a Linux NFS client's /proc/self/mountstats.

A guest dumps the file with the `mountstats` scenario step; the test parses
it here to assert where the I/O went, e.g. that a pNFS client's MDS mount
saw LAYOUTGET and GETDEVICEINFO but no READ or WRITE (the data went to the
data servers, whose NFSv3 connections have no mount of their own and so no
block in this file), or that a non-pNFS mount saw READ and WRITE.

    mounts = parse_mountstats(text)
    counts = ops_by_server(mounts)          # {"10.0.2.2": {"READ": 17, ...}}
    m = mounts[0]; m.ops["WRITE"].ops; m.events["pnfswrite"]; m.bytes["serverwritebytes"]

Format (fs/nfs/super.c nfs_show_stats, net/sunrpc/stats.c): one block per
mount starting `device D mounted on M with fstype T [statvers=V]`; NFS
blocks carry tab-indented `key:\tvalue` lines, `xprt:` lines, then
`per-op statistics` and one `OP: n n n ...` line per operation.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable

# The operations a test usually asserts on.
KEY_OPS = ("LAYOUTGET", "GETDEVICEINFO", "LAYOUTCOMMIT", "LAYOUTRETURN", "READ", "WRITE")

EVENT_NAMES = (
    "inoderevalidate", "dentryrevalidate", "datainvalidate", "attrinvalidate",
    "vfsopen", "vfslookup", "vfsaccess", "vfsupdatepage", "vfsreadpage", "vfsreadpages",
    "vfswritepage", "vfswritepages", "vfsgetdents", "vfssetattr", "vfsflush", "vfsfsync",
    "vfslock", "vfsrelease", "congestionwait", "setattrtrunc", "extendwrite",
    "sillyrenames", "shortreads", "shortwrites", "delay", "pnfsread", "pnfswrite",
)
BYTES_NAMES = (
    "normalreadbytes", "normalwritebytes", "directreadbytes", "directwritebytes",
    "serverreadbytes", "serverwritebytes", "readpages", "writepages",
)
OP_FIELDS = ("ops", "trans", "timeouts", "bytes_sent", "bytes_recv",
             "queue_ms", "rtt_ms", "execute_ms", "errors")

_DEVICE = re.compile(r"^device (\S+) mounted on (\S+) with fstype (\S+)(?: statvers=(\S+))?\s*$")
_OPLINE = re.compile(r"^\s*([A-Z_0-9]+):\s+(\d+(?:\s+\d+)*)\s*$")


@dataclass
class OpStats:
    ops: int = 0
    trans: int = 0
    timeouts: int = 0
    bytes_sent: int = 0
    bytes_recv: int = 0
    queue_ms: int = 0
    rtt_ms: int = 0
    execute_ms: int = 0
    errors: int = 0   # statvers 1.1 and later


@dataclass
class MountStats:
    device: str
    mountpoint: str
    fstype: str
    statvers: str | None = None
    opts: dict[str, str] = field(default_factory=dict)
    age: int | None = None
    nfsv4: dict[str, str] = field(default_factory=dict)
    events: dict[str, int] = field(default_factory=dict)
    bytes: dict[str, int] = field(default_factory=dict)
    rpc_program: str | None = None          # "100003/4 (nfs)"
    xprts: list[list[str]] = field(default_factory=list)
    ops: dict[str, OpStats] = field(default_factory=dict)

    @property
    def server(self) -> str:
        host = self.device.rsplit(":", 1)[0] if ":" in self.device else self.device
        return host.strip("[]")

    @property
    def export(self) -> str:
        return self.device.rsplit(":", 1)[1] if ":" in self.device else ""

    @property
    def is_nfs(self) -> bool:
        return self.fstype in ("nfs", "nfs4")

    def count(self, op: str) -> int:
        s = self.ops.get(op)
        return s.ops if s else 0

    def counts(self, ops: Iterable[str] = KEY_OPS) -> dict[str, int]:
        return {op: self.count(op) for op in ops}


def _kv_list(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        k, _, v = item.partition("=")
        out[k] = v
    return out


def parse_mountstats(text: str, nfs_only: bool = True) -> list[MountStats]:
    """Every mount block of `text` (NFS mounts only unless nfs_only=False)."""
    mounts: list[MountStats] = []
    cur: MountStats | None = None
    in_ops = False
    for raw in text.replace("\r", "").splitlines():
        m = _DEVICE.match(raw)
        if m:
            cur = MountStats(m.group(1), m.group(2), m.group(3), m.group(4))
            mounts.append(cur)
            in_ops = False
            continue
        if cur is None or not raw.strip():
            continue
        line = raw.strip()
        if line == "per-op statistics":
            in_ops = True
            continue
        if in_ops:
            om = _OPLINE.match(line)
            if om:
                nums = [int(x) for x in om.group(2).split()]
                cur.ops[om.group(1)] = OpStats(**dict(zip(OP_FIELDS, nums)))
                continue
            in_ops = False
        key, sep, value = line.partition(":")
        if not sep:
            continue
        value = value.strip()
        if key == "opts":
            cur.opts = _kv_list(value)
        elif key == "age":
            cur.age = int(value) if value.isdigit() else None
        elif key == "nfsv4":
            cur.nfsv4 = _kv_list(value)
        elif key == "events":
            cur.events = dict(zip(EVENT_NAMES, map(int, value.split())))
        elif key == "bytes":
            cur.bytes = dict(zip(BYTES_NAMES, map(int, value.split())))
        elif key == "xprt":
            cur.xprts.append(value.split())
        elif key.startswith("RPC iostats version"):
            pv = re.search(r"p/v:\s*(.+)$", line)
            cur.rpc_program = pv.group(1).strip() if pv else None
    return [m for m in mounts if m.is_nfs or not nfs_only]


def ops_by_server(mounts: str | Iterable[MountStats],
                  ops: Iterable[str] | None = KEY_OPS) -> dict[str, dict[str, int]]:
    """{server: {op: count}} summed over that server's mounts.  ops=None: every op."""
    if isinstance(mounts, str):
        mounts = parse_mountstats(mounts)
    out: dict[str, dict[str, int]] = {}
    for m in mounts:
        per = out.setdefault(m.server, {})
        names = list(ops) if ops is not None else list(m.ops)
        for op in names:
            per[op] = per.get(op, 0) + m.count(op)
    return out
