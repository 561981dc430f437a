"""Attack: whoever reached etcd (plain HTTP, no users: issue 22, finding
3) could rewrite an OSD's addresses, add OSDs, write rebuild jobs, scrub
requests or leadership.  etcd is set up here as `pando-cluster up` sets
up its own (pando_cluster.etcd_auth): TLS with the cluster's CA, a user
and a role per daemon, authentication on.  Nobody without a password is
heard, and each daemon's user reaches only its own keys."""
from __future__ import annotations

import json
import ssl
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from pando_cluster import etcd_auth
from pando_cluster.mds_config import ConfOsd, render_conf
from pando_mgr import token as mgr_token
from pando_mgr.etcd import EtcdAuth
from pando_mgr.secret_file import SecretFileError
from pando_testing.etcd import EtcdCluster, EtcdRefused
from pando_testing.logs import check_clean_exits
from pando_testing.mgr import MgrProcess
from pando_testing.pod import Pod

PREFIX = "/pando/"
PERMISSION_DENIED = 7
NO_USER = 3             # "user name is empty", and a wrong password


@pytest.fixture
def secure_etcd(request: pytest.FixtureRequest, pod: Pod,
                tmp_path: Path) -> Iterator[EtcdCluster]:
    e = EtcdCluster(pod, tmp_path / "etcd", secure=True, osd_ids=[1, 2], mds_names=["a"])
    e.start()
    yield e
    check_clean_exits(request, e.stop(), [m.log_path for m in e.members], "etcd")


def _refused(call: object) -> int:
    """The gRPC code etcd refused call() with."""
    assert callable(call)
    with pytest.raises(EtcdRefused) as e:
        call()
    return e.value.code


def test_etcd_answers_only_over_tls_to_a_client_that_trusts_the_cluster_ca(
        pod: Pod, secure_etcd: EtcdCluster, tmp_path: Path) -> None:
    url = secure_etcd.members[0].client_url
    assert url.startswith("https://")
    plain = url.replace("https://", "http://")
    other_ca = tmp_path / "other"
    etcd_auth.ensure_ca(other_ca)

    def health(u: str, ctx: ssl.SSLContext | None) -> str:
        with urllib.request.urlopen(f"{u}/health", timeout=3, context=ctx) as r:
            return str(json.loads(r.read())["health"])

    with pytest.raises((urllib.error.URLError, OSError)):
        pod.call_inside(lambda: health(plain, None))
    with pytest.raises(urllib.error.URLError, match="CERTIFICATE_VERIFY_FAILED"):
        pod.call_inside(lambda: health(
            url, ssl.create_default_context(cafile=str(other_ca / "ca.crt"))))
    assert pod.call_inside(lambda: health(
        url, ssl.create_default_context(cafile=secure_etcd.ca_file))) == "true"


def test_a_call_without_a_user_or_with_a_wrong_password_is_refused(
        pod: Pod, secure_etcd: EtcdCluster) -> None:
    anonymous = secure_etcd.client()
    anonymous.user = ""
    assert _refused(lambda: anonymous.put(f"{PREFIX}map", "{}")) == NO_USER
    assert _refused(lambda: anonymous.get(f"{PREFIX}map")) == NO_USER
    liar = secure_etcd.client("osd.1")
    liar.password = "0" * 64
    assert _refused(lambda: liar.put(f"{PREFIX}osd/1", "{}")) == NO_USER
    assert secure_etcd.client().get(f"{PREFIX}map") is None


def test_an_osd_writes_only_its_own_presence_and_reads_nothing(
        secure_etcd: EtcdCluster) -> None:
    osd1 = secure_etcd.client("osd.1")
    osd1.put(f"{PREFIX}osd/1", '{"id": 1}')
    for key in ("osd/2", "map", "mgr/leader", "rebuild/jobs/1", "scrub/request", "mds/a"):
        assert _refused(lambda: osd1.put(f"{PREFIX}{key}", "{}")) == PERMISSION_DENIED, key
    assert _refused(lambda: osd1.get(f"{PREFIX}map")) == PERMISSION_DENIED
    assert _refused(lambda: osd1.delete(f"{PREFIX}osd/2")) == PERMISSION_DENIED
    assert secure_etcd.client().get_json(f"{PREFIX}osd/1") == {"id": 1}


