"""Pieces of tests/bench/scale: the servers of a rack (rack.py) brought up
as Pando clusters of N OSDs or as a Ganesha VFS server, and pnfsload runs
spread over the client machines, one process per client machine, started
together and summed.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from .bench_dirsync import dirsync_fs
from .cpu_cap import CpuCap
from .daemons import OsdProcess
from .ganesha import GaneshaServer, GaneshaVfs
from .keys import ClusterKey
from .mds import PandoMds
from .pnfsload import PnfsloadError, pnfsload_binary, wait_pnfsload
from .pod import build_dir
from .rack import Rack, RackNode

MIB = 1 << 20
GIB = 1 << 30
# How long the client processes get for their sessions and opens before
# the timed phase starts, per process (2 cores serve them all).
SETUP_S_PER_PROCESS = 0.25
SETUP_S_MIN = 2.0


# What a rack run starts: the manager, the OSDs, the load generator.
BINARIES = ("ganesha-fsal/fsal/libfsalpando.so", "osd-target/pando-osd",
            "osd-target/pando-osd-tool", "tests/bench/pnfsload/pnfsload")


def say(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def ensure_built(bench: str, no_build: bool) -> None:
    """ci/build, or with no_build only a check that the binaries are there."""
    if no_build:
        missing = [b for b in BINARIES if not (build_dir() / b).exists()]
        if missing:
            sys.exit(f"{bench}: missing {', '.join(missing)} (and --no-build given)")
        return
    say("building (ci/build)")
    root = Path(__file__).resolve().parents[2]
    subprocess.run([str(root / "ci" / "build")], check=True)


def snapshot_binaries(dest: Path) -> None:
    """Every run uses one build, even if the shared build directory is
    rebuilt meanwhile (a binary being linked cannot be started)."""
    for b in BINARIES:
        (dest / b).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(build_dir() / b, dest / b)
    os.environ["PANDO_BUILD_DIR"] = str(dest)


@dataclass
class Phase:
    """One workload phase summed over every client process: bytes and
    operations, from the first timed request anywhere to the last reply."""

    name: str
    bytes: int
    ops: int
    seconds: float
    layouts: int
    mds_io_bytes: int
    ds_io_bytes: int
    link_bytes: dict[str, tuple[int, int]]
    cpu_busy: float = 0.0   # of the machine's cores, over the phase
    end_spread: float = 0.0  # last client's end - first client's end, s


    @property
    def mib_s(self) -> float:
        return self.bytes / MIB / self.seconds if self.seconds > 0 else 0.0

    @property
    def ops_s(self) -> float:
        return self.ops / self.seconds if self.seconds > 0 else 0.0


def sum_phase(name: str, results: Sequence[dict[str, object]],
              links: dict[str, tuple[int, int]]) -> Phase:
    def total(key: str) -> int:
        return sum(int(r[key]) for r in results)  # type: ignore[call-overload]
    start = min(float(r["t_start"]) for r in results)  # type: ignore[arg-type]
    end = max(float(r["t_end"]) for r in results)  # type: ignore[arg-type]
    first_end = min(float(r["t_end"]) for r in results)  # type: ignore[arg-type]
    return Phase(name, total("bytes"), total("ops"), end - start, total("layouts"),
                 total("mds_io_bytes"), total("ds_io_bytes"), links, end_spread=end - first_end)


def machine_ticks() -> tuple[int, int]:
    """(all, idle + iowait) jiffies of every core so far."""
    f = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return sum(f), f[3] + f[4]


def cpu_seconds(pid: int) -> float:
    """CPU time of a process's live threads so far, in nanoseconds' precision
    (/proc/PID/task/*/schedstat; utime and stime count 10 ms ticks, too
    coarse for the manager's share of a pNFS run)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (FileNotFoundError, ProcessLookupError):
            continue    # the thread ended meanwhile
    return total / 1e9


@dataclass
class ClientLoad:
    """`clients` pnfsload clients on one client machine, against `server`;
    their client numbers (and so their names) start at `client_base`."""

    server: GaneshaServer
    node: RackNode
    clients: int
    client_base: int = 0

    def start(self, start_at: float, argv: Sequence[str],
              progress: bool = False) -> subprocess.Popen[str]:
        cmd = [str(pnfsload_binary()), "--mds", self.server.nfs_addr,
               "--export", self.server.pseudo, "--clients", str(self.clients),
               "--client-base", str(self.client_base), "--start-at", f"{start_at:.3f}", *argv]
        if progress:
            cmd.append("--progress")
        return self.node.pod.popen(cmd, stdout=subprocess.PIPE,
                                   stderr=None if progress else subprocess.PIPE, text=True)


class ScaleRack:
    """The rack of one benchmark run: `managers` manager machines, a VFS
    baseline machine, `osds` OSD machines and `clients` client machines,
    every NIC capped at `nic_mbit`."""

    def __init__(self, workdir: Path, key: ClusterKey, osds: int, clients: int,
                 nic_mbit: int, osd_args: Sequence[str] = (), managers: int = 1) -> None:
        self.workdir = workdir
        self.key = key
        self.osd_args = list(osd_args)
        self.rack = Rack(nic_mbit=nic_mbit).start()
        self.mds_node = self.rack.node("mds")
        self.mds_nodes = [self.mds_node,
                          *(self.rack.node(f"mds{i}") for i in range(2, managers + 1))]
        self.vfs_node = self.rack.node("vfs")
        self.osd_nodes = [self.rack.node(f"osd{i}") for i in range(1, osds + 1)]
        self.client_nodes = [self.rack.node(f"client{i}") for i in range(1, clients + 1)]
        self.caps: list[CpuCap] = []    # of the servers running now
        self._runs = 0

    def stop(self) -> None:
        self.rack.stop()

    def _fresh_dir(self, name: str) -> Path:
        self._runs += 1
        path = self.workdir / f"{self._runs:02d}-{name}"
        path.mkdir(parents=True)
        return path

    def _targets(self, wd: Path, osds: int) -> list[OsdProcess]:
        targets = [OsdProcess(node.pod, wd / "osds", self.key, osd_id=i, host=node.addr,
                              extra_args=list(self.osd_args))
                   for i, node in enumerate(self.osd_nodes[:osds], start=1)]
        for t in targets:
            t.format()
            t.start()
        return targets

    @staticmethod
    def _stop_all(managers: Sequence[GaneshaServer], targets: Sequence[OsdProcess]) -> None:
        codes = [m.stop() for m in managers]
        osd_codes = [t.stop() for t in targets]
        if any(codes) or any(osd_codes):
            say(f"warning: unclean exit: ganesha {codes}, OSDs {osd_codes}")

    @contextmanager
    def pando(self, osds: int, mirrors: int, width: int,
              inline_max: int = 65536) -> Iterator[PandoMds]:
        """A fresh Pando cluster on the first `osds` OSD machines: files of
        `width` columns per mirror, striped layouts for every client."""
        wd = self._fresh_dir(f"pando{osds}")
        targets = self._targets(wd, osds)
        extra = f'Stripe_Width = {width};\nStriped_Clients = "*";'
        mds = PandoMds(self.mds_node.pod, wd / "mds", osds=targets, key=self.key,
                       host=self.mds_node.addr, protocols=(3, 4), pnfs=True,
                       mirrors=mirrors, inline_max=inline_max, extra_fsal=extra,
                       log_level="EVENT")
        try:
            mds.start()
            yield mds
        finally:
            self._stop_all([mds], targets)

    @contextmanager
    def managers(self, count: int, osds: int, cores: float) -> Iterator[list[PandoMds]]:
        """`count` managers over the same fresh OSDs, each on a machine of
        its own and serving a namespace of its own: its own store and OSD
        partition (what a volume is to its manager group); each capped at
        `cores` CPUs (cpu_cap.py)."""
        wd = self._fresh_dir(f"managers{count}")
        targets = self._targets(wd, osds)
        started: list[PandoMds] = []
        try:
            for i, node in enumerate(self.mds_nodes[:count], start=1):
                mds = PandoMds(node.pod, wd / f"mds{i}", osds=targets, key=self.key,
                               host=node.addr, protocols=(3, 4), pnfs=True, partition=i,
                               log_level="EVENT")
                mds.start()
                started.append(mds)
                self._cap(f"mds{i}", mds, cores)
            yield started
        finally:
            self._stop_all(started, targets)
            self._uncap()

    def _cap(self, name: str, server: GaneshaServer, cores: float) -> None:
        assert server.proc is not None
        cap = CpuCap(name, cores)
        self.caps.append(cap)
        cap.add(server.proc.pid)

    def _uncap(self) -> None:
        for cap in self.caps:
            cap.close()
        self.caps.clear()

    def throttled_s(self) -> float:
        """Seconds the capped servers running now were held back so far."""
        return sum(cap.throttled_s() for cap in self.caps)

    @contextmanager
    def vfs(self, cores: float | None = None, dirsync: bool = False) -> Iterator[GaneshaVfs]:
        """Ganesha VFS on the baseline machine, capped at `cores` CPUs if
        given; with `dirsync`, over an ext4 of its own mounted dirsync
        (bench_dirsync.py)."""
        wd = self._fresh_dir("vfs-dirsync" if dirsync else "vfs")
        pod = self.vfs_node.pod
        mnt = dirsync_fs(pod, wd, "dirsync") if dirsync else None
        server = GaneshaVfs(pod, wd / "ganesha", host=self.vfs_node.addr, protocols=(3, 4),
                            log_level="EVENT", export_dir=mnt / "export" if mnt else None)
        try:
            server.start()
            if cores is not None:
                self._cap("vfs", server, cores)
            yield server
        finally:
            server.stop()
            self._uncap()
            if mnt is not None:
                pod.run(["umount", mnt], check=False)

    def run(self, server: GaneshaServer, name: str, clients: int, argv: Sequence[str],
            per_node: int = 1, timeout: float = 900.0) -> Phase:
        """One phase: `clients` pnfsload clients, `per_node` of them on each
        client machine (one process per machine), started together."""
        nodes = self.client_nodes[:(clients + per_node - 1) // per_node]
        loads = [ClientLoad(server, node, min(per_node, clients - i * per_node), i * per_node)
                 for i, node in enumerate(nodes)]
        return self.run_loads(name, loads, argv, timeout)

    def run_loads(self, name: str, loads: Sequence["ClientLoad"], argv: Sequence[str],
                  timeout: float = 900.0) -> Phase:
        """One phase of every load together: one pnfsload process each, all
        starting their timed part at the same moment; summed."""
        before = {n.name: self.rack.link_bytes(n) for n in self._all_nodes()}
        start_at = time.time() + max(SETUP_S_MIN, SETUP_S_PER_PROCESS * len(loads))
        procs = [load.start(start_at, argv, progress=i == 0) for i, load in enumerate(loads)]
        ticks0 = machine_ticks()
        results = [self._result(p, name, timeout) for p in procs]
        ticks1 = machine_ticks()
        after = {n.name: self.rack.link_bytes(n) for n in self._all_nodes()}
        links = {k: (after[k][0] - v[0], after[k][1] - v[1]) for k, v in before.items()}
        phase = sum_phase(name, results, links)
        # From the start of the set-up, not of the timed part: a lower bound.
        total = ticks1[0] - ticks0[0]
        phase.cpu_busy = 1 - (ticks1[1] - ticks0[1]) / total if total else 0.0
        return phase

    def _all_nodes(self) -> list[RackNode]:
        return [*self.mds_nodes, self.vfs_node, *self.osd_nodes, *self.client_nodes]

    @staticmethod
    def _result(proc: subprocess.Popen[str], name: str, timeout: float) -> dict[str, object]:
        try:
            return wait_pnfsload(proc, timeout).raw
        except PnfsloadError as e:
            raise RuntimeError(f"{name}: {e}") from None
