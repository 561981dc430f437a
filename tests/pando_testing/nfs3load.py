"""Running the nfs3load load generator (tests/bench/nfs3load.c) in a Pod."""
from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from .bench_tools import bench_binary, from_result, wait_result
from .pod import Pod


class LoadError(Exception):
    """nfs3load exited non-zero: a server answered an error, or worse."""


def nfs3load_binary() -> Path:
    return bench_binary("nfs3load")


@dataclass
class LoadResult:
    op: str
    req_size: int
    streams: int
    depth: int
    bytes: int
    seconds: float
    mb_s: float
    ops: int
    ops_s: float
    lat_avg_us: float
    data_seconds: float
    data_mb_s: float
    raw: dict[str, Any]

    @classmethod
    def parse(cls, line: str) -> "LoadResult":
        return from_result(cls, json.loads(line))


def run_nfs3load(pod: Pod, server: str, fhs: Sequence[bytes], op: str, req_size: int,
                 bytes_per_stream: int, streams: int, depth: int = 8,
                 stable: str = "unstable", commit: bool = False, verify: bool = False,
                 progress: bool = False, timeout: float = 600.0,
                 extra: Sequence[str] = ()) -> LoadResult:
    """One nfs3load run inside `pod`; raises LoadError with its message on failure.
    With `progress`, nfs3load's once-a-second lines go to this process's stderr."""
    argv: list[str] = [str(nfs3load_binary()), "--server", server, "--op", op,
                       "--req-size", str(req_size), "--bytes-per-stream", str(bytes_per_stream),
                       "--streams", str(streams), "--depth", str(depth), "--stable", stable,
                       "--timeout", str(int(timeout))]
    for fh in fhs:
        argv += ["--fh", fh.hex()]
    if commit:
        argv.append("--commit")
    if verify:
        argv.append("--verify")
    if progress:
        argv.append("--progress")
    argv += list(extra)
    proc = pod.popen(argv, stdout=subprocess.PIPE,
                     stderr=sys.stderr if progress else subprocess.PIPE, text=True)
    return from_result(LoadResult, wait_result(proc, timeout + 30, "nfs3load",
                                               f"nfs3load {op} against {server}", LoadError))
