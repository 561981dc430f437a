"""The last check of tests/bench/soak: every file the applications wrote,
read back through the manager (NFSv3: what any application reads) and
from every copy on the OSDs (each mirror's object; an RS(k,m) file's k
data components and its m parity components, the parity recomputed from
what was written), compared with what was acknowledged, by sha256, and
the bytes that differ counted.

A file is described by its path under the export, its size and a function
giving what any range of it must hold; files are read in windows, so a
file of hundreds of MiB never needs to be in memory whole.  The parity
coefficients are jerasure's (libJerasure, the product's own matrix:
layout/include/pando/ec.h), in GF(2^8) with the polynomial 0x11d."""
from __future__ import annotations

import ctypes
import functools
import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .cluster_map import dbus_json
from .mds import PandoMds
from .nfs3 import Nfs3Client
from .osdctl import OsdCtl, open_ctl
from .pnfs_tools import PARTITION, PnfsCluster

WINDOW = 4 << 20
GF_POLY = 0x11D


@dataclass(frozen=True)
class Written:
    """What a file must hold: `size` bytes, `content(offset, n)` of them."""
    path: str
    size: int
    content: Callable[[int, int], bytes]


@dataclass
class CopyCheck:
    name: str               # "gateway", "mirror 0 (osd.3)", "parity 1 (osd.5)", ...
    state: str              # the component's state in the map ("ok" for the gateway)
    sha: "hashlib._Hash" = field(default_factory=hashlib.sha256)
    wrong: int = 0          # bytes that differ from what was written


@dataclass
class FileCheck:
    path: str
    want_size: int
    size: int               # what the manager says
    copies: list[CopyCheck]
    want_sha: str = ""

    @property
    def lost(self) -> int:
        """The most bytes any copy the manager counts as current got wrong
        (a stale copy is never read: the manager knows it missed writes)."""
        short = max(0, self.want_size - self.size)
        return max([short] + [c.wrong for c in self.copies if c.state == "ok"])

    def problems(self) -> list[str]:
        out = []
        if self.size != self.want_size:
            out.append(f"{self.path}: {self.size} bytes, {self.want_size} were written")
        for c in self.copies:
            if c.wrong:
                out.append(f"{self.path}: {c.name} ({c.state}) has {c.wrong} bytes wrong, "
                           f"sha256 {c.sha.hexdigest()[:16]}, want {self.want_sha[:16]}")
            elif c.state != "ok":
                out.append(f"{self.path}: {c.name} is {c.state} at the end")
        return out


def differing(a: bytes, b: bytes) -> int:
    """How many bytes of a and b (padded with zeros to one length) differ."""
    n = max(len(a), len(b))
    x = (int.from_bytes(a.ljust(n, b"\0"), "little") ^
         int.from_bytes(b.ljust(n, b"\0"), "little")).to_bytes(n, "little")
    return n - x.count(0)


# ---- GF(2^8) and jerasure's coding matrix ------------------------------------------

def gf_mul(a: int, b: int) -> int:
    p = 0
    while b:
        if b & 1:
            p ^= a
        a <<= 1
        if a & 0x100:
            a ^= GF_POLY
        b >>= 1
    return p


@functools.lru_cache(maxsize=None)
def mul_table(c: int) -> bytes:
    """bytes.translate table multiplying every byte by c."""
    return bytes(gf_mul(c, x) for x in range(256))


@functools.lru_cache(maxsize=None)
def coding_matrix(k: int, m: int) -> tuple[tuple[int, ...], ...]:
    """jerasure's reed_sol_vandermonde_coding_matrix(k, m, 8), m rows of k."""
    lib = ctypes.CDLL("libJerasure.so.2")
    lib.reed_sol_vandermonde_coding_matrix.restype = ctypes.POINTER(ctypes.c_int)
    mat = lib.reed_sol_vandermonde_coding_matrix(k, m, 8)
    return tuple(tuple(mat[i * k + j] for j in range(k)) for i in range(m))


def parity(data: list[bytes], row: tuple[int, ...]) -> bytes:
    """One parity chunk: the sum over j of row[j] x data[j]."""
    n = len(data[0])
    acc = 0
    for coef, d in zip(row, data):
        acc ^= int.from_bytes(d.translate(mul_table(coef)), "little")
    return acc.to_bytes(n, "little")


# ---- reading ------------------------------------------------------------------------

