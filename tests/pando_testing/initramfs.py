"""Initramfs images for the kernel clients, written in plain Python.

An image is concatenated newc cpio archives (the kernel unpacks them in
order, later files replacing earlier ones):

* the *base* archive, built once per kernel and cached next to it:
  busybox-static, /dev/console, and the kernel modules the tests need
  (virtio network, the NFS client, the files and flexfiles layout drivers),
  decompressed, with `/lib/modules/load.list` giving the load order
  (dependencies first, from each module's `depends=` modinfo field; Debian's
  packages ship no modules.dep);
* cached *layers* a VM asks for, such as the NFSv3 lock client's userland
  (guest_nsm.py);
* a small *per-test* archive: `/init`, the guest library and the scenario
  script.  Changing a guest script never rebuilds the base archive.

No root-only tools are used: device nodes and ownership live only in the
cpio headers.
"""
from __future__ import annotations

import hashlib
import io
import lzma
import os
import shutil
import struct
import subprocess
from pathlib import Path
from typing import Iterable

from .kernels import Kernel

BUSYBOX = Path("/bin/busybox")

# What the guest loads; dependencies are added and ordered automatically.
# A root that is not a module file is assumed built into the kernel
# (virtio is built into 6.12 and 7.x; 7.x ships no modules.builtin).
MODULE_ROOTS = (
    "virtio_pci", "virtio_net",
    "nfsv3", "nfsv4", "nfs_layout_nfsv41_files", "nfs_layout_flexfiles",
    # Kerberos mounts: the GSS mechanism, and the ciphers it asks the crypto
    # API for by name, which no modprobe in the guest would load.
    "rpcsec_gss_krb5", "cts", "krb5enc",
)

BASE_FORMAT = 1  # bump when the base archive's layout changes


# ---- newc cpio -----------------------------------------------------------

S_IFDIR, S_IFREG, S_IFLNK, S_IFCHR = 0o040000, 0o100000, 0o120000, 0o020000


class CpioWriter:
    """Writes a newc ("070701") archive: what the kernel's initramfs unpacker reads."""

    def __init__(self) -> None:
        self.buf = io.BytesIO()
        self.ino = 1
        self.names: set[str] = set()

    def _entry(self, name: str, mode: int, data: bytes = b"", nlink: int = 1,
               rdev: tuple[int, int] = (0, 0), mtime: int = 0) -> None:
        name = name.lstrip("/")
        if name in self.names:
            raise ValueError(f"duplicate cpio entry {name}")
        self.names.add(name)
        encoded = name.encode() + b"\0"
        fields = (self.ino, mode, 0, 0, nlink, mtime, len(data), 0, 0,
                  rdev[0], rdev[1], len(encoded), 0)
        self.ino += 1
        hdr = b"070701" + b"".join(b"%08X" % f for f in fields)
        self.buf.write(hdr + encoded)
        self._pad()
        self.buf.write(data)
        self._pad()

    def _pad(self) -> None:
        self.buf.write(b"\0" * (-self.buf.tell() % 4))

    def dir(self, name: str, mode: int = 0o755) -> None:
        self._entry(name, S_IFDIR | mode, nlink=2)

    def file(self, name: str, data: bytes, mode: int = 0o644) -> None:
        self._entry(name, S_IFREG | mode, data)

    def symlink(self, name: str, target: str) -> None:
        self._entry(name, S_IFLNK | 0o777, target.encode())

    def chardev(self, name: str, major: int, minor: int, mode: int = 0o600) -> None:
        self._entry(name, S_IFCHR | mode, rdev=(major, minor))

    def finish(self) -> bytes:
        self.ino = 0
        self._entry("TRAILER!!!", 0, nlink=1)
        self.buf.write(b"\0" * (-self.buf.tell() % 512))
        return self.buf.getvalue()


def read_cpio(data: bytes) -> dict[str, tuple[int, bytes]]:
    """name -> (mode, data) for every entry of one or more concatenated
    newc archives (later entries win, as in the kernel).  For tests."""
    out: dict[str, tuple[int, bytes]] = {}
    pos = 0
    while pos + 110 <= len(data):
        if data[pos:pos + 6] != b"070701":
            if data[pos:pos + 4] == b"\0\0\0\0":
                pos += 4
                continue
            raise ValueError(f"bad cpio magic at {pos}")
        f = [int(data[pos + 6 + 8 * i: pos + 14 + 8 * i], 16) for i in range(13)]
        mode, size, namesize = f[1], f[6], f[11]
        pos += 110
        name = data[pos:pos + namesize - 1].decode()
        pos += namesize + (-(110 + namesize) % 4)
        body = data[pos:pos + size]
        pos += size + (-size % 4)
        if name != "TRAILER!!!":
            out[name] = (mode, body)
    return out


# ---- kernel modules --------------------------------------------------------

def module_name(path: Path) -> str:
    base = path.name.split(".ko", 1)[0]
    return base.replace("-", "_")


def read_module(path: Path) -> bytes:
    raw = path.read_bytes()
    if path.name.endswith(".ko.xz"):
        return lzma.decompress(raw)
    if path.name.endswith(".ko.zst"):
        return subprocess.run(["zstd", "-dc", str(path)], check=True, capture_output=True).stdout
    if path.name.endswith(".ko.gz"):
        import gzip
        return gzip.decompress(raw)
    return raw


