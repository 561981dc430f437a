"""Progress lines and spinners for the CLI (rich)."""
from __future__ import annotations

import time
from contextlib import contextmanager
from typing import Callable, Iterator

from rich.console import Console

Update = Callable[[str], None]


class Ui:
    """`say` prints a line; `waiting` shows a spinner with the elapsed time
    while a wait lasts (on a terminal only: logs get the `say` lines)."""

    def __init__(self, console: Console) -> None:
        self.console = console

    def say(self, msg: str) -> None:
        self.console.print(f"[bold]pando-cluster[/]: {msg}", highlight=False, soft_wrap=True)

    @contextmanager
    def waiting(self, what: str) -> Iterator[Update]:
        start = time.monotonic()
        with self.console.status(what) as status:
            def update(detail: str) -> None:
                status.update(f"{what}: {detail} ({time.monotonic() - start:.0f} s)")
            yield update
