"""OSD pools (ganesha-fsal/README.md, "Storage policies"): a directory's
policy may name a pool, a named subset of the OSDs; its files are placed
only on that pool's OSDs, and a rebuild puts their lost components back
there.  Files without a pool go on any OSD."""
from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from typing import Any

import pytest
from pando_testing.cluster_map import etcd_fsal, osd_entry, put_map, wait_epoch
from pando_testing.etcd import EtcdCluster
from pando_testing.layout_policy import layout_get, layout_set, mkdir
from pando_testing.mds import PandoMds
from pando_testing.mds_files import components, connect, new_file, object_bytes
from pando_testing.rebuild_jobs import put_job, wait_job_done

MDS_NAME = "mds-test"
INLINE_MAX = 4096
KIB = 1024
FAST = {1, 2, 3}


@pytest.fixture
def pooled(mds_factory: Callable[..., PandoMds]) -> PandoMds:
    """Six OSDs from cluster.conf, 1-3 in pool "fast"; Mirrors = 2."""
    return mds_factory(6, object_pool=0, inline_max=INLINE_MAX,
                       osd_pools={i: "fast" for i in FAST})


def osds_of(mds: PandoMds, path: str) -> set[int]:
    return {o for o, _ in components(mds, path)}


def test_a_pool_policy_places_every_component_on_the_pools_osds(pooled: PandoMds) -> None:
    c = connect(pooled)
    d = mkdir(c, pooled.root_handle(), "fast")
    ok, msg = layout_set(pooled, "/fast", {"scheme": "mirror", "copies": 2, "pool": "fast"})
    assert ok, msg
    files = {f"f{i}": os.urandom(3 * INLINE_MAX + i) for i in range(12)}
    for name, data in files.items():
        new_file(c, d, name, data)
        new_file(c, pooled.root_handle(), name, data)
    elsewhere: set[int] = set()
    for name, data in files.items():
        assert osds_of(pooled, f"/fast/{name}") <= FAST, name
        elsewhere |= osds_of(pooled, f"/{name}")
        assert c.read_all(c.lookup_fh(d, name), 0, len(data)) == data
    assert elsewhere - FAST, "files without a pool went only on the pool's OSDs"


def test_the_default_scheme_with_a_pool_is_the_exports_shape_there(pooled: PandoMds) -> None:
    c = connect(pooled)
    d = mkdir(c, pooled.root_handle(), "d")
    assert layout_set(pooled, "/d", {"scheme": "default", "pool": "fast"})[0]
    assert layout_get(pooled, "/d")["policy"] == {"scheme": "mirror", "copies": 2,
                                                  "stripe_unit": 0, "width": 0, "pool": "fast"}
    new_file(c, d, "big", b"b" * (3 * INLINE_MAX))
    assert len(components(pooled, "/d/big")) == 2
    assert osds_of(pooled, "/d/big") <= FAST
    sub = mkdir(c, d, "sub")
    new_file(c, sub, "deeper", b"d" * (3 * INLINE_MAX))
    assert osds_of(pooled, "/d/sub/deeper") <= FAST
    assert layout_set(pooled, "/d", {"scheme": "default"})[0]
    assert layout_get(pooled, "/d")["policy"]["scheme"] == "default"


@pytest.mark.parametrize("policy, says", [
    ({"scheme": "mirror", "pool": "slow"}, "no OSD is in pool 'slow'"),
    ({"scheme": "default", "pool": "Fast"}, "pool must be 1 to 31 of a-z"),
    ({"scheme": "raid0", "pool": "-fast"}, "pool must be 1 to 31 of a-z"),
    ({"scheme": "raid0", "pool": 5}, "bad value for 'pool'"),
    ({"scheme": "raid0", "pool": "a" * 32}, "bad value for 'pool'"),
    ({"scheme": "default", "pool": "fast", "copies": 3}, "bad value for 'copies'"),
])
def test_a_pool_that_is_not_a_name_or_has_no_osd_is_refused(pooled: PandoMds, policy: Any,
                                                              says: str) -> None:
    c = connect(pooled)
    mkdir(c, pooled.root_handle(), "d")
    ok, msg = layout_set(pooled, "/d", policy)
    assert not ok and says in msg, msg
    assert layout_get(pooled, "/d")["policy"]["scheme"] == "default"


def test_a_rebuild_keeps_a_pools_files_in_the_pool_and_others_take_the_spare(
        etcd: EtcdCluster, mds_factory: Callable[..., PandoMds]) -> None:
    pool = {1: "fast", 2: "fast", 3: "fast", 4: "fast"}
    mds = mds_factory(7, start=False, inline_max=INLINE_MAX, object_pool=0,
                      extra_fsal=etcd_fsal(etcd, MDS_NAME))

    def entries(dead: int = 0) -> list[dict[str, Any]]:
        return [{**osd_entry(o, up=o.osd_id != dead, in_=o.osd_id != dead),
                 "pool": pool.get(o.osd_id, "")} for o in mds.osds]
    put_map(etcd.client(), 1, entries())
    mds.start()
    wait_epoch(mds, 1)
    c = connect(mds)
    d = mkdir(c, mds.root_handle(), "fast")
    assert layout_set(mds, "/fast", {"scheme": "mirror", "copies": 2, "pool": "fast"})[0]
    files = {f"fast/r{i}": os.urandom(20 * KIB + i) for i in range(16)}
    files |= {f"p{i}": os.urandom(20 * KIB + i) for i in range(16)}
    for name, data in files.items():
        new_file(c, d if name.startswith("fast/") else mds.root_handle(),
                 name.rsplit("/", 1)[-1], data)
    on1 = [n for n in files if 1 in osds_of(mds, "/" + n)]
    assert any(n.startswith("fast/") for n in on1) and any(
        not n.startswith("fast/") for n in on1), on1
    mds.osds[0].kill9()
    put_map(etcd.client(), 2, entries(dead=1))
    wait_epoch(mds, 2)
    put_job(etcd, 2, 1, target=7)
    wait_job_done(etcd, MDS_NAME, 2)
    for name, data in files.items():
        osds = osds_of(mds, "/" + name)
        assert 1 not in osds and len(osds) == 2, f"{name}: {osds}"
        if name.startswith("fast/"):
            assert osds <= {2, 3, 4}, f"{name} left its pool: {osds}"
        elif name in on1:
            assert 7 in osds, f"{name} did not go to the job's target: {osds}"
        want = hashlib.sha256(data).hexdigest()
        for osd, oid in components(mds, "/" + name):
            got = object_bytes(mds, osd, oid)[:len(data)]
            assert hashlib.sha256(got).hexdigest() == want, f"{name}: copy on {osd} differs"
