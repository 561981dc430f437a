"""The mgr's HTTP API (mgr/README.md): every route, answers to bad input,
redirects from followers, and /metrics."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import pytest
from mgrtest import HandPresence, write_seed

from pando_testing.mgr import MgrApi, MgrApiError, MgrProcess

Factory = Callable[..., Any]


def _cluster(mgr_factory: Factory, presence: Factory, tmp_path: Path,
             ids: tuple[int, ...] = (1, 2, 3)) -> tuple[MgrProcess, MgrApi, list[HandPresence]]:
    seed = write_seed(tmp_path / "cluster.conf", list(ids))
    pres = [presence(i) for i in ids]
    presence(mds="mds-a")
    mgr = mgr_factory(seed=seed)
    api = mgr.api()
    api.wait_for(lambda a: a.osd_states() == {i: (True, True) for i in ids}, timeout=15,
                 what="all osds up")
    return mgr, api, pres


def test_status_says_health_ok_with_every_osd_up(mgr_factory: Factory, presence: Factory,
                                                 tmp_path: Path) -> None:
    _, api, _ = _cluster(mgr_factory, presence, tmp_path)
    s = api.wait_for(lambda a: (st := a.status())["etcd"]["members"] and st, timeout=15,
                     what="etcd members known")
    assert s["health"] == "HEALTH_OK", s["checks"]
    assert s["osds"] == {"total": 3, "up": 3, "in": 3}
    assert s["leader"] == "mgr-a"
    assert s["capacity"] == {"total": 3 * 10**9, "used": 3 * 4 * 10**8, "free": 3 * 6 * 10**8}
    assert s["clients"] == 2
    assert s["etcd"]["quorum"] is True
    assert "stale" not in s
