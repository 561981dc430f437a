"""The Pando metadata manager's namespace over NFSv3: stock ganesha.nfsd
loading libfsalpando.so over four pando-osd targets (the `mds` fixture),
driven by pando_testing.nfs3.  Lookup, readdir and its cookies, every
create mode, mkdir, mknod, symlink, link, rename, remove, rmdir, setattr,
POSIX permissions for a non-root AUTH_SYS caller, FSSTAT, then bad input
(long and reserved names, forged and stale handles, offsets near 2^63),
and handles that survive a restart of Ganesha."""
from __future__ import annotations

import os
import random
import time
from typing import Any

import pytest

from pando_testing import nfs3
from pando_testing.mds import PandoMds
from pando_testing.mds_files import connect, new_file, ok
from pando_testing.nfs3 import NFS3_OK, FILE_SYNC, Nfs3Client, Sattr3, status_name
from pando_testing.oncrpc import GARBAGE_ARGS, ConnectionClosed, RpcAccepted, RpcError
from pando_testing.threads import RaisingThread, join_all

FH_HEADER = 5          # Ganesha's NFSv3 handle header: version, flags, export id, length
PANDO_FH_LEN = 24      # the FSAL's part (ganesha-fsal/README.md, "File handle")


def st(res) -> str:  # type: ignore[no-untyped-def]
    return status_name(res.status)


def listing(c: Nfs3Client, dir_fh: bytes, count: int = 8192, plus: bool = False) -> list[str]:
    """Names in the directory, "." and ".." left out; duplicates kept."""
    return [e.text for e in c.readdir_all(dir_fh, count, plus) if e.name not in (b".", b"..")]


def new_dir(c: Nfs3Client, dir_fh: bytes, name: str, mode: int = 0o755) -> bytes:
    fh = ok(c.mkdir(dir_fh, name, Sattr3(mode=mode)), f"MKDIR {name}").fh
    assert fh is not None
    return fh


def attrs(c: Nfs3Client, fh: bytes) -> nfs3.Fattr3:
    a = ok(c.getattr(fh)).attrs
    assert a is not None
    return a


# --- lookup and readdir ------------------------------------------------------------

def test_lookup_names_dots_and_missing(c: Nfs3Client, root: bytes) -> None:
    d = new_dir(c, root, "d")
    f = new_file(c, d, "f", b"x" * 10)
    res = ok(c.lookup(d, "f"))
    assert res.fh == f
    assert res.attrs is not None and res.attrs.size == 10 and res.attrs.type == nfs3.NF3REG
    assert res.attrs.fileid == attrs(c, f).fileid
    assert res.dir_attrs is not None and res.dir_attrs.fileid == attrs(c, d).fileid
    assert ok(c.lookup(d, ".")).fh == d
    assert attrs(c, ok(c.lookup(d, "..")).fh).fileid == attrs(c, root).fileid
    assert attrs(c, ok(c.lookup(root, "..")).fh).fileid == attrs(c, root).fileid
    missing = c.lookup(d, "nothing")
    assert missing.status == nfs3.NFS3ERR_NOENT and missing.fh == b""
    assert c.lookup(f, "x").status == nfs3.NFS3ERR_NOTDIR
    # Names are bytes compared exactly: no case folding, any byte but '/' and NUL.
    assert c.lookup(d, "F").status == nfs3.NFS3ERR_NOENT
    odd = b"\xff\xfe caf\xc3\xa9 \x01"
    g = new_file(c, d, odd.decode(errors="surrogateescape"))
    assert ok(c.lookup(d, odd)).fh == g
    assert odd in [e.name for e in c.readdir_all(d)]


def test_readdir_and_readdirplus_agree(c: Nfs3Client, root: bytes) -> None:
    d = new_dir(c, root, "d")
    made = {f"file{i:02d}": new_file(c, d, f"file{i:02d}") for i in range(30)}
    made["sub"] = new_dir(c, d, "sub")
    made["ln"] = ok(c.symlink(d, "ln", "file00")).fh
    plain = c.readdir_all(d, count=512)
    plus = c.readdir_all(d, count=512, plus=True)
    assert [e.name for e in plain[:2]] == [b".", b".."]
    assert sorted(e.text for e in plain[2:]) == sorted(made)
    assert [(e.name, e.cookie, e.fileid) for e in plain] == \
        [(e.name, e.cookie, e.fileid) for e in plus]
    for e in plus[2:]:
        assert e.fh is not None and e.attrs is not None, e.text
        assert attrs(c, e.fh).fileid == e.fileid == e.attrs.fileid
        assert attrs(c, made[e.text]).fileid == e.fileid
    types = {e.text: e.attrs.type for e in plus[2:] if e.attrs}
    assert (types["sub"], types["ln"], types["file00"]) == (nfs3.NF3DIR, nfs3.NF3LNK, nfs3.NF3REG)
    # The directory's size is its entry count, its link count 2 + subdirectories.
    a = attrs(c, d)
    assert (a.size, a.nlink) == (len(made), 3)
    # Cookies are unique and a cookie resumes right after its entry.
    cookies = [e.cookie for e in plain]
    assert len(set(cookies)) == len(cookies)
    mid = plain[10]
    after = ok(c.readdir(d, mid.cookie, bytes(8), 65536))
    assert [e.name for e in after.entries] == [e.name for e in plain[11:]] and after.eof


def page_through_while_changing(c: Nfs3Client, d: bytes, plus: bool, seed: int) -> None:
    rng = random.Random(seed)
    initial = [f"e{i:04d}" for i in range(400)]
    for name in initial:
        new_file(c, d, name)
    stable = set(initial)                # entries present throughout
    added = 0
    seen: list[str] = []
    cookie, verf = 0, bytes(8)
    for page in range(10_000):
        res = (c.readdirplus(d, cookie, verf, 1024, 4096) if plus
               else c.readdir(d, cookie, verf, 1024))
        assert res.status == NFS3_OK, f"page {page} after cookie {cookie}: {st(res)}"
        seen += [e.text for e in res.entries if e.name not in (b".", b"..")]
        if res.eof:
            break
        assert res.entries, "a page with neither entries nor eof"
        cookie, verf = res.entries[-1].cookie, res.cookieverf
        # Between pages: remove a few entries (seen or not yet), add a few.
        for victim in rng.sample(sorted(stable), 4):
            ok(c.remove(d, victim), f"REMOVE {victim}")
            stable.discard(victim)
        for _ in range(5):
            new_file(c, d, f"new{added:04d}")
            added += 1
    else:
        pytest.fail("no eof")
    dups = {n for n in seen if seen.count(n) > 1}
    assert not dups, f"entries returned twice: {sorted(dups)[:10]}"
    missed = stable - set(seen)
    assert not missed, f"entries present throughout but never returned: {sorted(missed)[:10]}"
    assert added > 50, "the directory hardly changed while it was read"


