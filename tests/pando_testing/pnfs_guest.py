"""Guest-side shell snippets shared by the pNFS tests, and parsers for
what they print.  A test's script runs as `step sh VERS '...'` (see
tests/e2e/guest/lib.sh): busybox ash, `set -e`, cwd a fresh directory
<mount>/<vm name>/s<N>-sh, `fail MSG` ends the step."""
from __future__ import annotations

import re
from collections.abc import Sequence
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


def write_and_report(sizes: Sequence[int], gate_lib: str, gate: str) -> str:
    """A script that writes a random file f.SIZE of each size (fsync),
    prints `wrote f.SIZE SHA256`, drops the page cache, reports each file
    as read back from the servers, then stops at the gate `gate`."""
    s = " ".join(map(str, sizes))
    return gate_lib + REPORT + DROP + f"""
for s in {s}; do head -c $s /dev/urandom > /tmp/d.$s; done
for s in {s}; do
  dd if=/tmp/d.$s of=f.$s bs=1M conv=fsync 2>/tmp/dd.err || fail "writing f.$s: $(cat /tmp/dd.err)"
  echo "wrote f.$s $(sha256sum < /tmp/d.$s | cut -d' ' -f1)"
done
drop
for s in {s}; do report f.$s; done
arrive {gate}
"""


def report_over_v3(run: str, sizes: Sequence[int]) -> str:
    """A script reporting the files write_and_report wrote in the first sh
    step of the VM run `run`, read over the NFSv3 mount."""
    return REPORT + f"""
cd /mnt/v3/{run}/s1-sh
for s in {" ".join(map(str, sizes))}; do report f.$s; done
"""


def chunk_loop(chunks: int, dd_args: str, to_fd3: bool = False, each: str = "",
               acked: str = "") -> str:
    """Script lines running `dd dd_args` (chunk $i) for i from 0 to
    chunks - 1, its output to fd 3 with to_fd3, each saying `chunk I ok`
    or `chunk I failed: WHY`; `each`: a line run after every chunk,
    `acked`: one run after every chunk that succeeded."""
    out = " >&3" if to_fd3 else ""
    extra = f"  {each}\n" if each else ""
    on_ok = f"\n    {acked}" if acked else ""
    return f"""i=0
while [ $i -lt {chunks} ]; do
  if dd {dd_args} 2>/tmp/dd.err{out}; then
    echo "chunk $i ok"{on_ok}
  else
    echo "chunk $i failed: $(tr "\\n" " " < /tmp/dd.err)"
  fi
{extra}  i=$((i + 1))
done
"""


# The longest a chunk_writer may stop (no chunk acknowledged) after an OSD
# holding one mirror of its file is killed: the writes go on (6.1 paused
# 0.5 s, and wrote 36 MiB in 4.6 s after the kill, on a loaded machine).
WRITER_STALL_S = 30.0


def chunk_writer(chunks: int, kill_after: int) -> str:
    """Script lines writing the data file `d` (gate getdata) into f one
    MiB chunk at a time with fsync (chunk_loop), a `put acked "i=I"` after
    each acknowledged one (the gate's put_times: whether the writes go
    on); at the gate `started` (with ino=INODE) after kill_after chunks, at
    `written` after the last."""
    return "\ngetdata d /tmp/d\n" + chunk_loop(
        chunks, "if=/tmp/d of=f bs=1M skip=$i seek=$i count=1 conv=notrunc,fsync",
        each=f'[ $i != {kill_after - 1} ] || arrive started "ino=$(stat -c %i f)"',
        acked='put acked "i=$i"') + "arrive written\n"
