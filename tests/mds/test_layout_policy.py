"""Storage policies per directory (dbus layout_set / layout_get, `pando
layout`), like Lustre's `lfs setstripe`: a directory's policy is copied to
what is made in it afterwards, and a file written past Inline_Max gets the
storage map its policy says (ganesha-fsal/README.md, "Storage policies")."""
from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from typing import Any

import pytest
from pando_testing.cluster_map import dbus_json, file_map
from pando_testing.mds import PandoMds
from pando_testing.layout_policy import layout_get, layout_set, mkdir
from pando_testing.mds_files import connect, new_file
from pando_testing.pando_cli import run_cli
from pando_testing.nfs3 import NFS3_OK

INLINE_MAX = 4096
BIG = b"p" * (3 * INLINE_MAX)


@pytest.fixture
def small_mds(mds_factory: Callable[..., PandoMds]) -> PandoMds:
    """Four OSDs, Mirrors = 2, files past 4 KiB on objects, no object pool."""
    return mds_factory(4, object_pool=0, inline_max=INLINE_MAX)


def shape(mds: PandoMds, path: str) -> tuple[str, int, int, int]:
    """(scheme, mirrors, stripe unit, components) of a file's map."""
    ok, msg, j = file_map(mds, path)
    assert ok, msg
    assert j["inline"] is False, f"{path} is still inline"
    comps = [k for g in j["groups"] for k in g["components"]]
    return j["scheme"], j["mirrors"], j["stripe_unit"], len(comps)


def test_set_on_a_directory_then_get_gives_it_back(small_mds: PandoMds) -> None:
    c = connect(small_mds)
    mkdir(c, small_mds.root_handle(), "d")
    policy = {"scheme": "mirror", "copies": 3, "stripe_unit": 65536}
    ok, msg = layout_set(small_mds, "/d", policy)
    assert ok, msg
    j = layout_get(small_mds, "/d")
    assert j["type"] == "directory" and j["path"] == "/d" and j["map"] is None
    assert j["policy"] == {"scheme": "mirror", "copies": 3, "stripe_unit": 65536, "width": 0}
    cold = {"scheme": "rs", "k": 8, "m": 2, "cold_after_s": 86400, "cold": {"k": 10, "m": 4}}
    assert layout_set(small_mds, "/d", cold)[0]
    assert layout_get(small_mds, "/d")["policy"] == {**cold, "stripe_unit": 0}


def test_a_directory_without_a_policy_shows_the_export_defaults(small_mds: PandoMds) -> None:
    j = layout_get(small_mds, "/")
    assert j["policy"] == {"scheme": "default", "copies": 2, "width": 1,
                           "stripe_unit": 1 << 20}


def test_subdirectories_and_files_made_after_inherit_it_and_earlier_ones_do_not(
        small_mds: PandoMds) -> None:
    c = connect(small_mds)
    d = mkdir(c, small_mds.root_handle(), "d")
    mkdir(c, d, "before")
    assert layout_set(small_mds, "/d", {"scheme": "mirror", "copies": 3})[0]
    sub = mkdir(c, d, "sub")
    deeper = mkdir(c, sub, "deeper")
    new_file(c, deeper, "small", b"s" * 10)
    want = {"scheme": "mirror", "copies": 3, "stripe_unit": 0, "width": 0}
    for path in ("/d/sub", "/d/sub/deeper", "/d/sub/deeper/small"):
        assert layout_get(small_mds, path)["policy"] == want, path
    assert layout_get(small_mds, "/d/before")["policy"]["scheme"] == "default"
    small = layout_get(small_mds, "/d/sub/deeper/small")
    assert small["type"] == "file" and small["map"] is None        # inline whatever the policy


