"""`pando` against a stand-in mgr (cli_stub.py): what each subcommand
prints, that --json prints JSON alone, and the exit codes scripts rely on
(0 ok, 1 failed/refused, 2 usage, 3 unreachable)."""
from __future__ import annotations

import json
import socket
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

import cli_samples as S
from cli_samples import GiB
from cli_stub import StubMgr
from pando_cli import config, render
from pando_cli.main import run
from pando_mgr import token as mgr_token
from pando_testing.threads import RaisingThread


@pytest.fixture(autouse=True)
def token_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test's own mgr token, in $PANDO_MGR_TOKEN_FILE (never the
    machine's /etc/pando or ~/.pando-cluster)."""
    path = tmp_path / "mgr.token"
    mgr_token.create(path)
    monkeypatch.setenv("PANDO_MGR_TOKEN_FILE", str(path))
    monkeypatch.delenv("PANDO_CONF", raising=False)
    return path


@pytest.fixture
def stub() -> Iterator[StubMgr]:
    with StubMgr() as s:
        s.answer("GET", "/api/status", 200, S.STATUS)
        s.answer("GET", "/api/osds", 200, S.OSDS)
        s.answer("GET", "/api/df", 200, S.DF)
        s.answer("GET", "/api/mds", 200, S.MDS)
        yield s


