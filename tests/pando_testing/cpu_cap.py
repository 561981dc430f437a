"""A CPU cap for a benchmark's server processes: a cgroup of the cpu
controller whose CFS quota lets its processes use `cores` CPUs' worth of
time, so every server of a comparison runs on the same share of the
machine (tests/bench/README.md, "The rack model").

cgroup v2 (Debian 12's default) and v1 hierarchies (a host booted with
systemd.unified_cgroup_hierarchy=0, as this one is) both work:

    with CpuCap("md-scale-mds1", 0.25) as cap:
        cap.add(mds.proc.pid)
        ...
        cap.throttled_s()     # time its processes waited for quota
"""
from __future__ import annotations

import os
from pathlib import Path
from types import TracebackType

CGROUP = Path("/sys/fs/cgroup")
PERIOD_US = 100_000


def _v2() -> bool:
    return (CGROUP / "cgroup.controllers").exists()


class CpuCap:
    def __init__(self, name: str, cores: float) -> None:
        if cores <= 0:
            raise ValueError(f"a CPU cap of {cores} cores")
        self.cores = cores
        self.path = (CGROUP if _v2() else CGROUP / "cpu") / f"pando-{name}-{os.getpid()}"
        quota = max(1000, int(cores * PERIOD_US))
        if _v2():
            control = CGROUP / "cgroup.subtree_control"
            if "cpu" not in control.read_text().split():
                control.write_text("+cpu")
            self.path.mkdir()
            (self.path / "cpu.max").write_text(f"{quota} {PERIOD_US}")
        else:
            self.path.mkdir()
            (self.path / "cpu.cfs_period_us").write_text(str(PERIOD_US))
            (self.path / "cpu.cfs_quota_us").write_text(str(quota))

    def add(self, pid: int) -> None:
        """Moves process pid, every thread of it, and what it starts later."""
        (self.path / "cgroup.procs").write_text(str(pid))

    def throttled_s(self) -> float:
        """Seconds the group's processes were held back by the cap so far."""
        fields = dict(line.split() for line in (self.path / "cpu.stat").read_text().splitlines())
        if "throttled_usec" in fields:
            return int(fields["throttled_usec"]) / 1e6
        return int(fields.get("throttled_time", "0")) / 1e9

    def close(self) -> None:
        """Moves what is still in the group back to the root, and removes it."""
        root = self.path.parent / "cgroup.procs"
        for pid in (self.path / "cgroup.procs").read_text().split():
            try:
                root.write_text(pid)
            except ProcessLookupError:
                continue
        self.path.rmdir()

    def __enter__(self) -> "CpuCap":
        return self

    def __exit__(self, t: type[BaseException] | None, e: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()
