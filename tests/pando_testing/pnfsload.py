"""Running the pNFS load generator (tests/bench/pnfsload/) and the data
pattern it writes, so tests can check bytes on the OSDs and a kernel client
can write the same bytes."""
from __future__ import annotations

import json
import signal
import struct
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from .bench_tools import bench_binary, from_result, wait_result
from .pod import Pod

GOLDEN = 0x9E3779B97F4A7C15
MASK = (1 << 64) - 1


class PnfsloadError(Exception):
    """pnfsload exited non-zero: a server answered an error, a check failed."""


def pnfsload_binary() -> Path:
    return bench_binary("pnfsload", "pnfsload")


def pattern(seed: int, offset: int, length: int) -> bytes:
    """The bytes pnfsload writes at [offset, offset + length) of a file: the
    little-endian 64-bit word at each multiple-of-8 offset o is
    (o // 8) * 0x9E3779B97F4A7C15 + seed mod 2**64.  seed: global client
    index + 1 for a file per client, 0 for the shared file."""
    if offset < 0 or length < 0:
        raise ValueError("offset and length must not be negative")
    first, last = offset // 8, (offset + length + 7) // 8
    words = [(w * GOLDEN + seed) & MASK for w in range(first, last)]
    raw = struct.pack(f"<{len(words)}Q", *words)
    start = offset - first * 8
    return raw[start:start + length]


@dataclass
class PnfsloadResult:
    workload: str
    phase: str
    clients: int
    depth: int
    bytes: int
    ops: int
    seconds: float
    mib_s: float
    ops_s: float
    t_start: float
    t_end: float
    layouts: int
    mds_io_bytes: int
    ds_io_bytes: int
    errors: int
    recoveries: int
    ds_errors: int
    matches: int
    raw: dict[str, Any]

    @classmethod
    def parse(cls, line: str) -> "PnfsloadResult":
        return from_result(cls, json.loads(line))


def progress_of(line: str) -> tuple[int, float, int] | None:
    """A `progress CLIENT TIME ACKED` line of --progress (client, its
    CLOCK_MONOTONIC time, the bytes it has acknowledged), else None."""
    words = line.split()
    if len(words) != 4 or words[0] != "progress":
        return None
    return int(words[1]), float(words[2]), int(words[3])


def pnfsload_argv(mds: str, directory: str, clients: int = 1, *, export: str | None = None,
                  ior: str | None = None, mdtest: str | None = None, shared: bool = False,
                  transfer: int | None = None, block: int | None = None, verify: bool = False,
                  fsync: bool = False, files: int | None = None, unique_dir: bool = False,
                  depth: int | None = None, client_base: int = 0, start_at: float | None = None,
                  no_layouts: bool = False, progress: bool = False, timeout: float = 300.0,
                  interleave: int | None = None, extra: Sequence[str] = ()) -> list[str]:
    """The command line of one pnfsload run (one of ior= and mdtest=)."""
    argv = [str(pnfsload_binary()), "--mds", mds, "--dir", directory, "--clients", str(clients),
            "--client-base", str(client_base), "--timeout", str(int(timeout))]
    options: list[tuple[str, object]] = [
        ("--export", export), ("--ior", ior), ("--mdtest", mdtest), ("--transfer", transfer),
        ("--block", block), ("--files", files), ("--depth", depth), ("--start-at", start_at),
        ("--interleave", interleave)]
    for flag, value in options:
        if value is not None:
            argv += [flag, str(value)]
    switches = [("--shared", shared), ("--verify", verify), ("--fsync", fsync),
                ("--unique-dir", unique_dir), ("--no-layouts", no_layouts),
                ("--progress", progress)]
    argv += [flag for flag, on in switches if on]
    return argv + list(extra)


def start_pnfsload(argv: Sequence[str], pod: Pod | None = None, prefix: Sequence[str] = (),
                   progress: bool = False) -> subprocess.Popen[str]:
    """Starts pnfsload inside `pod`, or under an argv prefix (e.g. nsenter)."""
    cmd = [*prefix, *argv]
    err = sys.stderr if progress else subprocess.PIPE
    if pod is not None:
        return pod.popen(cmd, stdout=subprocess.PIPE, stderr=err, text=True)
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, text=True)


def wait_pnfsload(proc: subprocess.Popen[str], timeout: float = 330.0) -> PnfsloadResult:
    """Its result; PnfsloadError with its message when it failed."""
    return from_result(PnfsloadResult,
                       wait_result(proc, timeout, "pnfsload", "pnfsload", PnfsloadError))


def run_pnfsload(argv: Sequence[str], pod: Pod | None = None, prefix: Sequence[str] = (),
                 progress: bool = False, timeout: float = 330.0) -> PnfsloadResult:
    """One pnfsload run to its end."""
    return wait_pnfsload(start_pnfsload(argv, pod, prefix, progress), timeout)


def progress_lines(proc: subprocess.Popen[str], until: Callable[[float], bool],
                   acked: dict[int, int] | None = None) -> int:
    """Reads pnfsload --writer's progress lines until one's time passes
    `until`; the bytes it acknowledged.  `acked` gets every client's last
    count on the way."""
    assert proc.stdout is not None
    for line in proc.stdout:
        words = line.split()
        if words[:1] != ["progress"]:
            continue
        if acked is not None:
            acked[int(words[1])] = int(words[3])
        if until(float(words[2])):
            return int(words[3])
    raise AssertionError(f"pnfsload ended: {proc.wait()}")


def stop_writer(proc: subprocess.Popen[str],
                acked: dict[int, int]) -> tuple[PnfsloadResult, str]:
    """SIGTERM to a --writer: its result and its stderr; `acked` gets every
    client's last acknowledged byte count."""
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    for ln in out.splitlines():
        if ln.startswith("progress"):
            acked[int(ln.split()[1])] = int(ln.split()[3])
    return PnfsloadResult.parse(out.splitlines()[-1]), err
