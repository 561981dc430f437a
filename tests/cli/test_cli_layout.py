"""`pando layout set/get` without a bus: the options turned into the
policy JSON the FSAL's layout_set takes, the usage errors (exit 2) caught
before any call, and the human view of layout_get's answer."""
from __future__ import annotations

from typing import Any

import pytest

from pando_cli import ganesha, layout_view
from pando_cli.main import parser, run
from pando_cli.policy import from_args
from rich.console import Console


def policy(*opts: str) -> dict[str, Any] | None:
    return from_args(parser().parse_args(["layout", "set", "/d", *opts]))


def test_options_become_the_policy_json() -> None:
    assert policy("--scheme", "mirror", "--copies", "3", "--stripe-unit", "64K") == {
        "scheme": "mirror", "copies": 3, "stripe_unit": 65536}
    assert policy("--scheme", "raid0", "--width", "4", "--stripe-unit", "1M") == {
        "scheme": "raid0", "width": 4, "stripe_unit": 1 << 20}
    assert policy("--scheme", "rs", "--k", "8", "--m", "2", "--cold-after", "86400",
                  "--cold-k", "10", "--cold-m", "4") == {
        "scheme": "rs", "k": 8, "m": 2, "cold_after_s": 86400, "cold": {"k": 10, "m": 4}}
    assert policy("--clear") is None


def test_pool_goes_into_the_policy_json_and_alone_keeps_the_default_shape() -> None:
    assert policy("--scheme", "rs", "--m", "2", "--pool", "fast") == {
        "scheme": "rs", "m": 2, "pool": "fast"}
    assert policy("--pool", "ssd_2") == {"scheme": "default", "pool": "ssd_2"}


@pytest.mark.parametrize("opts, says", [
    ([], "--scheme"),
    (["--clear", "--pool", "fast"], "--clear takes no other"),
    (["--pool", "fast", "--copies", "2"], "other policy options need --scheme"),
    (["--pool", "fast", "--stripe-unit", "64K"], "other policy options need --scheme"),
    (["--clear", "--scheme", "raid0"], "--clear takes no other"),
    (["--scheme", "rs", "--k", "4"], "needs --m"),
    (["--scheme", "raid0", "--copies", "2"], "--copies does not apply"),
    (["--scheme", "mirror", "--k", "2"], "--k does not apply"),
    (["--scheme", "rs", "--m", "2", "--width", "4"], "--width does not apply"),
    (["--scheme", "raid0", "--cold-k", "4"], "need --cold-after"),
    (["--scheme", "raid0", "--cold-after", "60"], "needs --cold-m"),
])
def test_options_that_make_no_policy_exit_2_before_any_call(opts: list[str], says: str,
                                                             capsys: Any) -> None:
    assert run(["layout", "set", "/d", *opts]) == 2
    assert says in capsys.readouterr().err


def test_bad_numbers_are_usage_errors(capsys: Any) -> None:
    with pytest.raises(SystemExit) as e:
        parser().parse_args(["layout", "set", "/d", "--scheme", "rs", "--m", "-1"])
    assert e.value.code == 2


@pytest.mark.parametrize("name", ["Fast", "-fast", "_fast", "a" * 32, "fa st", ""])
def test_a_pool_that_is_no_pool_name_exits_2_before_any_call(
        name: str, capsys: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ganesha, "layout_set", lambda *a, **k: pytest.fail("called"))
    with pytest.raises(SystemExit) as e:
        run(["layout", "set", "/d", "--scheme", "raid0", f"--pool={name}"])
    assert e.value.code == 2 and "not a pool name" in capsys.readouterr().err


def render(j: dict[str, Any]) -> str:
    con = Console(width=200, record=True)
    layout_view.layout(con, j)
    return con.export_text()


def test_get_shows_the_policy_and_the_map() -> None:
    out = render({"path": "/d/f", "ino": 9, "type": "file",
                  "policy": {"scheme": "rs", "k": 8, "m": 2, "stripe_unit": 65536,
                             "cold_after_s": 7200, "cold": {"k": 0, "m": 4}},
                  "map": {"scheme": "rs", "k": 8, "m": 2, "mirrors": 1, "width": 10,
                          "groups": 1, "stripe_unit": 65536}})
    for want in ("/d/f", "file", "rs(8,2)", "64 KiB (65536)", "k + m",
                 "after 2 h 0 min: rs(auto,4)", "10 components a group"):
        assert want in out, f"{want!r} not in:\n{out}"


def test_get_of_a_directory_without_a_policy_shows_the_defaults() -> None:
    out = render({"path": "/", "ino": 1, "type": "directory", "map": None,
                  "policy": {"scheme": "default", "copies": 2, "width": 1,
                             "stripe_unit": 1048576}})
    for want in ("default (mirror x2)", "1.0 MiB (1048576)", "width:        1", "cold:         -"):
        assert want in out, f"{want!r} not in:\n{out}"


def test_get_shows_the_pool_of_a_policy_or_that_any_osd_will_do() -> None:
    out = render({"path": "/fast", "ino": 5, "type": "directory", "map": None,
                  "policy": {"scheme": "default", "copies": 2, "pool": "fast"}})
    assert "pool:         fast" in out, out
    out = render({"path": "/", "ino": 1, "type": "directory", "map": None,
                  "policy": {"scheme": "mirror", "copies": 2}})
    assert "pool:         - (any OSD)" in out, out
