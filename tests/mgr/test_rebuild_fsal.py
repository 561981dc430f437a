"""The mgr's rebuild jobs with the real metadata manager: Ganesha and
libfsalpando on etcd, four real pando-osd, a real pando-mgr.  An OSD
holding mirrors is killed and marked out; the FSAL rebuilds from the job
the mgr made, lists it done, the mgr deletes it, and `pando rebuild
--watch` ends on its own."""
from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mgrtest import fsal_cluster, jobs_of

from pando_testing.etcd import EtcdCluster
from pando_testing.mds import PandoMds
from pando_testing.mds_files import connect, new_file
from pando_testing.pando_cli import cli_argv, cli_env, run_cli
from pando_testing.pod import Pod

Factory = Callable[..., Any]
FILES = 6


def _write(mds: PandoMds, name: str, data: bytes) -> None:
    with connect(mds) as c:
        new_file(c, mds.root_handle(), name, data)


def _components(pod: Pod, mds: PandoMds, name: str) -> list[tuple[int, str]]:
    cp = run_cli(pod, "file", f"/{name}", "--json", env=mds.dbus_env())
    assert cp.returncode == 0, cp.stderr
    fm = json.loads(cp.stdout)
    return [(int(c["osd"]), str(c["state"])) for g in fm["groups"] for c in g["components"]]


def test_a_killed_and_outed_osd_is_rebuilt_by_the_fsal_and_its_job_retired(
        pod: Pod, etcd: EtcdCluster, tmp_path: Path, mds_factory: Factory,
        mgr_factory: Factory) -> None:
    mds, mgr, api = fsal_cluster(etcd, tmp_path, mds_factory, mgr_factory, 4, "mds-r")
    osds = list(mds.osds)
    mds.start()
    api.wait_for(lambda a: [x["name"] for x in a.get("/api/mds")] == ["mds-r"], timeout=20,
                 what="the manager's presence")
    for i in range(FILES):
        _write(mds, f"f{i}", bytes([65 + i]) * (256 << 10))
    victim = _components(pod, mds, "f0")[0][0]
    held = [f"f{i}" for i in range(FILES) if victim in dict(_components(pod, mds, f"f{i}"))]

    osds[victim - 1].kill9()
    api.wait_for(lambda a: a.osd_states()[victim] == (False, True), timeout=10,
                 what=f"osd.{victim} down")
    jid = api.post(f"/api/osd/{victim}/out")["epoch"]
    assert list(jobs_of(etcd.client())) == [jid]
    watch = pod.popen(cli_argv("--mgr", mgr.url, "rebuild", "--watch", "--interval", "0.3"),
                      env=cli_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = watch.communicate(timeout=60)
    assert watch.returncode == 0, err
    assert out.splitlines()[-1] == "rebuild done: no job left", out
    assert jobs_of(etcd.client()) == {}
    r = api.get("/api/rebuild")
    prog = r["mds"]["mds-r"]
    assert jid in prog["jobs_done"] or prog["state"] == "idle", prog
    assert prog["files_done"] >= len(held) and prog["files_failed"] == 0, prog
    for name in held:
        comps = _components(pod, mds, name)
        assert victim not in dict(comps) and {s for _, s in comps} == {"ok"}, (name, comps)
