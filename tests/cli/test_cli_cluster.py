"""`pando` run as an admin runs it (python -m pando_cli.main, inside the
test's pod) against a real pando-mgr on a real etcd with real pando-osd
targets announcing themselves, and against a real Ganesha's dbus."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from pando_testing import nfs3
from pando_testing.daemons import OsdProcess
from pando_testing.etcd import EtcdCluster
from pando_testing.logs import keep_logs
from pando_testing.mds import PandoMds
from pando_testing.mgr import MgrApi, MgrProcess
from pando_testing.nfs3 import NFS3_OK, Nfs3Client, Sattr3
from pando_testing.pod import Pod

IDS = (1, 2, 3)


TOKEN = "PANDO_MGR_TOKEN_FILE"


def pando(pod: Pod, *argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The CLI in the pod, its environment without PANDO_MGR/PANDO_CONF;
    the mgr fixture's token in $PANDO_MGR_TOKEN_FILE."""
    base = {k: v for k, v in os.environ.items() if k not in ("PANDO_MGR", "PANDO_CONF")}
    return pod.run([sys.executable, "-m", "pando_cli.main", *argv], check=False,
                   env={**base, **(env or {})}, timeout=60)


def write_seed(path: Path, osds: list[OsdProcess]) -> Path:
    lines = ["key_file = cluster.key", "partition = 1"]
    lines += [f"osd {o.osd_id} ctl={o.ctl_addr} nfs={o.host}:{o.nfs_port}" for o in osds]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def mgr(request: pytest.FixtureRequest, pod: Pod, tmp_path: Path, etcd: EtcdCluster,
        osd_factory: Callable[..., OsdProcess],
        monkeypatch: pytest.MonkeyPatch) -> Iterator[MgrProcess]:
    """pando-mgr on 127.0.0.1:7480 over three pando-osd that put their
    presence in etcd, every OSD up in the map before the test starts."""
    presence = ["--etcd", etcd.endpoints, "--etcd-ttl", "2", "--etcd-interval", "1"]
    osds = [osd_factory(i, extra_args=presence) for i in IDS]
    m = MgrProcess(pod, tmp_path / "mgr", etcd.endpoints, lease=2,
                   seed=write_seed(tmp_path / "cluster.conf", osds)).start()
    monkeypatch.setenv(TOKEN, str(m.token_file))
    try:
        m.api().wait_for(lambda a: a.osd_states() == {i: (True, True) for i in IDS},
                         timeout=20, what="every OSD up and in")
        yield m
    finally:
        code = m.stop() if m.alive() else 0
        keep_logs(request, [m.log_path])
    assert code == 0, f"pando-mgr did not exit cleanly on SIGTERM: {code}"


def pando_json(pod: Pod, *argv: str) -> Any:
    cp = pando(pod, *argv, "--json")
    assert cp.returncode == 0, f"pando {' '.join(argv)}: exit {cp.returncode}: {cp.stderr}"
    assert cp.stderr == "", cp.stderr
    return json.loads(cp.stdout)


def test_status_and_osd_ls_show_the_cluster_the_mgr_sees(pod: Pod, mgr: MgrProcess) -> None:
    api: MgrApi = mgr.api()
    api.wait_for(lambda a: a.status()["etcd"]["members"], timeout=15, what="etcd members")
    cp = pando(pod, "status")                       # the default URL: 127.0.0.1:7480
    assert cp.returncode == 0, cp.stderr
    for want in ("cluster:", "mgr-a (leader)", "3 osds: 3 up, 3 in", "quorum ok", "usage:"):
        assert want in cp.stdout, f"{want!r} not in:\n{cp.stdout}"
    st = pando_json(pod, "status")
    assert st["osds"] == {"total": 3, "up": 3, "in": 3} and st["leader"] == "mgr-a"
    assert st["health"] in cp.stdout
    osds = pando_json(pod, "osd", "ls")
    assert [(o["id"], o["up"], o["in"]) for o in osds] == [(i, True, True) for i in IDS]
    cp = pando(pod, "osd", "ls")
    rows = [line.split() for line in cp.stdout.splitlines() if line.strip().startswith("osd.")]
    assert [r[:3] for r in rows] == [[f"osd.{i}", "up", "in"] for i in IDS], cp.stdout
    df = pando_json(pod, "df")
    assert [o["id"] for o in df["osds"]] == list(IDS) and df["total"]["total"] > 0
    cp = pando(pod, "df")
    assert cp.returncode == 0 and "osd.3  up,in" in cp.stdout, cp.stdout
    assert pando_json(pod, "mds", "ls") == []
    assert pando(pod, "mds", "ls").stdout == "no metadata manager is present\n"


