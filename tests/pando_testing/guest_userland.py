"""Host binaries for kernel-client guests, which have only busybox: each
archive holds some of this machine's Debian daemons, the shared libraries
`ldd` lists for them, the dynamic loader and the /etc files they read
(guest_nsm.py: rpcbind and rpc.statd; guest_gss.py: rpc.gssd).

An archive is built once and cached in the build directory under the
digest of everything in it; initramfs.build_initrd appends it between the
kernel's base archive and the per-test one.
"""
from __future__ import annotations

import hashlib
import os
import re
import subprocess
from pathlib import Path
from typing import Mapping

from .initramfs import CpioWriter
from .pod import build_dir

NETCONFIG = Path("/etc/netconfig")   # libtirpc's transports (udp, tcp, udp6, tcp6)

# What RPC programs in a guest need to resolve names: files alone (there
# is no DNS), and rpcbind's port by service name, which both rpcbind and
# libtirpc's clients look up (without it a client finds no server:
# "Unknown host", even for an address).
NAME_SERVICE_ETC = {
    "etc/nsswitch.conf": "passwd: files\ngroup: files\nhosts: files\n",
    "etc/hosts": "127.0.0.1 localhost\n",
    "etc/services": "sunrpc 111/tcp portmapper\nsunrpc 111/udp portmapper\n",
}

_LDD_LINE = re.compile(r"^\s*(?:\S+ => )?(/\S+) \(0x[0-9a-f]+\)$")


def shared_libraries(binary: Path) -> list[Path]:
    """The absolute paths `ldd` prints for `binary` (libraries and the
    dynamic loader), as the binary names them."""
    cp = subprocess.run(["ldd", str(binary)], capture_output=True, text=True, check=True)
    return [Path(m.group(1)) for line in cp.stdout.splitlines()
            if (m := _LDD_LINE.match(line))]


def _contents(binaries: Mapping[str, Path], etc: Mapping[str, str],
              package: str) -> dict[str, tuple[bytes, int]]:
    files: dict[str, tuple[bytes, int]] = {}
    for dest, src in binaries.items():
        if not src.exists():
            raise FileNotFoundError(f"{src} missing: install {package} (ci/install-deps)")
        files[dest] = (src.read_bytes(), 0o755)
        for lib in shared_libraries(src):
            files[str(lib).lstrip("/")] = (lib.read_bytes(), 0o755)
    files["etc/netconfig"] = (NETCONFIG.read_bytes(), 0o644)
    files.update({name: (text.encode(), 0o644) for name, text in etc.items()})
    return files


def userland_archive(kind: str, binaries: Mapping[str, Path], etc: Mapping[str, str],
                     dirs: tuple[str, ...], symlinks: Mapping[str, str], package: str) -> Path:
    """The cached cpio archive `kind` (built on first use, and again
    whenever a binary, a library or a file in it changes); `package` is
    what to install when a binary is missing."""
    files = _contents(binaries, etc, package)
    digest = hashlib.sha256(repr((dirs, sorted(symlinks.items()))).encode())
    for name in sorted(files):
        digest.update(name.encode() + b"\0" + files[name][0])
    path = build_dir() / "e2e-guest" / f"{kind}-{digest.hexdigest()[:16]}.cpio"
    if path.exists():
        return path
    w = CpioWriter()
    parents = {"/".join(parts[:i]) for name in [*files, *(f"{d}/." for d in dirs)]
               for parts in [name.split("/")[:-1]] for i in range(1, len(parts) + 1)}
    for d in sorted(parents):  # parents first; the base archive's are declared again, harmlessly
        w.dir(d)
    for name, (data, mode) in sorted(files.items()):
        w.file(name, data, mode)
    for name, target in symlinks.items():
        w.symlink(name, target)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(w.finish())
    tmp.replace(path)
    return path