@pytest.mark.parametrize("plus", [False, True], ids=["readdir", "readdirplus"])
def test_readdir_cookies_stay_valid_while_directory_changes(c: Nfs3Client, root: bytes,
                                                            plus: bool) -> None:
    d = new_dir(c, root, "churn")
    page_through_while_changing(c, d, plus, seed=7)


def test_readdir_resumes_after_the_cookie_of_a_removed_entry(c: Nfs3Client, root: bytes) -> None:
    d = new_dir(c, root, "d")
    for i in range(20):
        new_file(c, d, f"f{i:02d}")
    everything = [e.text for e in c.readdir_all(d)][2:]
    first = ok(c.readdir(d, 0, bytes(8), 400))
    assert not first.eof and 3 < len(first.entries) < 22
    last = first.entries[-1]
    # Remove the last entry returned and the one that would come next.
    following = everything[everything.index(last.text) + 1]
    ok(c.remove(d, last.name))
    ok(c.remove(d, following))
    res = ok(c.readdir(d, last.cookie, first.cookieverf, 65536))
    assert res.eof
    got = [e.text for e in first.entries[2:]] + [e.text for e in res.entries]
    want = [n for n in everything if n != following]
    assert got == want, "resuming after a removed entry lost or repeated entries"


def create_many(mds: PandoMds, d: bytes, names: list[str], conns: int = 4,
                depth: int = 32) -> None:
    """GUARDED creates pipelined over several connections; every one must succeed."""
    errors: list[str] = []

    def worker(part: list[str]) -> None:
        with connect(mds) as cl:
            calls = ((nfs3.PROC_CREATE, nfs3.create_args(d, n, nfs3.GUARDED,
                                                         Sattr3(mode=0o644)))
                     for n in part)
            for n, res in zip(part, cl.pipeline(calls, depth)):
                if res.status != NFS3_OK:  # type: ignore[attr-defined]
                    errors.append(f"{n}: {st(res)}")

    threads = [RaisingThread(target=worker, args=(names[i::conns],)) for i in range(conns)]
    for t in threads:
        t.start()
    join_all(threads)
    assert not errors, f"{len(errors)} creates failed, first: {errors[:5]}"


def check_big_directory(mds: PandoMds, c: Nfs3Client, root: bytes, n: int) -> None:
    d = new_dir(c, root, "big")
    names = [f"entry-{i:06d}-{'x' * (i % 17)}" for i in range(n)]
    t0 = time.monotonic()
    create_many(mds, d, names)
    created_s = time.monotonic() - t0
    t0 = time.monotonic()
    entries = c.readdir_all(d, count=32768)
    read_s = time.monotonic() - t0
    got = [e.text for e in entries[2:]]
    assert len(got) == len(set(got)) == n, f"{len(got)} entries, {len(set(got))} distinct"
    assert set(got) == set(names)
    cookies = [e.cookie for e in entries]
    assert len(set(cookies)) == len(cookies)
    assert attrs(c, d).size == n
    rng = random.Random(n)
    for name in rng.sample(names, 50):
        res = ok(c.lookup(d, name), f"LOOKUP {name}")
        assert res.attrs is not None and res.attrs.type == nfs3.NF3REG
    # Remove every other entry, pipelined; what is left lists exactly.
    gone = names[::2]
    calls = ((nfs3.PROC_REMOVE, nfs3.remove_args(d, x)) for x in gone)
    bad = [(x, st(r)) for x, r in zip(gone, c.pipeline(calls, 32)) if r.status != NFS3_OK]  # type: ignore[attr-defined]
    assert not bad, bad[:5]
    left = listing(c, d, 32768, plus=True)
    assert sorted(left) == sorted(names[1::2])
    assert attrs(c, d).size == n - len(gone)
    print(f"{n} creates in {created_s:.1f} s ({n / created_s:.0f}/s), "
          f"readdir in {read_s:.2f} s")


def test_directory_of_10000_entries(mds: PandoMds, c: Nfs3Client, root: bytes) -> None:
    check_big_directory(mds, c, root, 10_000)


@pytest.mark.slow
def test_directory_of_100000_entries(mds: PandoMds, c: Nfs3Client, root: bytes) -> None:
    check_big_directory(mds, c, root, 100_000)


# --- creating things ---------------------------------------------------------------

def test_create_unchecked_reuses_a_file(c: Nfs3Client, root: bytes) -> None:
    res = ok(c.create(root, "u", nfs3.UNCHECKED, Sattr3(mode=0o640)))
    assert res.fh is not None and res.attrs is not None
    assert (res.attrs.type, res.attrs.mode, res.attrs.size, res.attrs.nlink) == \
        (nfs3.NF3REG, 0o640, 0, 1)
    assert res.dir_wcc is not None and res.dir_wcc.after is not None
    c.write_all(res.fh, 0, b"keep me", FILE_SYNC)
    # UNCHECKED on an existing file: the same file, data kept unless size is set.
    again = ok(c.create(root, "u", nfs3.UNCHECKED, Sattr3(mode=0o600)))
    assert attrs(c, again.fh or b"").fileid == res.attrs.fileid
    assert ok(c.read(res.fh, 0, 100)).data == b"keep me"
    trunc = ok(c.create(root, "u", nfs3.UNCHECKED, Sattr3(size=0)))
    assert attrs(c, trunc.fh or b"").fileid == res.attrs.fileid
    assert attrs(c, res.fh).size == 0
    assert listing(c, root).count("u") == 1
    # UNCHECKED on a directory's name is no file to reuse.
    new_dir(c, root, "dir")
    assert c.create(root, "dir", nfs3.UNCHECKED).status in (nfs3.NFS3ERR_EXIST,
                                                            nfs3.NFS3ERR_ISDIR)


def test_create_guarded_refuses_existing_names(c: Nfs3Client, root: bytes) -> None:
    f = new_file(c, root, "g", b"data")
    new_dir(c, root, "gd")
    c.symlink(root, "gl", "g")
    for name in ("g", "gd", "gl"):
        res = c.create(root, name, nfs3.GUARDED, Sattr3(mode=0o600))
        assert res.status == nfs3.NFS3ERR_EXIST, f"{name}: {st(res)}"
        assert res.fh is None
    assert ok(c.read(f, 0, 10)).data == b"data"
    assert attrs(c, f).mode == 0o644


def test_create_sets_owner_from_credential_and_setgid_directory(mds: PandoMds, c: Nfs3Client,
                                                                root: bytes) -> None:
    pub = new_dir(c, root, "pub", 0o777)
    sg = new_dir(c, root, "sg", 0o777)
    ok(c.setattr(sg, Sattr3(gid=3000, mode=0o2777)))
    with connect(mds, 1001, 1001, [3000]) as u:
        a = ok(u.create(pub, "mine", nfs3.GUARDED, Sattr3(mode=0o600))).attrs
        assert a is not None and (a.uid, a.gid, a.mode) == (1001, 1001, 0o600)
        b = ok(u.create(sg, "inherits", nfs3.GUARDED, Sattr3(mode=0o600))).attrs
        assert b is not None and (b.uid, b.gid) == (1001, 3000)
        sub = ok(u.mkdir(sg, "subdir", Sattr3(mode=0o755))).attrs
        # A new directory inherits the set-gid bit too (a file does not).
        assert sub is not None and (sub.gid, sub.mode) == (3000, 0o2755)
        assert b.mode == 0o600


