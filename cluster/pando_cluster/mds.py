"""The metadata manager's processes: rpcbind (only when none listens),
rpc.statd for NFSv3 locking (nsm.py), a private dbus-daemon, and
ganesha.nfsd loading libfsalpando.so over the OSDs, then sm-notify.  Each is
started detached and recorded by pid, so `down` stops exactly these."""
from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from . import nsm
from .etcd_auth import EtcdAccess
from .ganesha_conf import EXPORT_PATH
from .mds_config import (
    MdsPaths,
    mirrors_for,
    render_cluster_conf,
    render_dbus_conf,
    render_ganesha_conf,
)
from .net import WILDCARDS, client_host, ganesha_listen_addr, host_port, port_open
from .paths import fsal_dir, system_binary
from .process import StartError, is_running, spawn_detached, wait_ready
from .state import ClusterState, DaemonRecord, MdsRecord, OsdRecord
from .statd import notify_dir
from .ui import Ui

GANESHA_EXE = "ganesha.nfsd"
DBUS_EXE = "dbus-daemon"
RPCBIND_EXE = "rpcbind"
RPCBIND_PORT = 111
SUN_PATH_MAX = 107  # a unix socket path, without its NUL
MDS_NAME = "mds-1"  # the manager `up` runs, as the mgr is mgr-1


@dataclass(frozen=True)
class MdsOptions:
    bind: str = "127.0.0.1"
    nfs_port: int = 2049
    mnt_port: int = 20048
    timeout: float = 30.0
    etcd: EtcdAccess | None = None      # the FSAL's etcd (None: none)
    name: str = MDS_NAME                # its presence's name there


@dataclass
class ServiceView:
    """One row of the metadata manager's status table."""
    name: str
    pid: int | None
    state: str
    where: str


def start(st: ClusterState, osds: Sequence[OsdRecord], opts: MdsOptions, ui: Ui,
          started: list[str]) -> None:
    """Makes Ganesha serve /pando over `osds` (starting rpcbind and dbus as
    needed); leaves a running one alone. Appends what it started to `started`."""
    if st.mds is not None and is_running(st.mds.pid, GANESHA_EXE):
        _report_running(st.mds, osds, opts, ui)
        return
    plugins = fsal_dir()  # before anything starts: the usual reason to fail
    ganesha, dbus_send = system_binary(GANESHA_EXE), system_binary("dbus-send")
    host = _check_bind(opts, ui)
    for port in (opts.nfs_port, opts.mnt_port):
        if port_open(host, port):
            raise StartError(f"{host_port(host, port)} is already in use (a kernel nfsd, "
                             f"another Ganesha?): pick others with --nfs-port/--mnt-port")
    paths = MdsPaths(st.dir)
    (paths.dir / "recovery").mkdir(parents=True, exist_ok=True)
    _ensure_rpcbind(st, paths, opts.timeout, ui, started)
    ours = nsm.start_statd(st, paths, opts.timeout, ui, started)
    dbus = _ensure_dbus(st, paths, opts.timeout, ui, started)

    paths.cluster_conf.write_text(render_cluster_conf(Path(st.key_file), osds))
    paths.ganesha_conf.write_text(render_ganesha_conf(
        paths, opts.bind, opts.nfs_port, opts.mnt_port, plugins, mirrors_for(len(osds)),
        opts.etcd, notify_dir(paths.file(nsm.STATE_DIR)) if ours else None, opts.name))
    log, out = paths.file("ganesha.log"), paths.file("ganesha.out")
    for f in (log, out):  # so that a failure's tail is this start's
        if f.exists():
            f.replace(f.with_name(f.name + ".1"))
    rec = MdsRecord(host=host, nfs_port=opts.nfs_port, mnt_port=opts.mnt_port,
                    conf=str(paths.ganesha_conf), log=str(log),
                    osd_ids=sorted(o.osd_id for o in osds))
    rec.pid = spawn_detached([ganesha, "-F", "-f", rec.conf, "-L", log,
                              "-p", paths.file("ganesha.pid")],
                             cwd=paths.dir, output=out,
                             env={"DBUS_SYSTEM_BUS_ADDRESS": dbus.address})
    st.mds = rec
    st.save()
    started.append(GANESHA_EXE)
    ui.say(f"ganesha: started pid {rec.pid} (nfs {rec.nfs_addr}, mountd {rec.mnt_port}, "
           f"OSDs {', '.join(map(str, rec.osd_ids))})")
    try:
        wait_ready(ui, "ganesha", [
            (f"NFS port {rec.nfs_port}", lambda: port_open(host, rec.nfs_port)),
            (f"MOUNT port {rec.mnt_port}", lambda: port_open(host, rec.mnt_port)),
            (f"export {EXPORT_PATH} on dbus", lambda: export_listed(dbus_send, dbus.address)),
        ], rec.pid, opts.timeout, [log, out])
    except StartError as e:
        errors = ganesha_errors(log)
        raise StartError("\n  ".join([str(e), "ganesha.nfsd logged:", *errors]) if errors
                         else str(e), [log, out]) from None
    ui.say(f"ganesha: serving {EXPORT_PATH} on {rec.nfs_addr}")
    if ours:
        nsm.notify(st, paths, opts.bind, ui, started)


