"""Prepare latency and memory as one scope grows to a million entries.

For each size N, one scope holds N memory entries: real-word notes from
``_corpus.english_texts`` (so the bundled static model's vectors are realistic), ingested
through the public API (``rt.add_memories``, batches of 2000) into
``bench/.cache/scale-{N}.db``. A store is built once and reused; the build's entries/s is
kept beside it (``scale-{N}.ingest.json``), as are the queries drawn from its corpus.

Each size is then measured in a fresh subprocess, so its peak RSS is that size's alone:
open the runtime on the cached store (bundled static embedder, the default) and read RSS;
time the first prepare (cold: it loads the scope's vector matrix) and nine more warm-up
calls; then ``--queries`` timed ``prepare_context`` calls with an 8000-byte budget and the
default families. Reported per size: ingest entries/s, the cold first call, p50/p95,
RSS before the first prepare and peak RSS (Linux ``VmRSS`` and ``VmHWM``); and the growth
between successive sizes, the p50 ratio against the size ratio with its exponent
log(p50 ratio) / log(size ratio) (below 1 is sub-linear). JSON goes to
``bench/results/scale.json``.

Run: ``python -m bench scale [--sizes 10000 100000 1000000] [--queries 200]``. The 1M
store takes several minutes to build; later runs only measure.
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import numpy as np
import threadpoolctl

import glean
from bench import _corpus

CACHE = Path(__file__).parent / ".cache"
RESULTS = Path(__file__).parent / "results"
SCOPE = "bench"
BATCH = 2000
PROGRESS_EVERY = 50_000
WARMUP = 10


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
    async with glean.open_runtime(str(partial)) as rt:
        started = time.perf_counter()  # after the model has loaded
        for start in range(0, size, BATCH):
            batch = [glean.MemoryEntry(text=t) for t in texts[start : start + BATCH]]
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


async def timed_prepare(rt: glean.Runtime, query: str) -> float:
    request = glean.PrepareContextRequest(scope_id=SCOPE, query=query, max_bytes=8000)
    started = time.perf_counter()
    await rt.prepare_context(request)
    return time.perf_counter() - started


async def measure(path: Path, queries: list[str]) -> dict[str, Any]:
    """The subprocess side: cold first call, warm-up, then the timed prepares."""
    warmup, timed = queries[:WARMUP], queries[WARMUP:]
    async with glean.open_runtime(str(path)) as rt:
        rss_before = current_rss_kib()
        cold = await timed_prepare(rt, warmup[0])
        for query in warmup[1:]:
            await timed_prepare(rt, query)
        latencies = [await timed_prepare(rt, query) for query in timed]
    return {
        "queries": len(timed),
        "cold_first_ms": cold * 1e3,
        "p50_ms": percentile(latencies, 50) * 1e3,
        "p95_ms": percentile(latencies, 95) * 1e3,
        "rss_before_kib": rss_before,
        "peak_rss_kib": peak_rss_kib(),
    }


def measure_in_subprocess(size: int, queries: Path) -> dict[str, Any]:
    """One fresh interpreter per size: its peak RSS holds only that size's store."""
    command = [sys.executable, "-m", "bench.scale", "--measure", str(store_path(size))]
    command += ["--queries-file", str(queries)]
    done = subprocess.run(
        command, cwd=Path(__file__).parent.parent, check=True, capture_output=True, text=True
    )
    ingest = store_path(size).with_suffix(".ingest.json")
    rate = json.loads(ingest.read_text())["ingest_entries_per_s"] if ingest.exists() else None
    return {"entries": size, "ingest_entries_per_s": rate, **json.loads(done.stdout)}


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
    args = parser.parse_args()
    # One BLAS thread, as the runtime's default (blas_threads=1).
    with threadpoolctl.threadpool_limits(limits=1, user_api="blas"):
        if args.measure:
            queries = json.loads(args.queries_file.read_text())
            print(json.dumps(anyio.run(measure, args.measure, queries)))
            return
    CACHE.mkdir(exist_ok=True)
    files = {size: prepare_inputs(size, args.queries) for size in sorted(args.sizes)}
    rows = with_growth([measure_in_subprocess(size, f) for size, f in files.items()])
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "scale.json").write_text(json.dumps(rows, indent=2) + "\n")
    print(report(rows))


if __name__ == "__main__":
    main()