def test_create_exclusive_verifier(c: Nfs3Client, root: bytes) -> None:
    v1, v2 = b"verf-one", b"verf-two"
    first = ok(c.create(root, "x", nfs3.EXCLUSIVE, verf=v1))
    assert first.fh is not None
    fileid = attrs(c, first.fh).fileid
    # A retransmission (same verifier) returns the same file.
    again = ok(c.create(root, "x", nfs3.EXCLUSIVE, verf=v1), "retransmitted EXCLUSIVE")
    assert again.fh == first.fh and attrs(c, again.fh).fileid == fileid
    # Another client's verifier: the name is taken.
    other = c.create(root, "x", nfs3.EXCLUSIVE, verf=v2)
    assert other.status == nfs3.NFS3ERR_EXIST and other.fh is None
    # The client then sets the attributes the exclusive create could not carry.
    ok(c.setattr(first.fh, Sattr3(mode=0o640, mtime=nfs3.SERVER_TIME)))
    a = attrs(c, first.fh)
    assert a.mode == 0o640 and a.size == 0 and a.type == nfs3.NF3REG
    # An existing file not made exclusively matches no verifier.
    new_file(c, root, "plain")
    assert c.create(root, "plain", nfs3.EXCLUSIVE, verf=v1).status == nfs3.NFS3ERR_EXIST
    assert listing(c, root).count("x") == 1


def test_mkdir(c: Nfs3Client, root: bytes) -> None:
    before = attrs(c, root).nlink
    res = ok(c.mkdir(root, "d", Sattr3(mode=0o750)))
    assert res.fh is not None and res.attrs is not None
    assert (res.attrs.type, res.attrs.mode, res.attrs.nlink, res.attrs.size) == \
        (nfs3.NF3DIR, 0o750, 2, 0)
    assert attrs(c, root).nlink == before + 1
    inner = new_dir(c, res.fh, "inner")
    assert attrs(c, res.fh).nlink == 3
    assert attrs(c, ok(c.lookup(inner, "..")).fh).fileid == res.attrs.fileid
    assert c.mkdir(root, "d").status == nfs3.NFS3ERR_EXIST
    f = new_file(c, root, "file")
    assert c.mkdir(f, "x").status == nfs3.NFS3ERR_NOTDIR
    assert c.mkdir(root, "file").status == nfs3.NFS3ERR_EXIST
    assert attrs(c, root).nlink == before + 1


def test_mknod_fifo_devices_socket(c: Nfs3Client, root: bytes) -> None:
    fifo = ok(c.mknod(root, "fifo", nfs3.NF3FIFO, Sattr3(mode=0o620)))
    assert fifo.attrs is not None
    assert (fifo.attrs.type, fifo.attrs.mode, fifo.attrs.size) == (nfs3.NF3FIFO, 0o620, 0)
    chr_ = ok(c.mknod(root, "null", nfs3.NF3CHR, Sattr3(mode=0o666), (1, 3)))
    assert chr_.attrs is not None and (chr_.attrs.type, chr_.attrs.rdev) == (nfs3.NF3CHR, (1, 3))
    blk = ok(c.mknod(root, "sda", nfs3.NF3BLK, Sattr3(mode=0o660), (8, 0x10ffff)))
    assert blk.attrs is not None and (blk.attrs.type, blk.attrs.rdev) == (nfs3.NF3BLK,
                                                                         (8, 0x10ffff))
    sock = ok(c.mknod(root, "sock", nfs3.NF3SOCK, Sattr3(mode=0o755)))
    assert sock.attrs is not None and sock.attrs.type == nfs3.NF3SOCK
    # The device numbers are stored, not just echoed.
    assert attrs(c, chr_.fh or b"").rdev == (1, 3)
    plus = {e.text: e.attrs for e in c.readdir_all(root, plus=True)}
    assert plus["null"] is not None and plus["null"].rdev == (1, 3)
    # Regular files and directories are not made by MKNOD.
    for t in (nfs3.NF3REG, nfs3.NF3DIR, nfs3.NF3LNK):
        assert c.mknod(root, f"t{t}", t).status == nfs3.NFS3ERR_BADTYPE
    assert c.mknod(root, "fifo", nfs3.NF3FIFO).status == nfs3.NFS3ERR_EXIST
    # No data I/O on a fifo through the server.
    assert c.read(fifo.fh or b"", 0, 10).status != NFS3_OK
    assert sorted(listing(c, root)) == ["fifo", "null", "sda", "sock"]


def test_symlink_and_readlink(c: Nfs3Client, root: bytes) -> None:
    target = "../some where/./x"
    res = ok(c.symlink(root, "ln", target, Sattr3(mode=0o777)))
    assert res.fh is not None and res.attrs is not None
    assert (res.attrs.type, res.attrs.size) == (nfs3.NF3LNK, len(target))
    rl = ok(c.readlink(res.fh))
    assert rl.target == target.encode()
    assert rl.attrs is not None and rl.attrs.fileid == res.attrs.fileid
    # LOOKUP does not follow it; targets are bytes, kept exactly, up to 4095.
    assert ok(c.lookup(root, "ln")).fh == res.fh
    long_target = ("d/" * 2047 + "t").encode()
    assert len(long_target) == 4095
    big = ok(c.symlink(root, "long", long_target))
    assert ok(c.readlink(big.fh or b"")).target == long_target
    odd = b"\xff/\x01 x"
    assert ok(c.readlink(ok(c.symlink(root, "odd", odd)).fh or b"")).target == odd
    assert c.symlink(root, "ln", "other").status == nfs3.NFS3ERR_EXIST
    assert ok(c.readlink(res.fh)).target == target.encode()
    f = new_file(c, root, "f")
    assert c.readlink(f).status == nfs3.NFS3ERR_INVAL
    assert c.readlink(root).status == nfs3.NFS3ERR_INVAL


def test_link_counts(c: Nfs3Client, root: bytes) -> None:
    d1, d2 = new_dir(c, root, "d1"), new_dir(c, root, "d2")
    f = new_file(c, d1, "f", b"shared")
    res = ok(c.link(f, d1, "f-again"))
    assert res.attrs is not None and res.attrs.nlink == 2
    assert res.linkdir_wcc is not None and res.linkdir_wcc.after is not None
    ok(c.link(f, d2, "f-there"))
    assert attrs(c, f).nlink == 3
    for d, name in ((d1, "f-again"), (d2, "f-there")):
        fh = ok(c.lookup(d, name)).fh
        assert attrs(c, fh).fileid == attrs(c, f).fileid
        assert ok(c.read(fh, 0, 100)).data == b"shared"
    assert c.link(f, d2, "f-there").status == nfs3.NFS3ERR_EXIST
    # Directories cannot be hard-linked.
    assert c.link(d1, root, "dlink").status in (nfs3.NFS3ERR_BADTYPE, nfs3.NFS3ERR_ISDIR,
                                                nfs3.NFS3ERR_PERM, nfs3.NFS3ERR_INVAL)
    assert c.link(f, f, "x").status == nfs3.NFS3ERR_NOTDIR
    ok(c.remove(d1, "f"))
    assert attrs(c, f).nlink == 2
    ok(c.remove(d2, "f-there"))
    assert attrs(c, f).nlink == 1
    assert ok(c.read(f, 0, 100)).data == b"shared"
    ok(c.remove(d1, "f-again"))
    assert c.getattr(f).status == nfs3.NFS3ERR_STALE
    assert listing(c, d1) == [] and listing(c, d2) == []


