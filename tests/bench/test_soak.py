"""tests/bench/soak: its schedule and stall arithmetic on made-up times
(no server needed), and a two-minute run of the whole soak with a fixed
seed (slow: the rack, a kernel client, about 7 minutes), so it cannot
rot between the runs that measure it."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pando_testing.pod import build_dir, repo_root
from pando_testing.soak_faults import INTERVAL_S, KINDS, schedule
from pando_testing.soak_stalls import Window, fault_stalls, longest_outside, per_kind, resumed

SOAK = repo_root() / "tests" / "bench" / "soak"


def test_a_seed_gives_one_schedule_with_every_kind_in_each_nine() -> None:
    a = schedule(7, 1800, osds=8, clients=5, etcd=3)
    assert a == schedule(7, 1800, osds=8, clients=5, etcd=3)
    assert a != schedule(8, 1800, osds=8, clients=5, etcd=3)
    assert len(a) >= 60, "a 30 minute soak gets at least 60 faults"
    for i in range(0, len(a) - 9, 9):
        assert sorted(p.kind for p in a[i:i + 9]) == sorted(KINDS)
    assert all(INTERVAL_S[0] <= p.pause <= INTERVAL_S[1] for p in a)
    assert all(1 <= p.victim <= 8 for p in a if p.kind.startswith("osd_"))
    assert [p.n for p in a] == list(range(1, len(a) + 1))


def test_a_gap_belongs_to_the_earliest_fault_it_overlaps() -> None:
    restart = Window(1, "mds_kill", 10.0, 11.5)
    frozen = Window(2, "osd_stop", 30.0, 45.0)
    writers = {"w": [0.0, 9.9, 60.0, 61.0], "v": [0.0, 29.0, 44.0, 62.0]}
    stalls = fault_stalls([restart, frozen], writers)
    assert stalls[1].seconds == pytest.approx(50.1) and stalls[1].writer == "w"
    assert (stalls[2].seconds, stalls[2].writer) == (18.0, "v")
    assert per_kind([restart, frozen], stalls) == {"mds_kill": pytest.approx(50.1),
                                                   "osd_stop": 18.0}
    assert longest_outside([restart, frozen], writers).seconds == 9.9


def test_a_fault_lasts_until_every_writer_went_on_after_it_was_undone() -> None:
    writers = {"w": [0.0, 5.0, 12.0, 13.0], "v": [0.0, 1.0, 2.0, 50.0]}
    assert resumed(4.0, writers) == 50.0
    assert resumed(20.0, writers) == 50.0, "w has none after (it ended): left out"
    assert resumed(60.0, writers) == 60.0


@pytest.mark.slow
@pytest.mark.bench
def test_a_two_minute_soak_ends_without_an_error_or_a_lost_byte(tmp_path: Path) -> None:
    env = {**os.environ, "PANDO_BUILD_DIR": str(build_dir())}
    cp = subprocess.run([sys.executable, str(SOAK), "--minutes", "2", "--seed", "7",
                         "--workdir", str(tmp_path)], env=env, capture_output=True, text=True,
                        timeout=1800)
    print(cp.stdout[-6000:], cp.stderr[-6000:])
    assert cp.returncode == 0, cp.stdout[-3000:]
    assert "soak_client_errors: 0" in cp.stdout
    assert "soak_bytes_lost: 0" in cp.stdout
