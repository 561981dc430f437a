"""Pieces of tests/bench/metadata: the guest's workload program, the guest
script that mounts two NFS servers from one kernel client, a VM that carries
the program in its initramfs, and a pipelined NFSv3 populator for big
directories.

The workload runs in a stock kernel under qemu TCG, where every guest
instruction is emulated: a busybox loop of `touch` costs milliseconds of
emulated CPU per file, more than either server.  So the guest runs
`metabench`, a small static C program (source below, compiled on the host
with `gcc -static`, cached by the hash of its source) that times its own
loop of system calls with CLOCK_MONOTONIC and prints one JSON line:

    metabench create DIR N [SEC]  mkdir DIR, then N x open(O_CREAT|O_WRONLY, 0644) + close,
                                  stopping early after SEC seconds; says how many it made
    metabench stat DIR N          N x stat(DIR/fNNNNNNN)
    metabench readdir DIR [WANT]  getdents64 until the end; the entry count (., .. left out)
    metabench write FILE MIB      MIB x write(1 MiB), fsync, close
    metabench read FILE MIB       read(1 MiB) until EOF; size and block headers checked

File names are `f%07d`.  Each 1 MiB block written carries its index in its
first 8 bytes (the rest is one fixed pattern, so the emulated CPU does not
fill buffers); `read` checks every header and the total size.
"""
from __future__ import annotations

import hashlib
import json
import os
import shlex
import socket
import struct
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

from .initramfs import base_archive, read_cpio, scenario_archive
from .kernels import Kernel
from .nfs3_setup import NFS3_FHSIZE, NFS_PROGRAM, NFS_V3, NFSPROC3_CREATE, UNCHECKED, Nfs3Error
from .oncrpc import LAST_FRAGMENT, auth_sys, decode_reply, encode_call
from .pod import Pod, build_dir
from .threads import RaisingThread, join_all
from .vm import GUEST_ADDR, MountTarget, Vm
from .xdr import Packer, Unpacker

NFSPROC3_MKDIR = 9
NFS3ERR_EXIST = 17

