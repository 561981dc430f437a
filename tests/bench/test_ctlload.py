"""ctlload's command line (tests/bench/ctlload.c), no server needed: bad
arguments end it with a message before it connects; and one small run of
tests/bench/ctl_cost (bench, about 10 s: a pando-osd in a pod), so the
benchmark cannot rot between the runs that measure it."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pando_testing.bench_tools import bench_binary
from pando_testing.keys import write_cluster_key
from pando_testing.pod import build_dir, repo_root

CTL_COST = repo_root() / "tests" / "bench" / "ctl_cost"
# A command line that parses; connecting to 127.0.0.1:1 is then refused.
GOOD = ["--ctl", "127.0.0.1:1", "--osd-id", "1", "--key-file", "/nonexistent"]


def _ctlload(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(bench_binary("ctlload")), *args], capture_output=True,
                          text=True, timeout=30)


def test_ctlload_without_target_id_or_key_prints_usage() -> None:
    for drop in ("--ctl", "--osd-id", "--key-file"):
        i = GOOD.index(drop)
        cp = _ctlload(*GOOD[:i], *GOOD[i + 2:])
        assert cp.returncode == 2 and cp.stderr.startswith("usage: ctlload --ctl"), drop
    cp = _ctlload("--help")
    assert cp.returncode == 0 and cp.stdout.startswith("usage: ctlload --ctl")
    assert _ctlload(*GOOD, "stray").returncode == 2


@pytest.mark.parametrize("args, message", [
    (["--op", "append"], "bad --op: append"),
    (["--size", "0"], "bad --size: 0"),
    (["--size", "1048577"], "bad --size: 1048577"),
    (["--calls", "0"], "bad --calls: 0"),
    (["--span", "x"], "bad --span: x"),
    (["--osd-id", "4294967296"], "bad --osd-id: 4294967296"),
    (["--op", "write"], "--op write needs --partition and --object"),
])
def test_ctlload_refuses_a_bad_argument(args: list[str], message: str) -> None:
    cp = _ctlload(*GOOD, *args)
    assert (cp.returncode, cp.stderr) == (2, f"ctlload: {message}\n")


def test_ctlload_loads_the_key_then_connects(tmp_path: Path) -> None:
    cp = _ctlload(*GOOD)
    assert cp.returncode == 1 and cp.stderr.startswith("ctlload: key file /nonexistent: ")
    key = write_cluster_key(tmp_path / "cluster.key")
    cp = _ctlload(*GOOD, "--key-file", str(key.path), "--op", "getattr",
                  "--partition", "65536", "--object", "1")
    assert (cp.returncode, cp.stderr) == (1, "ctlload: 127.0.0.1:1: Connection refused\n")


@pytest.mark.bench
def test_a_small_ctl_cost_run_prints_every_figure(tmp_path: Path) -> None:
    env = {**os.environ, "PANDO_BUILD_DIR": str(build_dir())}
    cp = subprocess.run([sys.executable, str(CTL_COST), "--no-build", "--repeat", "1",
                         "--mib", "2", "--small-calls", "20", "--workdir", str(tmp_path)],
                        env=env, capture_output=True, text=True, timeout=300)
    assert cp.returncode == 0, cp.stdout[-3000:] + cp.stderr[-3000:]
    figures = dict(ln.split(": ") for ln in cp.stdout.splitlines() if ": " in ln
                   and not ln.startswith("["))
    for name in ("ctl_null_us", "ctl_getattr_us", "ctl_write_1m_ms", "nfs_write_1m_ms",
                 "ctl_write_vs_nfs", "ctl_read_1m_ms", "nfs_read_1m_ms", "ctl_read_vs_nfs",
                 "hmac_sha256_gbps", "hmac_1m_ms"):
        assert float(figures[name]) > 0, name
