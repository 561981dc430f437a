"""Where the binaries and the cluster directory are."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

FSAL_LIBRARY = "libfsalpando.so"
# Where the Debian packages (ci/pando-debs) put the binaries and the FSAL:
# Ganesha's plug-in directory, as Debian's nfs-ganesha-vfs has it.
INSTALLED_BIN_DIR = Path("/usr/bin")
INSTALLED_FSAL_DIR = Path("/usr/lib/x86_64-linux-gnu/ganesha")


def repo_root() -> Path:
    """The source tree this package was installed from (editable install)."""
    return Path(__file__).resolve().parents[2]


def installed() -> bool:
    """Whether this package runs from a Debian package (no source tree above
    it, no $PANDO_BUILD_DIR): binaries and the FSAL are then the installed ones."""
    return "PANDO_BUILD_DIR" not in os.environ and not (repo_root() / "CMakeLists.txt").exists()


def build_dir() -> Path:
    env = os.environ.get("PANDO_BUILD_DIR")
    return Path(env) if env else repo_root() / "build"


def built(*parts: str) -> Path:
    """A file the build makes, under the build directory."""
    path = build_dir().joinpath(*parts)
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing: run ci/build (or cluster/up) first")
    return path


def binary(name: str) -> Path:
    """A built binary: pando-osd and pando-osd-tool live in build/osd-target
    (installed: in /usr/bin)."""
    if installed():
        path = INSTALLED_BIN_DIR / name
        if not path.exists():
            raise FileNotFoundError(f"{path} is missing: install the pando-osd package")
        return path
    return built("osd-target", name)


def fsal_dir() -> Path:
    """Ganesha's Plugins_Dir: the build tree's folder holding libfsalpando.so
    (installed: Ganesha's own)."""
    if installed():
        if not (INSTALLED_FSAL_DIR / FSAL_LIBRARY).exists():
            raise FileNotFoundError(f"{INSTALLED_FSAL_DIR / FSAL_LIBRARY} is missing: install the "
                                    f"pando-mds package, or `up --no-mds` for the OSDs alone")
        return INSTALLED_FSAL_DIR
    path = build_dir() / "ganesha-fsal" / "fsal"
    if not (path / FSAL_LIBRARY).exists():
        raise FileNotFoundError(f"{path / FSAL_LIBRARY} is missing: run ci/build (or "
                                f"cluster/up) first, or `up --no-mds` for the OSDs alone")
    return path


def system_binary(name: str) -> Path:
    """A distribution binary (ganesha.nfsd, rpcbind, dbus-daemon, dbus-send);
    /usr/sbin is searched too because root's PATH is not everyone's."""
    found = shutil.which(name, path=f"{os.environ.get('PATH', '')}:/usr/sbin:/sbin")
    if not found:
        raise FileNotFoundError(f"{name} is not installed: run ci/install-deps (or cluster/up)")
    return Path(found)


def default_cluster_dir() -> Path:
    """$PANDO_CLUSTER_DIR, else ~/.pando-cluster (per user: no root needed)."""
    env = os.environ.get("PANDO_CLUSTER_DIR")
    return Path(env) if env else Path.home() / ".pando-cluster"
