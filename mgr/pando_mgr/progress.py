"""The progress keys the metadata managers put, `<kind>/progress/<mds>`
(mgr/README.md): which keys they are, and their numbers summed over the
managers.  Rebuild, scrub and the transcoder each put one per manager,
on a lease, so a manager that is gone takes its progress with it."""
from __future__ import annotations

from typing import Any

KINDS = ("rebuild", "scrub", "transcode")
TRANSCODE_SUMMED = ("files_done", "bytes_done", "failed", "retried")


def parse_key(rel: str) -> tuple[str, str] | None:
    """(kind, manager) of a `<kind>/progress/<manager>` key (relative to
    the prefix), None for any other key."""
    kind, sep, name = rel.partition("/progress/")
    if not sep or kind not in KINDS or not name or "/" in name:
        return None
    return kind, name


def num(v: Any) -> float:
    """A number a manager put; anything else (a string, a bool, null) is 0."""
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else 0.0


def sums(progress: dict[str, dict[str, Any]], fields: tuple[str, ...]) -> dict[str, int]:
    """Each field summed over the managers' progress values."""
    return {k: int(sum(num(p.get(k)) for p in progress.values())) for k in fields}


def transcode_summary(progress: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """GET /api/transcode: each manager's transcoder counters, their sums,
    and how many managers are transcoding a file now (current_ino set)."""
    return {"managers": len(progress), **sums(progress, TRANSCODE_SUMMED),
            "running": sum(1 for p in progress.values() if num(p.get("current_ino"))),
            "mds": dict(sorted(progress.items()))}