def ganesha_errors(log: Path, limit: int = 10) -> list[str]:
    """Ganesha's CRIT/MAJ/FATAL lines, without the log's prefix. Ganesha
    goes on running when an export fails (the FSAL refused its config), so
    the reason is often far above the tail. The NFS CB lines are skipped:
    Kerberos callback noise that Active_krb5 = false does not silence."""
    if not log.exists():
        return []
    found = [line.split("] ", 1)[-1] for line in log.read_text(errors="replace").splitlines()
             if re.search(r":(CRIT|MAJ|FATAL) :", line) and ":NFS CB :" not in line]
    return found[-limit:]


def forget_stopped(st: ClusterState, ui: Ui) -> None:
    """For an OSD-only `up`: drops the records of a metadata manager that no
    longer runs; a running one is left alone (`down` stops it)."""
    if st.mds is not None and is_running(st.mds.pid, GANESHA_EXE):
        ui.say(f"ganesha: running (pid {st.mds.pid}), --no-mds: left alone (`down` stops it)")
        return
    st.mds = None
    if st.dbus is not None and not is_running(st.dbus.pid, DBUS_EXE):
        st.dbus = None
    if st.rpcbind is not None and not is_running(st.rpcbind.pid, RPCBIND_EXE):
        st.rpcbind = None
    if st.statd is not None and not is_running(st.statd.pid, nsm.STATD_EXE):
        st.statd = None
    if st.sm_notify is not None and not is_running(st.sm_notify.pid, nsm.SM_NOTIFY_EXE):
        st.sm_notify = None


def _report_running(m: MdsRecord, osds: Sequence[OsdRecord], opts: MdsOptions, ui: Ui) -> None:
    ui.say(f"ganesha: already running (pid {m.pid})")
    if (m.host, m.nfs_port, m.mnt_port) != (client_host(opts.bind), opts.nfs_port, opts.mnt_port):
        ui.say(f"ganesha: serves {m.nfs_addr} (mountd {m.mnt_port}); not restarted with "
               f"the new address or ports (run `down` first)")
    wanted = sorted(o.osd_id for o in osds)
    if m.osd_ids != wanted:
        ui.say(f"ganesha: its cluster.conf names OSDs {m.osd_ids}, not {wanted}; "
               f"run `down` and `up` to change that")


def _check_bind(opts: MdsOptions, ui: Ui) -> str:
    """Refuses a Bind_Addr Ganesha would exit on, warns when Ganesha would
    listen on every address instead; returns the address clients use."""
    listen = ganesha_listen_addr(opts.bind)
    if listen is None:
        raise StartError(
            f"ganesha.nfsd cannot resolve Bind_Addr {opts.bind}: with AI_ADDRCONFIG glibc "
            f"ignores 127.0.0.1 and ::1, and this host has no other address. Add one "
            f"(e.g. `ip addr add 127.0.0.2/8 dev lo`) or use --bind")
    if listen != opts.bind and opts.bind not in WILDCARDS:
        ui.say(f"[yellow]warning[/]: Ganesha 4.3 will listen on every address, not only "
               f"{opts.bind} (its Bind_Addr parsing needs a non-loopback IPv6 address on "
               f"this host): the export is reachable on every address this host has")
    return client_host(opts.bind)