GUEST_C = r"""
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MIB (1u << 20)
#define MAGIC 0x50414e444f000000ull /* "PANDO" */

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static const char *op = "?";
static double t0, last_progress;
static int console_fd = -1;

/* Every 5 s a line on the console (work done, of total, seconds), so the
 * host sees a long run alive and can show how far it got. */
static void progress(long done, long total)
{
	if (console_fd < 0)
		return;
	double t = now();
	if (t - last_progress < 5.0)
		return;
	last_progress = t;
	dprintf(console_fd, "metabench-progress %s %ld %ld %.1f\n", op, done, total, t - t0);
}

/* Failure: one JSON line with what failed and how far it got; exit 1. */
static void die(const char *what, const char *name, long done)
{
	int e = errno;
	printf("{\"op\":\"%s\",\"ok\":false,\"done\":%ld,\"seconds\":%.6f,"
	       "\"error\":\"%s %s: %s\"}\n", op, done, t0 ? now() - t0 : 0.0,
	       what, name, e ? strerror(e) : "unexpected result");
	exit(1);
}

static void name_of(char *buf, size_t len, const char *dir, long i)
{
	snprintf(buf, len, "%s/f%07ld", dir, i);
}

/* Creates f0000000.. until n exist or `limit` seconds have gone by (0: no
 * limit); reports how many it made. */
static int do_create(const char *dir, long n, double limit)
{
	char p[4096];
	long i;
	if (mkdir(dir, 0755) != 0 && errno != EEXIST)
		die("mkdir", dir, 0);
	t0 = last_progress = now();
	for (i = 0; i < n; i++) {
		progress(i, n);
		if (limit > 0 && now() - t0 >= limit)
			break;
		name_of(p, sizeof(p), dir, i);
		int fd = open(p, O_CREAT | O_WRONLY, 0644);
		if (fd < 0)
			die("open", p, i);
		if (close(fd) != 0)
			die("close", p, i);
	}
	double s = now() - t0;
	printf("{\"op\":\"create\",\"ok\":true,\"n\":%ld,\"seconds\":%.6f,\"rate\":%.1f,"
	       "\"capped\":%s}\n", i, s, i / s, i < n ? "true" : "false");
	return 0;
}

static int do_stat(const char *dir, long n)
{
	char p[4096];
	struct stat st;
	t0 = last_progress = now();
	for (long i = 0; i < n; i++) {
		progress(i, n);
		name_of(p, sizeof(p), dir, i);
		if (stat(p, &st) != 0)
			die("stat", p, i);
		if (!S_ISREG(st.st_mode)) {
			errno = 0;
			die("stat (not a regular file)", p, i);
		}
	}
	double s = now() - t0;
	printf("{\"op\":\"stat\",\"ok\":true,\"n\":%ld,\"seconds\":%.6f,\"rate\":%.1f}\n",
	       n, s, n / s);
	return 0;
}

static int do_readdir(const char *dir, long want)
{
	static char buf[1 << 18];
	long n = 0, calls = 0;
	t0 = last_progress = now();
	int fd = open(dir, O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		die("open", dir, 0);
	for (;;) {
		long got = syscall(SYS_getdents64, fd, buf, sizeof(buf));
		if (got < 0)
			die("getdents64", dir, n);
		if (got == 0)
			break;
		calls++;
		progress(n, -1);
		for (long off = 0; off < got;) {
			struct dirent64 *d = (struct dirent64 *)(buf + off);
			if (strcmp(d->d_name, ".") != 0 && strcmp(d->d_name, "..") != 0)
				n++;
			off += d->d_reclen;
		}
	}
	close(fd);
	double s = now() - t0;
	if (want >= 0 && n != want) {
		errno = 0;
		char msg[64];
		snprintf(msg, sizeof(msg), "(%ld entries, want %ld)", n, want);
		die("readdir", msg, n);
	}
	printf("{\"op\":\"readdir\",\"ok\":true,\"n\":%ld,\"getdents\":%ld,\"seconds\":%.6f,"
	       "\"rate\":%.1f}\n", n, calls, s, n / s);
	return 0;
}

static char *block(void)
{
	char *b = aligned_alloc(4096, MIB);
	if (!b)
		die("malloc", "1 MiB", 0);
	for (unsigned i = 0; i < MIB; i++)
		b[i] = (char)(i * 31 + 7);
	return b;
}

static int do_write(const char *file, long mib)
{
	char *b = block();
	t0 = last_progress = now();
	int fd = open(file, O_CREAT | O_TRUNC | O_WRONLY, 0644);
	if (fd < 0)
		die("open", file, 0);
	for (long i = 0; i < mib; i++) {
		progress(i, mib);
		uint64_t h = MAGIC | (uint64_t)i;
		memcpy(b, &h, sizeof(h));
		for (size_t off = 0; off < MIB;) {
			ssize_t w = write(fd, b + off, MIB - off);
			if (w <= 0)
				die("write", file, i);
			off += (size_t)w;
		}
	}
	double tw = now() - t0;
	if (fsync(fd) != 0)
		die("fsync", file, mib);
	if (close(fd) != 0)
		die("close", file, mib);
	double s = now() - t0;
	double bytes = (double)mib * MIB;
	printf("{\"op\":\"write\",\"ok\":true,\"bytes\":%.0f,\"seconds\":%.6f,\"mb_s\":%.2f,"
	       "\"write_seconds\":%.6f}\n", bytes, s, bytes / s / 1e6, tw);
	return 0;
}

static int do_read(const char *file, long mib)
{
	char *b = block();
	long blocks = 0;
	uint64_t total = 0;
	t0 = last_progress = now();
	int fd = open(file, O_RDONLY);
	if (fd < 0)
		die("open", file, 0);
	for (;;) {
		size_t off = 0;
		while (off < MIB) {
			ssize_t r = read(fd, b + off, MIB - off);
			if (r < 0)
				die("read", file, blocks);
			if (r == 0)
				break;
			off += (size_t)r;
		}
		if (off == 0)
			break;
		uint64_t h;
		memcpy(&h, b, sizeof(h));
		if (h != (MAGIC | (uint64_t)blocks)) {
			errno = 0;
			die("read: wrong block header in", file, blocks);
		}
		total += off;
		blocks++;
		progress(blocks, mib);
		if (off < MIB)
			break;
	}
	close(fd);
	double s = now() - t0;
	if (total != (uint64_t)mib * MIB) {
		errno = 0;
		die("read: wrong size of", file, blocks);
	}
	printf("{\"op\":\"read\",\"ok\":true,\"bytes\":%llu,\"seconds\":%.6f,\"mb_s\":%.2f}\n",
	       (unsigned long long)total, s, total / s / 1e6);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	console_fd = open("/dev/console", O_WRONLY | O_NOCTTY);
	if (argc < 3) {
		fprintf(stderr, "usage: metabench create|stat DIR N | readdir DIR [WANT] | "
				"write|read FILE MIB\n");
		return 2;
	}
	op = argv[1];
	long n = argc > 3 ? atol(argv[3]) : -1;
	if (!strcmp(op, "create") && n > 0)
		return do_create(argv[2], n, argc > 4 ? atof(argv[4]) : 0);
	if (!strcmp(op, "stat") && n > 0)
		return do_stat(argv[2], n);
	if (!strcmp(op, "readdir"))
		return do_readdir(argv[2], n);
	if (!strcmp(op, "write") && n > 0)
		return do_write(argv[2], n);
	if (!strcmp(op, "read") && n > 0)
		return do_read(argv[2], n);
	fprintf(stderr, "metabench: bad arguments for %s: '%s' (create, stat, write and read "
			"need a count above 0)\n", op, argc > 3 ? argv[3] : "");
	return 2;
}
"""