def test_a_manager_reads_everything_and_writes_only_its_own_keys(
        secure_etcd: EtcdCluster) -> None:
    root = secure_etcd.client()
    root.put(f"{PREFIX}map", '{"epoch": 3}')
    mds = secure_etcd.client("mds.a")
    assert mds.get_json(f"{PREFIX}map") == {"epoch": 3}
    for key in ("mds/a", "rebuild/tasks/a/00/1.2", "rebuild/claims/a/1",
                "rebuild/progress/a", "scrub/progress/a", "transcode/progress/a",
                "groups/g1/active", "journal/g1/0000000000000001"):
        mds.put(f"{PREFIX}{key}", "{}")
    for key in ("map", "mds/b", "osd/1", "rebuild/claims/b/1", "rebuild/jobs/1",
                "scrub/request", "mgr/leader", "rebuild/tasks/ab/1"):
        assert _refused(lambda: mds.put(f"{PREFIX}{key}", "{}")) == PERMISSION_DENIED, key


def test_the_mgr_writes_under_the_prefix_only(secure_etcd: EtcdCluster) -> None:
    mgr = secure_etcd.client("mgr")
    mgr.put(f"{PREFIX}map", '{"epoch": 4}')
    mgr.put(f"{PREFIX}mgr/leader", "{}")
    assert _refused(lambda: mgr.put("/elsewhere", "{}")) == PERMISSION_DENIED


def test_setting_up_again_takes_back_a_grant_added_by_hand(
        secure_etcd: EtcdCluster) -> None:
    root = secure_etcd.client()
    root.call("/v3/auth/role/grant", {"name": "osd.1", "perm": {
        "permType": "READWRITE", "key": "L3BhbmRvL21hcA=="}})       # /pando/map
    secure_etcd.client("osd.1").put(f"{PREFIX}map", "{}")
    secure_etcd.provision()
    osd1 = secure_etcd.client("osd.1")
    assert _refused(lambda: osd1.put(f"{PREFIX}map", "{}")) == PERMISSION_DENIED
    osd1.put(f"{PREFIX}osd/1", "{}")


def test_a_password_file_others_may_read_is_refused(tmp_path: Path) -> None:
    pw = tmp_path / "osd.1.password"
    pw.write_text("a" * 64 + "\n")
    pw.chmod(0o644)
    with pytest.raises(SecretFileError, match="mode 0644"):
        EtcdAuth("", "osd.1", str(pw)).password()
    pw.chmod(0o600)
    assert EtcdAuth("", "osd.1", str(pw)).password() == "a" * 64


def test_the_mgr_signs_in_and_keeps_the_map(
        request: pytest.FixtureRequest, pod: Pod, tmp_path: Path,
        secure_etcd: EtcdCluster) -> None:
    seed = tmp_path / "cluster.conf"
    seed.write_text(render_conf(Path("cluster.key"), [
        ConfOsd(i, f"127.0.0.1:{20590 + i}", f"127.0.0.1:{20490 + i}") for i in (1, 2)],
        header=""))
    a = secure_etcd.access().mgr()
    m = MgrProcess(pod, tmp_path / "mgr", secure_etcd.endpoints, seed=seed, lease=2,
                   extra_args=["--etcd-ca", a.ca_file, "--etcd-user", a.user,
                               "--etcd-password-file", a.password_file])
    m.start()
    try:
        root = secure_etcd.client()
        m_map = root.wait_for(lambda c: c.get_json(f"{PREFIX}map"), what="the map")
        assert sorted(o["id"] for o in m_map["osds"]) == [1, 2]
        assert root.wait_for(lambda c: c.get_json(f"{PREFIX}mgr/leader"), what="a leader")
    finally:
        check_clean_exits(request, {m.name: m.stop()}, [m.log_path], "pando-mgr")


def test_the_mgr_will_not_start_with_a_password_file_others_may_read(
        tmp_path: Path, secure_etcd: EtcdCluster) -> None:
    access = secure_etcd.access().mgr()
    Path(access.password_file).chmod(0o640)
    token = tmp_path / "mgr.token"
    mgr_token.create(token)
    r = subprocess.run([sys.executable, "-m", "pando_mgr.daemon", "--etcd", access.endpoints,
                        "--etcd-ca", access.ca_file, "--etcd-user", access.user,
                        "--etcd-password-file", access.password_file,
                        "--token-file", str(token), "--listen", "127.0.0.1:7499"],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 2
    assert "mgr.password: the etcd password of mgr is mode 0640" in r.stderr