def _ensure_rpcbind(st: ClusterState, paths: MdsPaths, timeout: float, ui: Ui,
                    started: list[str]) -> None:
    """NFSv3 needs rpcbind: ours if it still runs, else any that listens,
    else a new one (recorded, so only that one is stopped by `down`)."""
    if st.rpcbind is not None and is_running(st.rpcbind.pid, RPCBIND_EXE):
        ui.say(f"rpcbind: already running (pid {st.rpcbind.pid})")
        return
    st.rpcbind = None
    if port_open("127.0.0.1", RPCBIND_PORT):
        ui.say(f"rpcbind: using the one already on port {RPCBIND_PORT}")
        st.save()
        return
    out = paths.file("rpcbind.out")
    # -f: stays in the foreground, so the pid is the daemon's. No -h: Debian's
    # rpcbind 1.2.6 double-frees with "-h 127.0.0.1".
    pid = spawn_detached([system_binary(RPCBIND_EXE), "-f"], cwd=paths.dir, output=out)
    st.rpcbind = DaemonRecord(pid=pid, log=str(out))
    st.save()
    started.append(RPCBIND_EXE)
    ui.say(f"rpcbind: started pid {pid}")
    wait_ready(ui, "rpcbind", [(f"port {RPCBIND_PORT}",
                                lambda: port_open("127.0.0.1", RPCBIND_PORT))],
               pid, timeout, [out])


def _ensure_dbus(st: ClusterState, paths: MdsPaths, timeout: float, ui: Ui,
                 started: list[str]) -> DaemonRecord:
    """A private system bus for Ganesha and its admin tools (ganesha_mgr,
    ganesha_stats), so neither needs the host's bus nor its policy."""
    if st.dbus is not None and is_running(st.dbus.pid, DBUS_EXE):
        ui.say(f"dbus-daemon: already running (pid {st.dbus.pid})")
        return st.dbus
    sock = paths.dbus_socket
    if len(str(sock).encode()) > SUN_PATH_MAX:
        raise StartError(f"{sock}: too long for a unix socket path; use a shorter --dir")
    conf = paths.file("dbus.conf")
    conf.write_text(render_dbus_conf(sock))
    sock.unlink(missing_ok=True)  # left by a daemon that was killed
    out = paths.file("dbus.out")
    pid = spawn_detached([system_binary(DBUS_EXE), "--nofork", "--nopidfile",
                          f"--config-file={conf}"], cwd=paths.dir, output=out)
    st.dbus = DaemonRecord(pid=pid, log=str(out), address=paths.dbus_address)
    st.save()
    started.append(DBUS_EXE)
    ui.say(f"dbus-daemon: started pid {pid} ({st.dbus.address})")
    wait_ready(ui, "dbus-daemon", [(f"socket {sock}", sock.exists)], pid, timeout, [out])
    return st.dbus


def export_listed(dbus_send: Path, address: str) -> bool:
    """True when Ganesha on the bus at `address` lists export 1 as /pando:
    the FSAL has loaded and the export is configured."""
    try:
        cp = subprocess.run(
            [str(dbus_send), "--system", "--print-reply", "--reply-timeout=2000",
             "--dest=org.ganesha.nfsd", "/org/ganesha/nfsd/ExportMgr",
             "org.ganesha.nfsd.exportmgr.ShowExports"],
            capture_output=True, text=True, timeout=5, check=False,
            env={**os.environ, "DBUS_SYSTEM_BUS_ADDRESS": address})
    except subprocess.TimeoutExpired:
        return False
    return cp.returncode == 0 and re.search(
        rf'uint16 1\s+string "{re.escape(EXPORT_PATH)}"', cp.stdout) is not None


def status_rows(st: ClusterState) -> list[ServiceView]:
    """Ganesha, dbus-daemon, rpcbind and rpc.statd, once an `up` has started
    Ganesha."""
    m = st.mds
    if m is None:
        return []
    running = is_running(m.pid, GANESHA_EXE)
    answering = running and all(port_open(m.host, p) for p in (m.nfs_port, m.mnt_port))
    rows = [ServiceView(GANESHA_EXE, m.pid if running else None,
                        "up" if answering else "no answer" if running else "down",
                        f"{m.nfs_addr}, mountd {m.mnt_port}")]
    if st.dbus is not None:
        alive = is_running(st.dbus.pid, DBUS_EXE)
        rows.append(ServiceView(DBUS_EXE, st.dbus.pid if alive else None,
                                "up" if alive else "down", st.dbus.address))
    where = host_port("127.0.0.1", RPCBIND_PORT)
    if st.rpcbind is not None and is_running(st.rpcbind.pid, RPCBIND_EXE):
        rows.append(ServiceView(RPCBIND_EXE, st.rpcbind.pid, "up", where))
    else:
        rows.append(ServiceView(RPCBIND_EXE, None, "up (not ours)"
                                if port_open("127.0.0.1", RPCBIND_PORT) else "down", where))
    return rows + [ServiceView(*nsm.status_row(st))]
