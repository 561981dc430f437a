"""up / down / status of a cluster of pando-osd targets on this machine."""
from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from . import tool
from .config import MAX_OSDS, OsdConfig
from .paths import binary
from .process import is_running, pid_alive, spawn_detached, terminate
from .state import ClusterState, OsdRecord

OSD_EXE = "pando-osd"
Say = Callable[[str], None]


@dataclass
class OsdView:
    """One row of the status table."""
    rec: OsdRecord
    running: bool
    state: str
    stat: tool.Stat | None = None
    error: str = ""


def _key_file(st: ClusterState, say: Say) -> Path:
    key = st.dir / "cluster.key"
    if not key.exists():
        say(f"generating cluster key {key}")
        tool.genkey(key, key_id=1)
    st.key_file = str(key)
    return key


def _record(cfg: OsdConfig, cluster_dir: Path) -> OsdRecord:
    return OsdRecord(osd_id=cfg.osd_id, nfs_addr=cfg.nfs_listen, ctl_addr=cfg.ctl_listen,
                     data_dir=str(cfg.data_dir),
                     conf=str(cluster_dir / f"osd.{cfg.osd_id}.conf"),
                     log=str(cluster_dir / f"osd.{cfg.osd_id}.log"))


def up(cluster_dir: Path, osds: int, base_port: int, bind: str, say: Say,
       timeout: float = 30.0) -> list[OsdView]:
    """Makes OSDs 1..osds run (formatting and configuring what is missing);
    leaves running ones alone. Returns the status rows."""
    if not 1 <= osds <= MAX_OSDS:
        raise ValueError(f"--osds must be 1..{MAX_OSDS}")
    cluster_dir.mkdir(parents=True, exist_ok=True)
    st = ClusterState.load(cluster_dir)
    key = _key_file(st, say)
    osd_bin = binary(OSD_EXE)
    started: list[int] = []
    for i in range(1, osds + 1):
        cfg = OsdConfig(i, cluster_dir / f"osd.{i}", key, bind, base_port)
        old = st.osds.get(i)
        if old is not None and is_running(old.pid, OSD_EXE):
            if (old.nfs_addr, old.ctl_addr) != (cfg.nfs_listen, cfg.ctl_listen):
                say(f"osd.{i}: already running (pid {old.pid}) on {old.nfs_addr} / "
                    f"{old.ctl_addr}; not restarted with the new addresses (run `down` first)")
            else:
                say(f"osd.{i}: already running (pid {old.pid})")
            continue
        rec = _record(cfg, cluster_dir)
        if not (cfg.data_dir / "superblock").exists():
            say(f"osd.{i}: formatting {cfg.data_dir}")
            tool.format_data_dir(cfg.data_dir, i, key)
        cfg.write(Path(rec.conf))
        rec.pid = spawn_detached([osd_bin, "--config", rec.conf, "--log-file", rec.log],
                                 cwd=cluster_dir, output=cluster_dir / f"osd.{i}.out")
        say(f"osd.{i}: started pid {rec.pid} (nfs {rec.nfs_addr}, ctl {rec.ctl_addr})")
        st.osds[i] = rec
        st.save()
        started.append(i)
    for i in sorted(st.osds):
        if i > osds:
            if is_running(st.osds[i].pid, OSD_EXE):
                say(f"osd.{i}: running, beyond --osds {osds}: left alone (`down` stops it)")
            else:
                del st.osds[i]  # forgotten; its data directory stays
    st.save()
    for i in started:
        _wait_up(st, st.osds[i], timeout, say)
    return status_rows(st)


def _wait_up(st: ClusterState, rec: OsdRecord, timeout: float, say: Say) -> None:
    deadline = time.monotonic() + timeout
    last = ""
    while time.monotonic() < deadline:
        if not pid_alive(rec.pid):  # our own child: no pid reuse possible yet
            say(f"osd.{rec.osd_id}: exited during start-up; see {rec.log} and "
                f"{Path(rec.log).with_suffix('.out')}")
            return
        try:
            tool.stat(rec.ctl_addr, Path(st.key_file), timeout=2.0)
            say(f"osd.{rec.osd_id}: answering on {rec.ctl_addr}")
            return
        except tool.ToolError as e:
            last = str(e)
        time.sleep(0.2)
    say(f"osd.{rec.osd_id}: no answer after {timeout:.0f} s: {last}")


def status_rows(st: ClusterState) -> list[OsdView]:
    rows = []
    for _, rec in sorted(st.osds.items()):
        running = is_running(rec.pid, OSD_EXE)
        if not running:
            rows.append(OsdView(rec, False, "down"))
            continue
        try:
            s = tool.stat(rec.ctl_addr, Path(st.key_file), timeout=3.0)
            rows.append(OsdView(rec, True, "up", s))
        except (tool.ToolError, FileNotFoundError) as e:
            rows.append(OsdView(rec, True, "no answer", error=str(e)))
    return rows


def status(cluster_dir: Path) -> list[OsdView]:
    return status_rows(ClusterState.load(cluster_dir))


def down(cluster_dir: Path, say: Say, timeout: float = 30.0) -> list[tuple[int, int | None, str]]:
    """SIGTERM every recorded OSD by pid; returns (osd id, pid, outcome)."""
    st = ClusterState.load(cluster_dir)
    results: list[tuple[int, int | None, str]] = []
    pending: list[OsdRecord] = []
    for _, rec in sorted(st.osds.items()):
        if is_running(rec.pid, OSD_EXE):
            pending.append(rec)
        else:
            results.append((rec.osd_id, rec.pid, "not running"))
            rec.pid = None
    for rec in pending:
        assert rec.pid is not None
        say(f"osd.{rec.osd_id}: SIGTERM pid {rec.pid}")
        results.append((rec.osd_id, rec.pid, terminate(rec.pid, OSD_EXE, timeout)))
        rec.pid = None
        st.save()
    st.save()
    return sorted(results, key=lambda r: r[0])
