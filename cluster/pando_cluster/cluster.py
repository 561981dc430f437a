"""up / down / status of a Pando cluster on this machine: pando-osd targets,
then the metadata manager (mds.py) over them."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Protocol

from . import etcd, mds, mgrproc, nsm, tool
from .config import CTL_PORT_OFFSET, MAX_OSDS, NFS_PORT_OFFSET, OsdConfig
from .etcd_auth import EtcdAccess
from .mds import MDS_NAME
from .mds_config import MdsPaths, render_cluster_conf
from .paths import binary
from .process import is_running, spawn_detached, terminate, wait_ready
from .state import ClusterState, OsdRecord
from .ui import Ui

OSD_EXE = "pando-osd"


@dataclass
class OsdView:
    """One row of the status table."""
    rec: OsdRecord
    running: bool
    state: str
    stat: tool.Stat | None = None
    error: str = ""


@dataclass(frozen=True)
class UpOptions:
    osds: int = 4
    base_port: int = 20490
    bind: str = "127.0.0.1"
    timeout: float = 30.0
    mds: mds.MdsOptions | None = field(default_factory=mds.MdsOptions)  # None: OSDs only
    etcd_port: int = etcd.CLIENT_PORT     # the peer port is the next one
    mgr_port: int = mgrproc.MGR_PORT


@dataclass
class ClusterView:
    osds: list[OsdView]
    services: list[mds.ServiceView]
    state: ClusterState

    @property
    def healthy(self) -> bool:
        return bool(self.osds) and all(r.state == "up" for r in self.osds) and \
            all(s.state.startswith("up") for s in self.services)


@dataclass(frozen=True)
class StopResult:
    name: str
    pid: int | None
    outcome: str


class _HasPid(Protocol):
    pid: int | None


def _key_file(st: ClusterState, ui: Ui) -> Path:
    key = st.dir / "cluster.key"
    if not key.exists():
        ui.say(f"generating cluster key {key}")
        tool.genkey(key, key_id=1)
    st.key_file = str(key)
    return key


def _record(cfg: OsdConfig, cluster_dir: Path) -> OsdRecord:
    return OsdRecord(osd_id=cfg.osd_id, nfs_addr=cfg.nfs_listen, ctl_addr=cfg.ctl_listen,
                     data_dir=str(cfg.data_dir),
                     conf=str(cluster_dir / f"osd.{cfg.osd_id}.conf"),
                     log=str(cluster_dir / f"osd.{cfg.osd_id}.log"))


def _check_options(opts: UpOptions) -> None:
    if not 1 <= opts.osds <= MAX_OSDS:
        raise ValueError(f"--osds must be 1..{MAX_OSDS}")
    osd_ports = {opts.base_port + off + i for off in (NFS_PORT_OFFSET, CTL_PORT_OFFSET)
                 for i in range(1, opts.osds + 1)}
    ours = {opts.etcd_port, opts.etcd_port + 1, opts.mgr_port}
    if len(ours) != 3 or ours & osd_ports:
        raise ValueError(f"--etcd-port {opts.etcd_port} (and its peer port "
                         f"{opts.etcd_port + 1}) and --mgr-port {opts.mgr_port} must differ "
                         f"from each other and from the OSD ports")
    if opts.mds is None:
        return
    m = opts.mds
    if m.nfs_port == m.mnt_port or {m.nfs_port, m.mnt_port} & (osd_ports | ours):
        raise ValueError(f"--nfs-port {m.nfs_port} and --mnt-port {m.mnt_port} must differ "
                         f"from each other and from the OSD, etcd and mgr ports")


def up(cluster_dir: Path, opts: UpOptions, ui: Ui) -> ClusterView:
    """Makes etcd run, then OSDs 1..opts.osds (formatting and configuring
    what is missing), then Ganesha over them, then pando-mgr; leaves running
    ones alone. If anything fails to come up, stops what this call started
    and raises StartError."""
    _check_options(opts)
    cluster_dir.mkdir(parents=True, exist_ok=True)
    st = ClusterState.load(cluster_dir)
    key = _key_file(st, ui)
    started: list[str] = []
    try:
        access = etcd.start(st, opts.bind, opts.etcd_port, opts.timeout, ui, started,
                            mgrproc.DEFAULT_PREFIX, list(range(1, opts.osds + 1)), [MDS_NAME])
        _start_osds(st, key, opts, access, ui, started)
        osds = [st.osds[i] for i in range(1, opts.osds + 1)]
        # cluster.conf: the FSAL's, and the mgr's seed of a new map
        MdsPaths(cluster_dir).cluster_conf.write_text(render_cluster_conf(key, osds))
        if opts.mds is not None:
            mds.start(st, osds, replace(opts.mds, etcd=access.mds(MDS_NAME), name=MDS_NAME),
                      ui, started)
        else:
            mds.forget_stopped(st, ui)
        mgrproc.start(st, access.mgr(), opts.bind, opts.mgr_port, opts.timeout, ui, started)
    except BaseException:  # Ctrl-C included: leave things as they were
        if started:
            ui.say(f"[red]failed[/]; stopping what this `up` started: {', '.join(started)}")
            _stop(st, opts.timeout, set(started), ui)
        raise
    st.save()
    return _view(st)


def _start_osds(st: ClusterState, key: Path, opts: UpOptions, access: EtcdAccess, ui: Ui,
                started: list[str]) -> None:
    cluster_dir = st.dir
    osd_bin = binary(OSD_EXE)
    new: list[OsdRecord] = []
    for i in range(1, opts.osds + 1):
        mine = access.osd(i)
        cfg = OsdConfig(i, cluster_dir / f"osd.{i}", key, opts.bind, opts.base_port,
                        etcd=mine.endpoints, etcd_ca=mine.ca_file, etcd_user=mine.user,
                        etcd_password_file=mine.password_file)
        old = st.osds.get(i)
        if old is not None and is_running(old.pid, OSD_EXE):
            if (old.nfs_addr, old.ctl_addr) != (cfg.nfs_listen, cfg.ctl_listen):
                ui.say(f"osd.{i}: already running (pid {old.pid}) on {old.nfs_addr} / "
                       f"{old.ctl_addr}; not restarted with the new addresses (run `down` first)")
            else:
                ui.say(f"osd.{i}: already running (pid {old.pid})")
            continue
        rec = _record(cfg, cluster_dir)
        if not (cfg.data_dir / "superblock").exists():
            ui.say(f"osd.{i}: formatting {cfg.data_dir}")
            tool.format_data_dir(cfg.data_dir, i, key)
        cfg.write(Path(rec.conf))
        rec.pid = spawn_detached([osd_bin, "--config", rec.conf, "--log-file", rec.log],
                                 cwd=cluster_dir, output=cluster_dir / f"osd.{i}.out")
        ui.say(f"osd.{i}: started pid {rec.pid} (nfs {rec.nfs_addr}, ctl {rec.ctl_addr})")
        st.osds[i] = rec
        st.save()
        started.append(f"osd.{i}")
        new.append(rec)
    for i in sorted(st.osds):
        if i > opts.osds:
            if is_running(st.osds[i].pid, OSD_EXE):
                ui.say(f"osd.{i}: running, beyond --osds {opts.osds}: left alone "
                       f"(`down` stops it)")
            else:
                del st.osds[i]  # forgotten; its data directory stays
    st.save()
    for rec in new:
        assert rec.pid is not None
        wait_ready(ui, f"osd.{rec.osd_id}",
                   [(f"a control STATFS answer on {rec.ctl_addr}", partial(_answers, st, rec))],
                   rec.pid, opts.timeout,
                   [Path(rec.log), Path(rec.log).with_suffix(".out")])
        ui.say(f"osd.{rec.osd_id}: answering on {rec.ctl_addr}")


def _answers(st: ClusterState, rec: OsdRecord) -> bool:
    try:
        tool.stat(rec.ctl_addr, rec.osd_id, Path(st.key_file), timeout=2.0)
        return True
    except tool.ToolError:
        return False


def _osd_rows(st: ClusterState) -> list[OsdView]:
    rows = []
    for _, rec in sorted(st.osds.items()):
        running = is_running(rec.pid, OSD_EXE)
        if not running:
            rows.append(OsdView(rec, False, "down"))
            continue
        try:
            s = tool.stat(rec.ctl_addr, rec.osd_id, Path(st.key_file), timeout=3.0)
            rows.append(OsdView(rec, True, "up", s))
        except (tool.ToolError, FileNotFoundError) as e:
            rows.append(OsdView(rec, True, "no answer", error=str(e)))
    return rows


def _view(st: ClusterState) -> ClusterView:
    """etcd first, then the metadata manager's services, pando-mgr last."""
    rows = [etcd.status_row(st), *mds.status_rows(st), mgrproc.status_row(st)]
    return ClusterView(_osd_rows(st), [mds.ServiceView(*r) if isinstance(r, tuple) else r
                                       for r in rows if r is not None], st)