def test_osd_out_in_and_a_refused_rm(pod: Pod, mgr: MgrProcess) -> None:
    cp = pando(pod, "--mgr", mgr.url, "osd", "out", "2")
    assert cp.returncode == 0 and cp.stdout.startswith("marked osd.2 out"), cp.stdout + cp.stderr
    st = pando_json(pod, "status")
    assert st["osds"]["in"] == 2 and "OSD_OUT" in [c["code"] for c in st["checks"]]
    assert "OSD_OUT" in pando(pod, "status").stdout
    cp = pando(pod, "osd", "out", "2")
    assert (cp.returncode, cp.stdout) == (0, "osd.2 is already out\n")

    cp = pando(pod, "osd", "rm", "1")               # in, up: removing it would lose data
    assert cp.returncode == 1 and cp.stdout == ""
    assert cp.stderr.startswith("pando: ") and "(HTTP 409)" in cp.stderr, cp.stderr
    assert cp.stderr.count("\n") == 1, cp.stderr
    cp = pando(pod, "osd", "rm", "9", "--json")
    assert (cp.returncode, cp.stdout) == (1, "") and "(HTTP 404)" in cp.stderr, cp.stderr

    assert pando_json(pod, "osd", "in", "2")["in"] is True
    assert pando_json(pod, "status")["osds"]["in"] == 3


def test_changes_sent_to_a_standby_mgr_reach_the_leader(request: pytest.FixtureRequest,
                                                         pod: Pod, mgr: MgrProcess,
                                                         tmp_path: Path, etcd: EtcdCluster) -> None:
    standby = MgrProcess(pod, tmp_path / "mgr", etcd.endpoints, name="mgr-b", index=1,
                         lease=2).start()
    try:
        standby.api().wait_for(lambda a: len(a.status()["mgrs"]) == 2, timeout=15,
                               what="both mgrs known")
        cp = pando(pod, "--mgr", standby.url, "osd", "out", "3")
        assert cp.returncode == 0 and cp.stdout.startswith("marked osd.3 out"), cp.stderr
        assert mgr.api().osd_states()[3] == (True, False)
        assert "mgr-a (leader), standbys: mgr-b" in pando(pod, "--mgr", standby.url,
                                                          "status").stdout
        assert pando_json(pod, "--mgr", standby.url, "osd", "in", "3")["in"] is True
    finally:
        code = standby.stop() if standby.alive() else 0
        keep_logs(request, [standby.log_path])
    assert code == 0, f"the standby pando-mgr did not exit cleanly on SIGTERM: {code}"


def test_etcd_away_status_says_cached_and_changes_exit_3(pod: Pod, mgr: MgrProcess,
                                                         etcd: EtcdCluster) -> None:
    assert etcd.members[0].stop() == 0
    try:
        mgr.api().wait_for(lambda a: a.status().get("cached"), timeout=20, what="a cached status")
        cp = pando(pod, "status")
        assert cp.returncode == 0 and "CACHED: pando-mgr cannot read etcd" in cp.stdout, cp.stdout
        cp = pando(pod, "osd", "out", "1")
        assert (cp.returncode, cp.stdout) == (3, "")
        assert cp.stderr.startswith(f"pando: cannot reach etcd (pando-mgr at {mgr.url} says: "), \
            cp.stderr
        assert cp.stderr.count("\n") == 1, cp.stderr
    finally:
        etcd.members[0].start()
    # Back: the mgr reads etcd again, then leads again (until then it
    # answers changes with 503 "no leader mgr right now": exit 3 too).
    mgr.api().wait_for(lambda a: not (st := a.status()).get("cached") and st["leader"],
                       timeout=20, what="etcd back and a leader")
    deadline = time.monotonic() + 10
    while (cp := pando(pod, "osd", "out", "1")).returncode == 3 and time.monotonic() < deadline:
        time.sleep(0.25)                # the leader acts from its next tick
    assert cp.returncode == 0, cp.stderr


