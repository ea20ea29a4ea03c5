"""Prepare latency against the bare search floor, at growing corpus sizes.

For each size N (one scope of N memory entries), in one run on one store file:
- floor: one bare FTS5 MATCH returning the memory pool (256 candidates) plus one numpy
  matrix-vector product over the scope's vectors with its top-256 selection, both
  called directly (no event loop, no thread hop);
- prepare: ``Runtime.prepare_context`` end to end (validation, analysis, query
  embedding, concurrent family searches in worker threads, admission, fusion,
  fitting and rendering) with the default families and an 8000-byte budget; its p50,
  p95 and the process CPU time (user + system) per prepare.

Run: ``python -m bench.latency [--sizes 1000 10000 100000] [--queries 300]``.
Stores are cached in ``bench/.cache`` so a second run skips ingestion.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import statistics
import time
from pathlib import Path
from typing import Any

import anyio
import numpy as np
import threadpoolctl

import satchel
from bench import _corpus
from satchel.stores.sqlite._schema import term_prefix
from satchel.vocabulary._analysis import analyse_query, match_expression

CACHE = Path(__file__).parent / ".cache"
RESULTS = Path(__file__).parent / "results"
SCOPE = "bench"
POOL = satchel.Limits().pool_size("memory")
#: The default embedder: the bundled static model (loaded once per process).
EMBEDDER = satchel.embedders._static.bundled


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q))


async def build_store(path: Path, size: int) -> float:
    """Ingest ``size`` entries unless the cached store has them; returns entries/s or 0."""
    if await anyio.Path(path).exists():
        return 0.0
    texts = _corpus.english_texts(size, function_head=True)
    started = time.perf_counter()
    async with satchel.open_runtime(str(path), embedder=EMBEDDER()) as rt:
        for start in range(0, size, 2000):
            batch = [satchel.MemoryEntry(text=t) for t in texts[start : start + 2000]]
            await rt.add_memories(SCOPE, batch)
    return size / (time.perf_counter() - started)


def floor_latencies(
    path: Path, queries: list[str], embedder: satchel.StaticEmbedder
) -> list[float]:
    """The floor: one FTS5 pool query plus one matrix-vector product and top-k, per query."""
    conn = sqlite3.connect(path)
    (key,) = conn.execute("SELECT scope_key FROM scopes WHERE scope = ?", (SCOPE,)).fetchone()
    blobs = conn.execute(
        "SELECT embedding FROM records WHERE family = 'memory' AND live = 1"
    ).fetchall()
    matrix = np.frombuffer(b"".join(b for (b,) in blobs), dtype=np.float32)
    matrix = matrix.reshape(len(blobs), embedder.dimension)
    vectors = embedder.embed_sync(queries)
    statement = (
        "SELECT rowid, terms, rank FROM fts_memory WHERE fts_memory MATCH ? ORDER BY rank LIMIT ?"
    )
    prefix = term_prefix(key)
    matches = [match_expression([prefix + t for t in analyse_query(q).terms]) for q in queries]
    out: list[float] = []
    for match, vector in zip(matches, vectors, strict=True):
        started = time.perf_counter()
        if match:  # a query of stopwords only has no lexical part
            conn.execute(statement, (match, POOL)).fetchall()
        scores = matrix @ vector
        top = np.argpartition(-scores, POOL)[:POOL]
        top[np.argsort(-scores[top])]
        out.append(time.perf_counter() - started)
    conn.close()
    return out


async def prepare_latencies(path: Path, queries: list[str]) -> tuple[list[float], float]:
    """Each prepare's wall time, and the process CPU time (user + system) per prepare,
    which the machine's other load moves far less than wall time."""
    out: list[float] = []
    async with satchel.open_runtime(str(path), embedder=EMBEDDER()) as rt:
        for query in queries[:20]:  # warm-up: loads the scope's matrix, fills caches
            await rt.prepare_context(satchel.PrepareContextRequest(scope_id=SCOPE, query=query))
        cpu = time.process_time()
        for query in queries:
            request = satchel.PrepareContextRequest(scope_id=SCOPE, query=query, max_bytes=8000)
            started = time.perf_counter()
            await rt.prepare_context(request)
            out.append(time.perf_counter() - started)
        cpu = (time.process_time() - cpu) / len(queries)
    return out, cpu


async def measure(size: int, query_count: int) -> dict[str, Any]:
    CACHE.mkdir(exist_ok=True)
    path = CACHE / f"latency-static-{size}.db"
    ingest_rate = await build_store(path, size)
    queries = _corpus.queries(_corpus.english_texts(size, function_head=True), query_count)
    floor = floor_latencies(path, queries, EMBEDDER())
    prepare, cpu = await prepare_latencies(path, queries)
    row = {
        "entries": size,
        "queries": len(queries),
        "floor_p50_ms": percentile(floor, 50) * 1e3,
        "floor_p95_ms": percentile(floor, 95) * 1e3,
        "prepare_p50_ms": percentile(prepare, 50) * 1e3,
        "prepare_p95_ms": percentile(prepare, 95) * 1e3,
        "prepare_p99_ms": percentile(prepare, 99) * 1e3,
        "prepare_cpu_us": cpu * 1e6,
        "ratio_p50": statistics.median(prepare) / statistics.median(floor),
        "ingest_entries_per_s": round(ingest_rate) if ingest_rate else None,
    }
    return row


def report(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| entries | floor p50 ms | prepare p50 ms | prepare p95 ms | prepare CPU us"
        " | p50 ratio prepare/floor |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    lines.extend(
        f"| {r['entries']:,} | {r['floor_p50_ms']:.3f} | {r['prepare_p50_ms']:.3f}"
        f" | {r['prepare_p95_ms']:.3f} | {r['prepare_cpu_us']:.0f} | {r['ratio_p50']:.2f} |"
        for r in rows
    )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000])
    parser.add_argument("--queries", type=int, default=300)
    args = parser.parse_args()
    # Both sides run with one BLAS thread, as the runtime does by default (blas_threads=1).
    with threadpoolctl.threadpool_limits(limits=1, user_api="blas"):
        rows = [anyio.run(measure, size, args.queries) for size in args.sizes]
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "latency.json").write_text(json.dumps(rows, indent=2) + "\n")
    print(report(rows))


if __name__ == "__main__":
    main()
