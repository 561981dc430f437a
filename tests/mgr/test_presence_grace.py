"""After an etcd outage longer than the OSDs' lease, etcd expires every
presence lease at once when it comes back (measured with 3.4.23: a key put
under a 5 s lease is gone on the first read after a 15 s SIGSTOP, though
its holder renews at once).  A mgr that then marked every OSD down would
leave the metadata manager nowhere to place a new file.  So a mgr that has
just reached etcd again marks nobody down for
`presence_grace`; ups, additions and outs go on.  (A mgr that merely
starts leading holds nothing: the keys it finds are live, and the
detection bounds of tests/mgr/test_state_machine.py apply.)"""
from __future__ import annotations

from pando_mgr import osdmap
from pando_mgr.osdmap import ClusterMap, Presence, Settings

S = Settings(name="mgr-t", down_out_interval=600, presence_grace=4)
SEED = """key_file = cluster.key
osd 1 ctl=127.0.0.1:20591 nfs=127.0.0.1:20491
osd 2 ctl=127.0.0.1:20592 nfs=127.0.0.1:20492
"""


def pres(osd_id: int) -> Presence:
    v = {"id": osd_id, "ctl": f"127.0.0.1:{20590 + osd_id}", "nfs": f"127.0.0.1:{20490 + osd_id}",
         "statfs": {"bytes_total": 1000, "bytes_free": 600, "objects": 0}}
    return Presence(osd_id, v, 10)


def up_map() -> ClusterMap:
    m = osdmap.step(osdmap.parse_seed(SEED, 100.0, "mgr-t"), {1: pres(1), 2: pres(2)}, 101, S)
    assert m is not None and all(o.up for o in m.osds)
    return m


def test_missing_presence_marks_nobody_down_while_holding() -> None:
    assert osdmap.step(up_map(), {}, 150, S, hold_down=True) is None


def test_missing_presence_marks_down_once_the_hold_ends() -> None:
    m = osdmap.step(up_map(), {2: pres(2)}, 150, S, hold_down=False)
    assert m is not None
    assert [(o.id, o.up) for o in m.osds] == [(1, False), (2, True)]


def test_holding_still_brings_osds_up_adds_new_ones_and_outs_the_long_down() -> None:
    down = osdmap.step(up_map(), {2: pres(2)}, 150, S)
    assert down is not None
    m = osdmap.step(down, {1: pres(1), 2: pres(2), 3: pres(3)}, 160, S, hold_down=True)
    assert m is not None
    assert [(o.id, o.up, o.in_) for o in m.osds] == [(1, True, True), (2, True, True),
                                                     (3, True, True)]
    out = osdmap.step(down, {2: pres(2)}, 150 + 600, S, hold_down=True)
    assert out is not None and out.osd(1) is not None
    assert (out.osd(1).up, out.osd(1).in_) == (False, False)  # type: ignore[union-attr]
