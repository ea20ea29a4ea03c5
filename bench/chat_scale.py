"""Many users' chat memory in one seekdb engine, grown to a million entries.

A generator of chat scopes stands in for a population of users: scope ``user:NNNNNNN``
holds one user's turns (``--scope-entries`` of them, 1,000 by default, alternating the
user's and the assistant's lines, in sessions of 20 turns that are threads, dated a
minute apart), real-word notes drawn per scope from a Zipf curve with an English
function-word head (``_corpus``), so every scope's vocabulary and vectors differ. One
hot scope, ``user:hot`` (``--hot-entries``, 10,000 by default), is written first: it is
the user the benchmark queries again and again. The rest are written in order, each
scope in one ``add_memories`` call (a call is atomic, so a scope is all there or not
at all), through the public API with the bundled static embedder, into an embedded
seekdb engine at ``--dir`` (``bench/.cache/chat-scale/seekdb`` by default).

At each checkpoint (``--checkpoints``, by default 100k, 300k and 1M entries) it measures:
the ingest rate since the last checkpoint, prepare p50/p99 on the hot scope
(``--queries`` timed prepares after 10 warm-up ones, an 8000-byte budget, gate off, the
default families), prepare p50/p99 on cold scopes (the first prepare on each of
``--cold-scopes`` scopes that no earlier prepare touched: the process holds none of its
vectors, the engine may hold none of its blocks), ``satchel scopes``' listing
(``scope_counts``), the engine's RSS (``VmRSS`` of the process ``run/seekdb.pid``
names) and the folder's bytes on disk, and the benchmark process's own RSS.

Resumable: progress (scopes written, ingest seconds, checkpoints measured) is kept in
``DIR/progress.json`` after every scope, and a rerun with the same options goes on
from there (a checkpoint measured before is not measured again; the scope that was
being written when the run stopped is simply written, as the call that was cut off
left nothing). Results go to ``bench/results/chat_scale.json`` after every checkpoint.

Run: ``python -m bench chat-scale [--entries 1000000] [--checkpoints 100000,300000]``.
On a shared 2-core machine the million takes hours; stop it any time and rerun.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Final

import anyio
import numpy as np
import threadpoolctl

import satchel
from bench import _corpus
from satchel.stores import open_store
from satchel.stores.oceanbase._schema import SCHEMA_VERSION

CACHE: Final = Path(__file__).parent / ".cache" / "chat-scale"
RESULTS: Final = Path(__file__).parent / "results"
HOT: Final = "user:hot"
BUDGET: Final = 8000
WARMUP: Final = 10
#: Turns per chat session (a thread).
SESSION_TURNS: Final = 20
#: Entries per ``add_memories`` call of the hot scope (a cold scope is one call).
HOT_BATCH: Final = 1000
EPOCH: Final = datetime(2025, 1, 1, tzinfo=UTC)


class Chats:
    """The deterministic turns of every scope: the same options give the same texts."""

    def __init__(self) -> None:
        words = _corpus.english_words()
        rng = np.random.default_rng(11)
        rng.shuffle(words)
        head = set(_corpus.FUNCTION_WORDS)
        self._words = [*_corpus.FUNCTION_WORDS, *(w for w in words if w not in head)]

    def texts(self, seed: int, count: int) -> list[str]:
        rng = np.random.default_rng(seed)
        # Each user talks about their own things: a few hundred words of their own
        # raised to the top of the curve under the shared function words.
        own = rng.choice(len(self._words) - 200, size=300, replace=False) + 200
        words = self._words[:100] + [self._words[i] for i in own] + self._words[100:]
        notes = _corpus._zipf_notes(words, rng, count, longest=25)
        return [f"{'user' if i % 2 == 0 else 'assistant'}: {n}" for i, n in enumerate(notes)]

    def entries(self, seed: int, start: int, count: int) -> list[satchel.MemoryEntry]:
        texts = self.texts(seed, start + count)[start:]
        return [
            satchel.MemoryEntry(
                text=text,
                kind="turn",
                thread=f"session-{(start + i) // SESSION_TURNS}",
                created_at=EPOCH + timedelta(minutes=start + i),
            )
            for i, text in enumerate(texts)
        ]


def scope_name(number: int) -> str:
    return f"user:{number:07d}"


def engine_rss_bytes(directory: Path) -> int:
    """``VmRSS`` of the engine the directory's ``run/seekdb.pid`` names (0 if none)."""
    try:
        pid = int((directory / "run" / "seekdb.pid").read_text().strip())
        status = Path(f"/proc/{pid}/status").read_text()
    except (OSError, ValueError):
        return 0
    line = next(row for row in status.splitlines() if row.startswith("VmRSS:"))
    return int(line.split()[1]) * 1024


