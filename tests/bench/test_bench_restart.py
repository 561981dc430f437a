"""The stall arithmetic of tests/bench/mds_restart (pando_testing.bench_restart),
on made-up progress times; no server needed."""
from __future__ import annotations

from pando_testing.bench_restart import Progress, median_interval, stall, stall_elsewhere

TIMES = [0.0, 1.0, 2.0, 3.0, 10.0, 11.0, 12.0, 20.0, 21.0]


def test_the_stall_is_the_longest_gap_overlapping_the_restart() -> None:
    assert stall(TIMES, 3.5, 10.5) == 7.0          # from 3.0 to 10.0
    assert stall(TIMES, 3.5, 12.5) == 8.0          # up to the first progress after: 20.0
    assert stall(TIMES, 2.5, 2.6) == 1.0           # a restart nobody noticed
    assert stall([], 1.0, 2.0) == 0.0


def test_the_stall_away_from_restarts_leaves_their_windows_out() -> None:
    assert stall_elsewhere(TIMES, [(3.5, 10.5)]) == 8.0
    assert stall_elsewhere(TIMES, [(3.5, 10.5), (12.5, 19.0)]) == 1.0


def test_the_median_interval_pools_every_writer_of_a_kind() -> None:
    writers = [Progress("a", "pnfs", [0.0, 0.1, 0.2]), Progress("b", "pnfs", [5.0, 5.3])]
    assert median_interval(writers) == 0.1
    assert median_interval([Progress("c", "nfs3")]) == 0.0
