"""Scrub (ganesha-fsal/README.md, "Scrub"): the manager walks every file,
has each OSD verify its component's extents against the checksums it
keeps, compares the mirrors, and rewrites a bad extent from a good copy.

Object bytes are corrupted here behind the OSD's back (in its data file),
or one mirror is overwritten through its own OSD (so both verify but they
differ).  Passes are started over dbus and through scrub/request in etcd,
as the mgr does; progress is read from both."""
from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pando_testing.cluster_map import PREFIX, dbus_json, start_on_map, wait_for
from pando_testing.daemons import OsdProcess
from pando_testing.etcd import EtcdCluster
from pando_testing.mds import PandoMds
from pando_testing.cluster_status import cluster_status
from pando_testing.mds_files import PARTITION, components, connect, new_file, object_bytes
from pando_testing.nfs3 import NFS3_OK, UNSTABLE
from pando_testing.syncfault import SyncFault

MDS_NAME = "mds-test"
KIB = 1024
EXTENT = 64 * KIB


def data_file(osd: OsdProcess, obj: int) -> Path:
    """Where the target keeps an object's bytes (osd-target/README.md)."""
    found = list((osd.data_path / "objects").glob(f"*/{PARTITION:016x}.{obj:016x}"))
    assert len(found) == 1, found
    return found[0]


def scrub_status(mds: PandoMds) -> dict[str, Any]:
    ok, msg, j = dbus_json(mds, "scrub_status")
    assert ok, msg
    out: dict[str, Any] = j
    return out


def start_scrub_over_dbus(mds: PandoMds) -> None:
    cp = mds.pod.run(["dbus-send", "--system", "--print-reply", "--dest=org.ganesha.nfsd",
                      "/org/ganesha/nfsd/pando", "org.ganesha.nfsd.pando.scrub", "boolean:true"],
                     check=False, env=mds.dbus_env(), timeout=30)
    assert cp.returncode == 0 and "boolean true" in cp.stdout, cp.stdout + cp.stderr


def wait_pass(mds: PandoMds, n: int, timeout: float = 60) -> dict[str, Any]:
    st: dict[str, Any] = wait_for(f"scrub pass {n} done", lambda: (
        (s := scrub_status(mds))["pass"] >= n and s["state"] == "idle" and s), timeout)
    return st


@pytest.fixture
def cluster(etcd: EtcdCluster, mds_factory: Callable[..., PandoMds]
            ) -> Callable[..., PandoMds]:
    def make(extra: str = "") -> PandoMds:
        return start_on_map(etcd, mds_factory, 4, "\nScrub_Interval = 0;\n" + extra,
                            inline_max=4096, object_pool=0)
    return make


def test_bytes_rotted_behind_the_osd_are_found_and_repaired_from_the_good_mirror(
        cluster: Callable[..., PandoMds]) -> None:
    mds = cluster()
    c = connect(mds)
    root = mds.root_handle()
    files = {f"f{i}": os.urandom(3 * EXTENT + 100 * i) for i in range(6)}
    for name, data in files.items():
        new_file(c, root, name, data)
    (osd, oid), _ = components(mds, "/f2")
    path = data_file(mds.osds[osd - 1], oid)
    with open(path, "r+b") as f:             # one byte in the second extent
        f.seek(EXTENT + 17)
        b = f.read(1)
        f.seek(EXTENT + 17)
        f.write(bytes([b[0] ^ 0x5A]))
    assert object_bytes(mds, osd, oid) != files["f2"]
    start_scrub_over_dbus(mds)
    st = wait_pass(mds, 1)
    assert st["files_done"] == len(files) == st["files_total"], st
    assert (st["mismatches"], st["repaired"], st["unrepairable"]) == (1, 1, 0), st
    assert object_bytes(mds, osd, oid)[:len(files["f2"])] == files["f2"]
    assert f"extent 1 on OSD {osd} (object {oid}) does not match its checksum: " \
           "repaired from a good mirror" in mds.log_text()
    # A second pass finds nothing.
    start_scrub_over_dbus(mds)
    st = wait_pass(mds, 2)
    assert st["mismatches"] == 0 and st["files_done"] == len(files), st