# --- rename -------------------------------------------------------------------------

def test_rename_over_a_file(c: Nfs3Client, root: bytes) -> None:
    src = new_file(c, root, "src", b"source")
    dst = new_file(c, root, "dst", b"destination")
    res = ok(c.rename(root, "src", root, "dst"))
    assert res.fromdir_wcc is not None and res.todir_wcc is not None
    assert c.lookup(root, "src").status == nfs3.NFS3ERR_NOENT
    moved = ok(c.lookup(root, "dst"))
    assert moved.fh == src
    assert ok(c.read(src, 0, 100)).data == b"source"
    assert c.getattr(dst).status == nfs3.NFS3ERR_STALE
    assert c.read(dst, 0, 100).status == nfs3.NFS3ERR_STALE
    assert listing(c, root) == ["dst"]
    # A rename onto itself (or another link of the same file) changes nothing.
    ok(c.rename(root, "dst", root, "dst"))
    ok(c.link(src, root, "hard"))
    ok(c.rename(root, "dst", root, "hard"))
    assert sorted(listing(c, root)) in (["dst", "hard"], ["hard"])
    assert ok(c.read(ok(c.lookup(root, "hard")).fh, 0, 100)).data == b"source"
    assert c.rename(root, "missing", root, "x").status == nfs3.NFS3ERR_NOENT


def test_rename_directory_over_an_empty_directory(c: Nfs3Client, root: bytes) -> None:
    a = new_dir(c, root, "a")
    new_file(c, a, "inside")
    empty = new_dir(c, root, "empty")
    links = attrs(c, root).nlink
    ok(c.rename(root, "a", root, "empty"))
    assert c.getattr(empty).status == nfs3.NFS3ERR_STALE
    assert ok(c.lookup(root, "empty")).fh == a
    assert listing(c, a) == ["inside"]
    assert attrs(c, root).nlink == links - 1
    assert sorted(listing(c, root)) == ["empty"]


def test_rename_onto_a_non_empty_directory(c: Nfs3Client, root: bytes) -> None:
    new_dir(c, root, "a")
    full = new_dir(c, root, "full")
    new_file(c, full, "x")
    assert c.rename(root, "a", root, "full").status == nfs3.NFS3ERR_NOTEMPTY
    assert sorted(listing(c, root)) == ["a", "full"]
    assert listing(c, full) == ["x"]


def test_rename_across_directories(c: Nfs3Client, root: bytes) -> None:
    d1, d2 = new_dir(c, root, "d1"), new_dir(c, root, "d2")
    f = new_file(c, d1, "f", b"payload")
    sub = new_dir(c, d1, "sub")
    new_file(c, sub, "deep", b"deep")
    res = ok(c.rename(d1, "f", d2, "g"))
    assert res.fromdir_wcc is not None and res.fromdir_wcc.after is not None
    assert res.todir_wcc is not None and res.todir_wcc.after is not None
    assert (res.fromdir_wcc.after.size, res.todir_wcc.after.size) == (1, 1)
    assert ok(c.lookup(d2, "g")).fh == f
    assert ok(c.read(f, 0, 100)).data == b"payload"
    # A directory moves with its contents; its ".." and the link counts follow.
    assert (attrs(c, d1).nlink, attrs(c, d2).nlink) == (3, 2)
    ok(c.rename(d1, "sub", d2, "moved"))
    assert (attrs(c, d1).nlink, attrs(c, d2).nlink) == (2, 3)
    assert attrs(c, ok(c.lookup(sub, "..")).fh).fileid == attrs(c, d2).fileid
    assert ok(c.read(ok(c.lookup(sub, "deep")).fh, 0, 10)).data == b"deep"
    assert listing(c, d1) == [] and sorted(listing(c, d2)) == ["g", "moved"]


def test_rename_directory_into_its_own_subtree(c: Nfs3Client, root: bytes) -> None:
    a = new_dir(c, root, "a")
    b = new_dir(c, a, "b")
    cc = new_dir(c, b, "c")
    for into, name in ((a, "x"), (b, "x"), (cc, "x")):
        assert c.rename(root, "a", into, name).status == nfs3.NFS3ERR_INVAL
    # Nor onto one of its own descendants.
    assert c.rename(root, "a", a, "b").status in (nfs3.NFS3ERR_INVAL, nfs3.NFS3ERR_NOTEMPTY)
    assert listing(c, root) == ["a"] and listing(c, a) == ["b"] and listing(c, b) == ["c"]
    assert attrs(c, ok(c.lookup(a, "..")).fh).fileid == attrs(c, root).fileid


def test_rename_between_files_and_directories(c: Nfs3Client, root: bytes) -> None:
    new_file(c, root, "f", b"f")
    d = new_dir(c, root, "d")
    new_dir(c, root, "e")
    res = c.rename(root, "f", root, "d")
    assert res.status in (nfs3.NFS3ERR_EXIST, nfs3.NFS3ERR_ISDIR), st(res)
    res = c.rename(root, "e", root, "f")
    assert res.status in (nfs3.NFS3ERR_EXIST, nfs3.NFS3ERR_NOTDIR), st(res)
    assert sorted(listing(c, root)) == ["d", "e", "f"]
    assert ok(c.lookup(root, "d")).fh == d


# --- remove and rmdir ---------------------------------------------------------------

def test_remove_and_rmdir(c: Nfs3Client, root: bytes) -> None:
    d = new_dir(c, root, "d")
    f = new_file(c, d, "f", b"bytes")
    sub = new_dir(c, d, "sub")
    res = ok(c.remove(d, "f"))
    assert res.dir_wcc is not None and res.dir_wcc.after is not None
    assert res.dir_wcc.after.size == 1
    assert c.lookup(d, "f").status == nfs3.NFS3ERR_NOENT
    assert c.getattr(f).status == nfs3.NFS3ERR_STALE
    assert c.remove(d, "f").status == nfs3.NFS3ERR_NOENT
    # REMOVE is not for directories, RMDIR not for files.
    new_file(c, d, "g")
    assert c.remove(d, "sub").status in (nfs3.NFS3ERR_ISDIR, nfs3.NFS3ERR_PERM)
    assert c.rmdir(d, "g").status == nfs3.NFS3ERR_NOTDIR
    assert c.rmdir(root, "d").status == nfs3.NFS3ERR_NOTEMPTY
    assert c.rmdir(d, ".").status == nfs3.NFS3ERR_INVAL
    assert c.rmdir(sub, "..").status != NFS3_OK
    assert attrs(c, d).nlink == 3
    ok(c.rmdir(d, "sub"))
    assert attrs(c, d).nlink == 2
    assert c.getattr(sub).status == nfs3.NFS3ERR_STALE
    assert c.rmdir(d, "sub").status == nfs3.NFS3ERR_NOENT
    ok(c.remove(d, "g"))
    ok(c.rmdir(root, "d"))
    assert listing(c, root) == []
    assert c.getattr(d).status == nfs3.NFS3ERR_STALE


