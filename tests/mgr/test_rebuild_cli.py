"""`pando rebuild`, `pando scrub` and the rebuild and scrub lines of
`pando status`, run as an admin runs them (python -m pando_cli.main in the
test's pod) against a real pando-mgr on a real etcd, the FSAL stood in for
by its presence and progress keys (as in test_rebuild_jobs.py)."""
from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mgrtest import (HandPresence, jobs_of, put_progress, rebuild_cluster, rebuild_progress,
                     scrub_progress)
from pando_testing.etcd import EtcdCluster
from pando_testing.mgr import MgrProcess
from pando_testing.pando_cli import cli_argv, cli_env, run_cli
from pando_testing.pod import Pod

Factory = Callable[..., Any]


def pando(pod: Pod, mgr: MgrProcess, *argv: str) -> subprocess.CompletedProcess[str]:
    return run_cli(pod, "--mgr", mgr.url, "--token-file", str(mgr.token_file), *argv)


def pando_json(pod: Pod, mgr: MgrProcess, *argv: str) -> Any:
    cp = pando(pod, mgr, *argv, "--json")
    assert (cp.returncode, cp.stderr) == (0, ""), f"pando {' '.join(argv)}: {cp.stderr}"
    return json.loads(cp.stdout)


def _rebuilding(mgr_factory: Factory, presence: Factory, tmp_path: Path
                ) -> tuple[MgrProcess, int, HandPresence]:
    """osd.2 out, its job 80/120 files done on mds-a at 41 MiB/s."""
    mgr, api, _, fsals = rebuild_cluster(mgr_factory, presence, tmp_path)
    jid = int(api.post("/api/osd/2/out")["epoch"])
    put_progress(fsals[0], "rebuild", rebuild_progress(
        jobs_active=[jid], files_total=120, files_done=80, bytes_total=1000 << 20,
        bytes_done=700 << 20, rate_bps=41 << 20, eta_s=8.0, parallel=8))
    api.wait_for(lambda a: a.get("/api/rebuild")["files_total"] == 120, timeout=5,
                 what="progress seen")
    return mgr, jid, fsals[0]


def test_pando_rebuild_shows_the_summary_jobs_and_each_fsal_and_json_is_the_api(
        pod: Pod, mgr_factory: Factory, presence: Factory, tmp_path: Path) -> None:
    mgr, jid, _ = _rebuilding(mgr_factory, presence, tmp_path)
    r = pando_json(pod, mgr, "rebuild")
    assert (r["files_done"], r["files_total"], r["rate_bps"]) == (80, 120, 41 << 20)
    assert [j["id"] for j in r["jobs"]] == [jid] and "history" in r
    cp = pando(pod, mgr, "rebuild")
    assert cp.returncode == 0, cp.stderr
    for want in ("41 MiB/s, 80/120 files, 700 MiB of 1000 MiB, ETA 8 s, 1 job",
                 "80 of 120 done, 0 failed", "70.0%", "JOBS", "osd.2", "out", "placement",
                 "mds-a", "rebuilding", "METADATA MANAGERS"):
        assert want in cp.stdout, f"{want!r} not in:\n{cp.stdout}"
    row = next(line.split() for line in cp.stdout.splitlines()
               if line.split()[:1] == [str(jid)])
    assert row[1:4] == ["osd.2", "out", "placement"] and row[-1] == "mds-a"


def test_pando_status_prints_a_rebuild_line_and_a_scrub_line(
        pod: Pod, mgr_factory: Factory, presence: Factory, tmp_path: Path) -> None:
    mgr, _, fsal = _rebuilding(mgr_factory, presence, tmp_path)
    put_progress(fsal, "scrub", scrub_progress(files_total=500, files_done=120, mismatches=1,
                                               repaired=1))
    mgr.api().wait_for(lambda a: a.status()["scrub"]["mismatches"] == 1, timeout=5,
                       what="scrub progress seen")
    cp = pando(pod, mgr, "status")
    assert cp.returncode == 0, cp.stderr
    lines = {ln.split(":", 1)[0].strip(): ln.split(":", 1)[1].strip()
             for ln in cp.stdout.splitlines() if ":" in ln}
    assert lines["rebuild"] == "41 MiB/s, 80/120 files, 700 MiB of 1000 MiB, ETA 8 s, 1 job"
    assert lines["scrub"] == "running, 1 mismatches, 1 repaired, 0 unrepairable"
    st = pando_json(pod, mgr, "status")
    assert st["rebuild"]["running"] is True and st["scrub"]["repaired"] == 1


