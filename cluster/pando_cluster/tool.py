"""Calls to pando-osd-tool: key generation, formatting, and STATFS."""
from __future__ import annotations

import json
import re
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
    text = _run(["genkey", "--id", str(key_id)], timeout=30)
    path.write_text(text)
    path.chmod(0o600)


def format_data_dir(data_dir: Path, osd_id: int, key_file: Path) -> None:
    _run(["format", "--data-dir", str(data_dir), "--osd-id", str(osd_id),
          "--key-file", str(key_file)], timeout=60)


@dataclass
class Stat:
    fields: dict[str, str]

    def _int(self, *names: str) -> int | None:
        for n in names:
            v = self.fields.get(n)
            if v is not None:
                m = re.match(r"\s*(\d+)", v)
                if m:
                    return int(m.group(1))
        return None

    @property
    def total_bytes(self) -> int | None:
        return self._int("total_bytes", "total", "size_bytes")

    @property
    def free_bytes(self) -> int | None:
        return self._int("free_bytes", "free", "avail_bytes")

    @property
    def used_bytes(self) -> int | None:
        t, f = self.total_bytes, self.free_bytes
        return t - f if t is not None and f is not None else self._int("used_bytes", "used")

    @property
    def objects(self) -> int | None:
        return self._int("objects")


def parse_stat(text: str) -> Stat:
    """Accepts `key value` lines (what pando-osd-tool prints), `key: value`,
    `key = value`, or JSON."""
    text = text.strip()
    if text.startswith("{"):
        try:
            return Stat({str(k).lower(): str(v) for k, v in json.loads(text).items()})
        except (ValueError, AttributeError):
            pass
    fields: dict[str, str] = {}
    for line in text.splitlines():
        m = (re.match(r"\s*([A-Za-z][\w .-]*?)\s*[:=]\s*(.*)$", line)
             or re.match(r"\s*([A-Za-z]\w*)\s+(.*)$", line))  # pando-osd-tool: "key   value"
        if m:
            fields[re.sub(r"[\s.-]+", "_", m.group(1).strip().lower())] = m.group(2).strip()
    return Stat(fields)


def stat(ctl_addr: str, key_file: Path, timeout: float = 5.0) -> Stat:
    return parse_stat(_run(["stat", "--ctl", ctl_addr, "--key-file", str(key_file)], timeout))
