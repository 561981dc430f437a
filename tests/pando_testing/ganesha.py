"""Stock NFS-Ganesha 4.3 inside a Pod.  `GaneshaServer` runs it with any
FSAL block; `GaneshaVfs` exports a local directory with FSAL VFS (the
baseline Pando is measured against); `mds.PandoMds` loads Pando's FSAL.

Inside the pod it starts its own rpcbind (Ganesha registers NFS, MOUNT and
NLM with it; /run is private to the pod) and rpc.statd (Ganesha's NSM
client asks it to monitor the NFSv3 hosts that lock; pando_cluster.statd),
then `ganesha.nfsd -F` exporting one
directory over TCP: NFSv3 only by default (the benchmark baseline), or NFSv3
and NFSv4.1 and 4.2 with `protocols=(3, 4)` (the kernel-client tests).
Everything is stopped by pid.

The configuration is production's (pando_cluster.ganesha_conf, what
`pando-cluster up` writes) with the test's overrides on top, each one of
the keys ganesha_conf.TEST_OVERRIDES documents.
"""
from __future__ import annotations

import os
import subprocess
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from pando_cluster.ganesha_conf import ExportClient, GaneshaSettings, Kerberos, PandoFsal, render
from pando_cluster.mds_config import LOCAL_CLIENTS, GaneshaFiles, render_dbus_conf
from pando_cluster.statd import notify_argv, notify_dir, prepare_state_dir, statd_argv

from .nfs3_setup import Nfs3Setup, mount_root
from .pod import Pod
from .podproc import terminate
from .rack import SUBNET
from .vmnet import TAP_NET
from .vm import GUEST_ADDR, MountTarget

# PANDO_GANESHA_ROOT: run the Ganesha unpacked there (dpkg-deb -x of
# Debian's stock nfs-ganesha and nfs-ganesha-vfs 4.3-2, say) instead of
# the installed one: how a test is shown to fail without the patch series.
GANESHA_ROOT = Path(os.environ.get("PANDO_GANESHA_ROOT", "/"))
GANESHA = str(GANESHA_ROOT / "usr/bin/ganesha.nfsd")
GANESHA_LIB_DIR = GANESHA_ROOT / "usr/lib/ganesha"
RPCBIND = "/usr/sbin/rpcbind"
# RQUOTA's port beside NFS's: production's 875 on 2049; another NFS port's
# RQUOTA this far above it, out of the reserved ports rpc.statd takes
# (ci/install-deps keeps 875 from them) and below the ephemeral ones.
RQUOTA_PORT = 875
RQUOTA_ABOVE_NFS = 20000
STATD = "/usr/sbin/rpc.statd"
SM_NOTIFY = "/usr/sbin/sm-notify"
VFS_PLUGINS_DIR = str(GANESHA_ROOT / "usr/lib/x86_64-linux-gnu/ganesha")

# Ganesha's stateid checks say why they refuse a stateid only at DEBUG
# (about five lines per OPEN): the e2e and pNFS fixtures keep it on, so an
# intermittent LAYOUTCOMMIT refusal leaves its reason in the log
# (tests/e2e/README.md).
STATE_DEBUG = {"STATE": "DEBUG"}

# The hosts whose root stays root: `up`'s own (loopback: inside a test pod,
# the Python clients and the qemu guests through user networking), the
# rack's machines and guests on a tap network.  Any other is squashed
# (127.0.0.2, say).
TRUSTED_CLIENTS = (*LOCAL_CLIENTS, f"{SUBNET}.0.0/16", TAP_NET)