def test_pando_rebuild_start_and_the_mgrs_refusals(
        pod: Pod, etcd: EtcdCluster, mgr_factory: Factory, presence: Factory,
        tmp_path: Path) -> None:
    mgr, _, _, _ = rebuild_cluster(mgr_factory, presence, tmp_path)
    cp = pando(pod, mgr, "rebuild", "start", "osd.1", "--target", "3")
    assert cp.returncode == 0, cp.stderr
    (jid, job), = jobs_of(etcd.client()).items()
    assert cp.stdout == f"rebuild job {jid} of osd.1 started, onto osd.3\n"
    assert (job["osd"], job["target"], job["reason"]) == (1, 3, "admin")
    assert pando_json(pod, mgr, "rebuild", "start", "2")["target"] is None
    for argv, err in ((("1",), f"osd.1 already has an active rebuild job ({jid}) (HTTP 409)"),
                      (("9",), "no such OSD: 9 (HTTP 404)"),
                      (("3", "--target", "3"), "target osd.3 is the OSD to rebuild (HTTP 400)")):
        cp = pando(pod, mgr, "rebuild", "start", *argv)
        assert (cp.returncode, cp.stdout) == (1, ""), cp
        assert cp.stderr == f"pando: {err}\n"
    assert pando(pod, mgr, "rebuild", "start").returncode == 2
    assert pando(pod, mgr, "rebuild", "start", "x").returncode == 2


def test_pando_rebuild_watch_ends_when_the_jobs_are_gone(
        pod: Pod, mgr_factory: Factory, presence: Factory, tmp_path: Path) -> None:
    mgr, jid, fsal = _rebuilding(mgr_factory, presence, tmp_path)
    watch = pod.popen(cli_argv("--mgr", mgr.url, "rebuild", "--watch", "--interval", "0.2"),
                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=cli_env())
    time.sleep(1.5)
    assert watch.poll() is None, "the watch ended while a job was left"
    put_progress(fsal, "rebuild", rebuild_progress(
        jobs_active=[jid], files_total=120, files_done=119, bytes_total=1000 << 20,
        bytes_done=990 << 20, rate_bps=41 << 20, eta_s=1.0))
    time.sleep(1.0)
    put_progress(fsal, "rebuild", rebuild_progress(
        state="idle", jobs_done=[jid], files_total=120, files_done=120,
        bytes_total=1000 << 20, bytes_done=1000 << 20))
    t0 = time.monotonic()
    out, err = watch.communicate(timeout=15)
    assert watch.returncode == 0, err
    assert time.monotonic() - t0 < 5
    lines = out.splitlines()
    assert lines[0] == "rebuild: 41 MiB/s, 80/120 files, 700 MiB of 1000 MiB, ETA 8 s, 1 job"
    assert "rebuild: 41 MiB/s, 119/120 files, 990 MiB of 1000 MiB, ETA 1 s, 1 job" in lines
    assert lines[-2:] == ["rebuild: idle", "rebuild done: no job left"]
    cp = pando(pod, mgr, "rebuild", "--watch", "--json")     # nothing left: at once
    assert cp.returncode == 0 and json.loads(cp.stdout.splitlines()[-1])["jobs"] == []


def test_pando_scrub_lists_each_fsal_and_start_stop_put_requests(
        pod: Pod, etcd: EtcdCluster, mgr_factory: Factory, presence: Factory,
        tmp_path: Path) -> None:
    mgr, _, _, fsals = rebuild_cluster(mgr_factory, presence, tmp_path, mds=("mds-a", "mds-b"))
    cp = pando(pod, mgr, "scrub", "start")
    assert cp.returncode == 0, cp.stderr
    assert cp.stdout.startswith("scrub start requested (request 1)")
    assert pando_json(pod, mgr, "scrub", "stop")["id"] == 2
    put_progress(fsals[0], "scrub", scrub_progress(files_total=500, files_done=120,
                                                   mismatches=2, repaired=1, unrepairable=1,
                                                   bandwidth_bps=50 << 20))
    put_progress(fsals[1], "scrub", scrub_progress(state="idle", **{"pass": 4}))
    mgr.api().wait_for(lambda a: len(a.get("/api/scrub")["mds"]) == 2, timeout=5,
                       what="both scrub progress keys")
    s = pando_json(pod, mgr, "scrub")
    assert (s["mismatches"], s["unrepairable"], s["request"]["action"]) == (2, 1, "stop")
    cp = pando(pod, mgr, "scrub")
    assert cp.returncode == 0, cp.stderr
    assert "scrub: running, 120/500 files, 2 mismatches, 1 repaired, 1 unrepairable" in cp.stdout
    rows = {ln.split()[0]: ln.split() for ln in cp.stdout.splitlines()
            if ln.split()[:1] in (["mds-a"], ["mds-b"])}
    assert rows["mds-a"][1:4] == ["running", "1", "120/500"]
    assert "50 MiB/s" in " ".join(rows["mds-a"]) and rows["mds-b"][1:3] == ["idle", "4"]
    assert pando(pod, mgr, "scrub", "pause").returncode == 2
