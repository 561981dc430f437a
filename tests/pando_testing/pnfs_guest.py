"""Guest-side shell snippets shared by the pNFS tests, and parsers for
what they print.  A test's script runs as `step sh VERS '...'` (see
tests/e2e/guest/lib.sh): busybox ash, `set -e`, cwd a fresh directory
<mount>/<vm name>/s<N>-sh, `fail MSG` ends the step."""
from __future__ import annotations

import re
from dataclasses import dataclass

from pando_testing.vm import StepResult

# `report NAME`: one line the host parses: file NAME INODE SIZE SHA256
REPORT = ('report() { echo "file $1 $(stat -c \'%i %s\' "$1") '
          '$(sha256sum < "$1" | cut -d\' \' -f1)"; }\n')
# `drop`: the next reads come from the servers, not the page cache
DROP = "drop() { sync; echo 3 > /proc/sys/vm/drop_caches; }\n"

_FILE = re.compile(r"^file (\S+) (\d+) (\d+) ([0-9a-f]{64})$")


@dataclass
class FileReport:
    name: str
    ino: int
    size: int
    sha256: str


def reports(step: StepResult) -> dict[str, FileReport]:
    """Every `report` line of a step's output, by file name."""
    out = {}
    for line in step.output.splitlines():
        m = _FILE.match(line.strip())
        if m:
            out[m.group(1)] = FileReport(m.group(1), int(m.group(2)), int(m.group(3)), m.group(4))
    return out


def values(step: StepResult, key: str) -> list[str]:
    """Words after `KEY ` on lines of the step's output."""
    return [line.split(None, 1)[1].strip() if " " in line.strip() else ""
            for line in step.output.splitlines() if line.strip().split(" ", 1)[0] == key]
