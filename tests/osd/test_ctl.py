"""The OSD control protocol end to end: the object lifecycle through the
Python client (pando_testing.osdctl) and through pando-osd-tool."""
from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from typing import Iterator

import pytest

from pando_testing.daemons import OsdProcess
from pando_testing.keys import ClusterKey
from pando_testing.osdctl import (MAX_DATA, CreateItem, Info, OsdCtl, Stable, Status,
                                  info_value, open_ctl)
from pando_testing.pod import Pod

MiB = 1 << 20


@pytest.fixture
def ctl(pod: Pod, osd: OsdProcess) -> Iterator[OsdCtl]:
    with open_ctl(pod, osd) as c:
        yield c


def make_object(ctl: OsdCtl, partition: int = 1, obj: int = 1, data: bytes = b"") -> None:
    if partition not in ctl.list_all(0):
        assert ctl.create_partition(partition) == Status.OK
    assert ctl.create(partition, obj) == [obj]
    if data:
        assert ctl.write(partition, obj, 0, data, Stable.FILE_SYNC).count == len(data)


# ---- partitions and objects -------------------------------------------------------

def test_partitions_create_list_remove(ctl: OsdCtl) -> None:
    assert ctl.create_partition(7) == Status.OK
    assert ctl.create_partition(3) == Status.OK
    assert ctl.create_partition(7) == Status.EXIST
    assert ctl.create_partition(0) == Status.INVAL          # 0 is reserved
    assert ctl.list_all(0) == [3, 7]
    assert ctl.create(7, 1) == [1]
    assert ctl.remove_partition(7) == Status.NOTEMPTY
    assert ctl.remove_objects(7, [1]) == (Status.OK, [Status.OK])
    assert ctl.remove_partition(7) == Status.OK
    assert ctl.remove_partition(7) == Status.NOENT
    assert ctl.list_all(0) == [3]


def test_batched_create_explicit_picked_and_duplicate(ctl: OsdCtl) -> None:
    assert ctl.create_partition(1) == Status.OK
    status, results = ctl.create_objects(1, [
        CreateItem(100, owner_file=42, component=3, cap_version=7),
        CreateItem(0),
        CreateItem(0),
        CreateItem(100),                                    # same id again, same batch
    ])
    assert status == Status.OK
    assert results[0] == (Status.OK, 100)
    picked = [results[1][1], results[2][1]]
    assert [results[1][0], results[2][0]] == [Status.OK, Status.OK]
    assert len(set(picked)) == 2 and 0 not in picked and 100 not in picked
    assert results[3][0] == Status.EXIST
    # an existing id in a later batch is a per-item EXIST too; the rest succeed
    status, results = ctl.create_objects(1, [CreateItem(picked[0]), CreateItem(555)])
    assert status == Status.OK
    assert [r[0] for r in results] == [Status.EXIST, Status.OK]
    assert ctl.list_all(1) == sorted([100, 555, *picked])
    info = ctl.info(1, 100)
    assert (info[Info.OWNER], info[Info.COMPONENT], info[Info.CAP_VERSION]) == (42, 3, 7)
    assert info[Info.READ_FLOOR] == 7                       # read handles from 7 on
    assert info[Info.LENGTH] == 0
    status, results = ctl.create_objects(99, [CreateItem(1)])
    assert (status, results) == (Status.NOENT, [])         # no such partition


def test_remove_objects_per_item_status(ctl: OsdCtl) -> None:
    make_object(ctl, 1, 5, b"doomed")
    assert ctl.create(1, 6) == [6]
    assert ctl.remove_objects(1, [5, 77, 6]) == (Status.OK, [Status.OK, Status.NOENT, Status.OK])
    assert ctl.read(1, 5, 0, 10).status == Status.NOENT
    assert ctl.list_all(1) == []
    assert ctl.remove_objects(42, [1]) == (Status.NOENT, [])


