"""nfs3load's command line (tests/bench/nfs3load.c), no server needed: bad
arguments end it with a message before it connects.  Its I/O against a
server is tested in tests/osd/test_ganesha_baseline.py."""
from __future__ import annotations

import subprocess

import pytest

from pando_testing.nfs3load import nfs3load_binary

# A command line that parses; connecting to 127.0.0.1:1 is then refused.
GOOD = ["--server", "127.0.0.1:1", "--fh", "00ff", "--op", "write"]


def _nfs3load(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(nfs3load_binary()), *args], capture_output=True, text=True,
                          timeout=30)


def test_nfs3load_without_server_op_or_handle_prints_usage() -> None:
    for drop in ("--server", "--fh", "--op"):
        i = GOOD.index(drop)
        cp = _nfs3load(*GOOD[:i], *GOOD[i + 2:])
        assert cp.returncode == 2 and cp.stderr.startswith("usage: nfs3load --server"), drop
    cp = _nfs3load("--help")
    assert cp.returncode == 0 and cp.stdout.startswith("usage: nfs3load --server")
    assert _nfs3load(*GOOD, "stray").returncode == 2


@pytest.mark.parametrize("args, message", [
    (["--op", "append"], "bad --op: append"),
    (["--stable", "sync"], "bad --stable: sync"),
    (["--auth", "krb5"], "bad --auth: krb5"),
    (["--server", "nocolon"], "bad --server (want HOST:PORT): nocolon"),
    (["--server", ":2049"], "bad --server (want HOST:PORT): :2049"),
    (["--fh", "abc"], "bad --fh (want 2..128 hex digits): abc"),
    (["--fh", "zz"], "bad --fh hex: zz"),
    (["--req-size", "2M"], "--req-size must be 1..1048576"),
    (["--req-size", "12", "--verify"], "--verify needs --req-size a multiple of 8"),
    (["--streams", "0"], "--streams must be 1..1024"),
    (["--depth", "2000"], "--depth must be 1..1024"),
    (["--bytes-per-stream", "0"], "--bytes-per-stream must be > 0"),
    (["--bytes-per-stream", "12", "--verify"], "--verify needs --bytes-per-stream a multiple of 8"),
    (["--uid", "1x"], "bad --uid: 1x"),
])
def test_nfs3load_refuses_a_bad_argument(args: list[str], message: str) -> None:
    cp = _nfs3load(*GOOD, *args)
    assert (cp.returncode, cp.stderr) == (1, f"nfs3load: {message}\n")


@pytest.mark.parametrize("server", ["127.0.0.1:1", "[127.0.0.1]:1"])
def test_nfs3load_connects_to_host_and_port(server: str) -> None:
    """Every choice parsed; a bracketed host loses its brackets."""
    cp = _nfs3load(*GOOD, "--server", server, "--op", "read", "--stable", "filesync",
                   "--auth", "none", "--req-size", "64K", "--bytes-per-stream", "1MiB")
    assert (cp.returncode, cp.stderr) == (1, "nfs3load: connect 127.0.0.1:1: Connection refused\n")
