"""Ganesha's private dbus bus (layout and cluster status, recalls,
exports, grace) answers root only: any other local user of the manager's
host could recall every layout or remove the export."""
from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from pando_testing.mds import PandoMds

INTROSPECT = ["dbus-send", "--system", "--print-reply", "--dest=org.ganesha.nfsd",
              "/org/ganesha/nfsd/admin", "org.freedesktop.DBus.Introspectable.Introspect"]
# A user the host knows: dbus-daemon refuses a uid without a passwd entry.
AS_USER = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]


@pytest.fixture
def mds(mds_factory: Callable[..., PandoMds]) -> PandoMds:
    return mds_factory()


def test_root_drives_ganesha_over_dbus(mds: PandoMds) -> None:
    cp = mds.pod.run(INTROSPECT, check=False, env={**os.environ, **mds.dbus_env()},
                     timeout=30)
    assert cp.returncode == 0, cp.stderr
    assert "org.ganesha.nfsd.admin" in cp.stdout


@contextmanager
def traversable(path: Path) -> Iterator[None]:
    """Every directory above path searchable by others for a while (the
    test's are 0700), so that only the bus's policy stands in the way."""
    dirs = [d for d in path.parents if d != Path("/")]
    modes = {d: d.stat().st_mode & 0o7777 for d in dirs}
    try:
        for d, m in modes.items():
            d.chmod(m | 0o001)
        yield
    finally:
        for d, m in modes.items():
            d.chmod(m)


def test_another_local_user_cannot_reach_ganesha_over_dbus(mds: PandoMds) -> None:
    with traversable(mds.dbus_socket):
        cp = mds.pod.run([*AS_USER, *INTROSPECT], check=False,
                         env={**os.environ, **mds.dbus_env()}, timeout=30)
    assert cp.returncode != 0
    assert "org.ganesha.nfsd.admin" not in cp.stdout
    assert "Permission denied" not in cp.stderr, "the socket itself was out of reach"
