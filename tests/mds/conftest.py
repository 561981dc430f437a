"""The `mds` of these suites runs without the object pool: they count the
objects on the OSDs exactly, and a pool keeps a changing number of ready
objects there.  test_pool.py tests the pool itself.  `c` is a root client
of its NFSv3 gateway, `root` the export's root handle."""
from __future__ import annotations

from typing import Callable, Iterator

import pytest

from pando_testing.mds import PandoMds
from pando_testing.mds_files import connect
from pando_testing.nfs3 import Nfs3Client


@pytest.fixture
def mds(mds_factory: Callable[..., PandoMds]) -> PandoMds:
    return mds_factory(4, object_pool=0)


@pytest.fixture
def c(mds: PandoMds) -> Iterator[Nfs3Client]:
    with connect(mds) as client:
        yield client


@pytest.fixture
def root(mds: PandoMds) -> bytes:
    return mds.root_handle()