def modinfo(elf: bytes) -> dict[str, list[str]]:
    """Fields of a module's .modinfo section (key -> values)."""
    if elf[:4] != b"\x7fELF" or elf[4] != 2:
        raise ValueError("not a 64-bit ELF module")
    shoff, = struct.unpack_from("<Q", elf, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", elf, 0x3A)

    def sect(i: int) -> tuple[int, int, int]:
        name, _type, _flags, _addr, off, size = struct.unpack_from("<IIQQQQ", elf, shoff + i * shentsize)
        return name, off, size

    _, stroff, _ = sect(shstrndx)
    for i in range(shnum):
        name_off, off, size = sect(i)
        end = elf.index(b"\0", stroff + name_off)
        if elf[stroff + name_off:end] == b".modinfo":
            fields: dict[str, list[str]] = {}
            for item in elf[off:off + size].split(b"\0"):
                if b"=" in item:
                    k, v = item.decode(errors="replace").split("=", 1)
                    fields.setdefault(k, []).append(v)
            return fields
    return {}


def module_index(modules_dir: Path) -> dict[str, Path]:
    index: dict[str, Path] = {}
    for p in (modules_dir / "kernel").rglob("*.ko*"):
        index.setdefault(module_name(p), p)
    return index


def builtin_modules(modules_dir: Path) -> set[str]:
    f = modules_dir / "modules.builtin"
    if not f.exists():
        return set()
    return {module_name(Path(line.strip())) for line in f.read_text().splitlines() if line.strip()}


def load_order(modules_dir: Path, roots: Iterable[str]) -> list[tuple[str, bytes]]:
    """(name, decompressed .ko) for `roots` and their dependencies, each after
    everything it depends on.  Roots that are not module files are taken to be
    built in and skipped; a *dependency* that cannot be found is an error."""
    index = module_index(modules_dir)
    builtin = builtin_modules(modules_dir)
    order: list[tuple[str, bytes]] = []
    done: set[str] = set()
    visiting: set[str] = set()

    def visit(name: str, required: bool) -> None:
        name = name.replace("-", "_")
        if name in done:
            return
        if name in visiting:
            raise ValueError(f"module dependency cycle at {name}")
        if name not in index:
            if required and name not in builtin:
                raise FileNotFoundError(f"module {name} not found under {modules_dir}")
            done.add(name)
            return
        visiting.add(name)
        elf = read_module(index[name])
        for dep in ",".join(modinfo(elf).get("depends", [""])).split(","):
            if dep:
                visit(dep, required=True)
        visiting.discard(name)
        done.add(name)
        order.append((name, elf))

    for r in roots:
        visit(r, required=False)
    return order


# ---- images -----------------------------------------------------------------

def _busybox() -> bytes:
    if not BUSYBOX.exists():
        raise FileNotFoundError(f"{BUSYBOX} missing: install busybox-static (ci/install-deps)")
    return BUSYBOX.read_bytes()


def base_archive(kernel: Kernel, roots: Iterable[str] = MODULE_ROOTS) -> Path:
    """The cached base archive for `kernel` (built on first use)."""
    roots = tuple(roots)
    bb = _busybox()
    key = hashlib.sha256(repr((BASE_FORMAT, kernel.release, roots)).encode()
                         + hashlib.sha256(bb).digest()).hexdigest()[:16]
    path = kernel.root / f"initrd-base-{key}.cpio"
    if path.exists():
        return path
    w = CpioWriter()
    for d in ("bin", "sbin", "dev", "proc", "sys", "tmp", "run", "mnt", "etc",
              "lib", "lib/modules", "pando"):
        w.dir(d)
    w.chardev("dev/console", 5, 1)
    w.chardev("dev/null", 1, 3, 0o666)
    w.file("bin/busybox", bb, 0o755)
    w.symlink("bin/sh", "busybox")
    names = []
    for name, elf in load_order(kernel.modules_dir, roots):
        w.file(f"lib/modules/{name}.ko", elf)
        names.append(name)
    w.file("lib/modules/load.list", ("\n".join(names) + "\n").encode())
    w.file("etc/pando-kernel", f"{kernel.id} {kernel.release} {kernel.version}\n".encode())
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    tmp.write_bytes(w.finish())
    tmp.replace(path)
    for old in kernel.root.glob("initrd-base-*.cpio"):
        if old != path:
            old.unlink(missing_ok=True)
    return path


def scenario_archive(files: dict[str, tuple[bytes, int]]) -> bytes:
    """A small archive of `path -> (data, mode)` (parent directories added)."""
    w = CpioWriter()
    dirs: set[str] = set()
    for name in sorted(files):
        parts = name.strip("/").split("/")[:-1]
        for i in range(1, len(parts) + 1):
            d = "/".join(parts[:i])
            if d not in dirs:
                dirs.add(d)
    # Directories that the base archive already has are re-declared harmlessly.
    for d in sorted(dirs):
        w.dir(d)
    for name, (data, mode) in sorted(files.items()):
        w.file(name, data, mode)
    return w.finish()


def build_initrd(kernel: Kernel, out: Path, files: dict[str, tuple[bytes, int]],
                 roots: Iterable[str] = MODULE_ROOTS, layers: Iterable[Path] = ()) -> Path:
    """Writes base + layers + per-test archive to `out`."""
    with open(out, "wb") as f:
        for archive in (base_archive(kernel, roots), *layers):
            with open(archive, "rb") as a:
                shutil.copyfileobj(a, f)
        f.write(scenario_archive(files))
    return out
