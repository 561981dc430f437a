"""Fixtures of the OSD suites: objects made by pando-osd-tool (no I/O, only
CREATE over the control protocol) in the test's partition, a read-write
handle for each.  A module overrides `partition` to use another."""
from __future__ import annotations

from typing import Callable

import pytest

from pando_testing.capability import handle_for
from pando_testing.daemons import OsdProcess


@pytest.fixture
def partition() -> int:
    return 1


@pytest.fixture
def make_object(osd: OsdProcess, partition: int) -> Callable[[int], bytes]:
    """make_object(oid): object oid created in `partition` (made first); a
    read-write handle for it."""
    osd.tool("mkpart", str(partition))

    def make(oid: int) -> bytes:
        osd.tool("create", str(partition), str(oid))
        return handle_for(osd, partition, oid)
    return make