# --- setattr ------------------------------------------------------------------------

def test_setattr_mode_owner_and_guard(c: Nfs3Client, root: bytes) -> None:
    f = new_file(c, root, "f")
    before = attrs(c, f)
    time.sleep(0.01)
    res = ok(c.setattr(f, Sattr3(mode=0o4751)))
    assert res.wcc is not None and res.wcc.after is not None and res.wcc.after.mode == 0o4751
    a = attrs(c, f)
    assert a.mode == 0o4751 and a.ctime_ns > before.ctime_ns
    assert a.mtime_ns == before.mtime_ns
    ok(c.setattr(f, Sattr3(uid=1234, gid=5678)))
    a = attrs(c, f)
    assert (a.uid, a.gid) == (1234, 5678)
    # chown drops set-uid (chown(2)), unless the mode comes with it.
    assert a.mode & 0o4000 == 0
    ok(c.setattr(f, Sattr3(mode=0o2755, uid=1)))
    assert attrs(c, f).mode == 0o2755
    # The guard: a stale ctime is NOT_SYNC and changes nothing.
    cur = attrs(c, f)
    res = c.setattr(f, Sattr3(mode=0o600), guard_ctime_ns=cur.ctime_ns - 1)
    assert res.status == nfs3.NFS3ERR_NOT_SYNC
    assert attrs(c, f).mode == 0o2755
    ok(c.setattr(f, Sattr3(mode=0o600), guard_ctime_ns=cur.ctime_ns))
    assert attrs(c, f).mode == 0o600
    d = new_dir(c, root, "d")
    ok(c.setattr(d, Sattr3(mode=0o1777, uid=7)))
    a = attrs(c, d)
    assert (a.mode, a.uid, a.type) == (0o1777, 7, nfs3.NF3DIR)
    # Ganesha's own check answers BADTYPE for a size on anything but a file.
    assert c.setattr(d, Sattr3(size=0)).status in (nfs3.NFS3ERR_ISDIR, nfs3.NFS3ERR_INVAL,
                                                   nfs3.NFS3ERR_BADTYPE)


def test_setattr_size_grow_and_shrink(c: Nfs3Client, root: bytes) -> None:
    f = new_file(c, root, "f", bytes(range(256)) * 4)
    ok(c.setattr(f, Sattr3(size=100)))
    assert attrs(c, f).size == 100
    assert ok(c.read(f, 0, 4096)).data == bytes(range(100))
    ok(c.setattr(f, Sattr3(size=5000)))
    a = attrs(c, f)
    assert a.size == 5000
    data = c.read_all(f, 0, 10000)
    assert data == bytes(range(100)) + bytes(4900), "the tail after truncate-and-extend is not zeros"
    ok(c.setattr(f, Sattr3(size=0)))
    assert attrs(c, f).size == 0 and ok(c.read(f, 0, 10)).data == b""


def test_setattr_times(c: Nfs3Client, root: bytes) -> None:
    f = new_file(c, root, "f", b"x")
    t_a, t_m = 1_500_000_000_123_456_789, 1_400_000_000_987_654_321
    ok(c.setattr(f, Sattr3(atime=t_a, mtime=t_m)))
    a = attrs(c, f)
    assert (a.atime_ns, a.mtime_ns) == (t_a, t_m)
    ok(c.setattr(f, Sattr3(mtime=t_a)))
    a = attrs(c, f)
    assert (a.atime_ns, a.mtime_ns) == (t_a, t_a), "setting mtime alone moved atime"
    lo = time.time_ns()
    ok(c.setattr(f, Sattr3(atime=nfs3.SERVER_TIME, mtime=nfs3.SERVER_TIME)))
    hi = time.time_ns()
    a = attrs(c, f)
    slack = 2_000_000_000
    assert lo - slack <= a.atime_ns <= hi + slack, (lo, a.atime_ns, hi)
    assert lo - slack <= a.mtime_ns <= hi + slack, (lo, a.mtime_ns, hi)
    assert a.ctime_ns >= a.mtime_ns - slack
    # Directories too; a write moves mtime of the file.
    d = new_dir(c, root, "d")
    ok(c.setattr(d, Sattr3(mtime=t_m)))
    assert attrs(c, d).mtime_ns == t_m
    ok(c.setattr(f, Sattr3(mtime=t_m)))
    ok(c.write(f, 0, b"y", FILE_SYNC))
    assert attrs(c, f).mtime_ns > t_m


# --- permissions for a non-root caller ------------------------------------------------

def test_file_permissions_for_a_non_root_caller(mds: PandoMds, c: Nfs3Client,
                                               root: bytes) -> None:
    priv = new_file(c, root, "priv", b"secret", mode=0o600)
    ok(c.setattr(priv, Sattr3(uid=1000, gid=1000)))
    grp = new_file(c, root, "grp", b"group", mode=0o640)
    ok(c.setattr(grp, Sattr3(uid=1000, gid=2000)))
    with connect(mds, 1001, 1001) as other, connect(mds, 1000, 1000) as owner, \
            connect(mds, 1002, 1002, [2000]) as member:
        acc = ok(other.access(priv, nfs3.ACCESS3_ALL)).access
        assert acc & (nfs3.ACCESS3_READ | nfs3.ACCESS3_MODIFY | nfs3.ACCESS3_EXTEND) == 0
        assert other.read(priv, 0, 10).status == nfs3.NFS3ERR_ACCES
        assert other.write(priv, 0, b"x", FILE_SYNC).status == nfs3.NFS3ERR_ACCES
        assert other.setattr(priv, Sattr3(size=0)).status == nfs3.NFS3ERR_ACCES
        assert other.setattr(priv, Sattr3(mode=0o666)).status == nfs3.NFS3ERR_PERM
        assert other.setattr(priv, Sattr3(mtime=12345 * 10**9)).status == nfs3.NFS3ERR_PERM
        acc = ok(owner.access(priv, nfs3.ACCESS3_ALL)).access
        assert acc & (nfs3.ACCESS3_READ | nfs3.ACCESS3_MODIFY) == \
            nfs3.ACCESS3_READ | nfs3.ACCESS3_MODIFY
        assert acc & nfs3.ACCESS3_EXECUTE == 0
        assert ok(owner.read(priv, 0, 10)).data == b"secret"
        ok(owner.write(priv, 0, b"S", FILE_SYNC))
        ok(owner.setattr(priv, Sattr3(mode=0o604)))
        assert owner.setattr(priv, Sattr3(uid=1001)).status == nfs3.NFS3ERR_PERM
        # 0604: others may read now; the group class (none here) may not.
        assert ok(other.read(priv, 0, 10)).data == b"Secret"
        # Group access through a supplementary group only.
        assert ok(member.read(grp, 0, 10)).data == b"group"
        assert member.write(grp, 0, b"x", FILE_SYNC).status == nfs3.NFS3ERR_ACCES
        assert other.read(grp, 0, 10).status == nfs3.NFS3ERR_ACCES
        # A directory without search permission hides its names.
        hidden = new_dir(c, root, "hidden", 0o700)
        new_file(c, hidden, "inner")
        assert other.lookup(hidden, "inner").status == nfs3.NFS3ERR_ACCES
        assert other.readdir(hidden).status == nfs3.NFS3ERR_ACCES
    assert attrs(c, priv).uid == 1000
    assert ok(c.read(priv, 0, 10)).data == b"Secret", "root reads anything (no_root_squash)"


