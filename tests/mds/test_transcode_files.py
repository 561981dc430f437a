"""Transcoding (ganesha-fsal/README.md, "Transcoding"): files under a
"mirrored while hot, RS(k,m) once cold" policy are rewritten to RS in the
background once unmodified for the policy's time with no layouts out; the
map switches in one batch, the mirrors' objects are freed, the bytes stay
the same, and a client reading the file meanwhile never sees a wrong
byte."""
from __future__ import annotations

import hashlib
import random
import threading
import time
from collections.abc import Callable

import pytest
from pando_testing.cluster_map import dbus_json, file_map, wait_for
from pando_testing.layout_policy import layout_set, mkdir
from pando_testing.mds import PandoMds
from pando_testing.mds_files import connect, new_file
from pando_testing.nfs3 import NFS3_OK
from pando_testing.threads import RaisingThread

KIB, MIB = 1024, 1 << 20
SU = 64 * KIB
COLD = {"scheme": "mirror", "copies": 2, "stripe_unit": SU, "cold_after_s": 3,
        "cold": {"k": 4, "m": 2}}


@pytest.fixture
def tc_mds(mds_factory: Callable[..., PandoMds]) -> PandoMds:
    """Six OSDs, a transcoder pass every second."""
    return mds_factory(6, object_pool=0, inline_max=4096,
                       extra_fsal="Transcode_Interval = 1;")


def scheme(mds: PandoMds, path: str) -> str:
    ok, msg, j = file_map(mds, path)
    assert ok, msg
    return str(j["scheme"])


def object_count(mds: PandoMds) -> int:
    n = 0
    for o in mds.osds:
        cp = o.tool("ls", "1", check=False)
        n += len([line for line in cp.stdout.splitlines() if line.strip()])
    return n


def test_cold_files_become_rs_with_the_same_bytes_and_the_mirrors_freed(
        tc_mds: PandoMds) -> None:
    c = connect(tc_mds)
    d = mkdir(c, tc_mds.root_handle(), "cold")
    assert layout_set(tc_mds, "/cold", COLD)[0]
    rng = random.Random(1)
    files = {f"f{i}": rng.randbytes(s) for i, s in enumerate([4 * SU, 3 * MIB + 17, 5 * MIB])}
    small = rng.randbytes(SU)                  # under one row: stays mirrored
    for name, data in files.items():
        new_file(c, d, name, data)
        # Checked as each file is written: the first may be cold (and
        # transcoded) before a slow machine has written the last.
        assert scheme(tc_mds, f"/cold/{name}") == "mirror"
    new_file(c, d, "small", small)
    wait_for("every file transcoded",
             lambda: all(scheme(tc_mds, f"/cold/{n}") == "rs" for n in files), timeout=30)
    for name, data in files.items():
        got = c.read_all(c.lookup_fh(d, name), 0, len(data))
        assert hashlib.sha256(got).digest() == hashlib.sha256(data).digest(), name
    assert scheme(tc_mds, "/cold/small") == "mirror"
    # 3 mirrored files (2 objects each) became 3 RS files (6 each), plus the small one
    wait_for("the mirrors' objects removed", lambda: object_count(tc_mds) == 3 * 6 + 2,
             timeout=30)
    ok, msg, st = dbus_json(tc_mds, "transcode_status")
    assert ok, msg
    assert st["files_done"] == 3 and st["bytes_done"] >= sum(map(len, files.values()))
    assert st["failed"] == 0


def test_a_file_being_written_is_left_until_it_is_cold(tc_mds: PandoMds) -> None:
    c = connect(tc_mds)
    d = mkdir(c, tc_mds.root_handle(), "cold")
    assert layout_set(tc_mds, "/cold", {**COLD, "cold_after_s": 4})[0]
    fh = new_file(c, d, "f", b"a" * (2 * MIB))
    for i in range(6):
        time.sleep(0.5)
        assert c.write(fh, i * 100, b"b" * 100).status == NFS3_OK
        assert scheme(tc_mds, "/cold/f") == "mirror"
    wait_for("f transcoded once cold", lambda: scheme(tc_mds, "/cold/f") == "rs", timeout=30)


def reader(mds: PandoMds, fh: bytes, want: bytes, stop: threading.Event,
           bad: list[str], reads: list[int]) -> None:
    with connect(mds) as c:
        while not stop.is_set():
            got = c.read_all(fh, 0, len(want))
            if got != want:
                bad.append(f"read {len(got)} bytes, first difference at "
                           f"{next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), -1)}")
            reads[0] += 1


def test_a_reader_during_transcoding_sees_every_byte_right(tc_mds: PandoMds) -> None:
    c = connect(tc_mds)
    d = mkdir(c, tc_mds.root_handle(), "cold")
    assert layout_set(tc_mds, "/cold", {**COLD, "cold_after_s": 3600})[0]
    data = random.Random(2).randbytes(24 * MIB)
    fh = new_file(c, d, "big", data)
    stop, bad, reads = threading.Event(), list[str](), [0]
    t = RaisingThread(target=reader, args=(tc_mds, fh, data, stop, bad, reads))
    t.start()
    try:
        ok, msg, res = dbus_json(tc_mds, "transcode_file", "string:/cold/big")
        assert ok, msg
        assert res["bytes"] == len(data)
        before = reads[0]
        wait_for("a read after the switch", lambda: reads[0] > before + 1, timeout=60)
    finally:
        stop.set()
        t.join(60)
    assert not bad, bad[:3]
    assert reads[0] >= 2
    assert scheme(tc_mds, "/cold/big") == "rs"
