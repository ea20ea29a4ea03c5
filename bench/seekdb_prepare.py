"""Where one seekdb prepare goes: its store calls, its statements, the engine's share.

One scope of N memory entries (``bench stores``' corpus and batches) in an embedded
seekdb engine in a temporary directory, a runtime with the gate off (or on, with
``--gate``); after 10 warm-ups, ``--queries`` prepares are timed while every statement
the store sends (asyncmy's ``Cursor.execute``, the wait for its answer included) and
every store call (``OceanBaseStore._call``) are timed too. Reported: the prepare's p50,
the store calls and statements per prepare, each kind of statement's count per prepare
and its p50, and the sum per prepare of the statements' time (the engine and the
socket) against the prepare's (the rest is Python: the recall core, the pack, the
bridge between the host's loop and the store's). JSON to
``bench/results/seekdb_prepare.json``.

Run: ``python -m bench seekdb-prepare [--size 10000] [--queries 100] [--gate]
[--partitions 16]``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import statistics
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

import satchel
from bench import _corpus, stores
from satchel.stores import open_store
from satchel.stores.oceanbase import OceanBaseStore
from satchel.stores.oceanbase._connections import Connections

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

RESULTS = Path(__file__).parent / "results"


class Timings:
    """Every statement and store call while :attr:`on`, by kind."""

    def __init__(self) -> None:
        self.on = False
        self.statements: dict[str, list[float]] = defaultdict(list)
        self.calls: dict[str, list[float]] = defaultdict(list)

    def install(self) -> None:
        """Wrap the store's connections (asyncmy's cursor type cannot be patched) and
        its calls."""
        connection = Connections.connection
        call = OceanBaseStore._call
        timings = self

        @contextlib.asynccontextmanager
        async def timed_connection(pool: Any, *, extra: bool = False) -> AsyncIterator[Any]:
            async with connection(pool, extra=extra) as conn:
                yield _TimedConnection(conn, timings)

        async def timed_call(store: Any, operation: str, work: Any) -> Any:
            started = time.perf_counter()
            try:
                return await call(store, operation, work)
            finally:
                if timings.on:
                    timings.calls[operation].append(time.perf_counter() - started)

        Connections.connection = timed_connection  # type: ignore[assignment,method-assign]
        OceanBaseStore._call = timed_call  # type: ignore[assignment,method-assign]


class _TimedConnection:
    def __init__(self, conn: Any, timings: Timings) -> None:
        self._conn = conn
        self._timings = timings

    def cursor(self) -> Any:
        return _TimedCursor(self._conn.cursor(), self._timings)


class _TimedCursor:
    """A cursor whose ``execute`` is timed (the rest is the cursor's own)."""

    def __init__(self, cursor: Any, timings: Timings) -> None:
        self._cursor = cursor
        self._timings = timings

    async def __aenter__(self) -> _TimedCursor:
        self._cursor = await self._cursor.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._cursor.__aexit__(*exc)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._cursor, name)

    async def execute(self, query: str, args: Any = None) -> Any:
        started = time.perf_counter()
        try:
            return await self._cursor.execute(query, args)
        finally:
            if self._timings.on:
                self._timings.statements[kind(query)].append(time.perf_counter() - started)

    async def executemany(self, query: str, args: Any) -> Any:
        started = time.perf_counter()
        try:
            return await self._cursor.executemany(query, args)
        finally:
            if self._timings.on:
                seconds = time.perf_counter() - started
                self._timings.statements[f"(many) {kind(query)}"].append(seconds)


def kind(query: str) -> str:
    """A statement's first words and tables, without its literals."""
    text = re.sub(r"'[^']*'|\b\d+(\.\d+)?\b", "?", " ".join(query.split()))
    tables = sorted(set(re.findall(r"\bsatchel_\w+", text)))
    return f"{' '.join(text.split()[:3])[:40]} [{','.join(tables)}]"


async def measure(
    size: int, query_count: int, gate: bool, partitions: int, directory: Path
) -> dict[str, Any]:
    texts = _corpus.english_texts(size, function_head=True)
    queries = _corpus.queries(texts, stores.WARMUP + query_count)
    policy = satchel.RecallSufficiencyPolicy() if gate else None
    timings = Timings()
    timings.install()
    store = await open_store(f"seekdb://{directory / 'seekdb'}")
    assert isinstance(store, OceanBaseStore)
    store._partitions = partitions  # the URL has no such option; nothing made yet
    embedder = satchel.embedders.StaticEmbedder()
    async with satchel.open_runtime(store=store, embedder=embedder, recall_policy=policy) as rt:
        rate, _ = await stores.ingest(rt, texts, f"seekdb {size:,}")
        for query in queries[: stores.WARMUP]:
            await stores.prepare(rt, query)
        timings.on = True
        seconds = [(await stores.prepare(rt, query))[0] for query in queries[stores.WARMUP :]]
        timings.on = False
    per = float(query_count)
    statement_ms = sum(sum(values) for values in timings.statements.values()) * 1e3 / per
    return {
        "size": size,
        "gate": gate,
        "partitions": partitions,
        "ingest_entries_per_s": rate,
        "prepare_p50_ms": statistics.median(seconds) * 1e3,
        "prepare_mean_ms": statistics.fmean(seconds) * 1e3,
        "store_calls_per_prepare": sum(map(len, timings.calls.values())) / per,
        "statements_per_prepare": sum(map(len, timings.statements.values())) / per,
        "statements_ms_per_prepare": statement_ms,
        "calls": {op: _summary(values, per) for op, values in sorted(timings.calls.items())},
        "statements": {
            name: _summary(values, per)
            for name, values in sorted(timings.statements.items(), key=lambda kv: -sum(kv[1]))
        },
    }


def _summary(values: list[float], per: float) -> dict[str, float]:
    return {
        "per_prepare": len(values) / per,
        "p50_ms": statistics.median(values) * 1e3,
        "ms_per_prepare": sum(values) * 1e3 / per,
    }


def report(result: dict[str, Any]) -> str:
    lines = [
        f"{result['size']:,} entries, gate {'on' if result['gate'] else 'off'},"
        f" {result['partitions']} partitions:"
        f" prepare p50 {result['prepare_p50_ms']:.2f} ms (mean {result['prepare_mean_ms']:.2f}),"
        f" {result['store_calls_per_prepare']:.2f} store calls and"
        f" {result['statements_per_prepare']:.2f} statements per prepare,"
        f" {result['statements_ms_per_prepare']:.2f} ms of statements",
        "",
        "| store call | per prepare | p50 ms | ms per prepare |",
        "|---|---:|---:|---:|",
    ]
    lines += [_row(name, row) for name, row in result["calls"].items()]
    lines += ["", "| statement | per prepare | p50 ms | ms per prepare |", "|---|---:|---:|---:|"]
    lines += [_row(f"`{name}`", row) for name, row in result["statements"].items()]
    return "\n".join(lines)


def _row(name: str, row: dict[str, float]) -> str:
    return (
        f"| {name} | {row['per_prepare']:.2f} | {row['p50_ms']:.2f} | {row['ms_per_prepare']:.2f} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench seekdb-prepare", description=__doc__)
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--gate", action="store_true", help="the sufficiency gate on")
    parser.add_argument(
        "--partitions",
        type=int,
        default=16,
        help="partitions by scope of the new database's tables (0: none)",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="satchel-seekdb-prepare-") as folder:
        result = anyio.run(
            measure, args.size, args.queries, args.gate, args.partitions, Path(folder)
        )
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "seekdb_prepare.json").write_text(json.dumps(result, indent=2) + "\n")
    print(report(result))


if __name__ == "__main__":
    main()
