"""A test's background threads, whose failures fail the test.  pytest
only warns about an exception in a thread (and pyproject's filterwarnings
turns that warning into an error only for the test phase it happens in),
so a helper's thread keeps what its target raised and hands it to the
thread that joins it."""
from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import Any


class RaisingThread(threading.Thread):
    """threading.Thread whose join() raises, on the joining thread, what
    the target raised; and TimeoutError when the thread is still running
    after join's timeout."""

    def __init__(self, target: Callable[..., object], args: tuple[Any, ...] = (), *,
                 name: str | None = None, daemon: bool | None = None) -> None:
        super().__init__(target=target, args=args, name=name, daemon=daemon)
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            super().run()
        except BaseException as e:  # raised again by join()
            self.error = e

    def join(self, timeout: float | None = None) -> None:
        super().join(timeout)
        if self.is_alive():
            raise TimeoutError(f"thread {self.name} still running after {timeout} s")
        error, self.error = self.error, None
        if error is not None:
            raise error


def join_all(threads: Iterable[RaisingThread], timeout: float | None = None) -> None:
    """Joins every thread (each within timeout), then raises the first
    failure among them."""
    errors: list[BaseException] = []
    for t in threads:
        try:
            t.join(timeout)
        except BaseException as e:  # raised below, once all are joined
            errors.append(e)
    if errors:
        raise errors[0]