def test_list_paging_with_after_and_max(ctl: OsdCtl) -> None:
    assert ctl.create_partition(2) == Status.OK
    ids = list(range(10, 260, 10))                           # 25 ids
    assert ctl.create(2, *ids) == ids
    page = ctl.list(2, after=0, max_ids=10)
    assert (page.status, page.ids, page.eof) == (Status.OK, ids[:10], False)
    page = ctl.list(2, after=ids[9], max_ids=10)
    assert (page.ids, page.eof) == (ids[10:20], False)
    page = ctl.list(2, after=ids[19], max_ids=10)
    assert (page.ids, page.eof) == (ids[20:], True)
    page = ctl.list(2, after=15, max_ids=3)                 # after need not exist
    assert (page.ids, page.eof) == ([20, 30, 40], False)
    assert ctl.list(2, after=250, max_ids=10).ids == []
    assert ctl.list(2, after=250, max_ids=10).eof
    page = ctl.list(2, max_ids=0)                           # 0: a full page
    assert (page.ids, page.eof) == (ids, True)
    assert ctl.list_all(2, page=7) == ids
    assert ctl.list(3).status == Status.NOENT


# ---- data ----------------------------------------------------------------------------

def test_write_read_round_trip_and_eof(ctl: OsdCtl) -> None:
    data = os.urandom(100_000)
    make_object(ctl, 1, 1)
    w1 = ctl.write(1, 1, 0, data[:60_000], Stable.UNSTABLE)
    w2 = ctl.write(1, 1, 60_000, data[60_000:], Stable.DATA_SYNC)
    assert (w1.status, w1.count, w2.count) == (Status.OK, 60_000, 40_000)
    assert len(w1.verifier) == 8 and w1.verifier == w2.verifier
    r = ctl.read(1, 1, 0, len(data))
    assert (r.status, r.eof, r.data) == (Status.OK, True, data)
    r = ctl.read(1, 1, 0, 1000)
    assert (r.eof, r.data) == (False, data[:1000])
    r = ctl.read(1, 1, 99_000, 5000)                        # runs past the end
    assert (r.eof, r.data) == (True, data[99_000:])
    r = ctl.read(1, 1, len(data), 10)
    assert (r.status, r.eof, r.data) == (Status.OK, True, b"")
    r = ctl.read(1, 1, 10 * MiB, 10)
    assert (r.status, r.eof, r.data) == (Status.OK, True, b"")
    assert ctl.read(1, 2, 0, 10).status == Status.NOENT
    assert ctl.write(1, 2, 0, b"x").status == Status.NOENT
    assert ctl.info(1, 1)[Info.LENGTH] == len(data)


def test_16_mib_object(ctl: OsdCtl) -> None:
    make_object(ctl, 1, 1)
    data = os.urandom(16 * MiB)
    verifiers = set()
    for off in range(0, len(data), MAX_DATA):
        w = ctl.write(1, 1, off, data[off:off + MAX_DATA], Stable.UNSTABLE)
        assert (w.status, w.count) == (Status.OK, MAX_DATA)
        verifiers.add(w.verifier)
    assert len(verifiers) == 1
    assert ctl.flush(1, 1) == Status.OK
    back = ctl.read_all(1, 1)
    assert hashlib.sha256(back).digest() == hashlib.sha256(data).digest()
    assert ctl.info(1, 1)[Info.LENGTH] == 16 * MiB


def test_sparse_object_reads_zeros_in_holes(ctl: OsdCtl) -> None:
    make_object(ctl, 1, 1)
    head, tail = os.urandom(4096), os.urandom(4096)
    assert ctl.write(1, 1, 0, head).status == Status.OK
    assert ctl.write(1, 1, 10 * MiB, tail).status == Status.OK
    info = ctl.info(1, 1)
    assert info[Info.LENGTH] == 10 * MiB + 4096
    assert info[Info.USED] < 1 * MiB                        # the hole takes no space
    r = ctl.read(1, 1, 5 * MiB, 8192)
    assert (r.eof, r.data) == (False, bytes(8192))
    r = ctl.read(1, 1, 10 * MiB - 100, 200)
    assert r.data == bytes(100) + tail[:100]
    back = ctl.read_all(1, 1)
    assert back == head + bytes(10 * MiB - 4096) + tail


