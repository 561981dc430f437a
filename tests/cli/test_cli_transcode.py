"""`pando transcode` and the transcode line of `pando status` against a
stand-in mgr (cli_stub.py) answering as mgr/README.md documents
GET /api/transcode and the "transcode" entry of GET /api/status."""
from __future__ import annotations

import json
from typing import Any, Iterator

import pytest

import cli_samples as S
from cli_stub import StubMgr
from pando_cli.main import run

MiB = 1 << 20
A = {"passes": 7, "files_done": 3, "bytes_done": 12 * MiB, "failed": 1, "retried": 2,
     "current_ino": 4242, "last_pass_end": 1764070040.0, "interval_s": 600,
     "updated": 1764070050.0}
B = {"passes": 2, "files_done": 2, "bytes_done": 4 * MiB, "failed": 0, "retried": 0,
     "current_ino": 0, "last_pass_end": 1764070000.0, "interval_s": 60,
     "updated": 1764070050.0}
SUMS = {"managers": 2, "files_done": 5, "bytes_done": 16 * MiB, "failed": 1, "retried": 2,
        "running": 1}
TRANSCODE = {**SUMS, "mds": {"mds-a": A, "mds-b": B}}


@pytest.fixture
def stub() -> Iterator[StubMgr]:
    with StubMgr() as s:
        s.answer("GET", "/api/status", 200, {**S.STATUS, "transcode": SUMS})
        s.answer("GET", "/api/transcode", 200, TRANSCODE)
        yield s


def pando(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = run(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _line(out: str, label: str) -> str | None:
    for ln in out.splitlines():
        head, sep, rest = ln.partition(":")
        if sep and head.strip() == label:
            return rest.strip()
    return None


def test_status_has_a_transcode_line_with_files_bytes_failures_and_who_is_transcoding(
        stub: StubMgr, capsys: Any) -> None:
    code, out, err = pando(capsys, "--mgr", stub.url, "status")
    assert code == 0, err
    assert _line(out, "transcode") == ("5 files, 16 MiB transcoded, 1 failed, "
                                       "transcoding on 1 of 2 managers")
    stub.answer("GET", "/api/status", 200, {**S.STATUS, "transcode": {**SUMS, "running": 0}})
    _, out, _ = pando(capsys, "--mgr", stub.url, "status")
    assert _line(out, "transcode") == "5 files, 16 MiB transcoded, 1 failed, idle"


def test_status_has_no_transcode_line_while_no_manager_reports_or_an_old_mgr_says_nothing(
        stub: StubMgr, capsys: Any) -> None:
    for st in ({**S.STATUS, "transcode": {**SUMS, "managers": 0}}, S.STATUS,
               {**S.STATUS, "transcode": "garbage"}):
        stub.answer("GET", "/api/status", 200, st)
        code, out, err = pando(capsys, "--mgr", stub.url, "status")
        assert code == 0, err
        assert _line(out, "transcode") is None, out


def test_pando_transcode_is_a_table_per_manager_and_json_is_the_api_answer(
        stub: StubMgr, capsys: Any) -> None:
    code, out, err = pando(capsys, "--mgr", stub.url, "transcode")
    assert code == 0, err
    assert out.splitlines()[0] == ("transcode: 5 files, 16 MiB transcoded, 1 failed, "
                                   "transcoding on 1 of 2 managers")
    head = next(ln.split() for ln in out.splitlines() if ln.startswith("NAME"))
    assert head[:7] == ["NAME", "PASSES", "FILES", "BYTES", "FAILED", "RETRIED", "NOW"]
    rows = {ln.split()[0]: ln for ln in out.splitlines() if ln.startswith("mds-")}
    assert rows["mds-a"].split()[1:9] == ["7", "3", "12", "MiB", "1", "2", "inode", "4242"]
    assert rows["mds-b"].split()[1:8] == ["2", "2", "4.0", "MiB", "0", "0", "-"]
    assert "10 min" in rows["mds-a"] and "1 min" in rows["mds-b"]
    code, out, err = pando(capsys, "--mgr", stub.url, "transcode", "--json")
    assert (code, err) == (0, "")
    assert json.loads(out) == TRANSCODE


def test_pando_transcode_says_when_no_manager_reports_and_fails_on_an_error(
        stub: StubMgr, capsys: Any) -> None:
    stub.answer("GET", "/api/transcode", 200, {**SUMS, "managers": 0, "files_done": 0,
                                               "bytes_done": 0, "failed": 0, "running": 0,
                                               "mds": {}})
    code, out, _ = pando(capsys, "--mgr", stub.url, "transcode")
    assert code == 0
    assert "no metadata manager reports transcoding" in out
    stub.answer("GET", "/api/transcode", 200, [1, 2])
    code, out, err = pando(capsys, "--mgr", stub.url, "transcode")
    assert (code, out) == (1, "") and "/api/transcode is not a JSON object" in err
    stub.answer("GET", "/api/transcode", 500, {"error": "internal error"})
    code, out, err = pando(capsys, "--mgr", stub.url, "transcode")
    assert (code, out) == (1, "") and "internal error (HTTP 500)" in err
