"""Stock NFS-Ganesha 4.3 with FSAL VFS, inside a Pod: the NFSv3 baseline
the OSD target is measured against, and the server later kernel-client
tests reuse.

Inside the pod it starts its own rpcbind (Ganesha registers NFS and MOUNT
with it; /run is private to the pod), then `ganesha.nfsd -F` exporting one
directory over TCP: NFSv3 only by default (the benchmark baseline), or NFSv3
and NFSv4.1 with `protocols=(3, 4)` (the kernel-client tests).  NFSv4.2 is
left off on purpose: Ganesha 4.3's READ_PLUS returns wrong data to 6.12+
clients (see shared/notes/kernel-client.md).  Everything is stopped by pid.
"""
from __future__ import annotations

import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from .nfs3_setup import Nfs3Setup, mount_root
from .pod import Pod
from .vm import GUEST_ADDR, MountTarget

GANESHA = "/usr/bin/ganesha.nfsd"
RPCBIND = "/usr/sbin/rpcbind"
VFS_PLUGINS_DIR = "/usr/lib/x86_64-linux-gnu/ganesha"

CONFIG_TEMPLATE = """\
NFS_CORE_PARAM {{
    NFS_Port = {nfs_port};
    MNT_Port = {mnt_port};
    NFS_Protocols = {protocols};
    Enable_NLM = false;
    Enable_RQUOTA = false;
    Enable_UDP = false;
    Plugins_Dir = "{plugins_dir}";
}}
NFSV4 {{
    Graceless = true;
    RecoveryRoot = "{workdir}/recovery";
    Minor_Versions = {minor_versions};
    Only_Numeric_Owners = true;
}}
NFS_KRB5 {{
    Active_krb5 = false;
}}
LOG {{
    Default_Log_Level = {log_level};
}}
EXPORT {{
    Export_Id = 1;
    Path = "{export_dir}";
    Pseudo = "{pseudo}";
    Protocols = {protocols};
    Transports = TCP;
    Access_Type = {access_type};
    Squash = No_Root_Squash;
    SecType = sys, none;
    FSAL {{
        Name = VFS;
    }}
}}
"""


@dataclass
class GaneshaVfs:
    """NFS-Ganesha exporting `export_dir` (default: workdir/export) with FSAL VFS."""

    pod: Pod
    workdir: Path
    export_dir: Path | None = None
    host: str = "127.0.0.1"
    nfs_port: int = 2049
    mnt_port: int = 20048
    log_level: str = "EVENT"
    protocols: tuple[int, ...] = (3,)        # (3, 4) adds NFSv4.x
    minor_versions: tuple[int, ...] = (1,)   # NFSv4 minor versions when 4 is served
    pseudo: str = "/pando-baseline"          # the export's NFSv4 pseudo path
    access_type: str = "RW"                  # "RO" for a read-only export
    start_timeout: float = 30.0
    rpcbind: subprocess.Popen[bytes] | None = field(default=None, init=False)
    proc: subprocess.Popen[bytes] | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        self.workdir = Path(self.workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        if self.export_dir is None:
            self.export_dir = self.workdir / "export"
        self.export_dir.mkdir(parents=True, exist_ok=True)
        (self.workdir / "recovery").mkdir(exist_ok=True)

    @property
    def conf_path(self) -> Path:
        return self.workdir / "ganesha.conf"

    @property
    def log_path(self) -> Path:
        return self.workdir / "ganesha.log"

    @property
    def rpcbind_log_path(self) -> Path:
        return self.workdir / "rpcbind.log"

    @property
    def nfs_addr(self) -> str:
        return f"{self.host}:{self.nfs_port}"

    def write_config(self) -> None:
        self.conf_path.write_text(CONFIG_TEMPLATE.format(
            nfs_port=self.nfs_port, mnt_port=self.mnt_port, plugins_dir=VFS_PLUGINS_DIR,
            workdir=self.workdir, export_dir=self.export_dir, log_level=self.log_level,
            protocols=", ".join(map(str, self.protocols)),
            minor_versions=", ".join(map(str, self.minor_versions)),
            pseudo=self.pseudo, access_type=self.access_type))

    def start(self) -> "GaneshaVfs":
        assert self.proc is None, "already started"
        with open(self.rpcbind_log_path, "ab") as log:
            # -f: foreground. No -h: the pod's network has only loopback (and
            # Debian's rpcbind 1.2.6 double-frees with "-h 127.0.0.1").
            # The pod's /run (rpcbind.sock, state) is private.
            self.rpcbind = self.pod.popen([RPCBIND, "-f"],
                                          stdout=log, stderr=subprocess.STDOUT)
        self.pod.wait_port("127.0.0.1", 111, timeout=10, alive=self._rpcbind_alive)
        self.write_config()
        with open(self.workdir / "ganesha.stdout", "ab") as out:
            self.proc = self.pod.popen(
                [GANESHA, "-F", "-f", self.conf_path, "-L", self.log_path,
                 "-p", self.workdir / "ganesha.pid"],
                stdout=out, stderr=subprocess.STDOUT)
        try:
            self.pod.wait_port(self.host, self.nfs_port, timeout=self.start_timeout,
                               alive=self.alive)
            if 3 in self.protocols:
                self.pod.wait_port(self.host, self.mnt_port, timeout=self.start_timeout,
                                   alive=self.alive)
                self._wait_export()
        except BaseException:
            self.stop()
            raise
        return self

    def _rpcbind_alive(self) -> bool:
        return self.rpcbind is not None and self.rpcbind.poll() is None

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def _wait_export(self) -> None:
        """Ganesha opens its ports before the export is usable: MNT until it answers."""
        deadline = time.monotonic() + self.start_timeout
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
        versions = (("v3",) if 3 in self.protocols else ()) + \
            tuple(f"v4.{m}" for m in self.minor_versions if 4 in self.protocols)
        return MountTarget(address=address, port=self.nfs_port, mountport=self.mnt_port,
                           export3=str(self.export_dir), export4=self.pseudo, versions=versions)

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

    def stop(self, timeout: float = 15.0) -> int | None:
        """SIGTERM Ganesha (then rpcbind) by pid; SIGKILL after `timeout`.
        Returns Ganesha's exit status (None if it never started)."""
        code = None
        for p in (self.proc, self.rpcbind):
            if p is None:
                continue
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(timeout)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
            if p is self.proc:
                code = p.returncode
        return code

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def __enter__(self) -> "GaneshaVfs":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
