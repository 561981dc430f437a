"""pando-osd against a secured etcd (cluster/README.md, "etcd's TLS and
users"): it checks etcd's certificate against the cluster's CA, signs in
as osd.<id>, and keeps its presence there; etcd refuses it any other
key, a wrong CA or password gets it nowhere, and it will not start with a
password file that others may read.  It serves NFS through all of it."""
from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from pando_cluster import etcd_auth
from pando_testing.daemons import OsdProcess
from pando_testing.etcd import EtcdCluster
from pando_testing.logs import check_clean_exits
from pando_testing.pod import Pod

KEY = "/pando/osd/{}"


@pytest.fixture
def secure_etcd(request: pytest.FixtureRequest, pod: Pod,
                tmp_path: Path) -> Iterator[EtcdCluster]:
    e = EtcdCluster(pod, tmp_path / "etcd", secure=True, osd_ids=[1, 2])
    e.start()
    yield e
    check_clean_exits(request, e.stop(), [m.log_path for m in e.members], "etcd")


def _args(access: etcd_auth.EtcdAccess, user: str = "", ca: str = "") -> list[str]:
    mine = access.as_user(user) if user else access
    return ["--etcd", mine.endpoints, "--etcd-ttl", "2", "--etcd-interval", "1",
            "--etcd-ca", ca or mine.ca_file, "--etcd-user", mine.user,
            "--etcd-password-file", mine.password_file]


def _wait_log(osd: OsdProcess, text: str, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while text not in osd.log_text():
        assert time.monotonic() < deadline, f"{text!r} not in the log:\n{osd.log_text()}"
        time.sleep(0.1)


def test_an_osd_keeps_its_presence_in_a_secured_etcd(
        secure_etcd: EtcdCluster, osd_factory: Callable[..., OsdProcess]) -> None:
    osd = osd_factory(1, extra_args=_args(secure_etcd.access().osd(1)))
    root = secure_etcd.client()
    v = root.wait_for(lambda c: c.get_json(KEY.format(1)), what="osd/1 present")
    assert v["id"] == 1 and v["ctl"] == f"127.0.0.1:{osd.ctl_port}"
    assert osd.stop() == 0
    assert root.get(KEY.format(1)) is None      # SIGTERM revoked its lease


def test_an_osd_signed_in_as_another_osd_is_refused_and_says_so(
        secure_etcd: EtcdCluster, osd_factory: Callable[..., OsdProcess]) -> None:
    osd = osd_factory(1, extra_args=_args(secure_etcd.access(), user="osd.2"))
    _registers_nothing(secure_etcd, osd, "as etcd user osd.2: permission denied")


def _registers_nothing(etcd: EtcdCluster, osd: OsdProcess, why: str) -> None:
    """osd logs why it has no presence, and still has none after a few
    of its 1 s retries, while it keeps serving."""
    _wait_log(osd, why)
    time.sleep(3)
    assert etcd.client().get(KEY.format(osd.osd_id)) is None
    assert osd.alive()


def test_an_osd_that_does_not_trust_etcds_certificate_registers_nothing(
        secure_etcd: EtcdCluster, osd_factory: Callable[..., OsdProcess],
        tmp_path: Path) -> None:
    other = tmp_path / "other-ca"
    etcd_auth.ensure_ca(other)
    osd = osd_factory(1, extra_args=_args(secure_etcd.access().osd(1),
                                          ca=str(other / "ca.crt")))
    _registers_nothing(secure_etcd, osd, "certificate is not trusted")


def test_an_osd_with_a_wrong_password_registers_nothing(
        secure_etcd: EtcdCluster, osd_factory: Callable[..., OsdProcess],
        tmp_path: Path) -> None:
    access = secure_etcd.access().osd(1)
    wrong = tmp_path / "wrong.password"
    wrong.write_text("0" * 64 + "\n")
    wrong.chmod(0o600)
    args = _args(access)
    args[args.index("--etcd-password-file") + 1] = str(wrong)
    osd = osd_factory(1, extra_args=args)
    _registers_nothing(secure_etcd, osd, "credentials refused")


def test_an_osd_will_not_start_with_a_password_file_others_may_read(
        secure_etcd: EtcdCluster, osd_factory: Callable[..., OsdProcess]) -> None:
    access = secure_etcd.access().osd(1)
    Path(access.password_file).chmod(0o644)
    osd = osd_factory(1, start=False, extra_args=_args(access))
    with contextlib.suppress(Exception):     # it may exit before its ports answer
        osd.start()
    assert osd.proc is not None and osd.proc.wait(timeout=15) != 0
    assert "osd.1.password" in osd.log_text(), osd.log_text()