def test_directory_write_permission_for_a_non_root_caller(mds: PandoMds, c: Nfs3Client,
                                                          root: bytes) -> None:
    """A root-owned 0755 directory: uid 1001 may look, never change it."""
    d = new_dir(c, root, "ro", 0o755)
    f = new_file(c, d, "file", b"root's")
    new_dir(c, d, "dir")
    new_file(c, d, "victim")
    before = sorted(listing(c, d))
    with connect(mds, 1001, 1001) as u:
        assert ok(u.lookup(d, "file")).fh == f
        refused: dict[str, Any] = {
            "CREATE UNCHECKED": u.create(d, "n1", nfs3.UNCHECKED),
            "CREATE GUARDED": u.create(d, "n2", nfs3.GUARDED),
            "CREATE EXCLUSIVE": u.create(d, "n3", nfs3.EXCLUSIVE, verf=b"12345678"),
            "MKDIR": u.mkdir(d, "n4"),
            "SYMLINK": u.symlink(d, "n5", "file"),
            "MKNOD": u.mknod(d, "n6", nfs3.NF3FIFO),
            "LINK": u.link(f, d, "n7"),
            "REMOVE": u.remove(d, "victim"),
            "RMDIR": u.rmdir(d, "dir"),
            "RENAME": u.rename(d, "victim", d, "n8"),
            "RENAME out": u.rename(d, "victim", root, "n9"),
        }
    wrong = {k: st(r) for k, r in refused.items() if r.status != nfs3.NFS3ERR_ACCES}
    assert sorted(listing(c, d)) == before, "a non-root caller changed a root-owned 0755 directory"
    assert not wrong, f"not NFS3ERR_ACCES: {wrong}"


def test_sticky_directory(mds: PandoMds, c: Nfs3Client, root: bytes) -> None:
    tmp = new_dir(c, root, "tmp", 0o1777)
    with connect(mds, 1000, 1000) as alice, connect(mds, 1001, 1001) as bob:
        ok(alice.create(tmp, "alice's", nfs3.GUARDED, Sattr3(mode=0o666)))
        ok(alice.create(tmp, "alice2", nfs3.GUARDED, Sattr3(mode=0o666)))
        ok(bob.create(tmp, "bob's", nfs3.GUARDED, Sattr3(mode=0o666)))
        # Bob may write Alice's 0666 file, not remove or rename it.
        ok(bob.write(ok(bob.lookup(tmp, "alice's")).fh, 0, b"hi", FILE_SYNC))
        rm = bob.remove(tmp, "alice's")
        mv = bob.rename(tmp, "alice2", tmp, "stolen")
        over = bob.rename(tmp, "bob's", tmp, "alice2")
        names = sorted(listing(c, tmp))
        assert names == ["alice's", "alice2", "bob's"], f"bob changed alice's names: {names}"
        for what, r in (("REMOVE", rm), ("RENAME", mv), ("RENAME over", over)):
            assert r.status in (nfs3.NFS3ERR_ACCES, nfs3.NFS3ERR_PERM), f"{what}: {st(r)}"
        # Owners (and root) may.
        ok(alice.remove(tmp, "alice's"))
        ok(bob.rename(tmp, "bob's", tmp, "bob-renamed"))
        ok(c.remove(tmp, "alice2"))
    assert listing(c, tmp) == ["bob-renamed"]


# --- file system figures ------------------------------------------------------------

def test_fsstat_fsinfo_pathconf(mds: PandoMds, c: Nfs3Client, root: bytes) -> None:
    s = ok(c.fsstat(root))
    assert 0 < s.abytes <= s.fbytes <= s.tbytes
    assert 0 < s.afiles <= s.ffiles <= s.tfiles
    # Space is what the OSDs have, divided among the mirrors (2).
    vfs = [os.statvfs(o.data_path) for o in mds.osds]
    total = sum(v.f_blocks * v.f_frsize for v in vfs) // mds.mirrors
    assert abs(s.tbytes - total) <= total // 100, (s.tbytes, total)
    free = sum(v.f_bavail * v.f_frsize for v in vfs) // mds.mirrors
    assert abs(s.abytes - free) <= total // 50, (s.abytes, free)
    # Each new inode takes one from the free count.
    d = new_dir(c, root, "d")
    for i in range(5):
        new_file(c, d, f"f{i}")
    s2 = ok(c.fsstat(d))
    assert s2.tfiles == s.tfiles and s2.ffiles == s.ffiles - 6 and s2.afiles == s.afiles - 6
    ok(c.remove(d, "f0"))
    assert ok(c.fsstat(root)).ffiles == s.ffiles - 5
    info = ok(c.fsinfo(root))
    # (rtpref/wtpref are Ganesha's export defaults, PrefRead/PrefWrite: 64 MiB.)
    assert info.rtmax >= 1 << 16 and info.wtmax >= 1 << 16
    assert info.rtpref > 0 and info.wtpref > 0 and info.dtpref > 0
    assert info.maxfilesize >= 1 << 40
    want = nfs3.FSF3_LINK | nfs3.FSF3_SYMLINK | nfs3.FSF3_HOMOGENEOUS | nfs3.FSF3_CANSETTIME
    assert info.properties & want == want
    pc = ok(c.pathconf(root))
    assert (pc.name_max, pc.no_trunc, pc.case_insensitive, pc.case_preserving) == \
        (255, True, False, True)
    assert pc.linkmax >= 1000


# --- bad input ----------------------------------------------------------------------