def test_mgr_url_from_the_environment_and_the_conf_file(pod: Pod, mgr: MgrProcess,
                                                        tmp_path: Path) -> None:
    conf = tmp_path / "pando.conf"
    conf.write_text(f"[mgr]\nurl = {mgr.url}\n")
    assert pando(pod, "status", env={"PANDO_CONF": str(conf)}).returncode == 0
    conf.write_text("[mgr]\nurl = http://127.0.0.1:7499\n")
    cp = pando(pod, "status", env={"PANDO_CONF": str(conf)})
    assert (cp.returncode, cp.stderr) == (
        3, "pando: cannot reach pando-mgr at http://127.0.0.1:7499: connection refused\n")
    assert pando(pod, "status", env={"PANDO_CONF": str(conf),
                                     "PANDO_MGR": mgr.url}).returncode == 0


def test_a_stopped_mgr_is_unreachable_exit_3(pod: Pod, mgr: MgrProcess) -> None:
    assert mgr.stop() == 0
    for argv in (["status"], ["osd", "ls", "--json"], ["osd", "out", "1"]):
        cp = pando(pod, *argv)
        assert (cp.returncode, cp.stdout) == (3, ""), argv
        assert cp.stderr == f"pando: cannot reach pando-mgr at {mgr.url}: connection refused\n"


def _new_file(mds: PandoMds, name: str, data: bytes) -> None:
    with Nfs3Client.over(mds.pod.connect(mds.host, mds.nfs_port)) as c:
        r = c.create(mds.root_handle(), name, nfs3.GUARDED, Sattr3(mode=0o644))
        assert r.status == NFS3_OK and r.fh is not None
        assert c.write(r.fh, 0, data, nfs3.FILE_SYNC).status == NFS3_OK


def test_recall_through_ganesha_dbus(pod: Pod, mds_factory: Callable[..., PandoMds]) -> None:
    mds = mds_factory(2)
    _new_file(mds, "f", b"x" * (256 << 10))
    bus = mds.dbus_env()["DBUS_SYSTEM_BUS_ADDRESS"]
    cp = pando(pod, "recall", "/f", "--dbus", bus)
    assert (cp.returncode, cp.stderr) == (0, ""), cp.stderr
    assert "no layouts of /f are out" in cp.stdout, cp.stdout
    ans = json.loads(pando(pod, "recall", "10.9.9.9", "--json", env=mds.dbus_env()).stdout)
    assert ans == {"client": "10.9.9.9", "ok": True, "files": 0,
                   "message": "recalling layouts of 0 file(s) from 10.9.9.9"}
    cp = pando(pod, "recall", "/no/such/file", "--dbus", bus)
    assert cp.returncode == 1 and cp.stdout == ""
    assert cp.stderr == "pando: /no/such/file: No such file or directory\n", cp.stderr


def test_file_shows_the_storage_map_through_ganesha_dbus(pod: Pod,
                                                         mds_factory: Callable[..., PandoMds]) -> None:
    mds = mds_factory(2)
    _new_file(mds, "big", b"y" * (256 << 10))        # past the inline limit: objects
    _new_file(mds, "small", b"z" * 100)              # inline in the namespace
    env = mds.dbus_env()
    fm = json.loads(pando(pod, "file", "/big", "--json", env=env).stdout)
    assert fm["path"] == "/big" and fm["size"] == 256 << 10 and fm["inline"] is False
    comps = [c for g in fm["groups"] for c in g["components"]]
    assert comps and {c["osd"] for c in comps} <= {1, 2}
    assert {c["state"] for c in comps} == {"ok"}, comps
    cp = pando(pod, "file", "/big", env=env)
    assert cp.returncode == 0, cp.stderr
    for want in ("/big", f"scheme:       {fm['scheme']}", "256 KiB (262144)", "group 0"):
        assert want in cp.stdout, f"{want!r} not in:\n{cp.stdout}"
    rows = [line.split() for line in cp.stdout.splitlines() if " osd." in line]
    assert [r[1:] for r in rows] == [
        [f"osd.{c['osd']}", str(c["object"]), f"{c['object']:#x}", "ok"] for c in comps], cp.stdout
    small = json.loads(pando(pod, "file", "/small", "--json", env=env).stdout)
    assert small["inline"] is True and small["groups"] == []
    assert "the data is inline" in pando(pod, "file", "/small", env=env).stdout
    for path, why in (("/nope", "/nope: No such file or directory"),
                      ("/", "/: not a regular file")):
        cp = pando(pod, "file", path, env=env)
        assert (cp.returncode, cp.stdout, cp.stderr) == (1, "", f"pando: {why}\n")


