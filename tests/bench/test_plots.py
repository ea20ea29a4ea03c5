"""``bench/_plots.py`` renders each figure from a small hand-made result."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

import pytest

from bench import _plots

if TYPE_CHECKING:
    from pathlib import Path

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
RECALL = {
    "off": {"all": 0.6, "direct": 0.9, "paraphrase": 0.3},
    "on": {"all": 0.8, "direct": 0.9, "paraphrase": 0.7},
}
SCALE = [
    {"entries": 10_000, "p50_ms": 8.0, "p95_ms": 12.0},
    {"entries": 100_000, "p50_ms": 14.0, "p95_ms": 20.0},
    {"entries": 1_000_000, "p50_ms": 30.0, "p95_ms": 45.0},
]


@pytest.fixture(autouse=True)
def _matplotlib() -> None:
    pytest.importorskip("matplotlib")


def assert_png(path: Path) -> None:
    data = path.read_bytes()
    assert data.startswith(PNG_MAGIC)
    assert len(data) > 10_000


def test_latency_cdf_renders_a_png(tmp_path: Path) -> None:
    """A {arm: [ms]} mapping becomes a CDF figure at the given path."""
    samples = {"off": [1.0, 2.0, 2.5, 3.0, 9.0], "on": [1.1, 2.1, 2.6, 4.0, 12.0]}
    out = _plots.latency_cdf(samples, tmp_path / "cdf.png")
    assert out == tmp_path / "cdf.png"
    assert_png(out)


def test_recall_bars_render_a_png(tmp_path: Path) -> None:
    """A result's per-arm, per-category recall becomes grouped bars."""
    assert_png(_plots.recall_bars(RECALL, tmp_path / "sub" / "recall.png"))


def test_scale_curve_renders_a_png(tmp_path: Path) -> None:
    """scale.json's rows become a p50/p95 curve against corpus size."""
    assert_png(_plots.scale_curve(SCALE, tmp_path / "scale.png"))


def test_render_all_plots_exactly_the_results_present(tmp_path: Path) -> None:
    """Each existing input gets its figure; a gate result without samples gets no CDF."""
    results = tmp_path / "results"
    results.mkdir()
    (results / "scale.json").write_text(json.dumps(SCALE))
    gate = {"recall": RECALL, "latency_samples_ms": {"off": [1.0, 2.0], "on": [1.5, 2.5]}}
    (results / "evaluate-sample-static.json").write_text(json.dumps(gate))
    (results / "orchestrator-2500.json").write_text(json.dumps({"gate": {}, "concurrency": []}))
    (results / "orchestrator-9-x.json").write_text(json.dumps({"gate": {"recall": RECALL}}))
    written = _plots.render_all(results, tmp_path / "out")
    assert sorted(p.name for p in written) == [
        "latency-cdf-evaluate-sample-static.png",
        "recall-evaluate-sample-static.png",
        "recall-orchestrator-9-x.png",
        "scale.png",
    ]
    for path in written:
        assert_png(path)


def test_missing_matplotlib_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without matplotlib the error tells the user which extra to install."""
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(ModuleNotFoundError, match=r'pip install -e "\.\[bench\]"'):
        _plots.pyplot()
