"""The cluster and the accounting of tests/bench/ec_files: six capped
pando-osd and one metadata manager in a Pod, directories with an RS(k,m)
and a mirrored policy, files written and read through the manager's
NFSv3 gateway with nfs3load, and the bytes the OSDs hold."""
from __future__ import annotations

import json
import math
import os
import random
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import nfs3
from .cluster_map import file_map
from .daemons import OsdProcess
from .keys import ClusterKey, write_cluster_key
from .layout_policy import layout_set, mkdir
from .mds import PandoMds
from .mds_files import connect
from .nfs3 import NFS3_OK, Nfs3Client, Sattr3
from .pod import Pod

KIB = 1 << 10
MIB = 1 << 20
GIB = 1 << 30
BACKOFF_S = 2.0        # the FSAL's osd_conns back-off after a failed connect


@dataclass
class Usage:
    """Bytes under the OSDs' objects/ directories: data files and their
    checksum files (`.c`), allocated (st_blocks) and logical (st_size)."""
    data_alloc: int = 0
    data_size: int = 0
    csum_alloc: int = 0

    def __sub__(self, o: "Usage") -> "Usage":
        return Usage(self.data_alloc - o.data_alloc, self.data_size - o.data_size,
                     self.csum_alloc - o.csum_alloc)


def object_usage(data_dirs: list[Path]) -> Usage:
    u = Usage()
    for d in data_dirs:
        for dirpath, _, names in os.walk(d / "objects"):
            for n in names:
                try:
                    st = os.stat(os.path.join(dirpath, n))
                except FileNotFoundError:
                    continue    # removed meanwhile
                if n.endswith(".c"):
                    u.csum_alloc += st.st_blocks * 512
                else:
                    u.data_alloc += st.st_blocks * 512
                    u.data_size += st.st_size
    return u


def object_usage_count(data_dirs: list[Path]) -> int:
    return sum(1 for d in data_dirs for _, _, names in os.walk(d / "objects")
               for n in names if not n.endswith(".c"))


