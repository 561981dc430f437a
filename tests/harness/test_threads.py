"""The harness's background threads: an exception in one fails its test,
whether the thread is a pando_testing.threads.RaisingThread (join raises
it: BackgroundWriter's at the end of its `with`, RecordProxy's at stop)
or a plain one (pyproject's filterwarnings make pytest's warning an
error)."""
from __future__ import annotations

import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Callable, Iterator

import pytest

from pando_testing.mds import PandoMds
from pando_testing.mds_files import BackgroundWriter, connect, new_file, ok
from pando_testing.nfsproxy import RecordProxy, recv_fragment
from pando_testing.oncrpc import LAST_FRAGMENT
from pando_testing.pod import Pod
from pando_testing.threads import RaisingThread, join_all

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"
PROXY_PORT = 18555


def fail(message: str) -> None:
    raise ValueError(message)


def test_join_raises_what_the_thread_raised_once() -> None:
    t = RaisingThread(target=fail, args=("in the thread",))
    t.start()
    with pytest.raises(ValueError, match="in the thread"):
        t.join()
    t.join()


def test_join_raises_timeout_error_while_the_thread_still_runs() -> None:
    stop = threading.Event()
    t = RaisingThread(target=stop.wait, name="sleeper")
    t.start()
    with pytest.raises(TimeoutError, match="sleeper"):
        t.join(0.1)
    stop.set()
    t.join()


def test_join_all_joins_every_thread_then_raises_the_first_failure() -> None:
    finished: list[int] = []

    def slow() -> None:
        time.sleep(0.2)
        finished.append(1)

    threads = [RaisingThread(target=fail, args=("first",)), RaisingThread(target=slow),
               RaisingThread(target=fail, args=("second",))]
    for t in threads:
        t.start()
    with pytest.raises(ValueError, match="first"):
        join_all(threads)
    assert finished == [1]


def test_a_background_writer_whose_write_is_refused_raises_at_the_end_of_its_with_or_when_waited_on(
        mds_factory: Callable[..., PandoMds]) -> None:
    mds = mds_factory(2, object_pool=0)
    root = mds.root_handle()
    with connect(mds) as c:
        fh = new_file(c, root, "gone", b"x")
        ok(c.remove(root, "gone"))
    refused = "background WRITE at 0: NFS3ERR_STALE"
    with pytest.raises(AssertionError, match=refused):
        with BackgroundWriter(mds, fh, bytearray(1), lambda i: (0, b"y"), pause=0.01) as writer:
            time.sleep(1.0)
    assert writer.written == 0
    with BackgroundWriter(mds, fh, bytearray(1), lambda i: (0, b"y"), pause=0.01) as writer:
        with pytest.raises(AssertionError, match=refused):
            writer.assert_goes_on(1, 30, "a removed file")


def echo_one_record(upstream: socket.socket) -> None:
    conn, _ = upstream.accept()
    with conn:
        got = recv_fragment(conn)
        assert got is not None
        conn.sendall(struct.pack(">I", got[0]) + got[1])
        conn.recv(1)                          # until the proxy hangs up


@pytest.fixture
def echo_port(pod: Pod) -> Iterator[int]:
    """The port of a server in the pod that echoes one record."""
    sock = pod.call_inside(lambda: socket.create_server(("127.0.0.1", 0)))
    server = RaisingThread(target=echo_one_record, args=(sock,))
    server.start()
    yield sock.getsockname()[1]
    server.join(10)
    sock.close()


def ping(client: socket.socket) -> bytes | None:
    """The reply to a "ping" record sent through the proxy."""
    client.sendall(struct.pack(">I", LAST_FRAGMENT | 4) + b"ping")
    got = recv_fragment(client)
    return None if got is None else got[1]


def test_a_proxy_passes_records_and_stops_with_a_client_connected(pod: Pod, echo_port: int) -> None:
    proxy = RecordProxy(pod, PROXY_PORT, echo_port, mangle=bytes.upper).start()
    with pod.connect("127.0.0.1", PROXY_PORT) as client:
        assert ping(client) == b"PING"
        proxy.stop()


def test_a_proxy_whose_mangle_raises_raises_at_stop(pod: Pod, echo_port: int) -> None:
    def mangle(frag: bytes) -> bytes:
        raise ValueError(f"mangling {frag!r}")

    proxy = RecordProxy(pod, PROXY_PORT, echo_port, mangle=mangle).start()
    with pod.connect("127.0.0.1", PROXY_PORT) as client:
        assert ping(client) is None           # the reply's pump died
    with pytest.raises(ValueError, match="mangling b'ping'"):
        proxy.stop()


def run_pytest_on(tmp_path: Path, body: str) -> subprocess.CompletedProcess[str]:
    """pytest, configured by the project's pyproject.toml, on one test file of body."""
    (tmp_path / "test_body.py").write_text(body)
    return subprocess.run([sys.executable, "-m", "pytest", "-c", str(PYPROJECT),
                           "--rootdir", str(tmp_path), "-p", "no:cacheprovider",
                           str(tmp_path / "test_body.py")],
                          capture_output=True, text=True, timeout=120)


def test_an_exception_in_a_plain_thread_fails_its_test(tmp_path: Path) -> None:
    cp = run_pytest_on(tmp_path, """
import threading

def test_body():
    t = threading.Thread(target=lambda: 1 / 0)
    t.start()
    t.join()
""")
    assert cp.returncode == 1, cp.stdout + cp.stderr
    assert "1 failed" in cp.stdout and "ZeroDivisionError" in cp.stdout, cp.stdout


def test_an_exception_python_could_not_raise_fails_its_test(tmp_path: Path) -> None:
    cp = run_pytest_on(tmp_path, """
class Finalized:
    def __del__(self):
        raise RuntimeError("raised in __del__")

def test_body():
    Finalized()
""")
    assert cp.returncode == 1, cp.stdout + cp.stderr
    assert "1 failed" in cp.stdout and "raised in __del__" in cp.stdout, cp.stdout
