"""A manager group seen through the mgr with the real metadata managers:
two ganesha.nfsd with libfsalpando in one group on etcd, four real
pando-osd, a real pando-mgr.  GET /api/status and /metrics show the
active, its term, when it took over, the standby caught up, and the
snapshot a member asked for with the journal after it; when the
active is killed, the standby is shown active and health warns that the group has no
standby left.  `pando mds failover` hands the lead over with every
change the active acknowledged."""
from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mgrtest import fsal_cluster, parse_prometheus

from pando_testing.etcd import EtcdCluster
from pando_testing.mds_files import connect, new_file
from pando_testing.mds_group import start_standby, wait_log
from pando_testing.mgr import MgrApi, MgrProcess
from pando_testing.pando_cli import run_cli

Factory = Callable[..., Any]


def _group(api: MgrApi) -> dict[str, Any]:
    groups = api.status()["groups"]
    assert [g["name"] for g in groups] == ["g1"], groups
    return dict(groups[0])


def _active_a(etcd: EtcdCluster, tmp_path: Path, mds_factory: Factory,
              mgr_factory: Factory) -> tuple[Any, MgrProcess, MgrApi]:
    """Manager a, the active of group g1 on four OSDs, and a mgr."""
    a, mgr, api = fsal_cluster(etcd, tmp_path, mds_factory, mgr_factory, 4, "a",
                               mds_group="g1")
    a.start()
    wait_log(a, "a is the active, term", 10)
    return a, mgr, api


def _checks(api: MgrApi) -> set[str]:
    return {c["code"] for c in api.status()["checks"]}


def test_the_mgr_shows_the_active_its_standby_and_the_takeover(
        etcd: EtcdCluster, tmp_path: Path, mds_factory: Factory, mgr_factory: Factory) -> None:
    a, mgr, api = _active_a(etcd, tmp_path, mds_factory, mgr_factory)
    api.wait_for(lambda x: "MDS_GROUP_NO_STANDBY" in _checks(x), timeout=15,
                 what="a warning: no standby")
    b = start_standby(a, etcd, tmp_path)
    try:
        with connect(a) as c:
            for i in range(20):
                new_file(c, a.root_handle(), f"f{i}", b"x")
        g = api.wait_for(lambda x: (g := _group(x))["standbys"] == 1 and all(
            m["lag"] in (None, 0) for m in g["members"]) and g, timeout=20,
            what="the standby caught up")
        assert g["active"] == "a" and g["term"] > 0
        assert [(m["name"], m["role"]) for m in g["members"]] == [("a", "active"),
                                                                  ("b", "standby")]
        assert "MDS_GROUP_NO_STANDBY" not in _checks(api)
        metrics = parse_prometheus(api.get("/metrics"))
        assert metrics["pando_mds_group_standbys"] == [({"group": "g1"}, 1.0)]
        assert metrics["pando_mds_group_term"] == [({"group": "g1"}, float(g["term"]))]
        assert metrics["pando_mds_group_lag_records"] == [({"group": "g1", "mds": "b"}, 0.0)]
        etcd.client().put("/pando/groups/g1/snapshot_wanted", json.dumps({"from": "test"}))
        g = api.wait_for(lambda x: (g := _group(x))["snapshot"] and g, timeout=20,
                         what="the snapshot the test asked for")
        snap = g["snapshot"]
        assert snap["index"] == 1 and snap["seq"] > 20 and snap["bytes"] > 0
        assert 0 < g["journal"]["first_seq"] <= snap["seq"] + 1 and g["journal"]["segments"] >= 1
        metrics = parse_prometheus(api.get("/metrics"))
        assert metrics["pando_mds_group_snapshot_seq"] == [({"group": "g1"}, float(snap["seq"]))]
        assert metrics["pando_mds_group_journal_first_seq"] == [
            ({"group": "g1"}, float(g["journal"]["first_seq"]))]
        assert not {"MDS_GROUP_NO_SNAPSHOT", "MDS_GROUP_SNAPSHOT_BEHIND"} & _checks(api)
        a_since = g["since"]
        killed = time.time()
        a.kill9()
        b.wait_serving(60)
        # The active key names b a moment before b's member key (refreshed
        # every second) says when it took over.
        g = api.wait_for(lambda x: (g := _group(x))["active"] == "b" and g["since"] and g,
                         timeout=20, what="b shown active, with its takeover time")
        assert g["term"] > metrics["pando_mds_group_term"][0][1]
        assert a_since <= killed <= g["since"] + 1
        metrics = parse_prometheus(api.get("/metrics"))
        assert metrics["pando_mds_group_takeover_timestamp_seconds"] == [
            ({"group": "g1"}, float(g["since"]))]
        api.wait_for(lambda x: "MDS_GROUP_NO_STANDBY" in _checks(x), timeout=20,
                     what="a warning: no standby once a's member key expired")
    finally:
        code = b.stop()
    assert code == 0, b.log_text()[-3000:]


def _failover(a: Any, mgr: MgrProcess, group: str) -> Any:
    return run_cli(a.pod, "--mgr", mgr.url, "--token-file", str(mgr.token_file), "mds",
                   "failover", group, "--wait", "30", "--json")


def test_pando_mds_failover_hands_over_to_the_standby_with_every_change(
        etcd: EtcdCluster, tmp_path: Path, mds_factory: Factory, mgr_factory: Factory) -> None:
    a, mgr, api = _active_a(etcd, tmp_path, mds_factory, mgr_factory)
    b = start_standby(a, etcd, tmp_path)
    try:
        api.wait_for(lambda x: _group(x)["standbys"] == 1, timeout=20, what="the standby")
        with connect(a) as c:
            for i in range(20):
                new_file(c, a.root_handle(), f"f{i}", f"acknowledged {i}".encode())
        cp = _failover(a, mgr, "g1")
        assert cp.returncode == 0, cp.stderr
        out = json.loads(cp.stdout)
        assert (out["from"], out["active"]) == ("a", "b"), out
        print(f"switchover: b led {out['seconds']} s after the request")
        assert a.proc is not None and a.proc.wait(timeout=30) == 0
        assert "a asked to hand over" in a.log_text()
        b.wait_serving(30)
        with connect(b) as c:
            root = b.root_handle()
            for i in range(20):
                fh = c.lookup_fh(root, f"f{i}")
                assert c.read_all(fh, 0, 100) == f"acknowledged {i}".encode()
        assert etcd.client().get_json("/pando/groups/g1/handover") is None
        api.wait_for(lambda x: _group(x)["standbys"] == 0, timeout=20, what="no standby")
        cp = _failover(a, mgr, "g1")
        assert cp.returncode == 1 and "no standby to take over from b" in cp.stderr, cp
        cp = _failover(a, mgr, "nosuch")
        assert cp.returncode == 1 and "no manager group nosuch" in cp.stderr, cp
    finally:
        code = b.stop()
    assert code == 0, b.log_text()[-3000:]
