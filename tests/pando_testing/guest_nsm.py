"""The userland an NFSv3 client needs to lock, for kernel-client VMs.

A Linux NFSv3 client's lock manager (lockd, in the kernel) registers with
the local rpcbind and asks the local rpc.statd to monitor a server
(SM_MON) before it sends that server a lock; without them every lock fails
with ENOLCK.  The guests have only busybox, so this machine's Debian
rpcbind and rpc.statd go into an archive of their own, with the shared
libraries `ldd` lists, the dynamic loader, and the few /etc files they
read.  tests/e2e/guest/lib.sh starts them (nsm_up) when the VM is made
with `Vm(nfs3_locks=True)`.

The archive is built once and cached in the build directory under the
digest of everything in it; initramfs.build_initrd appends it between the
kernel's base archive and the per-test one.
"""
from __future__ import annotations

import functools
import hashlib
import os
import re
import subprocess
from pathlib import Path

from .initramfs import CpioWriter
from .pod import build_dir

BINARIES = {"sbin/rpcbind": Path("/usr/sbin/rpcbind"),
            "sbin/rpc.statd": Path("/usr/sbin/rpc.statd")}
NETCONFIG = Path("/etc/netconfig")   # libtirpc's transports (udp, tcp, udp6, tcp6)

# rpcbind drops root for Debian's `_rpc` (built with --with-rpcuser=_rpc) and
# exits when the user is unknown; statd stays root (it owns /var/lib/nfs).
ETC = {
    "etc/passwd": "root:x:0:0:root:/root:/bin/sh\n_rpc:x:100:65534::/run/rpcbind:/bin/false\n",
    "etc/group": "root:x:0:\nnogroup:x:65534:\n",
    # No DNS in the guest: names resolve from /etc/hosts alone, at once.
    "etc/nsswitch.conf": "passwd: files\ngroup: files\nhosts: files\n",
    "etc/hosts": "127.0.0.1 localhost\n",
    # rpcbind looks its port up by service name; without this it listens on
    # its unix socket alone, and the kernel's lockd finds no statd.
    "etc/services": "sunrpc 111/tcp portmapper\nsunrpc 111/udp portmapper\n",
}
DIRS = ("run/rpcbind", "var/lib/nfs/sm", "var/lib/nfs/sm.bak")
# libtirpc registers with rpcbind through /var/run/rpcbind.sock; rpcbind
# makes /run/rpcbind.sock (Debian's /var/run is a link to /run).
SYMLINKS = {"var/run": "../run"}

_LDD_LINE = re.compile(r"^\s*(?:\S+ => )?(/\S+) \(0x[0-9a-f]+\)$")


def shared_libraries(binary: Path) -> list[Path]:
    """The absolute paths `ldd` prints for `binary` (libraries and the
    dynamic loader), as the binary names them."""
    cp = subprocess.run(["ldd", str(binary)], capture_output=True, text=True, check=True)
    return [Path(m.group(1)) for line in cp.stdout.splitlines()
            if (m := _LDD_LINE.match(line))]


def _contents() -> dict[str, tuple[bytes, int]]:
    files: dict[str, tuple[bytes, int]] = {}
    for dest, src in BINARIES.items():
        if not src.exists():
            raise FileNotFoundError(f"{src} missing: install rpcbind and nfs-common "
                                    f"(ci/install-deps)")
        files[dest] = (src.read_bytes(), 0o755)
        for lib in shared_libraries(src):
            files[str(lib).lstrip("/")] = (lib.read_bytes(), 0o755)
    files["etc/netconfig"] = (NETCONFIG.read_bytes(), 0o644)
    files.update({name: (text.encode(), 0o644) for name, text in ETC.items()})
    return files


@functools.lru_cache(maxsize=None)
def nsm_archive() -> Path:
    """The cached cpio archive (built on first use, and again whenever a
    binary, a library or a file in it changes)."""
    files = _contents()
    digest = hashlib.sha256(repr((DIRS, SYMLINKS)).encode())
    for name in sorted(files):
        digest.update(name.encode() + b"\0" + files[name][0])
    path = build_dir() / "e2e-guest" / f"nsm-{digest.hexdigest()[:16]}.cpio"
    if path.exists():
        return path
    w = CpioWriter()
    dirs = {"/".join(parts[:i]) for name in [*files, *(f"{d}/." for d in DIRS)]
            for parts in [name.split("/")[:-1]] for i in range(1, len(parts) + 1)}
    for d in sorted(dirs):  # parents first; the base archive's are declared again, harmlessly
        w.dir(d)
    for name, (data, mode) in sorted(files.items()):
        w.file(name, data, mode)
    for name, target in SYMLINKS.items():
        w.symlink(name, target)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(w.finish())
    tmp.replace(path)
    return path
