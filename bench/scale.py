"""Prepare latency and memory as one scope grows to a million entries.

For each size N, one scope holds N memory entries: real-word notes from
``_corpus.english_texts`` (so the bundled static model's vectors are realistic), ingested
through the public API (``rt.add_memories``, batches of 2000) into
``bench/.cache/scale-{N}.db``. A store is built once and reused; the build's entries/s is
kept beside it (``scale-{N}.ingest.json``), as are the queries drawn from its corpus.

A store of at least ``ANN_ROWS`` entries is searched through its vector index (an HNSW
index memory-mapped from ``scale-{N}.db.vectors/``, see ``satchel/stores/sqlite/_ann.py``): it is
built once, in a subprocess of its own, before measuring, and its build time, file size
and the build's peak RSS are reported (a cached index reports the time of its build).

Each size is then measured in a fresh subprocess, so its peak RSS is that size's alone:
open the runtime on the cached store (bundled static embedder, the default) and read RSS;
time the first prepare (cold: it loads the scope's vector matrix, or maps its index) and
nine more warm-up calls; then ``--queries`` timed ``prepare_context`` calls with an
8000-byte budget and the default families. Reported per size: ingest entries/s, the cold
first call, p50/p95, RSS before the first prepare and peak RSS (Linux ``VmRSS`` and
``VmHWM``); and the growth between successive sizes, the p50 ratio against the size
ratio with its exponent log(p50 ratio) / log(size ratio) (below 1 is sub-linear). After
the timed part (and the peak RSS reading), a store searched through its index reports
the index's recall against exact search over the timed queries: the share of the exact
top k (k = the memory family's pool size, 256; and the top 10) the vector channel
returns, the exact answer computed with numpy over the float32 vectors read from SQLite
in chunks. JSON goes to ``bench/results/scale.json``.

Run: ``python -m bench scale [--sizes 10000 100000 1000000] [--queries 200]
[--build-threads 1]``. The 1M store takes several minutes to build, its vector index
tens of minutes; later runs only measure.
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import numpy as np
import threadpoolctl

import satchel
from bench import _corpus
from satchel.stores.sqlite import _ann
from satchel.stores.sqlite._ann import AnnMatrix

CACHE = Path(__file__).parent / ".cache"
RESULTS = Path(__file__).parent / "results"
SCOPE = "bench"
BATCH = 2000
PROGRESS_EVERY = 50_000
WARMUP = 10
#: Rows per chunk while computing the exact top k for the recall of the vector index.
EXACT_CHUNK = 65_536


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q))


def growth_exponent(p50_ratio: float, size_ratio: float) -> float:
    """The k in p50 ~ N**k between two sizes: 1 is linear, below 1 sub-linear."""
    return math.log(p50_ratio) / math.log(size_ratio)


def store_path(size: int) -> Path:
    return CACHE / f"scale-{size}.db"


def corpus(size: int) -> list[str]:
    return _corpus.english_texts(size, function_head=True)


async def build_store(size: int, texts: list[str]) -> float:
    """Ingest ``texts`` into a new store for ``size``; returns entries/s.

    The store is written under a temporary name and renamed when complete, so an
    interrupted build is never mistaken for a cached one.
    """
    partial = store_path(size).with_suffix(".partial")
    for stale in CACHE.glob(f"{partial.name}*"):
        stale.unlink()
    async with satchel.open_runtime(str(partial)) as rt:
        started = time.perf_counter()  # after the model has loaded
        for start in range(0, size, BATCH):
            batch = [satchel.MemoryEntry(text=t) for t in texts[start : start + BATCH]]
            await rt.add_memories(SCOPE, batch)
            done = start + len(batch)
            if done % PROGRESS_EVERY == 0 or done == size:
                rate = done / (time.perf_counter() - started)
                print(f"  {done:,}/{size:,} entries, {rate:,.0f} entries/s", file=sys.stderr)
    rate = size / (time.perf_counter() - started)
    partial.rename(store_path(size))
    return rate


def prepare_inputs(size: int, query_count: int) -> Path:
    """Build the store if it is missing; returns the file of its queries (warm-up first)."""
    queries = CACHE / f"scale-{size}.queries-{query_count}.json"
    if store_path(size).exists() and queries.exists():
        return queries
    texts = corpus(size)
    ensure_store(size, texts)
    picked = _corpus.queries(texts, WARMUP + query_count)
    queries.write_text(json.dumps(picked) + "\n")
    return queries


def ensure_store(size: int, texts: list[str]) -> Path:
    """The cached store of ``size`` entries (``texts``, the size's corpus), built and its
    ingest rate kept beside it if it is missing (``bench service`` shares it)."""
    path = store_path(size)
    if not path.exists():
        CACHE.mkdir(exist_ok=True)
        print(f"building {path.name} ({size:,} entries)", file=sys.stderr)
        rate = anyio.run(build_store, size, texts)
        ingest = {"ingest_entries_per_s": round(rate)}
        path.with_suffix(".ingest.json").write_text(json.dumps(ingest) + "\n")
    return path


def current_rss_kib() -> int:
    """Resident set size now, in KiB (Linux ``VmRSS``; elsewhere the peak so far)."""
    return _proc_status_kib("VmRSS") or _maxrss_kib()


def peak_rss_kib() -> int:
    """This process's peak resident set size, in KiB.

    Linux ``VmHWM`` is the high-water mark of this program's own address space;
    ``ru_maxrss`` (the fallback elsewhere) also counts the parent's peak when the
    interpreter was started by fork and exec, which would charge the parent's corpus
    to the smallest store.
    """
    return _proc_status_kib("VmHWM") or _maxrss_kib()


def _proc_status_kib(field: str) -> int | None:
    try:
        lines = Path("/proc/self/status").read_text().splitlines()
    except OSError:
        return None
    values = [int(line.split()[1]) for line in lines if line.startswith(f"{field}:")]
    return values[0] if values else None


def _maxrss_kib() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux, bytes on macOS


async def timed_prepare(rt: satchel.Runtime, query: str) -> float:
    request = satchel.PrepareContextRequest(scope_id=SCOPE, query=query, max_bytes=8000)
    started = time.perf_counter()
    await rt.prepare_context(request)
    return time.perf_counter() - started


async def measure(path: Path, queries: list[str]) -> dict[str, Any]:
    """The subprocess side: cold first call, warm-up, then the timed prepares; then the
    vector index's recall against exact search (outside the timed part)."""
    warmup, timed = queries[:WARMUP], queries[WARMUP:]
    async with satchel.open_runtime(str(path)) as rt:
        rss_before = current_rss_kib()
        cold = await timed_prepare(rt, warmup[0])
        for query in warmup[1:]:
            await timed_prepare(rt, query)
        latencies = [await timed_prepare(rt, query) for query in timed]
        peak = peak_rss_kib()
        recall = await index_recall(rt, path, timed)
    return {
        "queries": len(timed),
        "cold_first_ms": cold * 1e3,
        "p50_ms": percentile(latencies, 50) * 1e3,
        "p95_ms": percentile(latencies, 95) * 1e3,
        "rss_before_kib": rss_before,
        "peak_rss_kib": peak,
        **recall,
    }


async def index_recall(rt: satchel.Runtime, path: Path, queries: list[str]) -> dict[str, Any]:
    """How much of the exact top k the scope's vector index returns for ``queries``,
    and how much of the exact top 10 its own top 10 holds (``vector_search`` says
    "exact", and there is no recall, when the scope has no index)."""
    store: Any = rt.store
    key = store._scope_keys[SCOPE]
    matrix = store._vectors.loaded("memory", key)
    if not isinstance(matrix, AnnMatrix):
        return {"vector_search": "exact"}
    k = rt.limits.pool_size("memory")
    embedder: Any = rt._embedder
    embedded = np.asarray(await embedder.embed(queries), dtype=np.float32)
    exact = exact_top(path, key, embedded, k)
    at_k, at_10 = [], []
    for vector, best in zip(embedded, exact, strict=True):
        found = matrix.nearest(vector, k)[0]
        at_k.append(len(set(found.tolist()) & set(best.tolist())) / k)
        at_10.append(len(set(found[:10].tolist()) & set(best[:10].tolist())) / 10)
    return {
        "vector_search": "index",
        "recall_k": k,
        "recall_at_k": float(np.mean(at_k)),
        "recall_at_10": float(np.mean(at_10)),
    }


def exact_top(path: Path, key: int, queries: Any, k: int) -> list[Any]:
    """Each query's exact top ``k`` rows by cosine, best first: numpy over the scope's
    float32 vectors, read from SQLite a chunk at a time."""
    conn = sqlite3.connect(path)
    cursor = conn.execute(
        "SELECT row, embedding FROM records WHERE family = 'memory' AND scope_key = ?"
        " AND live = 1 AND embedding IS NOT NULL ORDER BY row",
        (key,),
    )
    best_rows = np.empty((len(queries), 0), dtype=np.int64)
    best_scores = np.empty((len(queries), 0), dtype=np.float32)
    while chunk := cursor.fetchmany(EXACT_CHUNK):
        rows = np.fromiter((row for row, _ in chunk), np.int64, len(chunk))
        blob = b"".join(embedding for _, embedding in chunk)
        matrix = np.frombuffer(blob, dtype=np.float32).reshape(len(chunk), -1)
        scores = np.hstack([best_scores, queries @ matrix.T])
        candidates = np.hstack([best_rows, np.broadcast_to(rows, (len(queries), len(rows)))])
        keep = np.argpartition(-scores, k - 1, axis=1)[:, :k]
        best_scores = np.take_along_axis(scores, keep, axis=1)
        best_rows = np.take_along_axis(candidates, keep, axis=1)
    conn.close()
    order = np.argsort(-best_scores, axis=1, kind="stable")
    return list(np.take_along_axis(best_rows, order, axis=1))


def ensure_index(size: int, threads: int = 1) -> dict[str, Any]:
    """Build the store's vector index if it is large enough and has none of the current
    format, in a fresh subprocess (its own peak RSS) with ``threads`` threads; returns
    the build's figures."""
    path = store_path(size)
    if size < _ann.ANN_ROWS:
        return {}
    figures = path.with_suffix(".index.json")
    meta = _ann.sidecar_folder(str(path)) / f"memory-{scope_key(path)}.json"
    current = meta.exists() and json.loads(meta.read_text()).get("format") == _ann.FORMAT
    if not current or not figures.exists():
        print(f"building the vector index of {path.name}", file=sys.stderr)
        command = [sys.executable, "-m", "bench.scale", "--build-index", str(path)]
        command += ["--build-threads", str(threads)]
        done = subprocess.run(
            command, cwd=Path(__file__).parent.parent, check=True, capture_output=True, text=True
        )
        figures.write_text(done.stdout)
    return dict(json.loads(figures.read_text()))


def scope_key(path: Path) -> int:
    conn = sqlite3.connect(path)
    (key,) = conn.execute("SELECT scope_key FROM scopes WHERE scope = ?", (SCOPE,)).fetchone()
    conn.close()
    return int(key)


def build_index(path: Path, threads: int) -> dict[str, Any]:
    """The subprocess side of :func:`ensure_index`: build and save the scope's index as
    the store's builder thread does (which uses one thread)."""
    started = time.perf_counter()
    meta = _ann.build_sidecar(str(path), "memory", scope_key(path), 256, threads=threads)
    assert meta is not None
    seconds = time.perf_counter() - started
    folder = _ann.sidecar_folder(str(path))
    size = sum(file.stat().st_size for file in folder.glob("memory-*"))
    return {
        "index_build_threads": threads,
        "index_build_s": seconds,
        "index_mib": size / 2**20,
        "index_build_peak_rss_kib": peak_rss_kib(),
    }


def measure_in_subprocess(size: int, queries: Path, build_threads: int) -> dict[str, Any]:
    """One fresh interpreter per size: its peak RSS holds only that size's store."""
    index = ensure_index(size, build_threads)
    command = [sys.executable, "-m", "bench.scale", "--measure", str(store_path(size))]
    command += ["--queries-file", str(queries)]
    done = subprocess.run(
        command, cwd=Path(__file__).parent.parent, check=True, capture_output=True, text=True
    )
    ingest = store_path(size).with_suffix(".ingest.json")
    rate = json.loads(ingest.read_text())["ingest_entries_per_s"] if ingest.exists() else None
    return {"entries": size, "ingest_entries_per_s": rate, **index, **json.loads(done.stdout)}


def with_growth(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each row with its p50 ratio, size ratio and exponent against the previous row."""
    out: list[dict[str, Any]] = []
    for previous, row in zip([None, *rows], rows, strict=False):
        grown = dict(row, p50_ratio=None, size_ratio=None, exponent=None)
        if previous is not None:
            grown["p50_ratio"] = row["p50_ms"] / previous["p50_ms"]
            grown["size_ratio"] = row["entries"] / previous["entries"]
            grown["exponent"] = growth_exponent(grown["p50_ratio"], grown["size_ratio"])
        out.append(grown)
    return out


def report(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| entries | ingest entries/s | cold first call ms | p50 ms | p95 ms"
        " | RSS before MiB | peak RSS MiB | p50 ratio (size ratio) | exponent |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    lines.extend(report_line(row) for row in rows)
    return "\n".join(lines)


def index_report(rows: list[dict[str, Any]]) -> str:
    """How each size searched its vectors, and for those searched through the vector
    index its recall against exact search and its build; empty when none was."""
    if not any(row.get("vector_search") == "index" for row in rows):
        return ""
    lines = [
        "| entries | vector search | recall@k (k) | recall@10 | index build s (threads)"
        " | index MiB | build peak RSS MiB |",
        "|---:|---|---:|---:|---:|---:|---:|",
    ]
    lines.extend(index_line(row) for row in rows)
    return "\n".join(lines)


def index_line(r: dict[str, Any]) -> str:
    if r.get("vector_search") != "index":
        return f"| {r['entries']:,} | exact | - | - | - | - | - |"
    return (
        f"| {r['entries']:,} | index | {r['recall_at_k']:.3f} ({r['recall_k']})"
        f" | {r['recall_at_10']:.3f} | {r['index_build_s']:.0f} ({r['index_build_threads']})"
        f" | {r['index_mib']:.0f}"
        f" | {r['index_build_peak_rss_kib'] / 1024:.0f} |"
    )


def report_line(r: dict[str, Any]) -> str:
    rate = f"{r['ingest_entries_per_s']:,}" if r["ingest_entries_per_s"] else "-"
    growth, exponent = "-", "-"
    if r["p50_ratio"] is not None:
        growth = f"{r['p50_ratio']:.2f} ({r['size_ratio']:.0f}x)"
        exponent = f"{r['exponent']:.2f}"
    return (
        f"| {r['entries']:,} | {rate} | {r['cold_first_ms']:.1f} | {r['p50_ms']:.2f}"
        f" | {r['p95_ms']:.2f} | {r['rss_before_kib'] / 1024:.0f} | {r['peak_rss_kib'] / 1024:.0f}"
        f" | {growth} | {exponent} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--queries-file", type=Path, help=argparse.SUPPRESS)
    parser.add_argument(
        "--build-threads", type=int, default=1, help="threads building a vector index"
    )
    parser.add_argument("--build-index", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    # One BLAS thread, as the runtime's default (blas_threads=1).
    with threadpoolctl.threadpool_limits(limits=1, user_api="blas"):
        if args.build_index:
            print(json.dumps(build_index(args.build_index, args.build_threads)))
            return
        if args.measure:
            queries = json.loads(args.queries_file.read_text())
            print(json.dumps(anyio.run(measure, args.measure, queries)))
            return
    CACHE.mkdir(exist_ok=True)
    files = {size: prepare_inputs(size, args.queries) for size in sorted(args.sizes)}
    rows = with_growth(
        [measure_in_subprocess(size, f, args.build_threads) for size, f in files.items()]
    )
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "scale.json").write_text(json.dumps(rows, indent=2) + "\n")
    print(report(rows))
    if index := index_report(rows):
        print(f"\n{index}")


if __name__ == "__main__":
    main()
