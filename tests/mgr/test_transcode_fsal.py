"""Transcoding seen through the mgr with the real metadata manager:
Ganesha and libfsalpando on etcd, six real pando-osd, a real pando-mgr.
A 1 MiB file under a "mirrored, RS(4,2) once cold for 1 s" policy is
transcoded by the FSAL's transcoder; its `transcode/progress/<name>` key
reaches GET /api/transcode, `pando status` and `pando transcode`."""
from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mgrtest import fsal_cluster

from pando_testing.cluster_map import file_map
from pando_testing.etcd import EtcdCluster
from pando_testing.layout_policy import layout_set, mkdir
from pando_testing.mds_files import connect, new_file
from pando_testing.mgr import MgrProcess
from pando_testing.pando_cli import run_cli
from pando_testing.pod import Pod

Factory = Callable[..., Any]
COLD = {"scheme": "mirror", "copies": 2, "stripe_unit": 65536, "cold_after_s": 1,
        "cold": {"k": 4, "m": 2}}


def _pando(pod: Pod, mgr: MgrProcess, *argv: str) -> str:
    cp = run_cli(pod, "--mgr", mgr.url, *argv)
    assert (cp.returncode, cp.stderr) == (0, ""), cp.stderr
    return str(cp.stdout)


def test_a_cold_file_transcoded_by_the_fsal_shows_in_the_api_status_and_cli(
        pod: Pod, etcd: EtcdCluster, tmp_path: Path, mds_factory: Factory,
        mgr_factory: Factory) -> None:
    mds, mgr, api = fsal_cluster(etcd, tmp_path, mds_factory, mgr_factory, 6, "mds-t",
                                 " Transcode_Interval = 1;")
    mds.start()
    api.wait_for(lambda a: a.get("/api/transcode")["managers"] == 1, timeout=20,
                 what="the transcoder's first progress")
    c = connect(mds)
    d = mkdir(c, mds.root_handle(), "cold")
    ok, msg = layout_set(mds, "/cold", COLD)
    assert ok, msg
    new_file(c, d, "f", os.urandom(1 << 20))
    t = api.wait_for(lambda a: (v := a.get("/api/transcode"))["files_done"] == 1 and v,
                     timeout=30, what="the file transcoded, as the mgr sees it")
    ok, msg, fm = file_map(mds, "/cold/f")
    assert ok and fm["scheme"] == "rs", (msg, fm)
    prog = t["mds"]["mds-t"]
    assert (prog["files_done"], prog["failed"], prog["interval_s"]) == (1, 0, 1), prog
    assert prog["bytes_done"] >= 1 << 20 and t["bytes_done"] == prog["bytes_done"]
    assert api.status()["transcode"]["files_done"] == 1
    status = _pando(pod, mgr, "status")
    line = next(ln for ln in status.splitlines() if ln.strip().startswith("transcode:"))
    assert "1 files" in line and "0 failed" in line, status
    table = _pando(pod, mgr, "transcode")
    row = next(ln.split() for ln in table.splitlines() if ln.startswith("mds-t"))
    assert row[2] == "1", table
    assert json.loads(_pando(pod, mgr, "transcode", "--json"))["files_done"] == 1
