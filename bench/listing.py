"""Listing a large scope: how long ``Runtime.list_records`` takes for a page, near the
newest records and deep in the scope.

One SQLite store holds ``--size`` memory entries in one scope (default 100,000: real-word
notes from ``_corpus.english_texts``, written through ``rt.add_memories`` in batches of
2,000 with the hashing embedder, since listing reads no vector), of which 1% were then
updated (a second version each) and 1% forgotten, so that a page joins records to their
newest versions and skips forgotten ones as a real scope makes it. It is built once into
``bench/.cache/listing-{N}.db`` and reused.

Measured on that store through the public API, after ``--warmup`` unmeasured calls:

- ``page 1``: the first page of ``--limit`` records (no cursor), ``--repeat`` times;
- ``page P``: the page after ``P - 1`` pages (its cursor found by walking there once),
  ``--repeat`` times, for each ``P`` of ``--pages`` (default 10, 100, 1,000: at 100
  records a page, page 1,000 is the scope's last records);
- the same two with ``family="memory"`` and with ``include_forgotten=True``;
- a whole walk, every page by its cursor: pages, records (each once), total seconds and
  the p50/p95 of its pages.

Reported: p50/p95/max in milliseconds for each, and page P's p50 over page 1's (a keyset
page costs what the first does: a ratio near 1; an OFFSET page would grow with P). JSON
goes to ``bench/results/listing.json``, a Markdown table to stdout.

Run: ``python -m bench listing [--size 100000] [--limit 100] [--pages 10 100 1000]
[--repeat 200] [--warmup 20]``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import numpy as np

import satchel
from bench import _corpus

CACHE = Path(__file__).parent / ".cache"
RESULTS = Path(__file__).parent / "results"
SCOPE = "bench"
BATCH = 2000
#: Every this many entries, one is updated and another forgotten (1% each).
CHANGE_EVERY = 100


def store_path(size: int) -> Path:
    return CACHE / f"listing-{size}.db"


def embedder() -> satchel.Embedder:
    return satchel.HashingEmbedder()


async def build_store(path: Path, size: int) -> float:
    """Write ``size`` entries (1% then updated, 1% forgotten) into a new store at
    ``path``, under a temporary name renamed when complete; returns entries/s."""
    partial = path.with_suffix(".partial")
    for stale in path.parent.glob(f"{partial.name}*"):
        stale.unlink()
    texts = _corpus.english_texts(size, function_head=True)
    started = time.perf_counter()
    async with satchel.open_runtime(str(partial), embedder=embedder()) as rt:
        refs: list[satchel.MemoryRef] = []
        for start in range(0, size, BATCH):
            batch = [satchel.MemoryEntry(text=t) for t in texts[start : start + BATCH]]
            refs += await rt.add_memories(SCOPE, batch)
        for ref in refs[::CHANGE_EVERY]:
            await rt.update_memory(ref, satchel.MemoryEntry(text=f"updated: {ref.entry_id}"))
        for ref in refs[CHANGE_EVERY // 2 :: CHANGE_EVERY]:
            await rt.forget_memory(ref)
    rate = size / (time.perf_counter() - started)
    partial.rename(path)
    return rate


def summary(samples_ms: list[float]) -> dict[str, float]:
    """p50, p95 and max of ``samples_ms``, rounded to microseconds."""
    values = np.asarray(samples_ms)
    return {
        "p50_ms": round(float(np.percentile(values, 50)), 3),
        "p95_ms": round(float(np.percentile(values, 95)), 3),
        "max_ms": round(float(values.max()), 3),
        "calls": len(samples_ms),
    }


async def timed_page(rt: satchel.Runtime, cursor: str | None, **options: Any) -> float:
    started = time.perf_counter()
    await rt.list_records(SCOPE, cursor=cursor, **options)
    return (time.perf_counter() - started) * 1000


async def cursor_of_page(rt: satchel.Runtime, page: int, **options: Any) -> str | None:
    """The cursor that gives page ``page`` (None: page 1), found by walking to it."""
    cursor = None
    for _ in range(page - 1):
        cursor = (await rt.list_records(SCOPE, cursor=cursor, **options)).cursor
        if cursor is None:
            raise SystemExit(f"the scope has fewer than {page} pages")
    return cursor


async def measure_pages(
    rt: satchel.Runtime, pages: list[int], repeat: int, warmup: int, **options: Any
) -> dict[str, Any]:
    """Page 1 and each page of ``pages``, timed ``repeat`` times each, interleaved (so
    a slow moment of the machine is shared), after ``warmup`` untimed calls each."""
    cursors = {page: await cursor_of_page(rt, page, **options) for page in [1, *pages]}
    samples: dict[int, list[float]] = {page: [] for page in cursors}
    for round_ in range(warmup + repeat):
        for page, cursor in cursors.items():
            elapsed = await timed_page(rt, cursor, **options)
            if round_ >= warmup:
                samples[page].append(elapsed)
    first = summary(samples[1])
    result: dict[str, Any] = {"page 1": first}
    for page in pages:
        deep = summary(samples[page])
        result[f"page {page}"] = {**deep, "over_page_1": round(deep["p50_ms"] / first["p50_ms"], 2)}
    return result


async def walk(rt: satchel.Runtime, limit: int) -> dict[str, Any]:
    """Every page of the scope by its cursor: pages, distinct records, time per page."""
    cursor: str | None = None
    seen: set[satchel.Citation] = set()
    times: list[float] = []
    listed = 0
    started = time.perf_counter()
    while True:
        at = time.perf_counter()
        page = await rt.list_records(SCOPE, cursor=cursor, limit=limit)
        times.append((time.perf_counter() - at) * 1000)
        listed += len(page.records)
        seen.update(record.citation for record in page.records)
        cursor = page.cursor
        if cursor is None:
            break
    return {
        "pages": len(times),
        "records": listed,
        "distinct": len(seen),
        "total_s": round(time.perf_counter() - started, 3),
        **summary(times),
    }


async def measure(
    path: Path, limit: int, pages: list[int], repeat: int, warmup: int
) -> dict[str, Any]:
    async with satchel.open_runtime(str(path), embedder=embedder()) as rt:
        scopes = await rt.list_scopes()
        results: dict[str, Any] = {
            "records": dict(scopes[0].records) if scopes else {},
            "limit": limit,
            "default": await measure_pages(rt, pages, repeat, warmup, limit=limit),
            "family=memory": await measure_pages(
                rt, pages, repeat, warmup, limit=limit, family="memory"
            ),
            "include_forgotten": await measure_pages(
                rt, pages, repeat, warmup, limit=limit, include_forgotten=True
            ),
            "walk": await walk(rt, limit),
        }
        started = time.perf_counter()
        await rt.list_scopes()
        results["list_scopes_ms"] = round((time.perf_counter() - started) * 1000, 3)
    return results


def table(results: dict[str, Any]) -> str:
    """The page timings as a Markdown table."""
    lines = [
        "| listing | page | p50 ms | p95 ms | max ms | p50 / page 1 |",
        "|---|---|---|---|---|---|",
    ]
    for arm in ("default", "family=memory", "include_forgotten"):
        for page, figures in results[arm].items():
            ratio = figures.get("over_page_1", 1.0)
            lines.append(
                f"| {arm} | {page.removeprefix('page ')} | {figures['p50_ms']:.2f} |"
                f" {figures['p95_ms']:.2f} | {figures['max_ms']:.2f} | {ratio:.2f} |"
            )
    walked = results["walk"]
    lines.append(
        f"\nWhole walk: {walked['pages']:,} pages, {walked['records']:,} records"
        f" ({walked['distinct']:,} distinct) in {walked['total_s']:.2f} s; page p50"
        f" {walked['p50_ms']:.2f} ms, p95 {walked['p95_ms']:.2f} ms. list_scopes:"
        f" {results['list_scopes_ms']:.2f} ms."
    )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--limit", type=int, default=100)
    parser.add_argument("--pages", type=int, nargs="+", default=[10, 100, 1000])
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--out", type=Path, default=RESULTS / "listing.json")
    args = parser.parse_args()
    path = store_path(args.size)
    built = None
    if not path.exists():
        CACHE.mkdir(exist_ok=True)
        print(f"building {path.name} ({args.size:,} entries)", file=sys.stderr)
        built = round(anyio.run(build_store, path, args.size))
    results = anyio.run(measure, path, args.limit, args.pages, args.repeat, args.warmup)
    results = {"size": args.size, "build_entries_per_s": built, **results}
    args.out.parent.mkdir(exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(table(results))


if __name__ == "__main__":
    main()
