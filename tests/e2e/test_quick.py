"""The quick e2e set (runs in ci/test): every kernel mounts NFSv3 and NFSv4.1
and passes the data-verification scenario, in one boot per kernel; and the
harness proves it can fail when the server corrupts data."""
from __future__ import annotations

import dataclasses
from typing import Callable

import pytest

from pando_testing.e2e import KERNEL_IDS, SIZES, KernelClient, check_on_server, timing_line
from pando_testing.nfsproxy import RecordProxy, flip_last_byte
from pando_testing.pod import Pod
from pando_testing.vm import NfsServerHandle, Scenario


@pytest.mark.parametrize("version", KERNEL_IDS)
def test_data_verification(version: str, kernel_client: Callable[..., KernelClient],
                           nfs_server: NfsServerHandle) -> None:
    sc = Scenario()
    for vers in ("v3", "v4.1"):
        sc.step("verify", vers, *SIZES)
    res = kernel_client(version).run(sc, timeout=300)
    res.assert_ok()
    assert [(s.scenario, s.vers) for s in res.steps] == [("verify", "v3"), ("verify", "v4.1")]
    for step in res.steps:
        check_on_server(nfs_server, res, step)
    print(timing_line(res))


def test_corrupting_server_fails_the_scenario(pod: Pod, kernel_client: Callable[..., KernelClient],
                                              nfs_server: NfsServerHandle) -> None:
    """A proxy between the guest and the server flips the last byte of every
    large reply (READ data).  The guest must report the verify step FAILED,
    with its own words (the sha256 mismatch it computed)."""
    proxy = RecordProxy(pod, listen_port=2050, upstream_port=nfs_server.target.port,
                        mangle=flip_last_byte(min_size=16384)).start()
    try:
        bad = dataclasses.replace(
            nfs_server, name="corrupting-proxy",
            target=dataclasses.replace(nfs_server.target, port=2050, versions=("v4.1",)))
        res = kernel_client("6.1", server=bad).run(
            Scenario().step("verify", "v4.1", 4096, 1048577), timeout=180)
    finally:
        proxy.stop()
    assert proxy.mangled > 0, "the proxy never saw a large reply to damage"
    assert not res.ok
    step = res.step("verify", "v4.1")
    assert step.status == "fail"
    assert "sha256 mismatch for f.1048577 (v4.1)" in step.output, step.output
    assert "f.4096" not in step.output  # small reads passed through untouched
    report = res.report()
    assert "FAILED" in report and "sha256 mismatch for f.1048577" in report
