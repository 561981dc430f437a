"""Sizes and rates as `pando` prints and reads them (IEC, like ceph)."""
from __future__ import annotations

import pytest

from pando_cli import units


@pytest.mark.parametrize("n, text", [(0, "0 B"), (1023, "1023 B"), (1024, "1.0 KiB"),
                                     (1536, "1.5 KiB"), (10 << 30, "10 GiB"),
                                     (3 * (1 << 40) // 2, "1.5 TiB"), (None, "-"),
                                     (-2048, "-2.0 KiB"), (1 << 70, "1024 EiB")])
def test_sizes_print_in_iec_units(n: int | None, text: str) -> None:
    assert units.size(n) == text


def test_rates_and_ops() -> None:
    assert units.rate(12 << 20) == "12 MiB/s" and units.rate(None) == "-"
    assert units.ops(120) == "120 op/s" and units.ops(25_000) == "25k op/s"
    assert units.ops(2_500_000) == "2.5M op/s"
    assert units.percent(1, 4) == 25.0 and units.percent(1, 0) == 0.0


@pytest.mark.parametrize("text, n", [("1099511627776", 1 << 40), ("1T", 1 << 40), ("1TiB", 1 << 40),
                                     ("512G", 512 << 30), ("512gib", 512 << 30), ("10M", 10 << 20),
                                     ("1.5K", 1536), ("0", 0), (" 7 ", 7), ("100B", 100)])
def test_sizes_parse_with_binary_multiples(text: str, n: int) -> None:
    assert units.parse_size(text) == n


@pytest.mark.parametrize("text", ["", "lots", "-1G", "1X", "G", "1.2.3"])
def test_bad_sizes_are_refused(text: str) -> None:
    with pytest.raises(ValueError):
        units.parse_size(text)