def test_mirrors_that_both_verify_but_differ_are_reported_not_guessed(
        etcd: EtcdCluster, cluster: Callable[..., PandoMds]) -> None:
    mds = cluster()
    c = connect(mds)
    root = mds.root_handle()
    data = os.urandom(2 * EXTENT)
    new_file(c, root, "two", data)
    (osd_a, oid_a), (osd_b, oid_b) = components(mds, "/two")
    other = bytearray(data)
    other[10:20] = b"0123456789"
    src = mds.workdir / "other.bin"
    src.write_bytes(bytes(other))
    # Written through the OSD itself: its checksums follow, so it verifies.
    mds.osds[osd_b - 1].tool("put", str(PARTITION), str(oid_b), str(src), "--sync")
    etcd.client().put(f"{PREFIX}scrub/request",
                      json.dumps({"id": 1, "action": "start", "time": time.time()}))
    wait_pass(mds, 1)
    prog = wait_for("scrub progress in etcd", lambda: etcd.client().get_json(
        f"{PREFIX}scrub/progress/{MDS_NAME}"))
    assert prog["pass"] == 1 and prog["unrepairable"] >= 1 and prog["repaired"] == 0, prog
    assert object_bytes(mds, osd_a, oid_a) == data
    assert object_bytes(mds, osd_b, oid_b)[:len(data)] == bytes(other), "nothing was guessed"
    assert "UNREPAIRABLE" in mds.log_text()


def test_a_pass_stopped_by_a_restart_resumes_where_it_was(
        cluster: Callable[..., PandoMds]) -> None:
    # 1 MiB/s of verify reads over 8 files of 1 MiB x 2 mirrors: ~16 s a pass.
    mds = cluster("Scrub_Bandwidth_Mb = 1;\n")
    c = connect(mds)
    root = mds.root_handle()
    for i in range(8):
        new_file(c, root, f"r{i}", os.urandom(1 << 20))
    start_scrub_over_dbus(mds)
    wait_for("a few files scrubbed", lambda: scrub_status(mds)["files_done"] >= 2, 30)
    mds.restart()
    st = scrub_status(mds)
    assert st["state"] == "running" and st["pass"] == 1 and st["files_done"] >= 2, st
    assert "scrub pass 1 resumes after inode" in mds.log_text()
    st = wait_pass(mds, 1, timeout=60)
    assert st["files_done"] == 8 and st["mismatches"] == 0, st


def test_extents_committed_through_the_gateway_scrub_clean_after_a_power_cut(
        etcd: EtcdCluster, mds_factory: Callable[..., PandoMds], tmp_path: Path) -> None:
    """A gateway COMMIT (a zero-length DATA_SYNC write to each object) must
    make the extents' checksums durable with their data: after a power cut
    of every OSD, committed extents whose new data survived beside their
    old CRCs would verify as mismatches on both mirrors (unrepairable)."""
    faults = {i: SyncFault(tmp_path / f"syncfault.{i}") for i in range(1, 5)}
    mds = start_on_map(etcd, mds_factory, 4, "\nScrub_Interval = 0;\n", inline_max=4096,
                       object_pool=0, osd_env=lambda i: faults[i].env)
    c = connect(mds)
    fh = new_file(c, mds.root_handle(), "f", os.urandom(3 * EXTENT + 100))
    for osd_id, oid in components(mds, "/f"):     # as the kernel's writeback would, in time
        mds.osds[osd_id - 1].tool("flush", str(PARTITION), str(oid))
    data = os.urandom(3 * EXTENT + 100)
    c.write_all(fh, 0, data, UNSTABLE, chunk=EXTENT)
    assert c.commit(fh).status == NFS3_OK
    for osd in mds.osds:
        osd.kill9()
        faults[osd.osd_id].power_cut(osd)
        osd.start()
    wait_for("every OSD reachable again",
             lambda: all(o.reachable for o in cluster_status(mds).osds.values()), timeout=15)
    start_scrub_over_dbus(mds)
    st = wait_pass(mds, 1)
    assert (st["mismatches"], st["repaired"], st["unrepairable"]) == (0, 0, 0), st
    assert c.read_all(fh, 0, len(data) + 1) == data