@dataclass
class GaneshaServer(GaneshaFiles):
    """NFS-Ganesha exporting `export_dir` through the FSAL `fsal()` names.
    With dbus=True it gets a private system bus (`dbus_env()` reaches it)."""

    pod: Pod
    workdir: Path
    export_dir: Path | None = None
    host: str = "127.0.0.1"
    # The one address it listens on (Bind_Addr), for two servers on one
    # port in a pod; None: every address of its pod.
    bind: str | None = None
    nfs_port: int = 2049
    mnt_port: int = 20048
    # Overrides of production's settings; None keeps production's.
    log_level: str | None = None
    # Per-component levels, e.g. {"STATE": "DEBUG"} (Ganesha's COMPONENTS block).
    log_components: dict[str, str] = field(default_factory=dict)
    mdcache_entries: int | None = None      # Ganesha's handle cache (None: its default)
    protocols: tuple[int, ...] | None = (3,)   # None: production's (3, 4)
    minor_versions: tuple[int, ...] | None = None  # NFSv4 minor versions when 4 is served
    pseudo: str = "/pando-baseline"          # the export's NFSv4 pseudo path
    access_type: str = "RW"                  # "RO" for a read-only export
    trusted_clients: tuple[str, ...] = TRUSTED_CLIENTS   # (): production's, no host keeps root
    # Security flavours and the Kerberos service (pando.conf's [export] sec
    # and [kerberos]); a test realm's idmapd.conf, and more environment
    # (its KRB5_CONFIG).
    sec: tuple[str, ...] = ("sys",)
    kerberos: Kerberos | None = None
    idmap_conf: Path | None = None
    env: dict[str, str] = field(default_factory=dict)
    start_timeout: float = 30.0
    # No grace period after a start (tests that do not restart the server);
    # False gives clients production's grace period (ganesha_conf.GRACE_PERIOD_S)
    # to reclaim after a restart.
    graceless: bool = True
    dbus: bool = False
    # An rpc.statd of its own (NFSv3 locks' NSM); False for a second NFSv3
    # server in a pod, which holds one statd (its pid file is in /run).
    nsm: bool = True
    plugins_dir: str = VFS_PLUGINS_DIR
    rpcbind: subprocess.Popen[bytes] | None = field(default=None, init=False)
    statd: subprocess.Popen[bytes] | None = field(default=None, init=False)
    sm_notify: subprocess.Popen[bytes] | None = field(default=None, init=False)
    dbus_daemon: subprocess.Popen[bytes] | None = field(default=None, init=False)
    proc: subprocess.Popen[bytes] | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        self.workdir = Path(self.workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        if self.export_dir is None:
            self.export_dir = self.workdir / "export"
        (self.workdir / "recovery").mkdir(exist_ok=True)

    def fsal(self) -> PandoFsal | tuple[str, ...]:
        """The export's FSAL block."""
        raise NotImplementedError

    @property
    def rquota_port(self) -> int:
        """RQUOTA's port: production's beside 2049, else one of its own
        beside the NFS port, so that servers sharing a pod have one each."""
        return RQUOTA_PORT if self.nfs_port == 2049 else self.nfs_port + RQUOTA_ABOVE_NFS

    def pnfs_mds(self) -> bool:
        """Whether the server hands out layouts (PNFS_MDS)."""
        return False

    def settings(self) -> GaneshaSettings:
        """Production's settings with this test's overrides."""
        s = GaneshaSettings(
            plugins_dir=Path(self.plugins_dir), recovery_root=self.workdir / "recovery",
            fsal=self.fsal(), nfs_port=self.nfs_port, mnt_port=self.mnt_port,
            rquota_port=self.rquota_port, bind=self.bind,
            export_path=str(self.export_dir), pseudo=self.pseudo, pnfs=self.pnfs_mds(),
            graceless=self.graceless, access_type=self.access_type,
            clients=(ExportClient(self.trusted_clients),) if self.trusted_clients else (),
            log_components=self.log_components, mdcache_entries=self.mdcache_entries,
            nsm_notify_dir=notify_dir(self.statd_dir), sec=self.sec, kerberos=self.kerberos,
            idmap_conf=self.idmap_conf)
        return replace(s, protocols=self.protocols or s.protocols,
                       minor_versions=self.minor_versions or s.minor_versions,
                       log_level=self.log_level or s.log_level)

    @property
    def dir(self) -> Path:
        return self.workdir

    @property
    def conf_path(self) -> Path:
        return self.ganesha_conf

    @property
    def log_path(self) -> Path:
        return self.workdir / "ganesha.log"

    @property
    def rpcbind_log_path(self) -> Path:
        return self.workdir / "rpcbind.log"

    @property
    def statd_log_path(self) -> Path:
        return self.workdir / "statd.log"

    @property
    def statd_dir(self) -> Path:
        return self.workdir / "statd"

    @property
    def nfs_addr(self) -> str:
        return f"{self.host}:{self.nfs_port}"

    def dbus_env(self) -> dict[str, str]:
        """Environment for ganesha_mgr, ganesha_stats or dbus-send to reach
        this server's private bus (run them with pod.run)."""
        return {"DBUS_SYSTEM_BUS_ADDRESS": self.dbus_address}

    def write_config(self) -> None:
        self.conf_path.write_text(render(self.settings()))

    def _start_dbus(self) -> None:
        conf = self.workdir / "dbus.conf"
        conf.write_text(render_dbus_conf(self.dbus_socket))
        self.dbus_socket.unlink(missing_ok=True)
        with open(self.workdir / "dbus.log", "ab") as log:
            self.dbus_daemon = self.pod.popen(
                ["dbus-daemon", "--nofork", "--nopidfile", f"--config-file={conf}"],
                stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 10
        while not self.dbus_socket.exists():
            if self.dbus_daemon.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"dbus-daemon did not start (see {self.workdir}/dbus.log)")
            time.sleep(0.05)

    def start(self, wait: bool = True) -> "GaneshaServer":
        """Starts Ganesha and, with `wait`, waits until it serves
        (wait_serving); without, returns once it runs (a standby manager
        serves only once it takes over)."""
        assert self.proc is None or self.proc.poll() is not None, "already running"
        if self.dbus and self.dbus_daemon is None:
            self._start_dbus()
        if self.rpcbind is None:
            self._start_rpcbind()
        self._start_statd()
        self.write_config()
        env = {**os.environ, **(self.dbus_env() if self.dbus else {}), **self.env}
        if GANESHA_ROOT != Path("/"):
            env["LD_LIBRARY_PATH"] = str(GANESHA_LIB_DIR)
        with open(self.workdir / "ganesha.stdout", "ab") as out:
            self.proc = self.pod.popen(
                [GANESHA, "-F", "-f", self.conf_path, "-L", self.log_path,
                 "-p", self.workdir / "ganesha.pid"],
                stdout=out, stderr=subprocess.STDOUT, env=env)
        if wait:
            self.wait_serving(self.start_timeout)
        return self

    def wait_serving(self, timeout: float) -> None:
        """Waits (at most `timeout` s) until the ports answer and the export
        mounts, then runs sm-notify; stops everything if it never does."""
        try:
            self.pod.wait_port(self.host, self.nfs_port, timeout=timeout, alive=self.alive)
            if 3 in self.settings().protocols:
                self.pod.wait_port(self.host, self.mnt_port, timeout=timeout,
                                   alive=self.alive)
                self._wait_export(timeout)
        except BaseException:
            self.stop()
            raise
        self._notify()

    def _start_rpcbind(self) -> None:
        with open(self.rpcbind_log_path, "ab") as log:
            # -f: foreground. No -h: the pod's network has only loopback (and
            # Debian's rpcbind 1.2.6 double-frees with "-h 127.0.0.1").
            # The pod's /run (rpcbind.sock, state) is private.
            self.rpcbind = self.pod.popen([RPCBIND, "-f"],
                                          stdout=log, stderr=subprocess.STDOUT)
        self.pod.wait_port("127.0.0.1", 111, timeout=10, alive=self._rpcbind_alive)

    def _rpcbind_alive(self) -> bool:
        return self.rpcbind is not None and self.rpcbind.poll() is None

    def _start_statd(self) -> None:
        """A fresh rpc.statd for every start of Ganesha, as `pando-cluster
        up` runs it (pando_cluster.nsm), its state in the test's
        directory: the hosts the last one monitored become the notify list.
        None without `nsm`, and for a server without NFSv3, whose locks
        need no NSM: either may run beside another server in its pod
        (pnfs_throughput's baseline and probe)."""
        if self.statd is not None:
            terminate(self.statd, 5.0)
            self.statd = None
        prepare_state_dir(self.statd_dir)
        if not self.nsm or 3 not in self.settings().protocols:
            return
        with open(self.statd_log_path, "ab") as log:
            start = log.tell()
            self.statd = self.pod.popen(statd_argv(STATD, self.statd_dir),
                                        stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 10
        while b"Waiting for client connections" not in self.statd_log_path.read_bytes()[start:]:
            if self.statd.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"rpc.statd did not start (see {self.statd_log_path})")
            time.sleep(0.05)

    def _notify(self) -> None:
        """sm-notify once Ganesha serves, as `up` runs it: the NFSv3 hosts
        that held locks reclaim them now, in the grace period.  One still
        retrying a silent host for an earlier start is stopped first."""
        if self.sm_notify is not None:
            terminate(self.sm_notify, 5.0)
            self.sm_notify = None
        if self.statd is None:
            return
        with open(self.workdir / "sm-notify.log", "ab") as log:
            self.sm_notify = self.pod.popen(notify_argv(SM_NOTIFY, self.statd_dir, self.host),
                                            stdout=log, stderr=subprocess.STDOUT)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def _wait_export(self, timeout: float) -> None:
        """Ganesha opens its ports before the export is usable: MNT until it answers."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.root_handle()
                return
            except Exception:
                if not self.alive() or time.monotonic() > deadline:
                    raise
                time.sleep(0.1)

    def root_handle(self) -> bytes:
        sock = self.pod.connect(self.host, self.mnt_port)
        try:
            return mount_root(sock, str(self.export_dir))
        finally:
            sock.close()

    def mount_target(self, address: str = GUEST_ADDR) -> MountTarget:
        """How a kernel client in a qemu guest inside the same pod mounts this export."""
        return MountTarget(address=address, port=self.nfs_port, mountport=self.mnt_port,
                           export3=str(self.export_dir), export4=self.pseudo)

    def client(self) -> Nfs3Setup:
        """An NFSv3 setup client connected (inside the pod) to this server."""
        return Nfs3Setup.over(self.pod.connect(self.host, self.nfs_port))

    def create_files(self, names: list[str], truncate: bool = True) -> list[bytes]:
        """Creates (or reuses) files in the export root; returns their handles."""
        root = self.root_handle()
        c = self.client()
        try:
            return [c.create(root, n, truncate=truncate) for n in names]
        finally:
            c.close()

    def kill9(self) -> None:
        """SIGKILL Ganesha alone (a crash); rpcbind and dbus stay for a restart."""
        assert self.proc is not None
        self.proc.kill()
        self.proc.wait()

    def restart(self) -> "GaneshaServer":
        """Stops Ganesha alone (SIGTERM) if it runs and starts it again."""
        if self.alive():
            self.stop_ganesha()
        return self.start()

    def stop_ganesha(self, timeout: float = 15.0) -> int | None:
        """SIGTERM Ganesha alone; SIGKILL after `timeout`.  Its exit status."""
        return None if self.proc is None else terminate(self.proc, timeout)

    def stop(self, timeout: float = 15.0) -> int | None:
        """SIGTERM Ganesha (then sm-notify, statd, which unregisters from
        rpcbind, rpcbind and dbus) by pid; SIGKILL after `timeout`.  Returns
        Ganesha's exit status (None if it never started)."""
        code = None
        for p in (self.proc, self.sm_notify, self.statd, self.rpcbind, self.dbus_daemon):
            if p is not None:
                status = terminate(p, timeout)
                code = status if p is self.proc else code
        return code

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def __enter__(self) -> "GaneshaServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


@dataclass
class GaneshaVfs(GaneshaServer):
    """Exports `export_dir` (default: workdir/export) with FSAL VFS."""

    def __post_init__(self) -> None:
        super().__post_init__()
        assert self.export_dir is not None
        Path(self.export_dir).mkdir(parents=True, exist_ok=True)

    def fsal(self) -> tuple[str, ...]:
        return ("Name = VFS;",)
