"""Attack: whoever can write etcd (issue 22, finding 3) puts a malformed
value under the mgr's prefix.  A presence value that made a poll raise
would stop every mgr from marking any OSD down, so the mgr must skip it,
count it, and go on."""
from __future__ import annotations

import base64
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pando_cluster.mds_config import ConfOsd, render_conf
from pando_testing.etcd import EtcdClient, EtcdCluster
from pando_testing.logs import check_clean_exits
from pando_testing.mgr import MgrApi, MgrApiError, MgrProcess
from pando_testing.pod import Pod

PREFIX = "/pando/"
IDS = (1, 2, 3)


def _presence(osd_id: int, **fields: Any) -> dict[str, Any]:
    return {"id": osd_id, "ctl": f"127.0.0.1:{20590 + osd_id}",
            "nfs": f"127.0.0.1:{20490 + osd_id}", "domain": "", "time": time.time(),
            "statfs": {"bytes_total": 10**9, "bytes_free": 10**9, "objects": 0}} | fields


def _put_presence(client: EtcdClient, osd_id: int, value: dict[str, Any]) -> int:
    """The OSD's presence on a lease of its own (long: the test ends it)."""
    lease = int(client.call("/v3/lease/grant", {"TTL": 60})["ID"])
    client.put(f"{PREFIX}osd/{osd_id}", json.dumps(value), lease=lease)
    return lease


@pytest.fixture
def mgr(request: pytest.FixtureRequest, pod: Pod, tmp_path: Path,
        etcd: EtcdCluster) -> Iterator[MgrProcess]:
    seed = tmp_path / "cluster.conf"
    seed.write_text(render_conf(Path("cluster.key"), [
        ConfOsd(i, f"127.0.0.1:{20590 + i}", f"127.0.0.1:{20490 + i}") for i in IDS],
        header=""))
    m = MgrProcess(pod, tmp_path / "mgr", etcd.endpoints, seed=seed, lease=2,
                   extra_args=["--presence-grace", "1"])
    yield m.start()
    check_clean_exits(request, {m.name: m.stop()} if m.alive() else {}, [m.log_path],
                      "pando-mgr")


def _up(api: MgrApi) -> dict[int, bool]:
    return {i: up for i, (up, _in) in api.osd_states().items()}


def test_a_forged_presence_value_does_not_stop_failure_detection(
        mgr: MgrProcess, etcd: EtcdCluster) -> None:
    client = etcd.client()
    leases = {i: _put_presence(client, i, _presence(i)) for i in IDS}
    api = mgr.api()
    api.wait_for(lambda a: _up(a) == {1: True, 2: True, 3: True}, timeout=15,
                 what="every OSD up")
    # osd.1's presence forged; osd.2 then dies (its lease revoked).
    client.put(f"{PREFIX}osd/1",
               json.dumps(_presence(1, statfs={"bytes_total": "x", "bytes_free": 0})),
               lease=leases[1])
    client.call("/v3/lease/revoke", {"ID": str(leases[2])})
    # osd.2 is still marked down, and osd.1, whose presence cannot be
    # read, is treated as absent: down as well; osd.3 stays up.
    api.wait_for(lambda a: _up(a) == {1: False, 2: False, 3: True}, timeout=10,
                 what="osd.1 and osd.2 down, osd.3 up")
    status = api.status()
    assert status["osds"] == {"total": 3, "up": 1, "in": 3}
    metrics = api.get("/metrics")
    assert 'pando_mgr_etcd_malformed_total{kind="osd"}' in metrics, metrics


def test_a_malformed_leader_value_is_never_a_redirect_target(
        mgr: MgrProcess, etcd: EtcdCluster, tmp_path: Path) -> None:
    """A follower redirects changes to the leader's URL, read from etcd: a
    forged one must not send the client (and its token) elsewhere."""
    client = etcd.client()
    mgr.api().wait_for(lambda a: a.status()["leader"] == "mgr-a", timeout=15,
                       what="mgr-a leads")
    follower = MgrProcess(mgr.pod, tmp_path / "mgr", etcd.endpoints, name="mgr-b", index=1,
                          lease=2)
    follower.start()
    try:
        api_b = follower.api()
        api_b.wait_for(lambda a: a.status()["leader"] == "mgr-a", timeout=15,
                       what="mgr-b sees the leader")
        # Keep the leader key (its lease is mgr-a's), change its value.
        leader = json.loads(client.get(PREFIX + "mgr/leader") or b"{}")
        kv = client.call("/v3/kv/range", {"key": _b64(PREFIX + "mgr/leader")})["kvs"][0]
        lease_id = int(kv.get("lease", 0))
        for url in ("http://evil.example:80/steal?", "http://evil.example",
                    "javascript:alert(1)", 42):
            client.put(PREFIX + "mgr/leader", json.dumps({**leader, "url": url}),
                       lease=lease_id)
            time.sleep(0.6)
            answer = _raw_post(api_b, "/api/osd/1/out")
            assert answer[0] != 307, (url, answer)
            assert "evil" not in json.dumps(answer[1]), (url, answer)
    finally:
        follower.stop()


def _b64(s: str) -> str:
    return base64.b64encode(s.encode()).decode()


def _raw_post(api: MgrApi, path: str) -> tuple[int, Any]:
    """One POST to api's mgr, not following a redirect: (status, body)."""
    try:
        return 200, api.post(path, {}, follow=False)
    except MgrApiError as e:
        return e.status, e.body
