"""`pando-cluster up/status/down` with the real pando-osd, run inside a pod
(so its loopback ports are the pod's own): starts etcd, every OSD and
pando-mgr, is idempotent, reports, and stops every one of them by pid."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from pando_mgr import token as mgr_token
from pando_testing.mgr import MgrApi
from pando_testing.pod import Pod

BASE_PORT = 21490


def _cli(cdir: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "pando_cluster.cli", "--dir", str(cdir), *args]


def _pids(cdir: Path) -> dict[int | str, int | None]:
    st = json.loads((cdir / "cluster.json").read_text())
    pids: dict[int | str, int | None] = {o["osd_id"]: o["pid"] for o in st["osds"]}
    for name in ("etcd", "mgr"):
        if st.get(name):
            pids[name] = st[name]["pid"]
    return pids


def _running(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"


def test_up_is_idempotent_and_down_stops_everything(pod: Pod, tmp_path: Path) -> None:
    cdir = tmp_path / "cluster"
    up = _cli(cdir, "up", "--osds", "2", "--base-port", str(BASE_PORT), "--no-mds")
    started: dict[int | str, int | None] = {}
    try:
        cp = pod.run(up, check=False, timeout=90)
        assert cp.returncode == 0, cp.stdout + cp.stderr
        started = _pids(cdir)
        assert sorted(started, key=str) == [1, 2, "etcd", "mgr"] and all(started.values())
        osd_conf = (cdir / "osd.1.conf").read_text()
        assert osd_conf.count("127.0.0.1:21491") == 1
        auth = cdir / "etcd-auth"
        for line in ("etcd        = https://127.0.0.1:2379", f"etcd_ca = {auth / 'ca.crt'}",
                     "etcd_user = osd.1", f"etcd_password_file = {auth / 'osd.1.password'}"):
            assert line in osd_conf.splitlines(), osd_conf
        assert (auth / "osd.1.password").stat().st_mode & 0o777 == 0o600
        assert "Dashboard: http://127.0.0.1:7480/" in cp.stdout
        assert "pando --mgr http://127.0.0.1:7480 status" in cp.stdout
        token_file = cdir / "mgr.token"
        assert token_file.stat().st_mode & 0o777 == 0o600
        api = MgrApi(pod, "http://127.0.0.1:7480", token=mgr_token.load(token_file))
        api.wait_for(lambda a: a.osd_states() == {1: (True, True), 2: (True, True)},
                     timeout=30, what="the mgr's map with both OSDs up")
        assert api.post("/api/osd/2/out")["in"] is False       # the token up made works
        assert api.post("/api/osd/2/in")["in"] is True
        for i in (1, 2):  # NFSv3 and control ports answer inside the pod
            pod.wait_port("127.0.0.1", BASE_PORT + i, timeout=5)
            pod.wait_port("127.0.0.1", BASE_PORT + 100 + i, timeout=5)

        again = pod.run(up, check=False, timeout=90)
        assert again.returncode == 0, again.stdout + again.stderr
        assert again.stdout.count("already running") == 4, again.stdout
        assert _pids(cdir) == started

        st = pod.run(_cli(cdir, "status"), check=False)
        assert st.returncode == 0, st.stdout + st.stderr
        assert "127.0.0.1:21592" in st.stdout and " up " in st.stdout
        assert "https://127.0.0.1:2379" in st.stdout and "pando-mgr" in st.stdout, st.stdout
    finally:
        down = pod.run(_cli(cdir, "down"), check=False, timeout=90)
    assert down.returncode == 0, down.stdout + down.stderr
    assert down.stdout.count("stopped") == 4, down.stdout
    assert down.stdout.index("pando-mgr") < down.stdout.index("osd.1") < \
        down.stdout.rindex("etcd"), down.stdout
    assert not any(_running(p) for p in started.values() if p)
    st = pod.run(_cli(cdir, "status"), check=False)
    assert st.returncode == 1 and st.stdout.count(" down ") == 4, st.stdout