def pando(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = run(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_status_shows_health_checks_services_capacity_and_io(stub: StubMgr, capsys: Any) -> None:
    code, out, err = pando(capsys, "--mgr", stub.url, "status")
    assert code == 0, err
    for want in ("HEALTH_WARN", "OSD_DOWN: 1 osds down", "mgr-a (leader), standbys: mgr-b",
                 "node1 (epoch 12)", "quorum ok", "map: epoch 12", "4 osds: 3 up, 4 in",
                 "10 GiB used of 40 GiB", "25.0%", "12 MiB/s rd", "120 op/s rd", "clients: 3"):
        assert want in out, f"{want!r} not in:\n{out}"


def test_status_says_when_there_is_no_leader_an_mds_behind_or_the_state_is_cached(
        stub: StubMgr, capsys: Any) -> None:
    stub.answer("GET", "/api/status", 200, {
        **S.STATUS, "leader": None, "cached": True, "health": "HEALTH_ERR",
        "mgrs": [{"name": "mgr-b", "leader": False}],
        "mds": [{"name": "node1", "epoch": 11}],
        "etcd": {"members": [], "reachable": False, "quorum": False}})
    code, out, _ = pando(capsys, "--mgr", stub.url, "status")
    assert code == 0
    for want in ("HEALTH_ERR", "no leader, standbys: mgr-b", "node1 (epoch 11, behind)",
                 "NO QUORUM", "CACHED: pando-mgr cannot read etcd"):
        assert want in out, f"{want!r} not in:\n{out}"


def test_status_shows_each_manager_group_its_members_down_snapshot_and_journal(
        stub: StubMgr, capsys: Any) -> None:
    stub.answer("GET", "/api/status", 200, {**S.STATUS, "groups": [
        {"name": "g1", "active": "a", "term": 41, "standbys": 1, "members": [
            {"name": "a", "role": "active", "seq": 9, "lag": None},
            {"name": "b", "role": "standby", "seq": 6, "lag": 3}],
         "down": [{"name": "e", "seq": 4, "at": 1764543662}],
         "snapshot": {"index": 2, "seq": 5, "bytes": 4096, "at": 1764543662},
         "journal": {"segments": 2, "first_seq": 6}},
        {"name": "g2", "active": None, "term": 0, "standbys": 1, "members": [
            {"name": "c", "role": "standby", "seq": 1, "lag": None}]},
        {"name": "g3", "active": "d", "term": 7, "since": 1764543662, "standbys": 0,
         "members": []}]})
    code, out, _ = pando(capsys, "--mgr", stub.url, "status")
    assert code == 0
    since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(1764543662))
    for want in ("g1: a (active, term 41), standbys: b (lag 3), down: e (at seq 4),"
                 f" snapshot at seq 5 ({since}), journal from seq 6",
                 "g2: no active, standbys: c (lag unknown), no snapshot",
                 f"g3: d (active, term 7, since {since}), no standby"):
        assert want in out, f"{want!r} not in:\n{out}"


def test_mds_failover_asks_the_mgr_and_waits_for_a_new_active(
        stub: StubMgr, capsys: Any) -> None:
    stub.answer("POST", "/api/groups/g1/failover", 202,
                {"group": "g1", "from": "a", "term": 41, "standbys": ["b"]})
    group = {"name": "g1", "active": "a", "term": 41, "standbys": 1, "members": []}
    stub.answer("GET", "/api/status", 200, {**S.STATUS, "groups": [group]})
    code, _, err = pando(capsys, "--mgr", stub.url, "mds", "failover", "g1", "--wait", "0.5")
    assert code == 1 and "group g1: no new active after 0.5 s" in err, err
    assert stub.requests[0] == ("POST", "/api/groups/g1/failover", {})
    assert stub.tokens[0] is not None and stub.tokens[0].startswith("Bearer ")
    stub.answer("GET", "/api/status", 200, {**S.STATUS, "groups": [
        {**group, "active": "b", "term": 45}]})
    code, out, _ = pando(capsys, "--mgr", stub.url, "mds", "failover", "g1")
    assert code == 0
    assert "g1: b is the active (term 45)" in out and "start a again to make it a standby" in out


def test_osd_ls_is_a_table_of_states_addresses_and_usage(stub: StubMgr, capsys: Any) -> None:
    code, out, _ = pando(capsys, "osd", "ls", "--mgr", stub.url)
    assert code == 0
    rows = [line.split() for line in out.splitlines() if line.strip().startswith("osd.")]
    assert [r[0] for r in rows] == ["osd.1", "osd.2", "osd.3", "osd.4"]
    assert rows[2][1:3] == ["down", "in"] and rows[0][1:3] == ["up", "in"]
    assert "127.0.0.1:20591" in out and "host-a" in out and "30.0" in out


def test_osd_ls_has_a_pool_column_with_a_dash_for_none(stub: StubMgr, capsys: Any) -> None:
    stub.answer("GET", "/api/osds", 200, [S.osd(1, pool="fast"), S.osd(2)])
    code, out, _ = pando(capsys, "--mgr", stub.url, "osd", "ls")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split()[:7] == ["ID", "STATE", "IN", "WEIGHT", "DOMAIN", "POOL", "CTL"]
    assert [line.split()[5:7] for line in lines[1:]] == [["host-a", "fast"], ["host-a", "-"]]


def test_df_lists_the_named_pools_after_the_maps_with_their_osds(stub: StubMgr,
                                                                 capsys: Any) -> None:
    stub.answer("GET", "/api/df", 200, S.DF_POOLS)
    code, out, _ = pando(capsys, "--mgr", stub.url, "df")
    assert code == 0
    pools = out[out.index("POOLS"):].splitlines()
    assert pools[1].split() == ["POOL", "SCHEME", "COPIES", "OSDS", "SIZE", "AVAIL", "USED",
                                "%USED"]
    assert [line.split()[:4] for line in pools[2:]] == [["default", "mirror", "2", "-"],
                                                         ["archive", "-", "-", "1"],
                                                         ["fast", "-", "-", "2"]]
    assert pools[4].split()[4:] == ["20", "GiB", "15", "GiB", "5.0", "GiB", "25.00"]


def test_df_and_mds_ls_print_tables(stub: StubMgr, capsys: Any) -> None:
    code, out, _ = pando(capsys, "--mgr", stub.url, "df")
    assert code == 0 and "RAW STORAGE" in out and "default" in out and "mirror" in out
    assert "40 GiB  28 GiB  12 GiB  30.00" in out, out   # the OSDs summed: no total given
    stub.answer("GET", "/api/df", 200, S.DF_TOTAL)
    code, out, _ = pando(capsys, "--mgr", stub.url, "df")
    assert code == 0 and "40 GiB  28 GiB  12 GiB  30.00" in out, out
    code, out, _ = pando(capsys, "--mgr", stub.url, "mds", "ls")
    assert code == 0 and "node1" in out and "127.0.0.1:2049" in out
    stub.answer("GET", "/api/osds", 200, [])
    assert pando(capsys, "--mgr", stub.url, "osd", "ls")[:2] == (0, "no OSDs in the map\n")


def test_mds_ls_shows_the_bytes_quota_as_used_of_limit_or_a_dash_without_one(
        stub: StubMgr, capsys: Any) -> None:
    stub.answer("GET", "/api/mds", 200, S.MDS_QUOTA)
    code, out, err = pando(capsys, "--mgr", stub.url, "mds", "ls")
    assert code == 0, err
    head, *rows = out.splitlines()
    assert head.split()[-2:] == ["QUOTA", "SEEN"]
    quotas = {r.split()[0]: r.split("  ")[-2].strip() for r in rows}
    assert quotas == {"node1": "-", "node2": "1.2 GiB/10 GiB", "node3": "-"}
    code, out, _ = pando(capsys, "--mgr", stub.url, "mds", "ls", "--json")
    assert code == 0 and json.loads(out) == S.MDS_QUOTA


@pytest.mark.parametrize("used, style", [(8 * GiB, ""), (9 * GiB, "yellow"),
                                         (10 * GiB, "bold red"), (11 * GiB, "bold red")])
def test_the_quota_column_is_coloured_where_health_warns_and_errs(used: int, style: str) -> None:
    q = {"bytes": 10 * GiB, "files": 0, "used_bytes": used, "used_files": 0}
    assert render.quota_bytes(q).style == style


@pytest.mark.parametrize("argv", [["status"], ["osd", "ls"], ["df"], ["mds", "ls"]])
def test_json_prints_the_api_answer_and_nothing_else(stub: StubMgr, capsys: Any,
                                                     argv: list[str]) -> None:
    code, out, err = pando(capsys, "--mgr", stub.url, *argv, "--json")
    assert code == 0 and err == ""
    want = {"status": S.STATUS, "osd": S.OSDS, "df": S.DF, "mds": S.MDS}[argv[0]]
    assert json.loads(out) == want


def test_osd_add_posts_the_spec_with_the_weight_in_bytes(stub: StubMgr, capsys: Any) -> None:
    stub.answer("POST", "/api/osds", 201, S.osd(5))
    code, out, _ = pando(capsys, "--mgr", stub.url, "osd", "add", "--ctl", "127.0.0.1:20595",
                         "--nfs", "127.0.0.1:20495", "--weight", "1T", "--domain", "host-b")
    assert code == 0 and "added osd.5" in out
    assert stub.requests[-1] == ("POST", "/api/osds", {
        "ctl": "127.0.0.1:20595", "nfs": "127.0.0.1:20495", "weight": 1 << 40,
        "domain": "host-b"})


def test_osd_add_posts_the_pool_and_says_it(stub: StubMgr, capsys: Any) -> None:
    stub.answer("POST", "/api/osds", 201, S.osd(5, pool="fast"))
    code, out, _ = pando(capsys, "--mgr", stub.url, "osd", "add", "--ctl", "127.0.0.1:20595",
                         "--nfs", "127.0.0.1:20495", "--pool", "fast")
    assert (code, out) == (0, "added osd.5 (ctl 127.0.0.1:20595, nfs 127.0.0.1:20495, "
                              "weight 10 GiB, pool fast)\n")
    assert stub.requests[-1] == ("POST", "/api/osds", {
        "ctl": "127.0.0.1:20595", "nfs": "127.0.0.1:20495", "pool": "fast"})


@pytest.mark.parametrize("name", ["Fast", "-fast", "a" * 32, ""])
def test_osd_add_with_no_pool_name_exits_2_before_asking(stub: StubMgr, capsys: Any,
                                                         name: str) -> None:
    with pytest.raises(SystemExit) as e:
        run(["--mgr", stub.url, "osd", "add", "--ctl", "h:1", "--nfs", "h:2", f"--pool={name}"])
    assert e.value.code == 2 and "not a pool name" in capsys.readouterr().err
    assert stub.requests == []


def test_osd_out_and_in_post_to_the_osd(stub: StubMgr, capsys: Any) -> None:
    stub.answer("POST", "/api/osd/3/out", 200, {**S.osd(3, inn=False), "changed": True,
                                                 "epoch": 13})
    stub.answer("POST", "/api/osd/3/in", 200, {**S.osd(3), "changed": True, "epoch": 14})
    assert pando(capsys, "--mgr", stub.url, "osd", "out", "osd.3")[:2] == (
        0, "marked osd.3 out (map epoch 13)\n")
    code, out, _ = pando(capsys, "--mgr", stub.url, "osd", "in", "3", "--json")
    assert code == 0 and json.loads(out)["in"] is True
    stub.answer("POST", "/api/osd/3/in", 200, {**S.osd(3), "changed": False, "epoch": 14})
    assert pando(capsys, "--mgr", stub.url, "osd", "in", "3")[:2] == (0, "osd.3 is already in\n")


def test_osd_rm_refused_with_409_prints_why_and_exits_1(stub: StubMgr, capsys: Any) -> None:
    why = "osd.2 is in: mark it out and wait for its data to move first"
    stub.answer("DELETE", "/api/osd/2", 409, {"error": why})
    code, out, err = pando(capsys, "--mgr", stub.url, "osd", "rm", "2", "--json")
    assert (code, out) == (1, "")
    assert err == f"pando: {why} (HTTP 409)\n"
    stub.answer("DELETE", "/api/osd/2?force=1", 200, {"removed": 2, "epoch": 15})
    assert pando(capsys, "--mgr", stub.url, "osd", "rm", "2", "--force")[:2] == (
        0, "removed osd.2 (map epoch 15)\n")


@pytest.mark.parametrize("status, body, want", [
    (404, {"error": "no such OSD: 9"}, "pando: no such OSD: 9 (HTTP 404)"),
    (500, {"error": "KeyError: 'x'"}, "pando: KeyError: 'x' (HTTP 500)"),
    (500, b"<html>Internal Server Error</html>", "pando: <html>Internal Server Error</html>"),
    (200, b"this is not json", "is not JSON"),
    (200, {"not": "a list"}, "is not a JSON list"),
])
def test_errors_and_garbage_exit_1_with_one_line(stub: StubMgr, capsys: Any, status: int,
                                                 body: Any, want: str) -> None:
    stub.answer("GET", "/api/osds", status, body)
    code, out, err = pando(capsys, "--mgr", stub.url, "osd", "ls")
    assert code == 1 and out == ""
    assert want in err and err.startswith("pando: ") and err.count("\n") == 1, err


@pytest.mark.parametrize("path, argv", [("/api/status", ["status"]), ("/api/osds", ["osd", "ls"]),
                                        ("/api/df", ["df"]), ("/api/mds", ["mds", "ls"])])
@pytest.mark.parametrize("body", [
    {"health": 5, "checks": "x", "osds": [1], "capacity": {"total": "lots"}, "mgrs": [3],
     "throughput": {"read_bps": "fast"}, "etcd": [], "mds": {"a": 1}},
    [{"id": "one", "statfs": {"bytes_total": "big", "bytes_free": None}, "weight": []}],
    {"osds": [{"id": None, "total": "x"}], "pools": "none", "total": 7},
    [{"name": None, "time": "yesterday", "presence": 3}],
])
def test_odd_answers_print_or_fail_cleanly(stub: StubMgr, capsys: Any, path: str,
                                           argv: list[str], body: Any) -> None:
    """Whatever shape a newer or broken mgr answers in, never a traceback."""
    stub.answer("GET", path, 200, body)
    code, out, err = pando(capsys, "--mgr", stub.url, *argv)
    assert code in (0, 1), (code, out, err)
    if code == 1:
        assert out == "" and err.startswith("pando: ") and err.count("\n") == 1, err


def test_etcd_unreachable_or_no_leader_503_exits_3(stub: StubMgr, capsys: Any) -> None:
    stub.answer("POST", "/api/osd/1/out", 503, {"error": "etcd unreachable: refused"})
    code, out, err = pando(capsys, "--mgr", stub.url, "osd", "out", "1")
    assert (code, out) == (3, "")
    assert err == f"pando: cannot reach etcd (pando-mgr at {stub.url} says: " \
                  "etcd unreachable: refused)\n"
    stub.answer("POST", "/api/osd/1/out", 503, {"error": "no leader mgr right now; retry"})
    code, out, err = pando(capsys, "--mgr", stub.url, "osd", "out", "1")
    assert (code, out) == (3, "")
    assert err == f"pando: cannot reach a leading pando-mgr (pando-mgr at {stub.url} says: " \
                  "no leader mgr right now; retry)\n"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize("argv", [["status"], ["osd", "ls"], ["osd", "out", "1"], ["df"],
                                  ["mds", "ls"], ["osd", "rm", "1", "--json"]])
def test_refused_connection_exits_3_with_one_line(capsys: Any, argv: list[str]) -> None:
    url = f"http://127.0.0.1:{_free_port()}"
    code, out, err = pando(capsys, "--mgr", url, *argv)
    assert (code, out) == (3, "")
    assert err == f"pando: cannot reach pando-mgr at {url}: connection refused\n"


def test_a_silent_mgr_times_out_with_exit_3(capsys: Any) -> None:
    with socket.socket() as s:              # accepts (backlog) but never answers
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        url = f"http://127.0.0.1:{s.getsockname()[1]}"
        code, _, err = pando(capsys, "--mgr", url, "--timeout", "0.5", "status")
    assert code == 3 and err == f"pando: cannot reach pando-mgr at {url}: timed out\n"


def test_a_follower_redirect_is_followed_with_the_same_method_and_body(capsys: Any,
                                                                       token_file: Path) -> None:
    with StubMgr() as leader, StubMgr() as follower:
        leader.answer("POST", "/api/osd/4/out", 200, S.osd(4, inn=False))
        follower.answer("POST", "/api/osd/4/out", 307, {"leader": leader.url},
                        headers={"Location": leader.url + "/api/osd/4/out"})
        code, out, _ = pando(capsys, "--mgr", follower.url, "osd", "out", "4")
        assert code == 0 and out == "marked osd.4 out\n"
        assert leader.requests == [("POST", "/api/osd/4/out", {})]
        assert leader.tokens == [f"Bearer {mgr_token.load(token_file)}"]


def test_changes_carry_the_token_and_reads_do_not(capsys: Any, stub: StubMgr,
                                                  token_file: Path) -> None:
    stub.answer("POST", "/api/osd/3/out", 200, S.osd(3, inn=False))
    assert pando(capsys, "--mgr", stub.url, "osd", "ls")[0] == 0
    assert pando(capsys, "--mgr", stub.url, "osd", "out", "3")[0] == 0
    assert stub.tokens == [None, f"Bearer {mgr_token.load(token_file)}"]


@pytest.mark.parametrize("location", ["http://evil.example:7480/api/osd/4/out",
                                      "ftp://127.0.0.1:21/api/osd/4/out"])
def test_a_redirect_to_a_host_that_is_no_known_mgr_is_not_followed(
        capsys: Any, location: str) -> None:
    """The leader's URL a follower redirects to comes from etcd, which
    anyone who reaches it can write: the token must not go there."""
    with StubMgr() as follower:
        follower.answer("POST", "/api/osd/4/out", 307, {"leader": location},
                        headers={"Location": location})
        code, out, err = pando(capsys, "--mgr", follower.url, "osd", "out", "4")
    assert (code, out) == (1, "")
    assert f"sends this request on to {location}, which is not a mgr host" in err


def test_a_redirect_to_a_mgr_host_of_pando_conf_is_followed(
        capsys: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    conf = tmp_path / "pando.conf"
    conf.write_text("[host h1]\naddress = 127.0.0.1\nmgr = yes\n")
    monkeypatch.setenv("PANDO_CONF", str(conf))
    with StubMgr() as leader, StubMgr() as follower:
        leader.answer("POST", "/api/osd/4/out", 200, S.osd(4, inn=False))
        where = leader.url + "/api/osd/4/out"
        follower.answer("POST", "/api/osd/4/out", 307, {}, headers={"Location": where})
        code, _, err = pando(capsys, "--mgr", follower.url.replace("127.0.0.1", "localhost"),
                             "osd", "out", "4")
    assert code == 0, err


def test_a_change_without_a_token_file_is_refused_before_asking(
        capsys: Any, stub: StubMgr, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PANDO_MGR_TOKEN_FILE")
    monkeypatch.setenv("PANDO_CONF", str(tmp_path / "none" / "pando.conf"))
    monkeypatch.setenv("PANDO_CLUSTER_DIR", str(tmp_path / "nothing"))
    code, out, err = pando(capsys, "--mgr", stub.url, "osd", "out", "1")
    assert (code, out) == (1, "")
    assert "a change needs the mgr's token, and none was found: --token-file" in err
    assert stub.requests == []


def test_a_token_file_others_can_read_is_refused(capsys: Any, stub: StubMgr,
                                                 token_file: Path) -> None:
    token_file.chmod(0o644)
    code, _, err = pando(capsys, "--mgr", stub.url, "osd", "out", "1")
    assert code == 1
    assert f"pando: {token_file}: the mgr token is mode 0644: it must be readable by its " \
           f"owner only (chmod 600 {token_file})" in err
    assert stub.requests == []


def test_the_token_file_comes_from_flag_then_env_then_etc_pando_then_the_cluster_dir(
        tmp_path: Path) -> None:
    etc, cdir = tmp_path / "etc", tmp_path / "cluster"
    for d in (etc, cdir):
        d.mkdir()
        mgr_token.create(d / "mgr.token")
    env = {"PANDO_CONF": str(etc / "pando.conf"), "PANDO_CLUSTER_DIR": str(cdir),
           "PANDO_MGR_TOKEN_FILE": "/from/env"}
    assert config.resolve_token_file(Path("/flag"), env) == Path("/flag")
    assert config.resolve_token_file(None, env) == Path("/from/env")
    del env["PANDO_MGR_TOKEN_FILE"]
    assert config.resolve_token_file(None, env) == etc / "mgr.token"
    (etc / "mgr.token").unlink()
    assert config.resolve_token_file(None, env) == cdir / "mgr.token"
    (cdir / "mgr.token").unlink()
    assert config.resolve_token_file(None, env) is None


def test_something_that_is_not_http_on_the_port_exits_3(capsys: Any) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        url = f"http://127.0.0.1:{s.getsockname()[1]}"

        def greet() -> None:
            conn, _ = s.accept()
            with conn:
                conn.sendall(b"SSH-2.0-OpenSSH_9.2\r\n")
                time.sleep(0.2)
        t = RaisingThread(target=greet)
        t.start()
        code, out, err = pando(capsys, "--mgr", url, "status")
        t.join()
    assert (code, out) == (3, "")
    assert err.startswith(f"pando: cannot reach pando-mgr at {url}: not an HTTP server ") and \
        err.count("\n") == 1, err


@pytest.mark.parametrize("url", ["ftp://127.0.0.1:1", "http://", "http://a b:1",
                                 "127.0.0.1:99999", "127.0.0.1:0"])
def test_a_bad_mgr_url_is_a_usage_error(capsys: Any, url: str) -> None:
    with pytest.raises(SystemExit) as e:
        run(["status", "--mgr", url])
    assert e.value.code == 2
    out, err = capsys.readouterr()
    assert out == "" and "argument --mgr: not a" in err


def test_a_bad_url_from_the_environment_or_the_file_names_its_source(
        tmp_path: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PANDO_MGR", "ftp://x")
    assert pando(capsys, "status")[::2] == (1, "pando: $PANDO_MGR: not an http URL: 'ftp://x'\n")
    conf = tmp_path / "pando.conf"
    conf.write_text("[mgr]\nurl = http://h:70000\n")
    monkeypatch.delenv("PANDO_MGR")
    monkeypatch.setenv("PANDO_CONF", str(conf))
    code, _, err = pando(capsys, "status")
    assert code == 1 and err.startswith(f"pando: {conf}: the mgr's URL: not a URL: "), err


@pytest.mark.parametrize("argv", [[], ["osd"], ["osd", "rm"], ["osd", "out", "x"],
                                  ["osd", "add", "--ctl", "h:1"], ["osd", "add", "--ctl", "h",
                                                                   "--nfs", "h:2"],
                                  ["osd", "add", "--ctl", "h:1", "--nfs", "h:2", "--weight", "lots"],
                                  ["frobnicate"], ["status", "--timeout", "soon"],
                                  ["status", "--timeout", "0"], ["osd", "out", "-1"]])
def test_usage_errors_exit_2(capsys: Any, argv: list[str]) -> None:
    with pytest.raises(SystemExit) as e:
        run(argv)
    assert e.value.code == 2
    assert capsys.readouterr().out == ""


def test_mgr_url_comes_from_flag_then_env_then_conf_then_default(tmp_path: Path) -> None:
    conf = tmp_path / "pando.conf"
    conf.write_text("[mgr]\nurl = http://10.0.0.5:7480/\n")
    env = {"PANDO_CONF": str(conf), "PANDO_MGR": "10.0.0.6:7480"}
    assert config.resolve_mgr("http://10.0.0.7:1", env) == "http://10.0.0.7:1"
    assert config.resolve_mgr(None, env) == "http://10.0.0.6:7480"
    assert config.resolve_mgr(None, {"PANDO_CONF": str(conf)}) == "http://10.0.0.5:7480"
    assert config.resolve_mgr(None, {"PANDO_CONF": str(tmp_path / "none")}) == config.DEFAULT_MGR
    conf.write_text("[etcd]\nclient_port = 2379\n")
    assert config.resolve_mgr(None, {"PANDO_CONF": str(conf)}) == config.DEFAULT_MGR


def test_the_mgr_url_of_a_cluster_configuration_file(tmp_path: Path) -> None:
    """cluster/README.md's file: inline comments, and without [mgr] url the
    first host with mgr = yes, as pando-cluster render picks it."""
    conf = tmp_path / "pando.conf"
    env = {"PANDO_CONF": str(conf)}
    conf.write_text("[cluster]\nname = prod   # a token\n\n[mgr]\n"
                    "url = http://10.0.0.1:7480      # what the `pando` CLI talks to\n"
                    "port = 7480\n\n[host h1]\naddress = 10.0.0.9\nmgr = yes\n")
    assert config.resolve_mgr(None, env) == "http://10.0.0.1:7480"
    conf.write_text("[mgr]\nport = 7490 ; the API\n\n[host h1]\naddress = 10.0.0.1\n"
                    "osds = 1, 2\n\n[host h2]\naddress = 10.0.0.2\nmgr = yes\n")
    assert config.resolve_mgr(None, env) == "http://10.0.0.2:7490"
    conf.write_text("[host h1]\naddress = fd00::1\nmgr = yes\n")
    assert config.resolve_mgr(None, env) == "http://[fd00::1]:7480"


def test_an_unreadable_conf_is_a_clear_error(tmp_path: Path, capsys: Any,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    conf = tmp_path / "pando.conf"
    conf.write_text("url = no section\n")
    monkeypatch.setenv("PANDO_CONF", str(conf))
    monkeypatch.delenv("PANDO_MGR", raising=False)
    code, out, err = pando(capsys, "status")
    assert code == 1 and out == "" and err.startswith(f"pando: {conf}: ")
