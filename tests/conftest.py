"""Fixtures shared by every suite: a private namespace, a cluster key, and
pando-osd targets in it.  When a test fails, its daemons' logs are copied
to build/test-logs/<test> and their tails shown in the report."""
from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterator

import pytest

from pando_testing.daemons import OsdProcess
from pando_testing.keys import ClusterKey, write_cluster_key
from pando_testing.logs import FAILED_KEY as _failed_key
from pando_testing.logs import keep_logs as _keep_logs
from pando_testing.pod import Pod


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):
    rep = yield
    item.stash.setdefault(_failed_key, False)
    if rep.failed:
        item.stash[_failed_key] = True
    return rep


@pytest.fixture
def pod() -> Iterator[Pod]:
    with Pod() as p:
        yield p


@pytest.fixture
def cluster_key(tmp_path: Path) -> ClusterKey:
    return write_cluster_key(tmp_path / "cluster.key", key_id=1)


@pytest.fixture
def osd_factory(request: pytest.FixtureRequest, pod: Pod, tmp_path: Path,
                cluster_key: ClusterKey) -> Iterator[Callable[..., OsdProcess]]:
    """Makes formatted, started targets; at teardown each must stop cleanly
    on SIGTERM (exit 0) unless the test killed it."""
    made: list[OsdProcess] = []

    def make(osd_id: int = 1, start: bool = True, **kw: object) -> OsdProcess:
        osd = OsdProcess(pod, tmp_path / "osds", cluster_key, osd_id=osd_id, **kw)  # type: ignore[arg-type]
        osd.format()
        made.append(osd)
        if start:
            osd.start()
        return osd

    yield make
    codes = {o.osd_id: o.stop() for o in made if o.alive()}
    _keep_logs(request, [o.log_path for o in made])
    bad = {i: c for i, c in codes.items() if c != 0}
    assert not bad, f"pando-osd did not exit cleanly on SIGTERM: {bad}"


@pytest.fixture
def osd(osd_factory: Callable[..., OsdProcess]) -> OsdProcess:
    return osd_factory(1)
