"""Calls to pando-osd-tool: key generation, formatting, and STATFS."""
from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from .paths import binary


class ToolError(Exception):
    pass


def _run(args: list[str], timeout: float) -> str:
    argv = [str(binary("pando-osd-tool")), *args]
    try:
        cp = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        raise ToolError(f"{' '.join(argv)}: no answer in {timeout:.0f} s") from e
    if cp.returncode != 0:
        msg = (cp.stderr or cp.stdout).strip()
        raise ToolError(f"{' '.join(argv)}: exit {cp.returncode}: {msg}")
    return cp.stdout


def genkey(path: Path, key_id: int = 1) -> None:
    """A new cluster key in path, which must not exist: made 0600 from the
    start (O_EXCL), never readable by others for a moment, never over an
    existing key or through a link planted there."""
    text = _run(["genkey", "--id", str(key_id)], timeout=30)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text)


def format_data_dir(data_dir: Path, osd_id: int, key_file: Path) -> None:
    _run(["format", "--data-dir", str(data_dir), "--osd-id", str(osd_id),
          "--key-file", str(key_file)], timeout=60)


@dataclass
class Stat:
    """What `pando-osd-tool stat` prints: one `name value` line each."""
    fields: dict[str, str]

    def _int(self, name: str) -> int | None:
        v = self.fields.get(name)
        return int(v) if v is not None and v.isdigit() else None

    @property
    def free_bytes(self) -> int | None:
        return self._int("free_bytes")

    @property
    def objects(self) -> int | None:
        return self._int("objects")


def parse_stat(text: str) -> Stat:
    fields: dict[str, str] = {}
    for line in text.splitlines():
        name, _, value = line.strip().partition(" ")
        if name:
            fields[name] = value.strip()
    return Stat(fields)


def stat(ctl_addr: str, osd_id: int, key_file: Path, timeout: float = 5.0) -> Stat:
    """STATFS of target osd_id (its control key signs the call)."""
    return parse_stat(_run(["stat", "--ctl", ctl_addr, "--osd-id", str(osd_id),
                            "--key-file", str(key_file)], timeout))