def test_the_whole_cluster_through_the_cli(request: pytest.FixtureRequest, pod: Pod,
                                           tmp_path: Path, etcd: EtcdCluster,
                                           mds_factory: Callable[..., PandoMds],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """etcd, three pando-osd and Ganesha present in it, pando-mgr: status
    and mds ls show the manager; `pando osd out` of a mirror of a file
    reaches the FSAL, and `pando file` then says that component is out."""
    presence = ["--etcd", etcd.endpoints, "--etcd-ttl", "2", "--etcd-interval", "1"]
    mds = mds_factory(3, start=False, osd_args=presence, object_pool=0,
                      extra_fsal=f'Etcd = "{etcd.endpoints}"; Etcd_Prefix = "/pando/"; '
                                 'Mds_Name = "mds-cli";')
    m = MgrProcess(pod, tmp_path / "mgr", etcd.endpoints, lease=2,
                   seed=write_seed(tmp_path / "cluster.conf", list(mds.osds))).start()
    monkeypatch.setenv(TOKEN, str(m.token_file))
    try:
        api = m.api()
        api.wait_for(lambda a: a.osd_states() == {i: (True, True) for i in IDS},
                     timeout=20, what="every OSD up and in")
        mds.start()
        api.wait_for(lambda a: [x["name"] for x in a.get("/api/mds")] == ["mds-cli"],
                     timeout=20, what="the manager's presence")
        _whole_cluster_checks(pod, mds, api)
    finally:
        code = m.stop() if m.alive() else 0
        keep_logs(request, [m.log_path])
    assert code == 0, f"pando-mgr did not exit cleanly on SIGTERM: {code}"


def _whole_cluster_checks(pod: Pod, mds: PandoMds, api: MgrApi) -> None:
    st = pando_json(pod, "status")
    assert [x["name"] for x in st["mds"]] == ["mds-cli"]
    assert "MDS_DOWN" not in [c["code"] for c in st["checks"]]
    assert "mds-cli (epoch" in pando(pod, "status").stdout
    assert "mds-cli" in pando(pod, "mds", "ls").stdout

    _new_file(mds, "f", b"m" * (256 << 10))
    env = mds.dbus_env()
    fm = pando_json_env(pod, env, "file", "/f")
    comps = [c for g in fm["groups"] for c in g["components"]]
    assert len(comps) == 2 and {c["state"] for c in comps} == {"ok"}, fm
    victim = comps[0]["osd"]

    cp = pando(pod, "osd", "out", str(victim))
    assert cp.returncode == 0 and cp.stdout.startswith(f"marked osd.{victim} out"), cp.stderr
    epoch = pando_json(pod, "status")["epoch"]
    api.wait_for(lambda a: all(x["epoch"] >= epoch for x in a.get("/api/mds")), timeout=20,
                 what=f"the manager at map epoch {epoch}")
    # The out makes a rebuild job; the manager moves the component off it.
    def moved(_: MgrApi) -> Any:
        fm = pando_json_env(pod, env, "file", "/f")
        states = {c["osd"]: c["state"] for g in fm["groups"] for c in g["components"]}
        return victim not in states and set(states.values()) == {"ok"} and fm
    api.wait_for(moved, timeout=30, what=f"/f rebuilt off osd.{victim}")
    out = pando(pod, "file", "/f", env=env).stdout
    assert f"osd.{victim}" not in out and " ok" in out, out
    api.wait_for(lambda a: not a.get("/api/rebuild")["jobs"], timeout=20,
                 what="the rebuild job retired")
    assert pando_json(pod, "osd", "in", str(victim))["in"] is True


def pando_json_env(pod: Pod, env: dict[str, str], *argv: str) -> Any:
    cp = pando(pod, *argv, "--json", env=env)
    assert (cp.returncode, cp.stderr) == (0, ""), f"pando {' '.join(argv)}: {cp.stderr}"
    return json.loads(cp.stdout)
