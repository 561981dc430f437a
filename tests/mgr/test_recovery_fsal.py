"""The mgr's recovery jobs with the real metadata manager: Ganesha and
libfsalpando on etcd, four real pando-osd, a real pando-mgr.  An OSD
holding mirrors is killed and marked out; the FSAL rebuilds from the job
the mgr made, lists it done, the mgr deletes it, and `pando rebuild
--watch` ends on its own."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mgrtest import jobs_of

from pando_testing import nfs3
from pando_testing.daemons import OsdProcess
from pando_testing.etcd import EtcdCluster
from pando_testing.mds import PandoMds
from pando_testing.mgr import MgrProcess
from pando_testing.nfs3 import NFS3_OK, Nfs3Client, Sattr3
from pando_testing.pod import Pod

Factory = Callable[..., Any]
FILES = 6


def _seed(path: Path, osds: list[OsdProcess]) -> Path:
    lines = ["key_file = cluster.key", "partition = 1"]
    lines += [f"osd {o.osd_id} ctl={o.ctl_addr} nfs={o.host}:{o.nfs_port}" for o in osds]
    path.write_text("\n".join(lines) + "\n")
    return path


def _write(mds: PandoMds, name: str, data: bytes) -> None:
    with Nfs3Client.over(mds.pod.connect(mds.host, mds.nfs_port)) as c:
        r = c.create(mds.root_handle(), name, nfs3.GUARDED, Sattr3(mode=0o644))
        assert r.status == NFS3_OK and r.fh is not None
        assert c.write(r.fh, 0, data, nfs3.FILE_SYNC).status == NFS3_OK


def _pando(*argv: str, env: dict[str, str] | None = None
           ) -> tuple[list[str], dict[str, str]]:
    """The CLI's argv and environment (without PANDO_MGR/PANDO_CONF)."""
    base = {k: v for k, v in os.environ.items() if k not in ("PANDO_MGR", "PANDO_CONF")}
    return [sys.executable, "-m", "pando_cli.main", *argv], {**base, **(env or {})}


def _components(pod: Pod, mds: PandoMds, name: str) -> list[tuple[int, str]]:
    argv, env = _pando("file", f"/{name}", "--json", env=mds.dbus_env())
    cp = pod.run(argv, check=False, env=env, timeout=60)
    assert cp.returncode == 0, cp.stderr
    fm = json.loads(cp.stdout)
    return [(int(c["osd"]), str(c["state"])) for g in fm["groups"] for c in g["components"]]


def test_a_killed_and_outed_osd_is_rebuilt_by_the_fsal_and_its_job_retired(
        pod: Pod, etcd: EtcdCluster, tmp_path: Path, mds_factory: Factory,
        mgr_factory: Factory) -> None:
    presence = ["--etcd", etcd.endpoints, "--etcd-ttl", "2", "--etcd-interval", "1"]
    mds: PandoMds = mds_factory(4, start=False, osd_args=presence, object_pool=0,
                                extra_fsal=f'Etcd = "{etcd.endpoints}"; Etcd_Prefix = "/pando/"; '
                                           'Mds_Name = "mds-r";')
    osds = list(mds.osds)
    mgr: MgrProcess = mgr_factory(seed=_seed(tmp_path / "cluster.conf", osds))
    api = mgr.api()
    api.wait_for(lambda a: a.osd_states() == {i: (True, True) for i in (1, 2, 3, 4)},
                 timeout=20, what="every OSD up and in")
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
    argv, env = _pando("--mgr", mgr.url, "rebuild", "--watch", "--interval", "0.3")
    watch = pod.popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = watch.communicate(timeout=60)
    assert watch.returncode == 0, err
    assert out.splitlines()[-1] == "recovery done: no job left", out
    assert jobs_of(etcd.client()) == {}
    r = api.get("/api/recovery")
    prog = r["mds"]["mds-r"]
    assert jid in prog["jobs_done"] or prog["state"] == "idle", prog
    assert prog["files_done"] >= len(held) and prog["files_failed"] == 0, prog
    for name in held:
        comps = _components(pod, mds, name)
        assert victim not in dict(comps) and {s for _, s in comps} == {"ok"}, (name, comps)