def build_guest_tool(out_dir: Path | None = None) -> Path:
    """`metabench`, statically linked, in build/bench-metadata/ (rebuilt
    only when the source above changes)."""
    out_dir = out_dir or build_dir() / "bench-metadata"
    out_dir.mkdir(parents=True, exist_ok=True)
    tag = hashlib.sha256(GUEST_C.encode()).hexdigest()[:12]
    exe = out_dir / f"metabench-{tag}"
    if exe.exists():
        return exe
    src = out_dir / f"metabench-{tag}.c"
    src.write_text(GUEST_C)
    tmp = exe.with_suffix(f".tmp{os.getpid()}")
    subprocess.run(["gcc", "-static", "-O2", "-Wall", "-Werror", "-o", str(tmp), str(src)],
                   check=True)
    tmp.replace(exe)
    return exe


# ---- the guest side ---------------------------------------------------------

@dataclass(frozen=True)
class GuestMount:
    """One server as the guest mounts it at /mnt/LABEL."""
    label: str
    vers: str              # "v4.1" or "v3"
    port: int
    mountport: int
    export3: str
    export4: str
    address: str = GUEST_ADDR
    extra_opts: str = ""   # appended to the mount options

    def options(self) -> str:
        if self.vers == "v3":
            o = (f"vers=3,proto=tcp,addr={self.address},port={self.port},"
                 f"mountport={self.mountport},mountproto=tcp,nolock")
        else:
            o = f"vers={self.vers[1:]},proto=tcp,addr={self.address},port={self.port}"
        return o + (f",{self.extra_opts}" if self.extra_opts else "")

    def source(self) -> str:
        return f"{self.address}:{self.export3 if self.vers == 'v3' else self.export4}"

    @property
    def mountpoint(self) -> str:
        return f"/mnt/{self.label}"


@dataclass
class Item:
    """One timed run: `metabench OP PATH ARG [ARG2]` on one server's fresh
    mount.  A stat's ARG may be "created": as many as the create made."""
    id: int
    label: str
    op: str
    path: str       # relative to the mount
    arg: int | str
    rep: int
    arg2: str = ""  # create: the time limit in seconds


