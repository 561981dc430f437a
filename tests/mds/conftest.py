"""The `mds` of these suites runs without the object pool: they count the
objects on the OSDs exactly, and a pool keeps a changing number of ready
objects there.  test_pool.py tests the pool itself."""
from __future__ import annotations

from typing import Callable

import pytest

from pando_testing.mds import PandoMds


@pytest.fixture
def mds(mds_factory: Callable[..., PandoMds]) -> PandoMds:
    return mds_factory(4, object_pool=0)