def test_huge_read_count_is_cut_to_max_data(ctl: OsdCtl) -> None:
    data = os.urandom(MAX_DATA + MAX_DATA // 2)
    make_object(ctl, 1, 1)
    ctl.write(1, 1, 0, data[:MAX_DATA])
    ctl.write(1, 1, MAX_DATA, data[MAX_DATA:])
    r = ctl.read(1, 1, 0, 0xFFFFFFFF)
    assert (r.status, r.eof, r.data) == (Status.OK, False, data[:MAX_DATA])
    r = ctl.read(1, 1, MAX_DATA, 0xFFFFFFFF)
    assert (r.eof, r.data) == (True, data[MAX_DATA:])
    r = ctl.read(1, 1, 0, 0)
    assert (r.status, r.data) == (Status.OK, b"")


# ---- attributes ---------------------------------------------------------------------

def test_page1_length_truncates_and_extends(ctl: OsdCtl) -> None:
    data = os.urandom(1000)
    make_object(ctl, 1, 1, data)
    assert ctl.setattr(1, 1, [(1, Info.LENGTH, info_value(Info.LENGTH, 100))]) == (Status.OK, 0)
    assert ctl.read_all(1, 1) == data[:100]
    assert ctl.setattr(1, 1, [(1, Info.LENGTH, info_value(Info.LENGTH, 5000))]) == (Status.OK, 0)
    assert ctl.read_all(1, 1) == data[:100] + bytes(4900)
    assert ctl.info(1, 1)[Info.LENGTH] == 5000


def test_page1_owner_component_cap_version(ctl: OsdCtl) -> None:
    make_object(ctl, 1, 1)
    before = ctl.info(1, 1)
    status, failed = ctl.setattr(1, 1, [
        (1, Info.OWNER, info_value(Info.OWNER, 0x1122334455667788)),
        (1, Info.COMPONENT, info_value(Info.COMPONENT, 9)),
        (1, Info.CAP_VERSION, info_value(Info.CAP_VERSION, 12)),
    ])
    assert (status, failed) == (Status.OK, 0)
    after = ctl.info(1, 1)
    assert after[Info.OWNER] == 0x1122334455667788
    assert after[Info.COMPONENT] == 9
    assert after[Info.CAP_VERSION] == 12
    assert after[Info.READ_FLOOR] == 12                     # a fence, as SET_CAP_VERSION
    assert after[Info.CREATED] == before[Info.CREATED]
    assert after[Info.CTIME] >= before[Info.CTIME]
    status, attrs = ctl.getattr(1, 1, [(1, Info.COMPONENT), (1, Info.OWNER)])
    assert status == Status.OK
    assert [(a.number, len(a.value)) for a in attrs] == [(Info.COMPONENT, 4), (Info.OWNER, 8)]


def test_setattr_stops_at_first_failure(ctl: OsdCtl) -> None:
    make_object(ctl, 1, 1)
    status, failed = ctl.setattr(1, 1, [
        (1, Info.OWNER, info_value(Info.OWNER, 5)),
        (1, Info.MTIME, info_value(Info.MTIME, 1)),         # not settable
        (1, Info.COMPONENT, info_value(Info.COMPONENT, 6)),
    ])
    assert (status, failed) == (Status.INVAL, 1)
    # nor is the read floor: only SET_CAP_VERSION and SETATTR of the version move it
    assert ctl.setattr(1, 1, [(1, Info.READ_FLOOR, info_value(Info.READ_FLOOR, 0))]) \
        == (Status.INVAL, 0)
    info = ctl.info(1, 1)
    assert (info[Info.OWNER], info[Info.COMPONENT]) == (5, 0)
    # a value of the wrong width is refused, not reinterpreted
    assert ctl.setattr(1, 1, [(1, Info.COMPONENT, b"\0" * 8)]) == (Status.INVAL, 0)
    assert ctl.setattr(1, 2, [(1, Info.OWNER, bytes(8))])[0] == Status.NOENT


def test_user_attributes(ctl: OsdCtl) -> None:
    make_object(ctl, 1, 1, b"abc")
    big = os.urandom(1024)
    assert ctl.setattr(1, 1, [(0x10001, 7, big), (0x10000, 1, b"hello")]) == (Status.OK, 0)
    status, attrs = ctl.getattr(1, 1)                        # all: page 1, then user
    assert status == Status.OK
    assert [(a.page, a.number) for a in attrs[:len(Info)]] == [(1, int(n)) for n in Info]
    assert attrs[0].as_int() == 3
    assert [(a.page, a.number, a.value) for a in attrs[len(Info):]] == [
        (0x10000, 1, b"hello"), (0x10001, 7, big)]
    status, attrs = ctl.getattr(1, 1, [(0x10000, 1), (0x10000, 2)])
    assert status == Status.OK
    assert [a.value for a in attrs] == [b"hello", b""]       # unset reads empty
    assert ctl.setattr(1, 1, [(0x10000, 1, b"")]) == (Status.OK, 0)   # empty deletes
    status, attrs = ctl.getattr(1, 1)
    assert [(a.page, a.number) for a in attrs[len(Info):]] == [(0x10001, 7)]
    # page 2..0xffff is neither page 1 nor a user page
    assert ctl.getattr(1, 1, [(2, 1)])[0] == Status.INVAL
    assert ctl.setattr(1, 1, [(2, 1, b"x")]) == (Status.INVAL, 0)
    # a missing object is NOENT, even when asked only for a user attribute
    assert ctl.getattr(1, 9, [(0x10000, 1)])[0] == Status.NOENT
    assert ctl.getattr(1, 9)[0] == Status.NOENT


def test_set_cap_version_returns_old(ctl: OsdCtl) -> None:
    assert ctl.create_partition(1) == Status.OK
    status, _ = ctl.create_objects(1, [CreateItem(1, cap_version=3)])
    assert status == Status.OK
    assert ctl.set_cap_version(1, 1, 4) == (Status.OK, 3)
    assert ctl.set_cap_version(1, 1, 9) == (Status.OK, 4)
    assert ctl.info(1, 1)[Info.CAP_VERSION] == 9
    assert ctl.set_cap_version(1, 2, 1)[0] == Status.NOENT


def test_flush(ctl: OsdCtl) -> None:
    make_object(ctl, 1, 1)
    assert ctl.write(1, 1, 0, b"x" * 5000, Stable.UNSTABLE).status == Status.OK
    assert ctl.flush(1, 1) == Status.OK
    assert ctl.flush() == Status.OK                         # the whole target
    assert ctl.flush(1, 2) == Status.NOENT


# ---- target ---------------------------------------------------------------------------

def test_statfs_counts(ctl: OsdCtl, cluster_key: ClusterKey) -> None:
    st = ctl.statfs()
    assert (st.osd_id, st.key_id, st.partitions, st.objects) == (1, cluster_key.key_id, 0, 0)
    assert st.total_bytes >= st.free_bytes > 0
    assert len(st.uuid) == 16 and st.uuid != bytes(16)
    assert st.created_ns > 0
    for p in (1, 2):
        assert ctl.create_partition(p) == Status.OK
    ctl.create(1, 0, 0)
    ctl.create(2, 5)
    st = ctl.statfs()
    assert (st.partitions, st.objects) == (2, 3)
    ctl.remove_objects(1, ctl.list_all(1))
    st = ctl.statfs()
    assert (st.partitions, st.objects) == (2, 1)


def test_format_needs_the_right_uuid(ctl: OsdCtl) -> None:
    make_object(ctl, 1, 1, b"data")
    uuid = ctl.statfs().uuid
    wrong = bytes(b ^ 0xFF for b in uuid)
    assert ctl.format(wrong) == Status.ACCES
    assert ctl.read_all(1, 1) == b"data"                   # nothing was lost
    assert ctl.format(uuid) == Status.OK
    st = ctl.statfs()
    assert (st.uuid, st.partitions, st.objects) == (uuid, 0, 0)
    assert ctl.list_all(0) == []
    assert ctl.read(1, 1, 0, 4).status == Status.NOENT
    make_object(ctl, 1, 1, b"again")                       # usable right after
    assert ctl.read_all(1, 1) == b"again"


def test_persistence_across_clean_restart(pod: Pod, osd: OsdProcess) -> None:
    durable, flushed = os.urandom(300_000), os.urandom(70_000)
    with open_ctl(pod, osd) as ctl:
        assert ctl.create_partition(4) == Status.OK
        assert ctl.create(4, 10, 11) == [10, 11]
        verf = ctl.write(4, 10, 0, durable, Stable.FILE_SYNC).verifier
        ctl.write(4, 11, 0, flushed, Stable.UNSTABLE)
        assert ctl.flush(4, 11) == Status.OK
        assert ctl.setattr(4, 10, [(0x10000, 3, b"kept"),
                                   (1, Info.OWNER, info_value(Info.OWNER, 77))]) == (Status.OK, 0)
        assert ctl.set_cap_version(4, 11, 5) == (Status.OK, 0)
        uuid = ctl.statfs().uuid
    osd.restart()
    with open_ctl(pod, osd) as ctl:
        assert ctl.list_all(0) == [4]
        assert ctl.list_all(4) == [10, 11]
        assert ctl.read_all(4, 10) == durable
        assert ctl.read_all(4, 11) == flushed
        info = ctl.info(4, 10)
        assert info[Info.OWNER] == 77
        assert ctl.getattr(4, 10, [(0x10000, 3)])[1][0].value == b"kept"
        assert ctl.info(4, 11)[Info.CAP_VERSION] == 5
        st = ctl.statfs()
        assert (st.uuid, st.partitions, st.objects) == (uuid, 1, 2)
        # the write verifier changes on every start
        assert ctl.write(4, 10, 0, durable[:10]).verifier != verf


# ---- the same life through pando-osd-tool ---------------------------------------

def test_object_lifecycle_over_the_tool(osd: OsdProcess, tmp_path: Path) -> None:
    assert osd.tool("mkpart", "3").returncode == 0
    first = osd.tool("create", "3", "20", "0").stdout.split()
    assert first[0] == "20" and first[1] not in ("0", "20")
    picked = osd.tool("create", "3", "--count", "2").stdout.split()
    ids = sorted({int(i) for i in first + picked})
    assert len(ids) == 4
    dup = osd.tool("create", "3", "20", check=False)
    assert dup.returncode == 1 and "object 20: File exists" in dup.stderr
    assert osd.tool("ls").stdout.split() == ["3"]
    assert osd.tool("ls", "3").stdout.split() == [str(i) for i in ids]

    src = tmp_path / "in.bin"
    src.write_bytes(os.urandom(2 * MiB + 12345))
    osd.tool("put", "3", "20", str(src))
    out = tmp_path / "out.bin"
    osd.tool("get", "3", "20", str(out))
    assert out.read_bytes() == src.read_bytes()
    # a shorter put leaves no tail of the longer content
    src.write_bytes(b"short")
    osd.tool("put", "--sync", "3", "20", str(src))
    assert osd.tool("get", "3", "20").stdout == "short"

    osd.tool("setattr", "3", "20", "1", "5", "4242")
    osd.tool("setattr", "3", "20", "0x10000", "1", "hello")
    osd.tool("setattr", "3", "20", "0x10002", "9", "0xdeadbeef")
    attrs = osd.tool("getattr", "3", "20").stdout
    assert re.search(r"^length\s+5$", attrs, re.M)
    assert re.search(r"^owner_file\s+4242$", attrs, re.M)
    assert "user 0x10000 1 68656c6c6f\n" in attrs
    assert "user 0x10002 9 deadbeef\n" in attrs

    assert osd.tool("setcap", "3", "20", "6").stdout.strip() == "0"
    assert osd.tool("setcap", "3", "20", "7").stdout.strip() == "6"
    osd.tool("flush", "3", "20")
    osd.tool("flush")

    others = [str(i) for i in ids if i != 20]
    rm = osd.tool("rm", "3", others[0], "99", check=False)
    assert rm.returncode == 1 and "object 99: No such file or directory" in rm.stderr
    osd.tool("rm", "3", *others[1:], "20")
    osd.tool("rmpart", "3")
    assert osd.tool("ls").stdout == ""

    stat = osd.tool("stat").stdout
    uuid = re.search(r"^uuid\s+(\S+)$", stat, re.M).group(1)  # type: ignore[union-attr]
    assert re.search(r"^partitions\s+0$", stat, re.M)
    osd.tool("mkpart", "8")
    bad = osd.tool("wipe", "--uuid", "00000000-0000-0000-0000-000000000000", check=False)
    assert bad.returncode == 1 and "not this target's" in bad.stderr
    assert osd.tool("ls").stdout.split() == ["8"]
    osd.tool("wipe", "--uuid", uuid)
    assert osd.tool("ls").stdout == ""
