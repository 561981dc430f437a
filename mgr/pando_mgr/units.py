"""Sizes as an admin reads them (IEC units, like ceph): health's details
and the `pando` CLI's tables say a size the same way."""
from __future__ import annotations

_IEC = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB")


def size(n: float | int | None) -> str:
    """Bytes in IEC units: 0 B, 1023 B, 1.0 KiB, 12 GiB, 1.5 TiB."""
    if n is None:
        return "-"
    v = float(n)
    sign = "-" if v < 0 else ""
    v = abs(v)
    i = 0
    while v >= 1024 and i < len(_IEC) - 1:
        v /= 1024
        i += 1
    if i == 0:
        return f"{sign}{int(v)} B"
    return f"{sign}{v:.1f} {_IEC[i]}" if v < 10 else f"{sign}{v:.0f} {_IEC[i]}"
