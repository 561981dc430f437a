"""Fixtures of the mgr suite: pando-mgr processes on the test's etcd
(one member or three), hand-put presence keys (mgrtest.HandPresence) and
a dashboard to look at in headless Chromium (dashboard_page.Dashboard)."""
from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from dashboard_page import CHROMIUM, Dashboard
from mgrtest import PREFIX, HandPresence, mds_value, osd_value, rebuild_cluster
from pando_testing.etcd import EtcdCluster
from pando_testing.logs import check_clean_exits, log_dir_for
from pando_testing.mgr import MgrProcess
from pando_testing.pod import Pod


@pytest.fixture
def presence(pod: Pod, etcd: EtcdCluster) -> Iterator[Callable[..., HandPresence]]:
    """presence(osd_id) or presence(mds="name"): a started presence key."""
    made: list[HandPresence] = []

    def make(osd_id: int | None = None, mds: str | None = None, ttl: int = 2,
             **value: Any) -> HandPresence:
        if mds is not None:
            key, val = f"{PREFIX}mds/{mds}", mds_value(mds)
        else:
            assert osd_id is not None
            key, val = f"{PREFIX}osd/{osd_id}", osd_value(osd_id, **value)
        p = HandPresence(pod, etcd.client(), key, val, ttl).start()
        made.append(p)
        return p

    yield make
    for p in made:
        p.stop_keepalive()


@pytest.fixture
def mgr_factory(request: pytest.FixtureRequest, pod: Pod, tmp_path: Path,
                etcd: EtcdCluster) -> Iterator[Callable[..., MgrProcess]]:
    yield from _mgr_factory(request, pod, tmp_path, etcd)


@pytest.fixture
def mgr3_factory(request: pytest.FixtureRequest, pod: Pod, tmp_path: Path,
                 etcd3: EtcdCluster) -> Iterator[Callable[..., MgrProcess]]:
    yield from _mgr_factory(request, pod, tmp_path, etcd3)


def _mgr_factory(request: pytest.FixtureRequest, pod: Pod, tmp_path: Path,
                 etcd: EtcdCluster) -> Iterator[Callable[..., MgrProcess]]:
    """mgr_factory(**MgrProcess fields): mgr-a on 7480, mgr-b on 7481...,
    lease 2 s, presence grace 1 s; at teardown each must stop cleanly on
    SIGTERM unless the test killed it."""
    made: list[MgrProcess] = []

    def make(start: bool = True, **kw: Any) -> MgrProcess:
        i = len(made)
        kw.setdefault("name", f"mgr-{chr(ord('a') + i)}")
        kw.setdefault("lease", 2)
        # Tests that stop etcd expect the map to catch up within seconds of
        # its return: a short presence grace (test_presence_grace.py says why
        # there is one).
        kw["extra_args"] = ["--presence-grace", "1", *kw.get("extra_args", [])]
        m = MgrProcess(pod, tmp_path / "mgr", etcd.endpoints, index=i, **kw)
        made.append(m)
        if start:
            m.start()
        return m

    yield make
    check_clean_exits(request, {m.name: m.stop() for m in made if m.alive()},
                      [m.log_path for m in made], "pando-mgr")




@pytest.fixture
def dashboard(request: pytest.FixtureRequest, pod: Pod, tmp_path: Path,
              mgr_factory: Callable[..., MgrProcess],
              presence: Callable[..., HandPresence]) -> Dashboard:
    """A mgr over OSDs 1-3 and metadata manager mds-a, all up; skips the
    test where chromium is not installed."""
    if not Path(CHROMIUM).exists():
        pytest.skip("chromium is not installed")
    mgr, api, _, fsals = rebuild_cluster(mgr_factory, presence, tmp_path)
    return Dashboard(pod, tmp_path, log_dir_for(request), mgr, api, fsals)