# The guest script: sourced by tests/e2e/guest/lib.sh's pando_main once the
# modules are loaded and the network is up (so emit, say and json_str exist).
# Every item mounts its server afresh (after the previous item unmounted it),
# so stat, readdir and read start from a cold client cache: the unmount
# dropped every inode, dentry and page of that mount.  The per-op counts and
# RTTs of the item's mount come from /proc/self/mountstats.
# `opstats MOUNTPOINT`, for the guest scripts of this and bench_pnfs.
OPSTATS_SH = r"""
# The mount's per-op statistics (OP ops trans timeouts sent recv queue_ms
# rtt_ms exec_ms errors) as "OP ops rtt_ms exec_ms sent recv,..." for the
# operations used, then "pnfs R W": its pnfsread and pnfswrite events
# (I/O the client sent to data servers under a layout).
opstats() {
  awk -v m="$1" '$1 == "device" { cur = ($5 == m) ; p = 0; next }
       cur && $1 == "events:" { pr = $27; pw = $28 }
       cur && /per-op statistics/ { p = 1; next }
       cur && p && $1 ~ /:$/ && $2 > 0 { sub(/:$/, "", $1); printf "%s%s %s %s %s %s %s", s, $1, $2, $8, $9, $5, $6; s = "," }
       END { printf "%spnfs %d %d", s, pr, pw }' /proc/self/mountstats
}
"""

GUEST_SCRIPT_HEAD = r"""
MB=/pando/metabench""" + OPSTATS_SH + r"""# A stat run given the count "created" stats as many files as the create
# run into the same directory made (this boot keeps that in /tmp/count.*).
item() {  # ID LABEL OP PATH ARG [ARG2]
  id=$1; label=$2; op=$3; path=/mnt/$2/$4; arg=$5; arg2=$6
  count=/tmp/count.$label.$(echo "$4" | tr / _)
  if [ "$arg" = created ]; then arg=$(cat "$count" 2>/dev/null || echo missing); fi
  say "item $id: $label $op $path $arg $arg2"
  cd /
  sync; echo 3 > /proc/sys/vm/drop_caches
  mkdir -p "/mnt/$label"
  if ! "mount_$label" > /tmp/mnt.out 2>&1; then
    emit "{\"event\":\"item\",\"id\":$id,\"rc\":-1,\"error\":$(json_str 2000 < /tmp/mnt.out)}"
    return
  fi
  opts=$(awk -v m="/mnt/$label" '$2 == m { print $4 }' /proc/mounts)
  "$MB" "$op" "$path" "$arg" $arg2 > /tmp/res.out 2> /tmp/res.err
  rc=$?
  if [ "$op" = create ] && [ $rc -eq 0 ]; then
    sed -n 's/.*"n":\([0-9]*\).*/\1/p' /tmp/res.out > "$count"
  fi
  ops=$(opstats "/mnt/$label")
  if [ -n "$DUMP_MOUNTSTATS" ]; then
    echo "=== item $id mountstats ==="; cat /proc/self/mountstats; echo "=== end of item $id ==="
  fi > /dev/console
  res=$(head -n 1 /tmp/res.out)
  case "$res" in "{"*"}") ;; *) res=null ;; esac
  umount "/mnt/$label" > /tmp/umnt.out 2>&1 || echo "umount: $(cat /tmp/umnt.out)" >> /tmp/res.err
  emit "{\"event\":\"item\",\"id\":$id,\"rc\":$rc,\"result\":$res,\"ops\":\"$ops\",\"mount_opts\":\"$opts\",\"stderr\":$(json_str 2000 < /tmp/res.err)}"
}
"""


def guest_script(mounts: Iterable[GuestMount], items: Iterable[Item],
                 dump_mountstats: bool = False) -> str:
    """The scenario: mount functions, then one `item` line per run.  With
    `dump_mountstats` every item's whole /proc/self/mountstats goes to the
    console log."""
    lines = ["# generated by pando_testing.bench_metadata", GUEST_SCRIPT_HEAD,
             f"DUMP_MOUNTSTATS={'1' if dump_mountstats else ''}"]
    for m in mounts:
        lines.append(f"mount_{m.label}() {{ mount -t nfs -o {shlex.quote(m.options())} "
                     f"{shlex.quote(m.source())} {m.mountpoint}; }}")
    for it in items:
        words = ["item", str(it.id), it.label, it.op, it.path, str(it.arg)]
        lines.append(shlex.join(words + ([it.arg2] if it.arg2 else [])))
    return "\n".join(lines) + "\n"


# The pNFS layout drivers.  A guest that does not load them cannot use
# layouts (it asks for none), so all its I/O goes through the metadata
# manager: Pando's gateway path.
LAYOUT_MODULES = ("nfs_layout_flexfiles", "nfs_layout_nfsv41_files")