class Reader:
    """Ranges of objects on the OSDs, one control connection per OSD."""

    def __init__(self, c: PnfsCluster) -> None:
        self.c = c
        self.conns: dict[int, OsdCtl] = {}

    def read(self, osd: int, obj: int, off: int, n: int) -> bytes:
        """[off, off + n) of the object, zeros past its end."""
        if osd not in self.conns:
            self.conns[osd] = open_ctl(self.c.pod, self.c.osd(osd))
        parts, got = [], 0
        while got < n:
            r = self.conns[osd].read(PARTITION, obj, off + got, min(n - got, 1 << 20))
            if not r.data:
                break
            parts.append(r.data)
            got += len(r.data)
            if r.eof:
                break
        return b"".join(parts).ljust(n, b"\0")

    def close(self) -> None:
        for c in self.conns.values():
            c.close()


def check_file(c: PnfsCluster, nfs: Nfs3Client, reader: Reader, w: Written,
               rs: tuple[int, int]) -> FileCheck:
    """Every copy of one file against what was written; rs: the (k, m) of
    the RS directory's policy."""
    ok, msg, j = dbus_json(c.mds, "file_map", f"string:/{w.path}")
    assert ok, f"file_map {w.path}: {msg}"
    fh, attrs = c.nfs3_lookup(w.path)
    layout = _Layout(j, rs)
    fc = FileCheck(w.path, w.size, attrs.size, [CopyCheck("gateway", "ok"), *layout.copies()])
    want_sha = hashlib.sha256()
    end = max(w.size, attrs.size)
    for off in range(0, end, layout.window):
        n = min(layout.window, end - off)
        written = max(0, min(n, w.size - off))
        want = w.content(off, written).ljust(n, b"\0")
        want_sha.update(want[:written])
        _compare(fc.copies[0], want, nfs.read_all(fh, off, n))
        for copy, got in zip(fc.copies[1:], layout.read(reader, want, off, n)):
            _compare(copy, got[0], got[1])
    fc.want_sha = want_sha.hexdigest()
    return fc


def _compare(copy: CopyCheck, want: bytes, got: bytes) -> None:
    copy.sha.update(got)
    if got != want:
        copy.wrong += differing(want, got)


class _Layout:
    """Where a file's copies are (file_map), and how to read a window of
    each as the pair (what it must hold, what it holds)."""

    def __init__(self, j: dict[str, Any], rs: tuple[int, int]) -> None:
        self.scheme = j["scheme"] if not j.get("inline") else "inline"
        groups = j.get("groups", [])
        assert len(groups) <= 1, f"{j['path']}: {len(groups)} groups (one is checked)"
        self.comps = groups[0]["components"] if groups else []
        self.su = int(j.get("stripe_unit") or 0)
        self.k, self.m = rs if self.scheme == "rs" else (0, 0)
        # RS windows are whole rows, so each parity unit is computed once.
        self.window = (WINDOW // (self.k * self.su) * self.k * self.su) if self.k else WINDOW

    def copies(self) -> list[CopyCheck]:
        def name(i: int, what: str) -> CopyCheck:
            k = self.comps[i]
            return CopyCheck(f"{what} (osd.{k['osd']})", k["state"])
        if self.scheme == "mirror":
            return [name(i, f"mirror {i}") for i in range(len(self.comps))]
        if self.scheme == "rs":
            return ([name(i, f"data {i}") for i in range(self.k)] +
                    [name(self.k + i, f"parity {i}") for i in range(self.m)])
        return []

    def read(self, r: Reader, want: bytes, off: int, n: int) -> list[tuple[bytes, bytes]]:
        if self.scheme == "mirror":
            return [(want, r.read(k["osd"], k["object"], off, n)) for k in self.comps]
        if self.scheme == "rs":
            return self._rs(r, want, off, n)
        return []

    def _units(self, data: bytes, col: int) -> bytes:
        """Column col's stripe units of a window of whole rows, back to back."""
        su, k = self.su, self.k
        return b"".join(data[u:u + su] for u in range(col * su, len(data), k * su))

    def _rs(self, r: Reader, want: bytes, off: int, n: int) -> list[tuple[bytes, bytes]]:
        su, k = self.su, self.k
        rows = -(-n // (k * su))
        padded = want.ljust(rows * k * su, b"\0")
        out = []
        for c in range(k):
            comp = self.comps[c]
            got = r.read(comp["osd"], comp["object"], off, rows * k * su)
            out.append((self._units(padded, c), self._units(got, c)))
        # Past the file's end every data unit is zeros, so is their parity,
        # and a parity object reads as zeros past its end: whole units compare.
        data = [want for want, _ in out]
        for i, row in enumerate(coding_matrix(k, self.m)):
            comp = self.comps[k + i]
            out.append((parity(data, row), r.read(comp["osd"], comp["object"], off // k, rows * su)))
        return out


def verify(mds: PandoMds, c: PnfsCluster, files: list[Written],
           rs: tuple[int, int]) -> list[FileCheck]:
    reader = Reader(c)
    try:
        with c.nfs3() as nfs:
            return [check_file(c, nfs, reader, w, rs) for w in files]
    finally:
        reader.close()
