"""Rebuild jobs put into etcd by hand, as the leading mgr puts them
(mgr/README.md, "Rebuild and scrub"), and the progress a manager reports
for them."""
from __future__ import annotations

import json
import time
from typing import Any

from .cluster_map import PREFIX, wait_for
from .etcd import EtcdCluster


def progress(etcd: EtcdCluster, mds_name: str) -> dict[str, Any]:
    """The manager's `rebuild/progress/<name>` record; {} before its first."""
    return etcd.client().get_json(f"{PREFIX}rebuild/progress/{mds_name}") or {}


def put_job(etcd: EtcdCluster, job: int, osd: int, target: int | None = None) -> None:
    """Job `job`: rebuild what OSD `osd` held, onto `target` where it may."""
    etcd.client().put(f"{PREFIX}rebuild/jobs/{job}", json.dumps(
        {"id": job, "osd": osd, "reason": "out", "target": target, "created": time.time(),
         "by": "test"}))


def wait_job_done(etcd: EtcdCluster, mds_name: str, job: int,
                  timeout: float = 60) -> dict[str, Any]:
    """The progress record once the job is done and the manager idle."""
    def done() -> dict[str, Any] | None:
        p = progress(etcd, mds_name)
        return p if job in p.get("jobs_done", []) and p.get("state") == "idle" else None
    p: dict[str, Any] = wait_for(f"rebuild job {job} done", done, timeout)
    return p