def folder_bytes(directory: Path) -> int:
    files = (p for p in directory.rglob("*") if p.is_file() and not p.is_symlink())
    return sum(p.stat().st_blocks * 512 for p in files)


def own_rss_bytes() -> int:
    line = next(r for r in Path("/proc/self/status").read_text().splitlines() if r[:6] == "VmRSS:")
    return int(line.split()[1]) * 1024


def percentiles_ms(seconds: list[float]) -> dict[str, float]:
    values = np.asarray(seconds) * 1e3
    return {"p50_ms": float(np.percentile(values, 50)), "p99_ms": float(np.percentile(values, 99))}


async def timed_prepare(rt: satchel.Runtime, scope: str, query: str) -> float:
    request = satchel.PrepareContextRequest(scope_id=scope, query=query, max_bytes=BUDGET)
    started = time.perf_counter()
    await rt.prepare_context(request)
    return time.perf_counter() - started


class Run:
    """One resumable run: its options, its progress file and its results."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.directory: Path = args.dir
        self.engine = self.directory / "seekdb"
        self.progress_path = self.directory / "progress.json"
        self.chats = Chats()
        self.progress: dict[str, Any] = {
            "options": {"scope_entries": args.scope_entries, "hot_entries": args.hot_entries},
            "hot_written": 0,
            "scopes_written": 0,
            "entries": 0,
            "ingest_seconds": 0.0,
            "checkpoints": [],
            "queried": [],
        }
        if self.progress_path.exists():
            saved = json.loads(self.progress_path.read_text())
            if saved["options"] != self.progress["options"]:
                raise SystemExit(f"{self.progress_path} was made with other options: {saved}")
            self.progress = saved

    def save(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        temporary = self.progress_path.with_suffix(".tmp")
        temporary.write_text(json.dumps(self.progress, indent=1))
        temporary.replace(self.progress_path)
        RESULTS.mkdir(exist_ok=True)
        (RESULTS / "chat_scale.json").write_text(
            json.dumps(self.progress["checkpoints"], indent=2) + "\n"
        )

    def note(self, seconds: float, entries: int) -> None:
        self.progress["ingest_seconds"] += seconds
        self.progress["entries"] += entries
        self.save()

    async def go(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        store = await open_store(f"seekdb://{self.engine.resolve()}")
        async with satchel.open_runtime(store=store) as rt:
            await self.write_hot(rt)
            await self.measure_due(rt)
            while self.progress["entries"] < self.args.entries:
                await self.write_scope(rt, self.progress["scopes_written"])
                await self.measure_due(rt)

    async def write_hot(self, rt: satchel.Runtime) -> None:
        while self.progress["hot_written"] < self.args.hot_entries:
            start = self.progress["hot_written"]
            count = min(HOT_BATCH, self.args.hot_entries - start)
            started = time.perf_counter()
            await rt.add_memories(HOT, self.chats.entries(0, start, count))
            self.progress["hot_written"] += count
            self.note(time.perf_counter() - started, count)

    async def write_scope(self, rt: satchel.Runtime, number: int) -> None:
        entries = self.chats.entries(number + 1, 0, self.args.scope_entries)
        started = time.perf_counter()
        await rt.add_memories(scope_name(number), entries)
        self.progress["scopes_written"] += 1
        self.note(time.perf_counter() - started, len(entries))
        done = self.progress["entries"]
        if self.progress["scopes_written"] % 20 == 0:
            rate = done / self.progress["ingest_seconds"]
            print(f"  {done:,} entries, {rate:,.0f}/s overall", file=sys.stderr, flush=True)

    async def measure_due(self, rt: satchel.Runtime) -> None:
        measured = {row["entries_target"] for row in self.progress["checkpoints"]}
        for target in self.args.checkpoints:
            if target not in measured and self.progress["entries"] >= target:
                row = await self.measure(rt, target)
                self.progress["checkpoints"].append(row)
                self.save()
                print(json.dumps(row), file=sys.stderr, flush=True)

    async def measure(self, rt: satchel.Runtime, target: int) -> dict[str, Any]:
        print(f"measuring at {self.progress['entries']:,} entries", file=sys.stderr, flush=True)
        rows = self.progress["checkpoints"]
        since_entries = self.progress["entries"] - (rows[-1]["entries"] if rows else 0)
        since_seconds = self.progress["ingest_seconds"] - (
            rows[-1]["ingest_seconds"] if rows else 0.0
        )
        hot_queries = _corpus.queries(
            self.chats.texts(0, self.args.hot_entries), WARMUP + self.args.queries, seed=target
        )
        hot = [await timed_prepare(rt, HOT, q) for q in hot_queries]
        cold = await self.cold_prepares(rt, target)
        listing = []
        for _ in range(5):
            started = time.perf_counter()
            await rt.list_scopes()
            listing.append(time.perf_counter() - started)
        return {
            "entries_target": target,
            "entries": self.progress["entries"],
            "scopes": self.progress["scopes_written"] + 1,
            "ingest_seconds": self.progress["ingest_seconds"],
            "ingest_entries_per_s_overall": self.progress["entries"]
            / self.progress["ingest_seconds"],
            "ingest_entries_per_s_since_last": since_entries / since_seconds,
            "hot": {"entries": self.args.hot_entries, **percentiles_ms(hot[WARMUP:])},
            "cold": {"scopes": len(cold), **percentiles_ms(cold)},
            "list_scopes_ms": float(np.median(listing)) * 1e3,
            "engine_rss_mb": engine_rss_bytes(self.engine) / 1e6,
            "bench_process_rss_mb": own_rss_bytes() / 1e6,
            "bench_process_peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3,
            "folder_mb": folder_bytes(self.engine) / 1e6,
            "load_average": os.getloadavg()[0],
            # The store's layout: schema 6 dropped the vectors' HNSW index.
            "schema": SCHEMA_VERSION,
            "measured_at": datetime.now(UTC).isoformat(timespec="seconds"),
        }

    async def cold_prepares(self, rt: satchel.Runtime, target: int) -> list[float]:
        """The first prepare on scopes no earlier prepare touched."""
        rng = np.random.default_rng(target)
        queried = set(self.progress["queried"])
        fresh = [n for n in range(self.progress["scopes_written"]) if n not in queried]
        picks = rng.choice(len(fresh), size=min(self.args.cold_scopes, len(fresh)), replace=False)
        seconds = []
        for pick in picks:
            number = fresh[int(pick)]
            texts = self.chats.texts(number + 1, self.args.scope_entries)
            query = _corpus.queries(texts, 1, seed=number)[0]
            seconds.append(await timed_prepare(rt, scope_name(number), query))
            self.progress["queried"].append(number)
        return seconds


def counts(text: str) -> list[int]:
    try:
        values = [int(part.replace("_", "")) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected counts like 100000,300000, not {text!r}"
        ) from None
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"expected positive counts, not {text!r}")
    return sorted(values)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--entries", type=int, default=1_000_000, help="entries in all")
    parser.add_argument(
        "--checkpoints", type=counts, default=[100_000, 300_000, 1_000_000], metavar="N,N,..."
    )
    parser.add_argument("--scope-entries", type=int, default=1000, help="entries per user")
    parser.add_argument("--hot-entries", type=int, default=10_000, help="the hot user's")
    parser.add_argument("--queries", type=int, default=200, help="timed hot prepares")
    parser.add_argument("--cold-scopes", type=int, default=50, help="cold scopes prepared")
    parser.add_argument("--dir", type=Path, default=CACHE, help="the run's folder")
    args = parser.parse_args()
    args.checkpoints = [c for c in args.checkpoints if c <= args.entries] or [args.entries]
    with threadpoolctl.threadpool_limits(limits=1, user_api="blas"):
        anyio.run(Run(args).go)


if __name__ == "__main__":
    main()