def test_a_three_way_mirror_policy_makes_three_copy_maps(small_mds: PandoMds) -> None:
    c = connect(small_mds)
    d = mkdir(c, small_mds.root_handle(), "m3")
    assert layout_set(small_mds, "/m3", {"scheme": "mirror", "copies": 3,
                                          "stripe_unit": 65536})[0]
    new_file(c, d, "big", BIG)
    new_file(c, small_mds.root_handle(), "plain", BIG)
    assert shape(small_mds, "/m3/big") == ("mirror", 3, 65536, 3)
    assert shape(small_mds, "/plain") == ("mirror", 2, 1 << 20, 2)
    m = layout_get(small_mds, "/m3/big")["map"]
    assert m["scheme"] == "mirror" and m["mirrors"] == 3 and m["width"] == 3
    res = c.read(c.lookup_fh(d, "big"), 0, len(BIG))
    assert res.status == NFS3_OK and res.data == BIG


def test_a_raid0_policy_stripes_over_its_width(small_mds: PandoMds) -> None:
    c = connect(small_mds)
    d = mkdir(c, small_mds.root_handle(), "r0")
    assert layout_set(small_mds, "/r0", {"scheme": "raid0", "width": 3,
                                          "stripe_unit": 4096})[0]
    new_file(c, d, "big", BIG)
    assert shape(small_mds, "/r0/big") == ("stripe", 1, 4096, 3)
    res = c.read(c.lookup_fh(d, "big"), 0, len(BIG))
    assert res.status == NFS3_OK and res.data == BIG


def test_an_rs_policy_makes_an_rs_map_of_k_plus_m_components(small_mds: PandoMds) -> None:
    c = connect(small_mds)
    d = mkdir(c, small_mds.root_handle(), "ec")
    assert layout_set(small_mds, "/ec", {"scheme": "rs", "k": 2, "m": 1,
                                          "stripe_unit": 4096})[0]
    new_file(c, d, "big", BIG)
    res = c.read(c.lookup_fh(d, "big"), 0, len(BIG))
    assert res.status == NFS3_OK and res.data == BIG
    ok, msg, j = file_map(small_mds, "/ec/big")
    assert ok, msg
    assert j["scheme"] == "rs" and j["stripe_unit"] == 4096
    assert len([k for g in j["groups"] for k in g["components"]]) == 3
    m = layout_get(small_mds, "/ec/big")["map"]
    assert (m["k"], m["m"], m["width"]) == (2, 1, 3)


def test_a_file_with_a_policy_does_not_take_a_pool_map(
        mds_factory: Callable[..., PandoMds]) -> None:
    mds = mds_factory(4, object_pool=4, inline_max=INLINE_MAX)
    c = connect(mds)
    d = mkdir(c, mds.root_handle(), "m3")
    assert layout_set(mds, "/m3", {"scheme": "mirror", "copies": 3})[0]
    new_file(c, d, "big", BIG)
    new_file(c, mds.root_handle(), "plain", BIG)
    assert shape(mds, "/m3/big")[:2] == ("mirror", 3)
    assert shape(mds, "/plain")[:2] == ("mirror", 2)


def test_a_later_set_or_clear_changes_only_what_is_made_after(small_mds: PandoMds) -> None:
    c = connect(small_mds)
    d = mkdir(c, small_mds.root_handle(), "d")
    assert layout_set(small_mds, "/d", {"scheme": "mirror", "copies": 3})[0]
    new_file(c, d, "early", b"")
    ok, msg = layout_set(small_mds, "/d", "")
    assert ok and "cleared" in msg
    assert layout_get(small_mds, "/d")["policy"]["scheme"] == "default"
    new_file(c, d, "late", BIG)
    c.write_all(c.lookup_fh(d, "early"), 0, BIG)
    assert shape(small_mds, "/d/early")[:2] == ("mirror", 3)
    assert shape(small_mds, "/d/late")[:2] == ("mirror", 2)
    assert layout_set(small_mds, "/d", {"scheme": "raid0"})[0]
    assert layout_set(small_mds, "/d", {"scheme": "default"})[0]
    assert layout_get(small_mds, "/d")["policy"]["scheme"] == "default"