def process_cpu_seconds(pid: int) -> float:
    """utime + stime of the whole process, ended threads included (the
    transcoder's copy threads end with each file; schedstat of the live
    threads would lose their time and can even go backwards)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def mixed_sizes(total: int, lo: int, hi: int, seed: int = 14) -> list[int]:
    """File sizes drawn log-uniformly from [lo, hi] until they sum to
    `total` (the last one cut to fit, but kept at least `lo`)."""
    rng = random.Random(seed)
    out: list[int] = []
    left = total
    while left > 0:
        s = int(math.exp(rng.uniform(math.log(lo), math.log(hi))))
        s = max(lo, min(s, left))
        out.append(s)
        left -= s
    return out


@dataclass
class EcCluster:
    """Six OSDs, each capped at `cap_mib` MiB/s read and write (0: no
    cap), under one metadata manager (Mirrors 2, Inline_Max `inline_max`,
    no object pool: every object the OSDs hold belongs to a file)."""
    pod: Pod
    work: Path
    cap_mib: int
    osd_threads: int = 8
    inline_max: int = 65536
    extra_fsal: str = ""             # more FSAL option lines (Transcode_Interval)
    key: ClusterKey = field(init=False)
    osds: list[OsdProcess] = field(default_factory=list)
    mds: PandoMds | None = None
    client: Nfs3Client | None = None

    def __post_init__(self) -> None:
        self.key = write_cluster_key(self.work / "cluster.key", key_id=1)

    def osd_args(self) -> list[str]:
        args = ["--log-level", "info"]
        if self.cap_mib:
            args += ["--read-bandwidth", f"{self.cap_mib}M", "--write-bandwidth",
                     f"{self.cap_mib}M"]
        return args

    def start(self, n_osds: int = 6) -> None:
        for i in range(1, n_osds + 1):
            o = OsdProcess(self.pod, self.work / "osds", self.key, osd_id=i,
                           threads=self.osd_threads, extra_args=self.osd_args())
            o.format()
            self.osds.append(o.start())
        self.mds = PandoMds(self.pod, self.work / "mds", osds=self.osds, key=self.key,
                            mirrors=2, inline_max=self.inline_max, object_pool=0,
                            extra_fsal=self.extra_fsal).start()
        self.client = connect(self.mds)

    def nfs(self) -> Nfs3Client:
        assert self.client is not None
        return self.client

    def the_mds(self) -> PandoMds:
        assert self.mds is not None
        return self.mds

    def policy_dir(self, name: str, policy: dict[str, Any]) -> bytes:
        """A new directory in the export root carrying `policy`."""
        fh = mkdir(self.nfs(), self.the_mds().root_handle(), name)
        ok, msg = layout_set(self.the_mds(), f"/{name}", policy)
        if not ok:
            raise RuntimeError(f"layout set /{name} {policy}: {msg}")
        return fh

    def create(self, dir_fh: bytes, name: str) -> bytes:
        res = self.nfs().create(dir_fh, name, nfs3.GUARDED, Sattr3(mode=0o644))
        if res.status != NFS3_OK or res.fh is None:
            raise RuntimeError(f"CREATE {name}: NFS status {res.status}")
        return res.fh

    def remove(self, dir_fh: bytes, name: str) -> None:
        res = self.nfs().remove(dir_fh, name)
        if res.status != NFS3_OK:
            raise RuntimeError(f"REMOVE {name}: NFS status {res.status}")

    def components(self, path: str) -> list[dict[str, Any]]:
        """The file's components in map order (RS: the k data units of a
        group, then its m parity units)."""
        ok, msg, j = file_map(self.the_mds(), path)
        if not ok:
            raise RuntimeError(f"file_map {path}: {msg}")
        return [k for g in j["groups"] for k in g["components"]]

    def transcode(self, path: str, timeout: float = 600.0) -> int:
        """dbus transcode_file: the file at `path` rewritten to its cold
        rule's RS(k,m) now; returns when the map is switched, with the
        bytes copied.  cluster_map.dbus_json's 30 s limit is too short for
        a large file on capped OSDs, hence this call of its own."""
        mds = self.the_mds()
        cp = self.pod.run(["dbus-send", "--system", "--print-reply", "--dest=org.ganesha.nfsd",
                           "/org/ganesha/nfsd/pando", "org.ganesha.nfsd.pando.transcode_file",
                           f"string:{path}"], check=False, env=mds.dbus_env(), timeout=timeout)
        status = re.search(r"^\s*boolean (true|false)$", cp.stdout, re.MULTILINE)
        strings = re.findall(r'^\s*string "(.*)"$', cp.stdout, re.MULTILINE)
        if cp.returncode != 0 or not status or len(strings) != 2:
            raise RuntimeError(f"transcode_file {path}: {cp.stderr.strip() or cp.stdout!r}")
        if status.group(1) != "true":
            raise RuntimeError(f"transcode_file {path}: {strings[0]}")
        return int(json.loads(strings[1])["bytes"])

    def object_count(self) -> int:
        """Data objects on the OSDs (checksum files not counted)."""
        return object_usage_count([o.data_path for o in self.osds])

    def settle(self, want: int, timeout: float = 180.0) -> int:
        """Waits until the OSDs hold `want` data objects (the reaper has
        removed what removal intents name); the count at the end."""
        deadline = time.monotonic() + timeout
        n = self.object_count()
        while n != want and time.monotonic() < deadline:
            time.sleep(0.5)
            n = self.object_count()
        return n

    def osd(self, osd_id: int) -> OsdProcess:
        return next(o for o in self.osds if o.osd_id == osd_id)

    def io_bytes(self) -> dict[int, tuple[int, int]]:
        """(bytes read, bytes written) by each running OSD since its start,
        NFS and control together (pando-osd-tool stat)."""
        out: dict[int, tuple[int, int]] = {}
        for o in self.osds:
            if not o.alive():
                continue
            cp = o.tool("stat", text=True)
            v = dict(ln.split(None, 1) for ln in cp.stdout.splitlines() if " " in ln)
            rd = int(v["ctl_read_bytes"]) + int(v["nfs_read_bytes"])
            wr = int(v["ctl_write_bytes"]) + int(v["nfs_write_bytes"])
            out[o.osd_id] = (rd, wr)
        return out

    def revive(self, o: OsdProcess, probe_dir: bytes, row: int) -> None:
        """A killed OSD started again and the manager made to know it: the
        back-off a refused connect started waited out (osd_conns.c,
        backoff_ms: until then placement refuses the OSD new objects,
        EHOSTDOWN), then one whole `row` of a probe file in `probe_dir`
        (an RS directory whose files span every OSD) written UNSTABLE and
        committed.  The manager learns an OSD's new write verifier from
        the first write it sends there and then fails the COMMIT of every
        file with unstable writes from before (io.c, unstable_lost), so a
        timed run of several files would lose its COMMITs; the probe takes
        that instead."""
        o.start()
        time.sleep(BACKOFF_S + 0.5)
        c = self.nfs()
        fh = self.create(probe_dir, "probe")
        for _ in range(2):
            c.write_all(fh, 0, bytes(row), stable=nfs3.UNSTABLE, chunk=min(row, MIB))
            if c.commit(fh).status == NFS3_OK:
                break
        else:
            raise RuntimeError(f"probe COMMIT failed twice after osd.{o.osd_id}'s restart")
        self.remove(probe_dir, "probe")

    def usage(self) -> Usage:
        return object_usage([o.data_path for o in self.osds])

    def stop(self) -> dict[str, int | None]:
        codes: dict[str, int | None] = {}
        if self.client is not None:
            self.client.close()
        if self.mds is not None and self.mds.alive():
            codes["ganesha"] = self.mds.stop()
        for o in self.osds:
            if o.alive():
                codes[f"osd.{o.osd_id}"] = o.stop()
        return codes
