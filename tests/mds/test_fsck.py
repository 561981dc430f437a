"""pando-fsck against a real metadata manager: Ganesha with libfsalpando.so
over four pando-osd targets.  Files are made through NFSv3 (inline ones and
object-backed ones past the 64 KiB inline threshold), Ganesha is stopped,
and the OSDs are damaged behind the namespace's back with pando-osd-tool:
fsck must report each problem (exit 4), repair what can be repaired (exit
1), and a fresh run must report only what cannot be (a lost object).
Namespace corruption itself is covered by ns/tests/test_ns_repair.c."""
from __future__ import annotations

import re
from dataclasses import dataclass

import pytest

from pando_testing.daemons import OsdProcess
from pando_testing.mds import PandoMds, fsck_binary
from pando_testing.mds_files import connect
from pando_testing.nfs3 import FILE_SYNC, Nfs3Client

PARTITION = "1"
CLEAN, REPAIRED, LEFT, OPERATIONAL, USAGE = 0, 1, 4, 8, 16
# name -> size: one inline file, three object-backed (one in a directory).
FILES = {"small": 1000, "big": 200_000, "big2": 70_000, "dir/big3": 100_000}


@dataclass
class File:
    fh: bytes
    ino: int
    data: bytes


@dataclass
class Obj:
    osd: OsdProcess
    object: int
    owner: int
    length: int


def pattern(name: str, size: int) -> bytes:
    seed = sum(name.encode())
    return bytes((i * 7 + seed) % 251 for i in range(size))


def read_all(c: Nfs3Client, fh: bytes, size: int) -> bytes:
    return c.read_all(fh, 0, size, chunk=65536)


def make_files(mds: PandoMds) -> dict[str, File]:
    root = mds.root_handle()
    setup = mds.client()
    c = connect(mds)
    try:
        res = c.mkdir(root, "dir")
        assert res.status == 0, res
        dirs = {"": root, "dir": setup.lookup(root, "dir")}
        files = {}
        for path, size in FILES.items():
            parent, _, name = path.rpartition("/")
            fh = setup.create(dirs[parent], name)
            data = pattern(path, size)
            c.write_all(fh, 0, data, FILE_SYNC)
            attrs = c.getattr(fh).attrs
            assert attrs is not None and attrs.size == size
            files[path] = File(fh, attrs.fileid, data)
        return files
    finally:
        c.close()
        setup.close()


def objects(mds: PandoMds) -> list[Obj]:
    """Every object in the partition, on every OSD, with its page-1 attributes."""
    found = []
    for osd in mds.osds:
        ls = osd.tool("ls", PARTITION, check=False)
        if ls.returncode:
            assert "No such file or directory" in ls.stderr, ls.stderr
            continue
        for obj in ls.stdout.split():
            attrs = dict(line.split(None, 1) for line in
                         osd.tool("getattr", PARTITION, obj).stdout.splitlines())
            found.append(Obj(osd, int(obj), int(attrs["owner_file"]), int(attrs["length"])))
    return found


def fsck(mds: PandoMds, *args: str, status: int) -> str:
    code, out = mds.fsck(*args)
    assert code == status, f"pando-fsck {' '.join(args)}: exit {code}, want {status}\n{out}"
    return out


def row(out: str, name: str) -> tuple[int, int, int]:
    """(found, repaired, left) of one line of the summary table."""
    m = re.search(rf"^  {re.escape(name)} +(\d+) +(\d+) +(\d+)$", out, re.M)
    assert m, f"no '{name}' row in\n{out}"
    return int(m[1]), int(m[2]), int(m[3])


def problems(out: str, kind: str) -> list[str]:
    """The problem lines (not the summary's rows) that mention kind."""
    return [line for line in out.splitlines() if kind in line and not line.startswith("  ")]


def one(out: str, kind: str) -> str:
    """The one problem line that mentions kind."""
    lines = problems(out, kind)
    assert len(lines) == 1, f"want one line with '{kind}' in\n{out}"
    return lines[0]


@pytest.fixture
def stopped(mds: PandoMds) -> tuple[PandoMds, dict[str, File]]:
    """Files made through NFSv3, then Ganesha stopped: the store is fsck's."""
    files = make_files(mds)
    mds.stop_ganesha()
    return mds, files


def test_clean_cluster(stopped: tuple[PandoMds, dict[str, File]]) -> None:
    mds, files = stopped
    objs = objects(mds)
    for path in ("big", "big2", "dir/big3"):
        mine = [o for o in objs if o.owner == files[path].ino]
        assert len(mine) == mds.mirrors, (path, objs)
        assert all(o.length == FILES[path] for o in mine)
    assert not [o for o in objs if o.owner == files["small"].ino]
    out = fsck(mds, status=CLEAN)
    assert row(out, "total") == (0, 0, 0)
    assert f"objects listed: {len(objs)}" in out
    fsck(mds, "--repair", status=CLEAN)
    fsck(mds, "--no-osds", status=CLEAN)


def test_stray_object_removed(stopped: tuple[PandoMds, dict[str, File]]) -> None:
    mds, _ = stopped
    osd = mds.osds[1]
    osd.tool("create", PARTITION, "777777")
    out = fsck(mds, status=LEFT)
    line = one(out, "orphan object")
    assert line.startswith(f"osd {osd.osd_id}: orphan object 777777 in partition 1")
    assert row(out, "orphan objects") == (1, 0, 1)
    out = fsck(mds, "--repair", status=REPAIRED)
    line = one(out, "orphan object")
    assert line.endswith(": removed")
    assert row(out, "orphan objects") == (1, 1, 0)
    assert 777777 not in [o.object for o in objects(mds)]
    fsck(mds, status=CLEAN)


