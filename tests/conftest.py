"""Fixtures shared by every suite: a private namespace, a cluster key,
pando-osd targets in it, and a tap device for a VM.  When a test fails, its daemons' logs are copied
to build/test-logs/<test> and their tails shown in the report."""
from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterator

import pytest

from pando_testing.daemons import OsdProcess
from pando_testing.etcd import EtcdCluster
from pando_testing.keys import ClusterKey, write_cluster_key
from pando_testing.logs import FAILED_KEY as _failed_key
from pando_testing.logs import check_clean_exits
from pando_testing.mds import PandoMds
from pando_testing.pod import Pod
from pando_testing.vmnet import TapNet, tap_error


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
    check_clean_exits(request, {o.osd_id: o.stop() for o in made if o.alive()},
                      [o.log_path for o in made], "pando-osd")


@pytest.fixture
def osd(osd_factory: Callable[..., OsdProcess]) -> OsdProcess:
    return osd_factory(1)


@pytest.fixture
def mds_factory(request: pytest.FixtureRequest, pod: Pod, tmp_path: Path,
                cluster_key: ClusterKey,
                osd_factory: Callable[..., OsdProcess]) -> Iterator[Callable[..., PandoMds]]:
    """Makes a Pando metadata manager (Ganesha + libfsalpando.so) over
    `osds` new targets (ids 1..osds, started with `osd_args`, a list or a
    function of the OSD id, and the environment `osd_env(id)` adds, listening
    on `osd_host`); keyword arguments go to PandoMds.  At
    teardown Ganesha must stop cleanly on SIGTERM unless the test killed it."""
    made: list[PandoMds] = []

    def make(osds: int = 4, start: bool = True,
             osd_args: list[str] | Callable[[int], list[str]] | None = None,
             osd_env: Callable[[int], dict[str, str]] | None = None,
             osd_host: str = "127.0.0.1", **kw: object) -> PandoMds:
        def args(i: int) -> list[str]:
            return osd_args(i) if callable(osd_args) else list(osd_args or [])
        targets = [osd_factory(i, extra_args=args(i), env=osd_env(i) if osd_env else {},
                               host=osd_host)
                   for i in range(1, osds + 1)]
        m = PandoMds(pod, tmp_path / f"mds{len(made)}", osds=targets, key=cluster_key,
                     **kw)  # type: ignore[arg-type]
        made.append(m)
        if start:
            m.start()
        return m

    yield make
    check_clean_exits(request, {m.workdir.name: m.stop() for m in made if m.alive()},
                      [p for m in made for p in (m.log_path, m.workdir / "ganesha.stdout")],
                      "ganesha.nfsd")


@pytest.fixture
def mds(mds_factory: Callable[..., PandoMds]) -> PandoMds:
    """Four OSDs and one metadata manager serving NFSv3 and NFSv4.1."""
    return mds_factory(4)


def _etcd_cluster(request: pytest.FixtureRequest, pod: Pod, tmp_path: Path,
                  size: int) -> Iterator[EtcdCluster]:
    cluster = EtcdCluster(pod, tmp_path / "etcd", size=size).start()
    yield cluster
    check_clean_exits(request, cluster.stop(), [m.log_path for m in cluster.members], "etcd")


@pytest.fixture
def etcd(request: pytest.FixtureRequest, pod: Pod, tmp_path: Path) -> Iterator[EtcdCluster]:
    """One etcd member on 127.0.0.1:2379 in the test's pod."""
    yield from _etcd_cluster(request, pod, tmp_path, 1)


@pytest.fixture
def etcd3(request: pytest.FixtureRequest, pod: Pod, tmp_path: Path) -> Iterator[EtcdCluster]:
    """Three etcd members (client ports 2379, 2381, 2383) in the test's pod."""
    yield from _etcd_cluster(request, pod, tmp_path, 3)


@pytest.fixture
def tap(pod: Pod) -> Iterator[TapNet]:
    """A tap device in the pod for one VM (pando_testing.vmnet): the pod
    reaches the guest at its own address, which slirp does not allow."""
    why = tap_error(pod)
    if why:
        pytest.skip(f"no tap device here: {why}")
    t = TapNet(pod).create()
    yield t
    t.remove()
