"""Embedding cost per embedder: one query's latency and batch throughput.

Run: ``python -m bench.embedders`` (or ``python -m bench embedders``). Measures, for the
hashing embedder and the bundled static model, the p50 latency of embedding one short
query, and texts per second when embedding 20,000 short English sentences and 20,000
real-word notes in batches of 512 (the ingest path), with one BLAS thread.
"""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path
from typing import Any

import threadpoolctl

import satchel
from bench import _corpus

RESULTS = Path(__file__).parent / "results"
QUERY = "who signs off on rotating the kestrel credentials?"


def measure(embedder: Any) -> dict[str, float]:
    for _ in range(50):
        embedder.embed_sync([QUERY])
    times = []
    for _ in range(1000):
        started = time.perf_counter()
        embedder.embed_sync([QUERY])
        times.append(time.perf_counter() - started)
    out = {"query_p50_ms": statistics.median(times) * 1e3}
    corpora = {
        "sentences": ["Alice: I moved to Lisbon last May and love the trams."] * 20000,
        "notes": _corpus.english_texts(20000, function_head=True),
    }
    for name, texts in corpora.items():
        started = time.perf_counter()
        for start in range(0, len(texts), 512):
            embedder.embed_sync(texts[start : start + 512])
        out[f"{name}_per_s"] = len(texts) / (time.perf_counter() - started)
    return out


def main() -> None:
    with threadpoolctl.threadpool_limits(limits=1, user_api="blas"):
        rows = {
            "hashing": measure(satchel.HashingEmbedder()),
            "static": measure(satchel.StaticEmbedder()),
        }
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "embedders.json").write_text(json.dumps(rows, indent=2) + "\n")
    print("| embedder | query p50 ms | short sentences/s | real-word notes/s |")
    print("|---|---:|---:|---:|")
    for name, row in rows.items():
        print(
            f"| {name} | {row['query_p50_ms']:.3f} | {row['sentences_per_s']:,.0f}"
            f" | {row['notes_per_s']:,.0f} |"
        )


if __name__ == "__main__":
    main()
