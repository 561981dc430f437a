"""Stock Debian kernels for the end-to-end tests: resolve, download, extract,
cache.

Each kernel we test against is named by a short id ("6.1", "6.12", "7.x")
and comes from one or more Debian suites.  Resolution runs apt against a
*private* sources list and state directory inside the cache (the machine's
own apt configuration is never changed):

  1. `apt-cache madison linux-image-cloud-amd64` lists the metapackage's
     versions per suite; the highest one in the kernel's suites whose
     upstream version has the wanted prefix wins;
  2. `apt-cache depends linux-image-cloud-amd64=<that version>` names the
     ABI package (`linux-image-<abi>-cloud-amd64`);
  3. if that package depends on `linux-binary-<abi>...` and
     `linux-modules-<abi>...` (the split packaging of 7.x), those two are
     the set, else the image package alone is;
  4. `apt-get download` fetches exactly those names (never a pattern), and
     `dpkg-deb -x` extracts them.

The result is recorded in `manifest.json`; once a kernel is there (and its
.debs hash right) nothing touches the network again, so runs work offline.
`--refresh` resolves again.  A lock file serialises parallel workers.

The mirror URI is read at run time from the machine's apt sources (the
entry that serves the `bookworm` suite); no host name is written here.

CLI:  python3 -m pando_testing.kernels fetch [--all | ID...] [--refresh]
      python3 -m pando_testing.kernels list
"""
from __future__ import annotations

import argparse
import contextlib
import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Sequence

META = "linux-image-cloud-amd64"
FLAVOUR = "cloud-amd64"
KEYRING = "/usr/share/keyrings/debian-archive-keyring.gpg"
LISTS_MAX_AGE = 24 * 3600  # re-run `apt-get update` when resolving with older lists


@dataclass(frozen=True)
class KernelSpec:
    id: str                  # the name tests use: kernel_client("6.12")
    suites: tuple[str, ...]  # Debian suites it may come from
    prefix: str              # upstream version prefix it must have ("6.1.", "7.")


KERNELS: dict[str, KernelSpec] = {
    s.id: s for s in (
        KernelSpec("6.1", ("bookworm",), "6.1."),
        KernelSpec("6.12", ("trixie",), "6.12."),
        KernelSpec("7.x", ("sid", "trixie-backports"), "7."),
    )
}
ALL_SUITES = ("bookworm", "trixie", "trixie-backports", "sid")


class KernelUnavailable(RuntimeError):
    """A kernel is neither cached nor fetchable; the message says why and what to do."""


@dataclass(frozen=True)
class Kernel:
    """An extracted kernel: what the initramfs builder and the runner need."""
    id: str
    version: str        # Debian package version, e.g. 6.12.107-1
    release: str        # `uname -r`, e.g. 6.12.107+deb13-cloud-amd64
    root: Path          # the extracted tree (boot/, lib/modules/)
    packages: tuple[str, ...]

    @property
    def vmlinuz(self) -> Path:
        # 6.1/6.12 ship boot/vmlinuz-REL; the split 7.x linux-binary package
        # ships usr/lib/modules/REL/vmlinuz.
        candidates = [self.root / "boot" / f"vmlinuz-{self.release}",
                      self.root / "usr" / "lib" / "modules" / self.release / "vmlinuz",
                      self.root / "lib" / "modules" / self.release / "vmlinuz"]
        return next((p for p in candidates if p.exists()), candidates[0])

    @property
    def modules_dir(self) -> Path:
        for base in (self.root / "lib" / "modules", self.root / "usr" / "lib" / "modules"):
            if (base / self.release).is_dir():
                return base / self.release
        raise FileNotFoundError(f"no modules directory for {self.release} under {self.root}")


