"""What the load generators under tests/bench/ (nfs3load, pnfsload) have
in common: a binary the build made, a run waited out, and the JSON line
of results each prints last."""
from __future__ import annotations

import dataclasses
import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar, cast

from pando_cluster.paths import built

R = TypeVar("R")


def bench_binary(*parts: str) -> Path:
    """A binary under the build's tests/bench/; FileNotFoundError before ci/build."""
    return built("tests", "bench", *parts)


def wait_result(proc: subprocess.Popen[str], timeout: float, name: str, what: str,
                error: type[Exception]) -> dict[str, Any]:
    """The last JSON line `proc` printed, once it exited 0.  error (with
    what failed and its stderr) when it exits non-zero, runs past timeout
    (killed) or prints no result."""
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise error(f"{name} ran past {timeout:.0f} s") from None
    if proc.returncode != 0:
        raise error(f"{what} failed (exit {proc.returncode}): "
                    f"{(err or '').strip() or '(see stderr above)'}")
    lines = [ln for ln in out.splitlines() if ln.startswith("{")]
    if not lines:
        raise error(f"{name} printed no result: {out!r}")
    d: dict[str, Any] = json.loads(lines[-1])
    return d


def from_result(cls: type[R], d: dict[str, Any]) -> R:
    """A result dataclass: each field the JSON member of its name, and
    `raw` the whole object."""
    fields = dataclasses.fields(cast(Any, cls))
    kw = {f.name: d[f.name] for f in fields if f.name != "raw"}
    return cast(Callable[..., R], cls)(**kw, raw=d)
