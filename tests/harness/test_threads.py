"""The harness's background threads: an exception in one fails its test,
whether the thread is a pando_testing.threads.RaisingThread (join raises
it: BackgroundWriter's at the end of its `with`) or a plain one
(pyproject's filterwarnings make pytest's warning an error)."""
from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Callable

import pytest

from pando_testing.mds import PandoMds
from pando_testing.mds_files import BackgroundWriter, connect, new_file, ok
from pando_testing.threads import RaisingThread, join_all

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


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
