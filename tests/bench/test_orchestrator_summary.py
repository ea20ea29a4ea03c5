"""The gate report of ``bench/orchestrator.py``: per-round cost as a ratio and in ms."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from bench import orchestrator


def test_added_latency_is_per_committed_round_and_against_round_zero() -> None:
    """A query expanded twice adds its on-minus-off latency split over two rounds; quiet
    queries give the not-expanded ratio; both are reported in ms as well."""
    queries = [
        SimpleNamespace(id="quiet", category="direct", expected=["a"]),
        SimpleNamespace(id="once", category="paraphrase", expected=["b"]),
        SimpleNamespace(id="twice", category="paraphrase", expected=["c", "d"]),
    ]
    latency = {
        "off": {"quiet": [0.010], "once": [0.010], "twice": [0.020]},
        "on": {"quiet": [0.0101], "once": [0.011], "twice": [0.024]},
    }
    rounds = {"quiet": 1, "once": 2, "twice": 3}
    delivered = {
        "off": {"quiet": ["a"], "once": [], "twice": ["c"]},
        "on": {"quiet": ["a"], "once": ["b"], "twice": ["c", "d"]},
    }
    efforts: dict[str, list[object]] = {"off": [], "on": []}
    summary = orchestrator.summarise(queries, latency, delivered, rounds, efforts)
    assert summary["quiet_p50_ratio_on_off"] == pytest.approx(1.01)
    assert summary["expanded_added_per_round_ratio_p50"] == pytest.approx(0.1)
    assert summary["expanded_added_per_round_ms_p50"] == pytest.approx(1.5)
    assert summary["expanded_round0_ms_p50"] == pytest.approx(15.0)
    assert summary["recall"]["on"]["paraphrase"] == 1.0
    assert summary["recall"]["off"]["paraphrase"] == 0.25
    lines = orchestrator.gate_lines(summary)
    assert "(1.500 ms per round; round 0 15.000 ms)" in "\n".join(lines)