class GuestScript:
    """A ready-made guest script in the place of a vm.Scenario."""

    def __init__(self, text: str) -> None:
        self.text = text

    def script(self) -> str:
        return self.text

    def __len__(self) -> int:
        return self.text.count("\nitem ")


class BenchVm(Vm):
    """A Vm running a GuestScript, whose initramfs also carries
    /pando/metabench: a third cpio archive appended to the usual two (the
    kernel unpacks them in order).  Modules in `skip_modules` are left out
    of the guest's load list (that archive replaces /lib/modules/load.list
    of the cached base archive)."""

    def __init__(self, pod: Pod, kernel: Kernel, workdir: Path, name: str,
                 target: MountTarget, script: str, *, tool: Path,
                 skip_modules: Iterable[str] = (), **kw: Any) -> None:
        super().__init__(pod, kernel, workdir, name, target,
                         GuestScript(script), **kw)  # type: ignore[arg-type]
        self.tool = tool
        self.skip_modules = set(skip_modules)

    def _initrd(self) -> Path:
        path = super()._initrd()
        files = {"pando/metabench": (self.tool.read_bytes(), 0o755)}
        if self.skip_modules:
            base = read_cpio(base_archive(self.kernel).read_bytes())
            names = base["lib/modules/load.list"][1].decode().split()
            keep = [n for n in names if n not in self.skip_modules]
            files["lib/modules/load.list"] = (("\n".join(keep) + "\n").encode(), 0o644)
        with open(path, "ab") as f:
            f.write(scenario_archive(files))
        return path


@dataclass(frozen=True)
class OpCount:
    ops: int
    rtt_ms: int
    exec_ms: int
    sent: int
    recv: int


def parse_opstats(text: str) -> tuple[dict[str, OpCount], tuple[int, int]]:
    """The guest's opstats line -> ({OP: OpCount}, (pnfsread, pnfswrite))."""
    ops: dict[str, OpCount] = {}
    pnfs = (0, 0)
    for part in (text or "").split(","):
        f = part.split()
        if len(f) == 3 and f[0] == "pnfs" and f[1].isdigit() and f[2].isdigit():
            pnfs = (int(f[1]), int(f[2]))
        elif len(f) == 6 and all(x.isdigit() for x in f[1:]):
            ops[f[0]] = OpCount(*(int(x) for x in f[1:]))
    return ops, pnfs


# ---- populating a big directory from the host ---------------------------------

