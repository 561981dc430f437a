"""Sizes, rates and counts as an admin reads them (IEC units, like ceph)."""
from __future__ import annotations

# The mgr's health details say sizes too: one way for both.
from pando_mgr.units import size as size


def rate(bps: float | int | None) -> str:
    """Bytes per second: 0 B/s, 12 MiB/s."""
    return "-" if bps is None else size(bps) + "/s"


def ops(n: float | int | None) -> str:
    """Operations per second, whole numbers until they need a unit."""
    if n is None:
        return "-"
    v = float(n)
    if v >= 1e6:
        return f"{v / 1e6:.1f}M op/s"
    if v >= 1e4:
        return f"{v / 1e3:.0f}k op/s"
    return f"{v:.0f} op/s"


def percent(part: float | int | None, whole: float | int | None) -> float:
    """part of whole in percent; 0 when whole is unknown or zero."""
    if not part or not whole:
        return 0.0
    return 100.0 * float(part) / float(whole)


def parse_size(text: str) -> int:
    """'1099511627776', '1T', '512GiB', '10G' -> bytes (IEC multiples: an
    OSD weight is a capacity, and capacities here are binary)."""
    t = text.strip().upper().removesuffix("B").removesuffix("I")
    mult = 1
    for exp, unit in enumerate("KMGTPE", start=1):
        if t.endswith(unit):
            mult = 1024 ** exp
            t = t[:-1]
            break
    try:
        v = float(t)
    except ValueError:
        raise ValueError(f"not a size: {text!r} (bytes, or a number with K, M, G, T)") from None
    if v < 0:
        raise ValueError(f"not a size: {text!r} (negative)")
    return int(v * mult)


def duration(s: float | int | None) -> str:
    """Seconds as an admin reads an ETA: 8 s, 3 min 20 s, 2 h 5 min; None: unknown."""
    if s is None or isinstance(s, bool) or not isinstance(s, (int, float)) or s != s:
        return "unknown"
    v = max(0, round(float(s)))
    if v < 60:
        return f"{v} s"
    if v < 3600:
        return f"{v // 60} min {v % 60} s" if v % 60 else f"{v // 60} min"
    return f"{v // 3600} h {v % 3600 // 60} min"