def test_names_over_255_bytes(c: Nfs3Client, root: bytes) -> None:
    d = new_dir(c, root, "d")
    f = new_file(c, d, "f")
    long_, max_ = "n" * 256, "m" * 255
    calls: dict[str, Any] = {
        "CREATE": c.create(d, long_, nfs3.GUARDED),
        "CREATE EXCLUSIVE": c.create(d, long_, nfs3.EXCLUSIVE, verf=b"12345678"),
        "MKDIR": c.mkdir(d, long_),
        "SYMLINK": c.symlink(d, long_, "f"),
        "MKNOD": c.mknod(d, long_, nfs3.NF3FIFO),
        "LINK": c.link(f, d, long_),
        "RENAME to": c.rename(d, "f", d, long_),
        "LOOKUP": c.lookup(d, long_),
        "REMOVE": c.remove(d, long_),
    }
    wrong = {k: st(r) for k, r in calls.items() if r.status != nfs3.NFS3ERR_NAMETOOLONG}
    assert not wrong, f"not NFS3ERR_NAMETOOLONG: {wrong}"
    # Multi-byte: 128 two-byte characters are 256 bytes.
    assert c.create(d, "é" * 128, nfs3.GUARDED).status == nfs3.NFS3ERR_NAMETOOLONG
    assert listing(c, d) == ["f"]
    # 255 bytes is fine everywhere.
    g = new_file(c, d, max_)
    assert ok(c.lookup(d, max_)).fh == g
    ok(c.rename(d, max_, d, "é" * 127 + "x"))
    assert sorted(listing(c, d)) == sorted(["f", "é" * 127 + "x"])
    ok(c.remove(d, "é" * 127 + "x"))
    # A symlink target past 4095 bytes is refused.
    res = c.symlink(d, "ln", "t" * 4096)
    assert res.status == nfs3.NFS3ERR_NAMETOOLONG, st(res)
    assert listing(c, d) == ["f"]


@pytest.mark.parametrize("bad", [".", "..", "a/b", "/", ""])
def test_reserved_names_refused_where_a_new_name_is_needed(c: Nfs3Client, root: bytes,
                                                           bad: str) -> None:
    d = new_dir(c, root, "d")
    f = new_file(c, d, "f", b"data")
    new_dir(c, d, "sub")
    before = sorted(listing(c, d))
    calls: dict[str, Any] = {
        "CREATE UNCHECKED": c.create(d, bad, nfs3.UNCHECKED, Sattr3(size=0)),
        "CREATE GUARDED": c.create(d, bad, nfs3.GUARDED),
        "CREATE EXCLUSIVE": c.create(d, bad, nfs3.EXCLUSIVE, verf=b"12345678"),
        "MKDIR": c.mkdir(d, bad),
        "SYMLINK": c.symlink(d, bad, "f"),
        "MKNOD": c.mknod(d, bad, nfs3.NF3FIFO),
        "LINK": c.link(f, d, bad),
        "RENAME to": c.rename(d, "f", d, bad),
        "RENAME from": c.rename(d, bad, d, "new"),
    }
    accepted = [k for k, r in calls.items() if r.status == NFS3_OK]
    assert not accepted, f"{bad!r} accepted by {accepted}"
    assert sorted(listing(c, d)) == before
    assert ok(c.read(f, 0, 10)).data == b"data"
    assert attrs(c, d).nlink == 3 and attrs(c, d).size == 2
    # Removing by such a name never removes the directory itself or its parent.
    assert c.remove(d, bad).status != NFS3_OK
    assert c.rmdir(d, bad).status != NFS3_OK
    assert sorted(listing(c, d)) == before
    assert ok(c.lookup(root, "d")).fh == d


def forged_handles(real_file: bytes, root: bytes) -> dict[str, bytes]:
    hdr, fsal = real_file[:FH_HEADER], real_file[FH_HEADER:FH_HEADER + PANDO_FH_LEN]
    assert real_file[4] == PANDO_FH_LEN and len(real_file) == 32, real_file.hex()
    pad = real_file[FH_HEADER + PANDO_FH_LEN:]

    def with_fsal(b: bytes) -> bytes:
        return hdr + b + pad

    def flip(i: int, mask: int = 0x01) -> bytes:
        b = bytearray(fsal)
        b[i] ^= mask
        return with_fsal(bytes(b))

    rng = random.Random(1)
    short = bytes(hdr[:4]) + bytes([16]) + fsal[:16] + b"\0" * 3
    return {
        "random 32 bytes": bytes(rng.getrandbits(8) for _ in range(32)),
        "random 64 bytes": bytes(rng.getrandbits(8) for _ in range(64)),
        "empty": b"",
        "4 bytes": real_file[:4],
        "truncated": real_file[:31],
        "one byte more": real_file + b"\0",
        "FSAL part of 16 bytes": short,
        "FSAL version 2": flip(0, 0x03),
        "FSAL type 0": with_fsal(b"\0" + fsal[1:]),
        "FSAL type 9": with_fsal(fsal[:1] + b"\x09" + fsal[2:]),
        "padding not zero": flip(2),
        "generation flipped": flip(7),
        "generation high bit": flip(4, 0x80),
        "another inode": flip(15, 0x40),
        "inode 0": with_fsal(fsal[:8] + bytes(8) + fsal[16:]),
        "inode 2^64-1": with_fsal(fsal[:8] + b"\xff" * 8 + fsal[16:]),
        "another store": flip(20),
        "another export": hdr[:2] + b"\x00\x07" + hdr[4:] + fsal + pad,
        "root with a flipped generation": root[:FH_HEADER] + bytes(
            b ^ (1 if i == 7 else 0) for i, b in enumerate(root[FH_HEADER:FH_HEADER + 24])
        ) + root[FH_HEADER + 24:],
    }


def test_forged_handles_get_badhandle_or_stale_never_data(mds: PandoMds, root: bytes) -> None:
    c = connect(mds)
    secret = b"top secret bytes"
    f = new_file(c, root, "f", secret)
    new_file(c, root, "other", b"other")
    good = {nfs3.NFS3ERR_BADHANDLE, nfs3.NFS3ERR_STALE}
    bad: dict[str, str] = {}
    for what, fh in forged_handles(f, root).items():
        try:
            results = {
                "GETATTR": c.getattr(fh), "READ": c.read(fh, 0, 100),
                "WRITE": c.write(fh, 0, b"forged", FILE_SYNC),
                "SETATTR": c.setattr(fh, Sattr3(size=0)), "ACCESS": c.access(fh),
                "LOOKUP": c.lookup(fh, "f"), "READDIR": c.readdir(fh),
                "READDIRPLUS": c.readdirplus(fh), "READLINK": c.readlink(fh),
                "CREATE in": c.create(fh, "new", nfs3.GUARDED),
                "REMOVE in": c.remove(fh, "other"), "LINK": c.link(fh, root, "lnk"),
                "RENAME from": c.rename(fh, "f", root, "r"), "COMMIT": c.commit(fh),
            }
        except (RpcError, ConnectionClosed, OSError) as e:
            bad[what] = f"RPC error {e!r}"
            c.close()
            c = connect(mds)
            continue
        for proc, res in results.items():
            if res.status not in good:  # type: ignore[attr-defined]
                bad[f"{what}: {proc}"] = st(res)
            if proc == "READ":
                assert secret not in res.data, f"{what}: READ returned the file's data"  # type: ignore[attr-defined]
    # Nothing was changed through them.
    assert ok(c.read(f, 0, 100)).data == secret
    assert sorted(listing(c, root)) == ["f", "other"]
    c.close()
    assert not bad, f"not BADHANDLE/STALE: {bad}"


