"""Rich tables and text blocks for the CLI."""
from __future__ import annotations

from rich.table import Table

from .cluster import OsdView, StopResult
from .ganesha_conf import EXPORT_PATH
from .mds import ServiceView
from .state import ClusterState

MOUNT_POINT = "/mnt/pando"


def human(n: int | None) -> str:
    if n is None:
        return "-"
    v = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if v < 1024 or unit == "TiB":
            return f"{v:.0f} {unit}" if unit == "B" else f"{v:.1f} {unit}"
        v /= 1024
    return str(n)


STATE_STYLE = {"up": "green", "down": "red", "no answer": "yellow"}


def _state(state: str) -> str:
    style = STATE_STYLE.get(state, "")
    return f"[{style}]{state}[/]" if style else state


def status_table(rows: list[OsdView], title: str) -> Table:
    t = Table(title=title)
    for col in ("osd", "nfs addr", "ctl addr", "pid", "state", "objects", "free"):
        t.add_column(col, justify="right" if col in ("osd", "pid", "objects", "free") else "left")
    for r in rows:
        t.add_row(str(r.rec.osd_id), r.rec.nfs_addr, r.rec.ctl_addr,
                  str(r.rec.pid) if r.running and r.rec.pid else "-",
                  _state(r.state),
                  str(r.stat.objects) if r.stat and r.stat.objects is not None else "-",
                  human(r.stat.free_bytes if r.stat else None))
    return t


def services_table(rows: list[ServiceView], title: str) -> Table:
    t = Table(title=title)
    t.add_column("service")
    t.add_column("pid", justify="right")
    t.add_column("state")
    t.add_column("address", overflow="fold")
    for r in rows:
        t.add_row(r.name, str(r.pid) if r.pid else "-", _state(r.state), r.where)
    return t


def down_table(results: list[StopResult], title: str) -> Table:
    t = Table(title=title)
    t.add_column("process")
    t.add_column("pid", justify="right")
    t.add_column("result")
    for r in results:
        t.add_row(r.name, str(r.pid) if r.pid else "-", r.outcome)
    return t


def how_to_use(st: ClusterState) -> list[str]:
    """Where the dashboard is, mount commands for the metadata manager, and
    how to reach its dbus."""
    return _mgr_lines(st) + _mds_lines(st)


def _mgr_lines(st: ClusterState) -> list[str]:
    if st.mgr is None:
        return []
    return [f"Dashboard: {st.mgr.address}/",
            "Cluster health (the `pando` CLI):",
            f"  pando --mgr {st.mgr.address} status"]


def _mds_lines(st: ClusterState) -> list[str]:
    m = st.mds
    if m is None:
        return []
    server = f"[{m.host}]" if ":" in m.host else m.host
    lines = ["Mount it (as root; any mount point):",
             f"  mount -t nfs -o vers=4.2,port={m.nfs_port} {server}:{EXPORT_PATH} {MOUNT_POINT}",
             (f"  mount -t nfs -o vers=3,port={m.nfs_port},mountport={m.mnt_port} "
              f"{server}:{EXPORT_PATH} {MOUNT_POINT}"),
             ("  (NFSv3 locks need rpc.statd on the client, from nfs-common; "
              "`nolock` keeps them local)")]
    if st.dbus is not None:
        lines += ["Ganesha's dbus (ganesha_mgr, ganesha_stats) is private to this cluster:",
                  f"  export DBUS_SYSTEM_BUS_ADDRESS={st.dbus.address}",
                  "  ganesha_mgr show exports"]
    return lines