def status(cluster_dir: Path) -> ClusterView:
    return _view(ClusterState.load(cluster_dir))


def _targets(st: ClusterState) -> list[tuple[str, _HasPid, str]]:
    """Everything `up` records, in stopping order: pando-mgr first (it would
    mark the others down), Ganesha before the OSDs it writes to, then
    sm-notify and rpc.statd (which unregisters from rpcbind), its dbus and
    rpcbind, and etcd last (the others revoke their leases in it)."""
    t: list[tuple[str, _HasPid, str]] = []
    if st.mgr is not None:
        t.append(("pando-mgr", st.mgr, mgrproc.MGR_MODULE))
    if st.mds is not None:
        t.append((mds.GANESHA_EXE, st.mds, mds.GANESHA_EXE))
    t += [(f"osd.{i}", rec, OSD_EXE) for i, rec in sorted(st.osds.items())]
    if st.sm_notify is not None:
        t.append((nsm.SM_NOTIFY_EXE, st.sm_notify, nsm.SM_NOTIFY_EXE))
    if st.statd is not None:
        t.append((nsm.STATD_EXE, st.statd, nsm.STATD_EXE))
    if st.dbus is not None:
        t.append((mds.DBUS_EXE, st.dbus, mds.DBUS_EXE))
    if st.rpcbind is not None:
        t.append((mds.RPCBIND_EXE, st.rpcbind, mds.RPCBIND_EXE))
    if st.etcd is not None:
        t.append((etcd.ETCD_EXE, st.etcd, etcd.ETCD_EXE))
    return t


def _stop(st: ClusterState, timeout: float, only: set[str] | None, ui: Ui) -> list[StopResult]:
    results = []
    for name, rec, exe in _targets(st):
        if only is not None and name not in only:
            continue
        pid = rec.pid
        if pid is not None and is_running(pid, exe):
            ui.say(f"{name}: SIGTERM pid {pid}")
            outcome = terminate(pid, exe, timeout)
        else:
            outcome = "not running"
        results.append(StopResult(name, pid, outcome))
        rec.pid = None
        st.save()
    return results


def down(cluster_dir: Path, ui: Ui, timeout: float = 30.0) -> list[StopResult]:
    """SIGTERM, by pid, pando-mgr, Ganesha, every OSD, then the sm-notify,
    rpc.statd, dbus-daemon, rpcbind and etcd that `up` started; what
    happened to each."""
    st = ClusterState.load(cluster_dir)
    return _stop(st, timeout, None, ui)