@pytest.mark.parametrize("policy, says", [
    ("{not json", "not a JSON object"),
    ("[1, 2]", "not a JSON object"),
    ({"copies": 3}, 'needs a "scheme"'),
    ({"scheme": "raid5"}, "bad value for 'scheme'"),
    ({"scheme": "rs", "k": 62, "m": 4}, "k + m is wider"),
    ({"scheme": "rs", "k": 4, "m": 0}, "m must be 1 to 4"),
    ({"scheme": "rs", "k": 300, "m": 2}, "bad value for 'k'"),
    ({"scheme": "mirror", "copies": 4}, "copies must be 2 or 3"),
    ({"scheme": "raid0", "stripe_unit": 5000}, "multiple of 4 KiB"),
    ({"scheme": "raid0", "stripe": 65536}, "unknown field 'stripe'"),
    ({"scheme": "raid0", "cold_after_s": 60, "cold": {"k": 4}}, "cold scheme"),
])
def test_bad_policies_are_refused_with_a_reason(small_mds: PandoMds, policy: Any,
                                                says: str) -> None:
    c = connect(small_mds)
    mkdir(c, small_mds.root_handle(), "d")
    ok, msg = layout_set(small_mds, "/d", policy)
    assert not ok and says in msg, msg
    assert layout_get(small_mds, "/d")["policy"]["scheme"] == "default"


def test_set_on_a_file_or_a_missing_path_is_refused(small_mds: PandoMds) -> None:
    c = connect(small_mds)
    new_file(c, small_mds.root_handle(), "f", b"x")
    ok, msg = layout_set(small_mds, "/f", {"scheme": "mirror", "copies": 3})
    assert not ok and "applies to directories" in msg and "fixed at create" in msg
    ok, msg = layout_set(small_mds, "/nothing/here", {"scheme": "raid0"})
    assert not ok and "No such file" in msg
    ok, msg, j = dbus_json(small_mds, "layout_get", "string:/nothing")
    assert not ok and "No such file" in msg and j == {}


def pando_cli(mds: PandoMds, *args: str) -> subprocess.CompletedProcess[str]:
    """The `pando` CLI run in the test's pod against this manager's bus."""
    return run_cli(mds.pod, *args, env=mds.dbus_env())


def test_the_cli_sets_and_gets_a_policy(small_mds: PandoMds) -> None:
    c = connect(small_mds)
    d = mkdir(c, small_mds.root_handle(), "cli")
    cp = pando_cli(small_mds, "layout", "set", "/cli", "--scheme", "mirror", "--copies", "3",
                   "--stripe-unit", "64K")
    assert cp.returncode == 0, cp.stderr
    assert "policy set" in cp.stdout
    cp = pando_cli(small_mds, "--json", "layout", "get", "/cli")
    assert cp.returncode == 0, cp.stderr
    assert json.loads(cp.stdout)["policy"] == {"scheme": "mirror", "copies": 3,
                                               "stripe_unit": 65536, "width": 0}
    new_file(c, d, "big", BIG)
    cp = pando_cli(small_mds, "layout", "get", "/cli/big")
    assert cp.returncode == 0, cp.stderr
    assert "mirror x3" in cp.stdout and "3 components a group" in cp.stdout
    cp = pando_cli(small_mds, "layout", "set", "/cli/big", "--scheme", "raid0")
    assert cp.returncode == 1 and "applies to directories" in cp.stderr
    cp = pando_cli(small_mds, "layout", "set", "/cli", "--scheme", "rs", "--k", "4")
    assert cp.returncode == 2 and "--m" in cp.stderr
    cp = pando_cli(small_mds, "layout", "set", "/cli", "--clear")
    assert cp.returncode == 0, cp.stderr
    cp = pando_cli(small_mds, "layout", "get", "/cli")
    assert cp.returncode == 0 and "default (mirror x2)" in cp.stdout
