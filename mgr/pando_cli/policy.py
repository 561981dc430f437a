"""`pando layout set`'s options as the storage-policy JSON the FSAL's
layout_set takes (ganesha-fsal/fsal/dbus_layout.c). Combinations are
checked here; the numbers' ranges by the FSAL, the one place that knows
them (layout/src/policy.c)."""
from __future__ import annotations

import argparse
from typing import Any


class UsageError(ValueError):
    """Options that make no request the server could take (a policy, a
    quota): exit 2 before any call."""


_SCHEME_OPTIONS = {"mirror": ("copies",), "raid0": (), "rs": ("k", "m")}


def from_args(a: argparse.Namespace) -> dict[str, Any] | None:
    """The policy the options describe; None for --clear."""
    given = {k for k in ("scheme", "copies", "k", "m", "stripe_unit", "width", "cold_after",
                         "cold_k", "cold_m", "pool") if getattr(a, k, None) is not None}
    if a.clear:
        if given:
            raise UsageError("--clear takes no other policy option")
        return None
    if a.scheme is None:
        return _pool_only(a.pool, given)
    for opt in ("copies", "k", "m"):
        if opt in given and opt not in _SCHEME_OPTIONS[a.scheme]:
            raise UsageError(f"--{opt} does not apply to --scheme {a.scheme}")
    if a.scheme == "rs" and a.m is None:
        raise UsageError("--scheme rs needs --m (parity chunks, 1 to 4)")
    if a.scheme == "rs" and a.width is not None:
        raise UsageError("--width does not apply to rs (--k is its width)")
    if (a.cold_k is not None or a.cold_m is not None) and a.cold_after is None:
        raise UsageError("--cold-k/--cold-m need --cold-after")
    if a.cold_after is not None and a.cold_m is None:
        raise UsageError("--cold-after needs --cold-m (and --cold-k, or 0: automatic)")
    out: dict[str, Any] = {"scheme": a.scheme}
    for opt in ("copies", "k", "m", "stripe_unit", "width", "pool"):
        if getattr(a, opt) is not None:
            out[opt] = getattr(a, opt)
    if a.cold_after is not None:
        out["cold_after_s"] = a.cold_after
        out["cold"] = {"k": a.cold_k or 0, "m": a.cold_m}
    return out


def _pool_only(pool: str | None, given: set[str]) -> dict[str, Any]:
    """--pool without --scheme: the export's default shape, in that pool
    (the FSAL's "default" scheme takes no shape of its own)."""
    if pool is None:
        raise UsageError("say --scheme mirror|raid0|rs, --pool NAME, or --clear")
    if given != {"pool"}:
        raise UsageError("--pool without --scheme keeps the export's default shape: "
                          "other policy options need --scheme")
    return {"scheme": "default", "pool": pool}
