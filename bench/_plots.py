"""Benchmark results as PNG figures: ``python -m bench plots [--results DIR] [--out DIR]``.

Three figures, each from a result the other commands write to ``bench/results``:
- the latency CDF per arm (gate off vs gate on) from raw per-query latencies, a result's
  ``latency_samples_ms`` mapping ``{arm: [ms, ...]}``;
- evidence recall per category per arm (grouped bars) from a result's ``recall``
  (``evaluate-*.json``, and the ``gate`` part of ``orchestrator-*.json``);
- prepare p50 and p95 against corpus size, log-log, from ``scale.json``.

matplotlib is an optional extra (``pip install -e ".[bench]"``): it is imported inside
the functions, so every other benchmark runs without it. Rendering never reads or writes
anything but the PNG it is given.
"""

from __future__ import annotations

import argparse
import itertools
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

RESULTS = Path(__file__).parent / "results"
DOCS = Path(__file__).parent.parent / "docs" / "bench"
ARM_LABELS = {"off": "gate off", "on": "gate on"}
MISSING = 'the plots need matplotlib: pip install -e ".[bench]"'


def pyplot() -> Any:
    """matplotlib's pyplot on the Agg backend (no display needed)."""
    try:
        import matplotlib
    except ImportError as error:
        raise ModuleNotFoundError(MISSING, name="matplotlib") from error
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save(figure: Any, out: Path) -> Path:
    out.parent.mkdir(parents=True, exist_ok=True)
    figure.tight_layout()
    figure.savefig(out, dpi=150)
    pyplot().close(figure)
    return out


def latency_cdf(samples: Mapping[str, Sequence[float]], out: Path, *, title: str = "") -> Path:
    """One step curve per arm: the share of queries served within x ms."""
    figure, axes = pyplot().subplots(figsize=(6.4, 4.0))
    for arm, values in samples.items():
        ordered = sorted(values)
        shares = [(i + 1) / len(ordered) for i in range(len(ordered))]
        axes.step(ordered, shares, where="post", label=ARM_LABELS.get(arm, arm))
    for share in (0.5, 0.95):
        axes.axhline(share, color="grey", linewidth=0.6, linestyle=":")
    axes.set(xlabel="prepare latency (ms)", ylabel="share of queries", ylim=(0, 1.01))
    axes.set_title(title or "prepare latency CDF")
    axes.legend()
    return save(figure, out)


def recall_bars(recall: Mapping[str, Mapping[str, float]], out: Path, *, title: str = "") -> Path:
    """Evidence recall per category, one bar per arm in each category's group."""
    categories = sorted({c for values in recall.values() for c in values}, key=_all_first)
    width = 0.8 / len(recall)
    figure, axes = pyplot().subplots(figsize=(max(6.4, 1.2 * len(categories)), 4.0))
    for index, (arm, values) in enumerate(recall.items()):
        xs = [c + (index - (len(recall) - 1) / 2) * width for c in range(len(categories))]
        heights = [values.get(category, 0.0) for category in categories]
        bars = axes.bar(xs, heights, width, label=ARM_LABELS.get(arm, arm))
        axes.bar_label(bars, fmt="%.2f", fontsize=7)
    axes.set_xticks(range(len(categories)), categories)
    axes.set(ylabel="evidence recall", ylim=(0, 1.22))
    axes.set_title(title or "evidence recall per category")
    axes.legend(loc="upper center", ncol=len(recall))
    return save(figure, out)


def _all_first(category: str) -> tuple[bool, str]:
    return category != "all", category


def scale_curve(rows: Sequence[Mapping[str, Any]], out: Path) -> Path:
    """Prepare p50 and p95 against the scope's entry count on log-log axes, where a
    segment's slope is its growth exponent k (p50 ~ N**k; 1 is linear)."""
    sizes = [row["entries"] for row in rows]
    figure, axes = pyplot().subplots(figsize=(6.4, 4.0))
    for key, label, place in (("p95_ms", "p95", _ABOVE), ("p50_ms", "p50", _BELOW)):
        values = [row[key] for row in rows]
        axes.plot(sizes, values, marker="o", label=label)
        for point in zip(sizes, values, strict=True):
            axes.annotate(f"{point[1]:.1f}", point, ha="center", **place)
    _label_growth(axes, rows)
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.margins(x=0.12, y=0.15)
    axes.set(xlabel="memory entries in the scope", ylabel="prepare latency (ms)")
    axes.set_title("prepare latency vs corpus size (bundled static embedder)")
    axes.legend(loc="upper left")
    return save(figure, out)


_ABOVE: dict[str, Any] = {"textcoords": "offset points", "xytext": (0, 6), "va": "bottom"}
_BELOW: dict[str, Any] = {"textcoords": "offset points", "xytext": (0, -8), "va": "top"}


def _label_growth(axes: Any, rows: Sequence[Mapping[str, Any]]) -> None:
    """Each p50 segment's growth exponent k, when the rows carry it."""
    for previous, row in itertools.pairwise(rows):
        if row.get("exponent") is None:
            continue
        # The segment's middle on log-log axes: geometric means.
        x = (previous["entries"] * row["entries"]) ** 0.5
        y = (previous["p50_ms"] * row["p50_ms"]) ** 0.5
        label = f"k = {row['exponent']:.2f}"
        axes.annotate(label, (x, y), ha="left", fontsize=8, color="C1", **_BELOW)


def gate_results(results: Path) -> dict[str, dict[str, Any]]:
    """Gate off/on results by file stem: ``evaluate-*`` whole, ``orchestrator-*``'s gate."""
    found: dict[str, dict[str, Any]] = {}
    for path in sorted(results.glob("evaluate-*.json")):
        found[path.stem] = json.loads(path.read_text())
    for path in sorted(results.glob("orchestrator-*.json")):
        gate = json.loads(path.read_text()).get("gate")
        if gate:
            found[path.stem] = gate
    return found


def render_all(results: Path, out: Path) -> list[Path]:
    """Every figure whose input JSON exists in ``results``, written to ``out``."""
    written: list[Path] = []
    scale = results / "scale.json"
    if scale.exists():
        written.append(scale_curve(json.loads(scale.read_text()), out / "scale.png"))
    for stem, gate in gate_results(results).items():
        written += gate_figures(gate, stem, out)
    return written


def gate_figures(gate: Mapping[str, Any], stem: str, out: Path) -> list[Path]:
    """The recall bars and the latency CDF of one gate off/on result."""
    written: list[Path] = []
    if "recall" in gate:
        written.append(recall_bars(gate["recall"], out / f"recall-{stem}.png", title=stem))
    if "latency_samples_ms" in gate:
        target = out / f"latency-cdf-{stem}.png"
        written.append(latency_cdf(gate["latency_samples_ms"], target, title=stem))
    return written


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--results", type=Path, default=RESULTS)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    try:
        written = render_all(args.results, args.out)
    except ModuleNotFoundError as error:
        raise SystemExit(str(error)) from error
    for path in written:
        print(path)
    if not written:
        print(f"no result JSON to plot in {args.results}")


if __name__ == "__main__":
    main()