def cache_dir() -> Path:
    env = os.environ.get("PANDO_KERNEL_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "pando" / "kernels"


def _say(msg: str) -> None:
    print(f"kernels: {msg}", file=sys.stderr, flush=True)


def mirror_uri() -> str:
    """The URI the machine's apt sources use for the bookworm suite."""
    entries: list[tuple[str, list[str]]] = []
    for f in sorted(Path("/etc/apt/sources.list.d").glob("*.sources")):
        for stanza in re.split(r"\n\s*\n", f.read_text(errors="replace")):
            fields: dict[str, str] = {}
            for line in stanza.splitlines():
                m = re.match(r"^([A-Za-z-]+):\s*(.*)$", line)
                if m:
                    fields[m.group(1).lower()] = m.group(2)
            if "deb" in fields.get("types", "").split() and "uris" in fields:
                entries.append((fields["uris"].split()[0], fields.get("suites", "").split()))
    lists = [Path("/etc/apt/sources.list"),
             *sorted(Path("/etc/apt/sources.list.d").glob("*.list"))]
    for f in lists:
        if not f.exists():
            continue
        for line in f.read_text(errors="replace").splitlines():
            line = re.sub(r"\[[^]]*\]", " ", line.split("#", 1)[0]).split()
            if len(line) >= 3 and line[0] == "deb":
                entries.append((line[1], [line[2]]))
    for uri, suites in entries:
        if "bookworm" in suites:
            return uri.rstrip("/")
    raise KernelUnavailable(
        "cannot find the Debian mirror: no apt source serves the 'bookworm' suite "
        "(/etc/apt/sources.list.d/*.sources or /etc/apt/sources.list)")


def sha256_file(path: Path) -> str:
    """The file's SHA-256 (hex), read a MiB at a time."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


class KernelCache:
    def __init__(self, root: Path | None = None) -> None:
        self.root = Path(root) if root else cache_dir()
        self.apt_dir = self.root / "apt"
        self.debs_dir = self.root / "debs"
        self.manifest_path = self.root / "manifest.json"
        self.apt_warnings: list[str] = []
        self.update_warnings: list[str] = []

    # ---- locking and manifest -------------------------------------------
    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / ".lock", "a+") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(f, fcntl.LOCK_UN)

    def manifest(self) -> dict[str, dict]:
        try:
            return json.loads(self.manifest_path.read_text())
        except (FileNotFoundError, ValueError):
            return {}

    def _save_manifest(self, m: dict[str, dict]) -> None:
        tmp = self.manifest_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(m, indent=2, sort_keys=True) + "\n")
        tmp.replace(self.manifest_path)

    # ---- apt with a private configuration ----------------------------------
    def _apt_opts(self) -> list[str]:
        return [
            "-o", f"Dir::Etc::sourcelist={self.apt_dir / 'sources.list'}",
            "-o", "Dir::Etc::sourceparts=-",
            "-o", f"Dir::State::Lists={self.apt_dir / 'lists'}",
            "-o", f"Dir::Cache={self.apt_dir / 'cache'}",
            "-o", "Acquire::Languages=none",
            "-o", "Acquire::IndexTargets::deb::DEP-11::DefaultEnabled=false",
            "-o", "Acquire::IndexTargets::deb::DEP-11-icons::DefaultEnabled=false",
            "-o", "Acquire::IndexTargets::deb::DEP-11-icons-small::DefaultEnabled=false",
            "-o", "Acquire::IndexTargets::deb::DEP-11-icons-hidpi::DefaultEnabled=false",
            *(["-o", "APT::Sandbox::User=root"] if os.geteuid() == 0 else []),
            "-q",
        ]

    def _apt(self, tool: str, *args: str, cwd: Path | None = None,
             timeout: float = 900, quiet: bool = True) -> str:
        argv = [tool, *self._apt_opts(), *args]
        cp = subprocess.run(argv, cwd=cwd, timeout=timeout, text=True,
                            stdout=subprocess.PIPE if quiet else None,
                            stderr=subprocess.PIPE, env={**os.environ, "LC_ALL": "C"})
        if cp.returncode != 0:
            raise KernelUnavailable(
                f"`{tool} {' '.join(args)}` failed (exit {cp.returncode}):\n"
                f"{cp.stderr.strip()[-2000:]}")
        self.apt_warnings = [ln for ln in cp.stderr.splitlines() if ln.startswith(("W:", "E:"))]
        return cp.stdout or ""

    def _lists_age(self) -> float:
        lists = self.apt_dir / "lists"
        stamps = [p.stat().st_mtime for p in lists.glob("*_InRelease")] if lists.is_dir() else []
        return time.time() - min(stamps) if len(stamps) >= len(ALL_SUITES) else float("inf")

    def update_lists(self, force: bool = False) -> None:
        if not force and self._lists_age() < LISTS_MAX_AGE:
            return
        (self.apt_dir / "lists" / "partial").mkdir(parents=True, exist_ok=True)
        (self.apt_dir / "cache" / "archives" / "partial").mkdir(parents=True, exist_ok=True)
        uri = mirror_uri()
        (self.apt_dir / "sources.list").write_text("".join(
            f"deb [signed-by={KEYRING}] {uri} {suite} main\n" for suite in ALL_SUITES))
        _say(f"apt-get update (private lists for {', '.join(ALL_SUITES)})")
        self._apt("apt-get", "update", quiet=True)
        self.update_warnings = self.apt_warnings

    # ---- resolution --------------------------------------------------------
    def _newer(self, a: str, b: str) -> bool:
        return subprocess.run(["dpkg", "--compare-versions", a, "gt", b]).returncode == 0

    def resolve(self, spec: KernelSpec) -> dict:
        """Names exactly one package set for `spec` from the current lists."""
        best: tuple[str, str] | None = None
        for line in self._apt("apt-cache", "madison", META).splitlines():
            parts = [p.strip() for p in line.split("|")]
            if len(parts) < 3 or parts[0] != META:
                continue
            version, origin = parts[1], parts[2]
            suite = origin.split()[1].split("/")[0] if len(origin.split()) > 1 else ""
            if suite not in spec.suites or not version.startswith(spec.prefix):
                continue
            if best is None or self._newer(version, best[0]):
                best = (version, suite)
        if best is None:
            raise KernelUnavailable(
                f"kernel {spec.id}: no {META} {spec.prefix}* in {'/'.join(spec.suites)}")
        version, suite = best
        deps = self._apt("apt-cache", "depends", "--no-recommends", "--no-suggests",
                         f"{META}={version}")
        abi_re = re.compile(rf"^\s*Depends:\s*(linux-image-(\S+)-{FLAVOUR})\s*$")
        image = abi = None
        for line in deps.splitlines():
            m = abi_re.match(line)
            if m and m.group(1) != META:
                image, abi = m.group(1), m.group(2)
        if image is None:
            raise KernelUnavailable(f"kernel {spec.id}: {META}={version} names no ABI package:\n{deps}")
        release = f"{abi}-{FLAVOUR}"
        image_deps = self._apt("apt-cache", "depends", f"{image}={version}")
        split = [f"linux-binary-{release}", f"linux-modules-{release}"]
        if all(re.search(rf"Depends:\s*{re.escape(p)}\s*$", image_deps, re.M) for p in split):
            packages = split
        else:
            packages = [image]
        return {"id": spec.id, "suite": suite, "version": version, "release": release,
                "packages": [{"name": p, "version": version} for p in packages]}

    # ---- download and extraction -----------------------------------------
    def _deb_path(self, pkg: dict) -> Path | None:
        f = pkg.get("file")
        return self.debs_dir / f if f else None

    def _have_debs(self, entry: dict) -> bool:
        for pkg in entry["packages"]:
            p = self._deb_path(pkg)
            if p is None or not p.exists() or sha256_file(p) != pkg.get("sha256"):
                return False
        return True

    def _download(self, entry: dict) -> None:
        self.debs_dir.mkdir(parents=True, exist_ok=True)
        for pkg in entry["packages"]:
            name, version = pkg["name"], pkg["version"]
            before = set(self.debs_dir.glob("*.deb"))
            _say(f"apt-get download {name}={version}")
            t0 = time.monotonic()
            self._apt("apt-get", "download", f"{name}={version}", cwd=self.debs_dir, quiet=True)
            new = [p for p in set(self.debs_dir.glob("*.deb")) - before if p.name.startswith(name + "_")]
            if not new:  # already there under the same name
                new = sorted(self.debs_dir.glob(f"{name}_*.deb"))
            if len(new) != 1:
                raise KernelUnavailable(f"download of {name} left {len(new)} files: {new}")
            pkg["file"] = new[0].name
            pkg["sha256"] = sha256_file(new[0])
            size = new[0].stat().st_size
            _say(f"  {new[0].name}: {size / 1e6:.1f} MB in {time.monotonic() - t0:.1f} s")

    def _extract(self, entry: dict) -> Path:
        dest = self.root / entry["id"] / entry["release"]
        stamp = dest / ".extracted"
        if stamp.exists():
            return dest
        tmp = dest.with_name(dest.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        for pkg in entry["packages"]:
            _say(f"dpkg-deb -x {pkg['file']}")
            subprocess.run(["dpkg-deb", "-x", str(self._deb_path(pkg)), str(tmp)], check=True)
        (tmp / ".extracted").write_text(json.dumps(entry, indent=2) + "\n")
        shutil.rmtree(dest, ignore_errors=True)
        tmp.replace(dest)
        return dest

    def _kernel(self, entry: dict) -> Kernel:
        k = Kernel(entry["id"], entry["version"], entry["release"],
                   self.root / entry["id"] / entry["release"],
                   tuple(p["name"] for p in entry["packages"]))
        if not k.vmlinuz.exists():
            raise KernelUnavailable(f"kernel {k.id}: {k.vmlinuz} missing after extraction")
        return k

    # ---- the entry point -----------------------------------------------------
    def get(self, kid: str, refresh: bool = False) -> Kernel:
        """The extracted kernel `kid`, downloading it first if it is not cached."""
        if kid not in KERNELS:
            raise KeyError(f"unknown kernel {kid!r}; known: {', '.join(KERNELS)}")
        with self.locked():
            m = self.manifest()
            entry = m.get(kid)
            if entry and not refresh:
                extracted = self.root / kid / entry["release"] / ".extracted"
                if extracted.exists() or self._have_debs(entry):
                    self._extract(entry)
                    return self._kernel(entry)
            try:
                self.update_lists(force=refresh)
                new = self.resolve(KERNELS[kid])
                if entry and entry.get("packages") and [p["name"] for p in entry["packages"]] == \
                        [p["name"] for p in new["packages"]] and self._have_debs(entry) and \
                        entry["version"] == new["version"]:
                    new = entry
                else:
                    try:
                        self._download(new)
                    except KernelUnavailable:
                        # Lists older than the mirror's pool: update once and retry.
                        self.update_lists(force=True)
                        new = self.resolve(KERNELS[kid])
                        self._download(new)
                    new["resolved_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
            except (KernelUnavailable, OSError, subprocess.SubprocessError) as e:
                cached = " (the cached copy is incomplete)" if entry else ""
                said = "".join(f"\n  {w}" for w in self.update_warnings[-6:])
                said = f"\napt-get update said:{said}" if said else ""
                raise KernelUnavailable(
                    f"kernel {kid} is not cached in {self.root}{cached} and cannot be fetched "
                    f"from Debian's mirror: {e}{said}\n"
                    f"Run `python3 -m pando_testing.kernels fetch {kid}` "
                    "where the mirror is reachable, or point PANDO_KERNEL_CACHE at a cache "
                    "that holds it.") from e
            if entry and entry.get("release") != new["release"]:
                shutil.rmtree(self.root / kid / entry["release"], ignore_errors=True)
            m = self.manifest()
            m[kid] = new
            self._save_manifest(m)
            self._prune_debs(m)
            self._extract(new)
            return self._kernel(new)

    def _prune_debs(self, m: dict[str, dict]) -> None:
        keep = {p.get("file") for e in m.values() for p in e["packages"]}
        for p in self.debs_dir.glob("*.deb"):
            if p.name not in keep:
                p.unlink()


def get_kernel(kid: str) -> Kernel:
    return KernelCache().get(kid)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m pando_testing.kernels",
                                 description="Fetch and cache the Debian kernels the e2e tests boot.")
    sub = ap.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("fetch", help="download and extract kernels (default: all)")
    f.add_argument("ids", nargs="*", help=f"kernel ids ({', '.join(KERNELS)})")
    f.add_argument("--all", action="store_true", help="every kernel")
    f.add_argument("--refresh", action="store_true", help="resolve again even when cached")
    sub.add_parser("list", help="show what the cache holds")
    args = ap.parse_args(argv)
    cache = KernelCache()
    if args.cmd == "list":
        m = cache.manifest()
        print(f"cache: {cache.root}")
        for kid in KERNELS:
            e = m.get(kid)
            print(f"  {kid:5} " + (f"{e['release']:32} {e['version']:20} {e['suite']:17} "
                                   + " ".join(p['name'] for p in e['packages']) if e else "(not cached)"))
        return 0
    ids = list(KERNELS) if args.all or not args.ids else args.ids
    rc = 0
    for kid in ids:
        t0 = time.monotonic()
        try:
            k = cache.get(kid, refresh=args.refresh)
        except (KernelUnavailable, KeyError) as e:
            print(f"kernels: {kid}: {e}", file=sys.stderr)
            rc = 1
            continue
        print(f"{kid}: {k.release} ({k.version}) {k.vmlinuz} [{time.monotonic() - t0:.1f} s]")
    return rc


if __name__ == "__main__":
    sys.exit(main())
