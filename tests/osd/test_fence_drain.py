"""A fence drains (osd-target/README.md, "File handle (capability) format"): once
SET_CAP_VERSION, or REVOKE_WRITERS, has answered, no NFSv3 WRITE under
an older version lands on the object.  A WRITE that passed its handle check before the
fence still lands, but before the fence answers; one that checks after
is STALE.

To hold a WRITE between its check and its I/O, the target runs with a
1 MiB/s disk model: a 1 MiB WRITE waits about 0.75 s for its tokens
(the burst is 256 KiB) after its handle was checked."""
from __future__ import annotations

import threading
import time
from typing import Callable

import pytest

from pando_testing.capability import handle_for
from pando_testing.daemons import OsdProcess
from pando_testing.nfs3 import FILE_SYNC, NFS3_OK, NFS3ERR_STALE
from pando_testing.osdctl import Status, open_ctl
from pando_testing.pod import Pod

MIB = 1 << 20
PART, OBJ = 1, 10


@pytest.mark.parametrize("call", ["set_cap_version", "revoke_writers"])
def test_a_fence_answers_only_after_the_writes_it_overtook(
        call: str, pod: Pod, osd_factory: Callable[..., OsdProcess]) -> None:
    osd = osd_factory(1, extra_args=["--write-bandwidth", "1M"])
    osd.tool("mkpart", str(PART))
    osd.tool("create", str(PART), str(OBJ))
    handle = handle_for(osd, PART, OBJ)
    result: list[int] = []

    def write() -> None:
        with osd.nfs3() as nfs:
            result.append(nfs.write(handle, 0, b"\xab" * MIB, FILE_SYNC).status)

    writer = threading.Thread(target=write)
    writer.start()
    time.sleep(0.3)          # checked, and waiting for its tokens
    with open_ctl(pod, osd) as ctl:
        status, _ = getattr(ctl, call)(PART, OBJ, 1)
        assert status == Status.OK
        at_fence = ctl.read_all(PART, OBJ)
        writer.join()
        after = ctl.read_all(PART, OBJ)
    assert result == [NFS3_OK], result
    assert len(at_fence) == len(after) == MIB, \
        f"{len(at_fence)} bytes when the fence answered, {len(after)} after: " \
        "a write under the old version landed after the fence"
    with osd.nfs3() as nfs:
        assert nfs.write(handle, 0, b"late", FILE_SYNC).status == NFS3ERR_STALE