class PipelinedNfs3:
    """NFSv3 MKDIR and CREATE with many calls in flight on one TCP
    connection (Nfs3Setup waits for each reply): fills a directory with
    100,000 names in seconds rather than minutes."""

    def __init__(self, sock: socket.socket, window: int = 64) -> None:
        self.sock, self.window = sock, window
        self.cred = auth_sys(0, 0)
        self.xid = struct.unpack(">I", os.urandom(4))[0] >> 1
        self.buf = b""

    def close(self) -> None:
        self.sock.close()

    def _send(self, proc: int, args: bytes) -> int:
        self.xid = (self.xid + 1) & 0xFFFFFFFF
        rec = encode_call(self.xid, NFS_PROGRAM, NFS_V3, proc, args, self.cred)
        self.sock.sendall(struct.pack(">I", LAST_FRAGMENT | len(rec)) + rec)
        return self.xid

    def _recv(self) -> bytes:
        parts = []
        while True:
            while len(self.buf) < 4:
                self._fill()
            (mark,) = struct.unpack(">I", self.buf[:4])
            n = mark & ~LAST_FRAGMENT
            while len(self.buf) < 4 + n:
                self._fill()
            parts.append(self.buf[4:4 + n])
            self.buf = self.buf[4 + n:]
            if mark & LAST_FRAGMENT:
                return b"".join(parts)

    def _fill(self) -> None:
        b = self.sock.recv(1 << 20)
        if not b:
            raise ConnectionError("server closed the connection")
        self.buf += b

    @staticmethod
    def _sattr(p: Packer, mode: int) -> Packer:
        p.boolean(True).u32(mode)          # mode
        p.boolean(False).boolean(False)    # uid, gid
        p.boolean(False)                   # size
        return p.u32(0).u32(0)             # atime, mtime: DONT_CHANGE

    def mkdir(self, dir_fh: bytes, name: str, exist_ok: bool = True) -> bytes:
        p = self._sattr(Packer().opaque(dir_fh).string(name), 0o755)
        xid = self._send(NFSPROC3_MKDIR, p.bytes())
        r = decode_reply(self._recv())
        assert r.xid == xid
        u = Unpacker(r.body)
        status = u.u32()
        if status == NFS3ERR_EXIST and exist_ok:
            from .nfs3_setup import Nfs3Setup  # a plain LOOKUP on the same connection
            return Nfs3Setup.over(self.sock).lookup(dir_fh, name)
        if status != 0:
            raise Nfs3Error(f"MKDIR {name}", status)
        if not u.boolean():
            raise Nfs3Error(f"MKDIR {name}: no handle in the reply", 0)
        return u.opaque(NFS3_FHSIZE)

    def create_many(self, dir_fh: bytes, names: list[str],
                    progress: Callable[[int], None] | None = None) -> None:
        """CREATE UNCHECKED of every name, `window` calls in flight."""
        pending: dict[int, str] = {}
        it = iter(names)
        done = 0
        exhausted = False
        while True:
            while not exhausted and len(pending) < self.window:
                name = next(it, None)
                if name is None:
                    exhausted = True
                    break
                p = self._sattr(Packer().opaque(dir_fh).string(name).u32(UNCHECKED), 0o644)
                pending[self._send(NFSPROC3_CREATE, p.bytes())] = name
            if not pending:
                return
            r = decode_reply(self._recv())
            name = pending.pop(r.xid)
            status = Unpacker(r.body).u32()
            if status != 0:
                raise Nfs3Error(f"CREATE {name}", status)
            done += 1
            if progress is not None and done % 1000 == 0:
                progress(1000)


def populate(pod: Pod, host: str, port: int, root_fh: bytes, dirname: str, count: int,
             connections: int = 4, window: int = 32,
             progress: Callable[[int], None] | None = None) -> float:
    """MKDIR dirname in the export root and CREATE f0000000.. in it over
    `connections` pipelined connections; returns the seconds the creates took."""
    import threading
    first = PipelinedNfs3(pod.connect(host, port, timeout=120), window)
    try:
        dfh = first.mkdir(root_fh, dirname)
    finally:
        first.close()
    names = [f"f{i:07d}" for i in range(count)]
    conns = [PipelinedNfs3(pod.connect(host, port, timeout=120), window)
             for _ in range(connections)]
    lock = threading.Lock()
    total = [0]

    def tick(n: int) -> None:
        with lock:
            total[0] += n
            if progress is not None:
                progress(total[0])

    t0 = time.monotonic()
    threads = [RaisingThread(target=c.create_many, args=(dfh, names[i::connections], tick))
               for i, c in enumerate(conns)]
    for t in threads:
        t.start()
    try:
        join_all(threads)
    finally:
        for c in conns:
            c.close()
    return time.monotonic() - t0


def events(results_log: Path) -> list[dict[str, Any]]:
    """`PANDO {json}` lines of a results log written so far."""
    out: list[dict[str, Any]] = []
    try:
        text = results_log.read_text(errors="replace")
    except FileNotFoundError:
        return out
    for line in text.replace("\r", "").splitlines():
        if line.startswith("PANDO "):
            try:
                out.append(json.loads(line[6:]))
            except ValueError:
                pass  # a line still being written
    return out


class LogTail:
    """New complete lines of a growing file (a VM's console log), each
    call returning what was appended since the last."""

    def __init__(self, path: Path) -> None:
        self.path, self.pos, self.partial = path, 0, b""

    def lines(self) -> list[str]:
        try:
            with open(self.path, "rb") as f:
                f.seek(self.pos)
                data = f.read()
        except FileNotFoundError:
            return []
        self.pos += len(data)
        data = self.partial + data
        *done, self.partial = data.split(b"\n")
        return [x.decode(errors="replace").replace("\r", "") for x in done]
