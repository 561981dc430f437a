"""`pando file` and `pando recall` up to the bus: the `dbus-send
--print-reply` parser on captured answers, the storage map printed like
`lfs getstripe`, and a bus without Ganesha (a real private dbus-daemon)
or no bus at all reported as unreachable (exit 3)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

import cli_samples as S
from pando_cli import ganesha, render
from pando_cluster.mds_config import render_dbus_conf
from pando_cli.main import run
from rich.console import Console


def test_parser_reads_status_string_and_counts() -> None:
    assert ganesha.parse_print_reply(S.RECALL_FILE_REPLY) == [
        True, "recalling the layouts of /d/f (inode 17)"]
    assert ganesha.parse_print_reply(S.RECALL_CLIENT_REPLY) == [
        True, "recalling layouts of 2 file(s) from 10.0.2.15", 2]


def test_parser_nests_arrays_and_structs() -> None:
    v = ganesha.parse_print_reply(S.CLUSTER_STATUS_REPLY)
    assert v[:2] == [True, "OK"] and v[3:] == [0, 1]
    assert v[2] == [[1, "127.0.0.1:20591", "127.0.0.1:20491", True, 0, 12, 0],
                    [2, "127.0.0.1:20592", "127.0.0.1:20492", False, -111, 3, 3]]


def test_parser_reads_dict_entries_and_variants() -> None:
    assert ganesha.parse_print_reply(S.CREDENTIALS_REPLY) == [
        [("ProcessID", 14711), ("UnixUserID", 0)]]


def test_parser_keeps_json_quotes_and_newlines_inside_a_string() -> None:
    v = ganesha.parse_print_reply(S.FILE_MAP_REPLY)
    assert v[:2] == [True, "OK"] and json.loads(v[2]) == json.loads(S.FILE_MAP_JSON)
    multi = 'method return time=1 sender=:1.3 -> destination=:1.9 serial=4 reply_serial=2\n' \
            '   string "line one\n"quoted"\nline three"\n   uint32 7\n'
    assert ganesha.parse_print_reply(multi) == ['line one\n"quoted"\nline three', 7]


@pytest.mark.parametrize("text", ["   array [\n      uint32 1\n", "   struct {\n   ]\n",
                                  "   string \"open\n", "   frobnicate 3\n"])
def test_parser_rejects_broken_output(text: str) -> None:
    with pytest.raises(ValueError):
        ganesha.parse_print_reply(text)


def test_file_map_prints_like_lfs_getstripe() -> None:
    con = Console(width=200, record=True)
    render.file_map(con, json.loads(S.FILE_MAP_JSON))
    out = con.export_text()
    for want in ("/d/f", "ino:", "17", "3.0 MiB (3145728)", "scheme:", "mirror",
                 "stripe_unit:", "1.0 MiB (1048576)", "mirrors:", "inline:", "no", "group 0"):
        assert want in out, f"{want!r} not in:\n{out}"
    rows = [line.split() for line in out.splitlines() if "osd." in line]
    assert rows == [["0", "osd.1", "4096", "0x1000", "ok"], ["1", "osd.3", "4097", "0x1001", "stale"]]


@pytest.fixture
def private_bus(tmp_path: Path) -> Iterator[str]:
    """A real dbus-daemon on a socket of its own, with no Ganesha on it."""
    if shutil.which("dbus-daemon") is None:
        pytest.skip("dbus-daemon is not installed")
    sock = tmp_path / "bus.sock"
    conf = tmp_path / "bus.conf"
    conf.write_text(render_dbus_conf(sock))     # the one the clusters use
    p = subprocess.Popen(["dbus-daemon", "--nofork", "--nopidfile", f"--config-file={conf}"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while not sock.exists():
        assert p.poll() is None and time.monotonic() < deadline, "dbus-daemon did not start"
        time.sleep(0.02)
    yield f"unix:path={sock}"
    p.terminate()
    p.wait(10)


@pytest.mark.parametrize("argv", [["file", "/d/f"], ["recall", "/d/f"], ["recall", "10.0.2.15"],
                                  ["recall", "/d/f", "--json"]])
def test_a_bus_without_ganesha_exits_3(private_bus: str, capsys: Any, argv: list[str]) -> None:
    code = run([*argv, "--dbus", private_bus])
    out, err = capsys.readouterr()
    assert (code, out) == (3, "")
    assert err.startswith(f"pando: cannot reach Ganesha on {private_bus}: ") and \
        "ServiceUnknown" in err and err.count("\n") == 1, err


def test_no_bus_at_all_exits_3(tmp_path: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    address = f"unix:path={tmp_path}/no.sock"
    monkeypatch.setenv("DBUS_SYSTEM_BUS_ADDRESS", address)
    code = run(["recall", "/d/f"])
    out, err = capsys.readouterr()
    assert (code, out) == (3, "")
    assert err.startswith(f"pando: cannot reach the dbus bus ({address}): ") and \
        err.count("\n") == 1, err


def test_the_dbus_flag_wins_over_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DBUS_SYSTEM_BUS_ADDRESS", "unix:path=/env")
    assert ganesha.bus_env("unix:path=/flag")["DBUS_SYSTEM_BUS_ADDRESS"] == "unix:path=/flag"
    assert ganesha.bus_env(None)["DBUS_SYSTEM_BUS_ADDRESS"] == "unix:path=/env"
    assert os.environ["DBUS_SYSTEM_BUS_ADDRESS"] == "unix:path=/env"


def fake_dbus_send(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, script: str) -> None:
    """A dbus-send first on PATH that runs `script` (sh) with the call's arguments."""
    exe = tmp_path / "bin" / "dbus-send"
    exe.parent.mkdir()
    exe.write_text(f"#!/bin/sh\n{script}\n")
    exe.chmod(0o755)
    monkeypatch.setenv("PATH", f"{exe.parent}:{os.environ['PATH']}")


def test_a_method_this_ganesha_lacks_is_told_apart(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    fake_dbus_send(tmp_path, monkeypatch,
                   'echo "Error org.freedesktop.DBus.Error.UnknownMethod: No such method" >&2\n'
                   "exit 1")
    with pytest.raises(ganesha.GaneshaMissingMethod, match="no owner_quota_list method"):
        ganesha.owner_quota_list(address="unix:path=/x")


def test_pando_quota_shows_the_export_quota_of_a_manager_without_owner_quotas(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any) -> None:
    answer = json.dumps({"bytes": 1 << 20, "files": 0, "used_bytes": 1 << 19, "used_files": 3})
    reply = tmp_path / "quota_get.reply"
    reply.write_text(f'method return\n   boolean true\n   string "ok"\n   string "{answer}"\n')
    fake_dbus_send(tmp_path, monkeypatch, f"""case "$*" in
*.quota_get*) cat {reply} ;;
*) echo "Error org.freedesktop.DBus.Error.UnknownMethod: No such method" >&2; exit 1 ;;
esac""")
    code = run(["quota", "--dbus", "unix:path=/x"])
    out, err = capsys.readouterr()
    assert (code, err) == (0, ""), err
    assert "bytes: 512 KiB used of 1.0 MiB" in out, out
    assert "this manager has no user or group quotas" in out, out
