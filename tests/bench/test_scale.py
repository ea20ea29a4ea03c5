"""The pure helpers of ``bench/scale.py``: percentiles, growth and the Markdown table."""

from __future__ import annotations

import math
from typing import Any

import pytest

from bench import scale


def row(entries: int, p50_ms: float, **extra: Any) -> dict[str, Any]:
    base = {
        "entries": entries,
        "ingest_entries_per_s": 3500,
        "queries": 200,
        "cold_first_ms": 40.0,
        "p50_ms": p50_ms,
        "p95_ms": p50_ms * 2,
        "rss_before_kib": 100 * 1024,
        "peak_rss_kib": 300 * 1024,
    }
    return base | extra


def test_percentile_interpolates_between_samples() -> None:
    """p50 of an even count is the mean of the middle pair; p95 lies between samples."""
    values = [4.0, 1.0, 3.0, 2.0]
    assert scale.percentile(values, 50) == 2.5
    assert scale.percentile(values, 95) == pytest.approx(3.85)


@pytest.mark.parametrize(
    ("p50_ratio", "size_ratio", "exponent"),
    [(10.0, 10.0, 1.0), (math.sqrt(10), 10.0, 0.5), (1.0, 10.0, 0.0), (4.0, 2.0, 2.0)],
)
def test_growth_exponent_is_the_power_of_the_size_ratio(
    p50_ratio: float, size_ratio: float, exponent: float
) -> None:
    """The exponent k solves p50_ratio = size_ratio ** k."""
    assert scale.growth_exponent(p50_ratio, size_ratio) == pytest.approx(exponent)


def test_with_growth_compares_each_size_with_the_previous_one() -> None:
    """The first row has no growth; later rows carry p50 and size ratios and the exponent."""
    rows = scale.with_growth([row(10_000, 5.0), row(100_000, 10.0), row(1_000_000, 40.0)])
    assert [r["p50_ratio"] for r in rows] == [None, 2.0, 4.0]
    assert [r["size_ratio"] for r in rows] == [None, 10.0, 10.0]
    assert rows[0]["exponent"] is None
    assert rows[1]["exponent"] == pytest.approx(math.log10(2))
    assert rows[2]["exponent"] == pytest.approx(math.log10(4))


def test_report_renders_one_line_per_size() -> None:
    """The table shows MiB, ratios with the size ratio, and dashes where nothing applies."""
    rows = scale.with_growth([row(10_000, 5.0, ingest_entries_per_s=None), row(100_000, 10.0)])
    lines = scale.report(rows).splitlines()
    assert len(lines) == 4
    assert lines[2] == "| 10,000 | - | 40.0 | 5.00 | 10.00 | 100 | 300 | - | - |"
    assert lines[3] == "| 100,000 | 3,500 | 40.0 | 10.00 | 20.00 | 100 | 300 | 2.00 (10x) | 0.30 |"


def test_current_rss_is_in_kib_and_not_above_the_peak() -> None:
    """RSS now and the peak are read in KiB, and the peak is at least RSS now."""
    now = scale.current_rss_kib()
    assert 10 * 1024 < now <= scale.peak_rss_kib()