def test_lost_object_is_reported_not_repaired(stopped: tuple[PandoMds, dict[str, File]]) -> None:
    mds, files = stopped
    lost = next(o for o in objects(mds) if o.owner == files["big"].ino)
    lost.osd.tool("rm", PARTITION, str(lost.object))
    stray_osd = mds.osds[2]
    stray_osd.tool("create", PARTITION, "888888")

    out = fsck(mds, status=LEFT)
    missing = one(out, "missing on osd")
    assert missing.startswith(f"file {files['big'].ino}: object {lost.object} ")
    assert f"missing on osd {lost.osd.osd_id}" in missing
    orphan = one(out, "orphan object")
    assert "orphan object 888888 in partition 1" in orphan
    assert row(out, "missing objects") == (1, 0, 1)
    assert row(out, "orphan objects") == (1, 0, 1)

    out = fsck(mds, "--repair", status=LEFT)
    assert row(out, "orphan objects") == (1, 1, 0)
    assert row(out, "missing objects") == (1, 0, 1)

    out = fsck(mds, status=LEFT)
    assert problems(out, "orphan object") == []
    assert len(problems(out, "missing on osd")) == 1
    assert row(out, "total") == (1, 0, 1)

    # The repair touched no healthy file.
    mds.start()
    c = connect(mds)
    try:
        for path in ("small", "big2", "dir/big3"):
            assert read_all(c, files[path].fh, FILES[path]) == files[path].data, path
    finally:
        c.close()


def test_object_longer_than_its_file_is_a_tail_trimmed_on_repair(
        stopped: tuple[PandoMds, dict[str, File]]) -> None:
    """Bytes past the size are what a crash left of unacknowledged writes:
    listed with -v, not a problem, trimmed by --repair."""
    mds, files = stopped
    size = FILES["big2"]
    long = next(o for o in objects(mds) if o.owner == files["big2"].ino)
    long.osd.tool("setattr", PARTITION, str(long.object), "1", "1", str(size + 8192))
    out = fsck(mds, status=CLEAN)
    assert "past the file's size" not in out
    out = fsck(mds, "-v", status=CLEAN)
    line = one(out, "past the file's size")
    assert f"object {long.object} " in line and f"holds {size + 8192} bytes" in line
    out = fsck(mds, "-v", "--repair", status=CLEAN)
    assert one(out, "past the file's size").endswith(f": truncated to {size}")
    assert {o.length for o in objects(mds) if o.owner == files["big2"].ino} == {size}
    fsck(mds, status=CLEAN)
    mds.start()
    c = connect(mds)
    try:
        assert read_all(c, files["big2"].fh, size) == files["big2"].data
    finally:
        c.close()


def test_unreachable_osd(stopped: tuple[PandoMds, dict[str, File]]) -> None:
    mds, _ = stopped
    down = mds.osds[3]
    assert down.stop() == 0
    out = fsck(mds, status=LEFT)
    line = one(out, "): unreachable: ")
    assert line.startswith(f"osd {down.osd_id} ({down.ctl_addr}): unreachable")
    # Its objects are neither missing nor checked.
    assert problems(out, "missing on osd") == []
    out = fsck(mds, "--repair", status=LEFT)
    assert row(out, "unreachable OSDs") == (1, 0, 1)
    down.start()
    fsck(mds, status=CLEAN)


def test_pending_intent_is_finished(mds: PandoMds) -> None:
    """A file removed while one of its OSDs is down leaves a removal intent
    the FSAL cannot finish; fsck lists it (not a problem) and --repair
    finishes it once the OSD is back."""
    files = make_files(mds)
    victim = files["big"]
    held = [o for o in objects(mds) if o.owner == victim.ino]
    down = held[0].osd
    assert down.stop() == 0
    c = connect(mds)
    try:
        res = c.remove(mds.root_handle(), "big")
        assert res.status == 0, res
    finally:
        c.close()
    mds.stop_ganesha()
    down.start()
    out = fsck(mds, "-v", status=CLEAN)
    line = one(out, "owed removal")
    assert re.match(rf"intent \d+ \(file {victim.ino}\): {len(held)} objects owed removal$",
                    line), line
    assert "pending intents: 1, finished: 0" in out
    assert held[0].object in [o.object for o in objects(mds)]
    out = fsck(mds, "--repair", "-v", status=CLEAN)
    assert "pending intents: 1, finished: 1" in out
    assert not [o for o in objects(mds) if o.owner == victim.ino]
    out = fsck(mds, status=CLEAN)
    assert "pending intents: 0" in out


def test_store_in_use(mds: PandoMds) -> None:
    code, out = mds.fsck()
    assert code == OPERATIONAL, out
    assert "the store is in use (is ganesha.nfsd running?)" in out


def test_command_line(stopped: tuple[PandoMds, dict[str, File]]) -> None:
    mds, _ = stopped
    code, out = mds.fsck("--bogus")
    assert code == USAGE and "usage: pando-fsck" in out
    bad = mds.workdir / "bad.conf"
    bad.write_text("osd one ctl=nowhere\n")
    cp = mds.pod.run([fsck_binary(), "--db", str(mds.db_path), "--cluster", str(bad)],
                     check=False)
    assert cp.returncode == OPERATIONAL, cp
    assert f"{bad}:1:" in cp.stderr
    cp = mds.pod.run([fsck_binary(), "--db", str(mds.workdir / "none"), "--no-osds"],
                     check=False)
    assert cp.returncode == OPERATIONAL, cp
    assert "no namespace store there" in cp.stderr
    out = fsck(mds, "--no-osds", status=CLEAN)
    assert "orphan objects" not in out
