"""Attack: the mgr's HTTP API changes the cluster (an OSD out, removed, a
rebuild, a scrub) for whoever asks (issue 22, finding 4): a local user, a
host that reaches its port, or any web page an admin has open, whose
JavaScript can POST a form to http://127.0.0.1:7480/api/osd/1/out.

Each request here is what such an attacker can send; none may change the
map.  The last test holds what must keep working: the token's holder."""
from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pando_cluster.mds_config import ConfOsd, render_conf
from pando_testing.etcd import EtcdCluster
from pando_testing.logs import check_clean_exits
from pando_testing.mgr import MgrProcess
from pando_testing.pod import Pod

OUT = "/api/osd/1/out"


@pytest.fixture
def mgr(request: pytest.FixtureRequest, pod: Pod, tmp_path: Path,
        etcd: EtcdCluster) -> Iterator[MgrProcess]:
    """A leading mgr whose map holds osd.1 and osd.2 (down, in)."""
    seed = tmp_path / "cluster.conf"
    seed.write_text(render_conf(Path("cluster.key"), [
        ConfOsd(i, f"127.0.0.1:{20590 + i}", f"127.0.0.1:{20490 + i}") for i in (1, 2)],
        header=""))
    m = MgrProcess(pod, tmp_path / "mgr", etcd.endpoints, seed=seed, lease=2).start()
    m.api().wait_for(lambda a: a.status()["leader"] == "mgr-a" and a.get("/api/map"),
                     timeout=15, what="mgr-a leads with a map")
    yield m
    check_clean_exits(request, {m.name: m.stop()} if m.alive() else {}, [m.log_path],
                      "pando-mgr")


def _send(mgr: MgrProcess, method: str, path: str, body: bytes | None = b"{}",
          headers: dict[str, str] | None = None) -> tuple[int, Any]:
    """One raw request from inside the pod: (status, parsed body)."""
    def go() -> tuple[int, bytes]:
        req = urllib.request.Request(mgr.url + path, data=body, method=method,
                                     headers=headers or {})
        try:
            with urllib.request.urlopen(req, timeout=5) as r:
                return r.status, r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.read()
    status, raw = mgr.pod.call_inside(go)
    try:
        return status, json.loads(raw)
    except ValueError:
        return status, raw.decode(errors="replace")


def _osd1_in(mgr: MgrProcess) -> bool:
    return bool(mgr.api().osd_states()[1][1])


JSON = {"Content-Type": "application/json"}


def test_an_unauthenticated_post_is_refused_401(mgr: MgrProcess) -> None:
    status, body = _send(mgr, "POST", OUT, headers=JSON)
    assert status == 401, body
    assert "token" in body["error"]
    assert _osd1_in(mgr)


@pytest.mark.parametrize("token", ["", "0" * 64, "Bearer", "x" * 5000])
def test_a_post_with_a_wrong_token_is_refused_401(mgr: MgrProcess, token: str) -> None:
    status, body = _send(mgr, "POST", OUT, headers={**JSON, "Authorization": f"Bearer {token}"})
    assert status == 401, body
    assert _osd1_in(mgr)


def test_an_unauthenticated_delete_and_rebuild_and_scrub_are_refused_401(
        mgr: MgrProcess) -> None:
    for method, path, body in (("DELETE", "/api/osd/2?force=1", None),
                               ("POST", "/api/rebuild", b'{"osd": 1}'),
                               ("POST", "/api/scrub", b'{"action": "start"}'),
                               ("POST", "/api/osds", b'{"ctl": "h:1", "nfs": "h:2"}')):
        status, answer = _send(mgr, method, path, body, JSON)
        assert status == 401, (method, path, answer)
    assert sorted(mgr.api().osd_states()) == [1, 2]
    assert mgr.api().get("/api/scrub")["request"] is None


def test_a_cross_site_post_is_refused_403(mgr: MgrProcess) -> None:
    """A page on http://evil.example posting to the mgr: the browser sends
    its Origin, which is not the mgr's own."""
    for origin in ("http://evil.example", "null", f"{mgr.url}.evil.example",
                   f"https://{mgr.host}:{mgr.port}"):
        status, body = _send(mgr, "POST", OUT, headers={**JSON, "Origin": origin})
        assert status == 403, (origin, body)
    assert _osd1_in(mgr)


def test_a_cross_site_post_is_refused_even_with_the_token(mgr: MgrProcess) -> None:
    status, body = _send(mgr, "POST", OUT, headers={
        **JSON, "Origin": "http://evil.example", "Authorization": f"Bearer {mgr.token}"})
    assert status == 403, body
    assert _osd1_in(mgr)


@pytest.mark.parametrize("ctype", ["application/x-www-form-urlencoded", "text/plain",
                                   "multipart/form-data; boundary=x", None])
def test_a_post_that_is_not_json_is_refused_415(mgr: MgrProcess, ctype: str | None) -> None:
    """The content types an HTML form (or a "simple" cross-origin fetch,
    which the browser sends without asking first) can have."""
    status, body = _send(mgr, "POST", OUT, b"{}", {"Content-Type": ctype} if ctype else {})
    assert status == 415, (ctype, body)
    assert _osd1_in(mgr)


def test_the_token_holder_changes_the_cluster_and_reads_stay_open(mgr: MgrProcess) -> None:
    status, body = _send(mgr, "GET", "/api/status", None)
    assert status == 200 and body["leader"] == "mgr-a"
    same_origin = {**JSON, "Authorization": f"Bearer {mgr.token}",
                   "Origin": f"http://{mgr.host}:{mgr.port}"}
    status, body = _send(mgr, "POST", OUT, b"{}", same_origin)
    assert status == 200 and body["in"] is False, body
    status, body = _send(mgr, "POST", "/api/osd/1/in", b"{}",
                         {**JSON, "Authorization": f"Bearer {mgr.token}"})
    assert status == 200 and body["in"] is True, body