def test_oversized_handles_are_garbage_args(c: Nfs3Client, root: bytes) -> None:
    """A handle past NFS3_FHSIZE does not decode: GARBAGE_ARGS, and the
    connection goes on."""
    f = new_file(c, root, "f", b"x")
    with pytest.raises(RpcAccepted) as e:
        c.getattr(f + bytes(40))
    assert e.value.stat == GARBAGE_ARGS
    assert ok(c.read(f, 0, 10)).data == b"x"


def test_handles_of_removed_files_are_stale(c: Nfs3Client, root: bytes) -> None:
    f = new_file(c, root, "f", b"gone soon")
    d = new_dir(c, root, "d")
    ln = ok(c.symlink(root, "ln", "f")).fh or b""
    fifo = ok(c.mknod(root, "fifo", nfs3.NF3FIFO)).fh or b""
    for name in ("f", "ln", "fifo"):
        ok(c.remove(root, name))
    ok(c.rmdir(root, "d"))
    # A new file under the old name is another file: the old handle stays stale.
    g = new_file(c, root, "f", b"new")
    assert g != f
    for what, fh in (("file", f), ("dir", d), ("symlink", ln), ("fifo", fifo)):
        for proc, res in (("GETATTR", c.getattr(fh)), ("READ", c.read(fh, 0, 10)),
                          ("WRITE", c.write(fh, 0, b"z", FILE_SYNC)),
                          ("SETATTR", c.setattr(fh, Sattr3(mode=0o600))),
                          ("READLINK", c.readlink(fh)), ("READDIR", c.readdir(fh)),
                          ("CREATE in", c.create(fh, "x", nfs3.GUARDED))):
            assert res.status == nfs3.NFS3ERR_STALE, f"{what} {proc}: {st(res)}"
    assert ok(c.read(g, 0, 10)).data == b"new"
    assert listing(c, root) == ["f"]


def test_reads_past_eof(c: Nfs3Client, root: bytes) -> None:
    data = bytes(range(100))
    f = new_file(c, root, "f", data)
    cases = [(0, 50, data[:50], False), (0, 100, data, True), (0, 1000, data, True),
             (90, 100, data[90:], True), (100, 10, b"", True), (101, 10, b"", True),
             (1 << 40, 10, b"", True), ((1 << 62), 4096, b"", True)]
    for off, count, want, eof in cases:
        res = ok(c.read(f, off, count), f"READ {off}+{count}")
        assert (res.data, res.count, res.eof) == (want, len(want), eof), (off, count)
    e = new_file(c, root, "empty")
    res = ok(c.read(e, 0, 10))
    assert (res.data, res.eof) == (b"", True)
    assert c.read(new_dir(c, root, "d"), 0, 10).status == nfs3.NFS3ERR_ISDIR


def test_writes_at_offsets_near_2_63(c: Nfs3Client, root: bytes) -> None:
    maxfile = ok(c.fsinfo(root)).maxfilesize
    f = new_file(c, root, "f", b"start")
    problems = []
    # Within the advertised maximum: the write lands (and reads back) or is FBIG.
    for off in (maxfile - 5, (1 << 63) - 4096, (1 << 62)):
        g = new_file(c, root, f"near-{off}", b"start")
        res = c.write(g, off, b"tail!", FILE_SYNC)
        if res.status == NFS3_OK:
            assert res.count == 5
            assert attrs(c, g).size == off + 5
            back = c.read(g, off, 5)
            assert back.status == NFS3_OK and back.data == b"tail!", (off, st(back))
        elif res.status != nfs3.NFS3ERR_FBIG:
            problems.append(f"WRITE at {off:#x}: {st(res)}")
        assert ok(c.read(g, 0, 5)).data == b"start"
    # Past 2^63 - 1, or wrapping around 2^64: never accepted.
    for off in (1 << 63, (1 << 64) - 4, (1 << 64) - 1):
        res = c.write(f, off, b"tail!", FILE_SYNC)
        if res.status not in (nfs3.NFS3ERR_FBIG, nfs3.NFS3ERR_INVAL):
            problems.append(f"WRITE at {off:#x}: {st(res)}")
    assert attrs(c, f).size == 5 and ok(c.read(f, 0, 100)).data == b"start"
    ok(c.write(f, 5, b" still works", FILE_SYNC))
    assert ok(c.read(f, 0, 100)).data == b"start still works"
    assert not problems, problems


# --- handles across a restart ---------------------------------------------------------

def test_handles_stay_valid_across_a_restart(mds: PandoMds, root: bytes) -> None:
    small, big = b"inline bytes", os.urandom(200_000)
    with connect(mds) as c:
        d = new_dir(c, root, "d")
        f = new_file(c, d, "small", small)
        g = new_file(c, d, "big", big)
        ln = ok(c.symlink(d, "ln", "small")).fh or b""
        x = ok(c.create(d, "excl", nfs3.EXCLUSIVE, verf=b"restart!")).fh or b""
        gone = new_file(c, d, "gone", b"bye")
        gone_dir = new_dir(c, d, "gone-dir")
        ok(c.remove(d, "gone"))
        ok(c.rmdir(d, "gone-dir"))
        ids = {fh: attrs(c, fh).fileid for fh in (root, d, f, g, ln, x)}
    mds.restart()
    assert mds.root_handle() == root
    with connect(mds) as c:
        for fh, fileid in ids.items():
            assert attrs(c, fh).fileid == fileid
        assert c.read_all(f, 0, 100) == small
        assert c.read_all(g, 0, len(big) + 10) == big
        assert ok(c.readlink(ln)).target == b"small"
        assert ok(c.lookup(d, "small")).fh == f and ok(c.lookup(root, "d")).fh == d
        for what, fh in (("file", gone), ("dir", gone_dir)):
            res = c.getattr(fh)
            assert res.status == nfs3.NFS3ERR_STALE, f"removed {what}: {st(res)}"
            assert c.read(fh, 0, 10).status == nfs3.NFS3ERR_STALE
        # The exclusive create's verifier survived too.
        assert ok(c.create(d, "excl", nfs3.EXCLUSIVE, verf=b"restart!")).fh == x
        assert c.create(d, "excl", nfs3.EXCLUSIVE, verf=b"another!").status == nfs3.NFS3ERR_EXIST
        # New inodes never reuse an id from before the restart.
        h = new_file(c, d, "after")
        assert attrs(c, h).fileid not in ids.values()
        assert attrs(c, h).fileid > max(ids.values())
        ok(c.write(f, 0, b"I", FILE_SYNC))
        assert c.read_all(f, 0, 100) == b"I" + small[1:]
