"""CpuCap (pando_testing/cpu_cap.py): a process in the group gets no more
CPU than the cap, the group counts the time it was held back, and closing
the group leaves no cgroup behind."""
from __future__ import annotations

import subprocess
import sys
import time

from pando_testing.cpu_cap import CpuCap

SPIN = "import time\nend = time.monotonic() + 1.5\nwhile time.monotonic() < end: pass\n"


def cpu_s(pid: int) -> float:
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / 100     # utime + stime, in USER_HZ


def test_a_capped_spinner_gets_no_more_than_its_share_of_a_core() -> None:
    with CpuCap("harness-cap", 0.1) as cap:
        p = subprocess.Popen([sys.executable, "-c", SPIN + "input()"], stdin=subprocess.PIPE)
        try:
            cap.add(p.pid)
            time.sleep(2.0)
            used = cpu_s(p.pid)
        finally:
            p.kill()
            p.wait()
        # Uncapped, the spinner would use 1.5 s (and its start-up besides).
        assert used < 0.6, used
        assert cap.throttled_s() > 0.5
        path = cap.path
    assert not path.exists()
