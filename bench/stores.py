"""SQLite vs OceanBase (embedded seekdb): ingest rate, prepare latency and citations.

For each size N, one scope of N memory entries (the real-word notes of
``_corpus.english_texts`` with a function-word head, as ``bench scale`` and ``bench
latency`` use) is ingested into each store through the public API (``rt.add_memories``,
batches of 512, the bundled static embedder): a SQLite file (``sqlite:///TMP/stores.db``)
and an embedded seekdb engine (``seekdb:///TMP/seekdb``, an ``OceanBaseStore``), both in
a temporary directory removed after the size. On each store two runtimes share the one
store object, gate off (``recall_policy=None``) and gate on
(``RecallSufficiencyPolicy()``). Both stores stay open for the size: after the
warm-up queries on each, every query (3-6 words of a random entry) runs
``prepare_context`` with an 8000-byte budget on both arms of both stores, interleaved,
the order reversed from query to query, so that the machine's other load falls on both
stores alike.

The seekdb engine starts on a new folder, and a few seconds later runs a one-time
job loading its system packages (3-5 s of one core): the bench waits for it before the
ingest is timed (the wait goes to stderr), so that the rate is the store's.

After the warm-up, the bench waits for the seekdb store's background reads of a large
scope's vectors and texts to end (the engine searches meanwhile, at several times the
held scope's p50), so that the p50 measured is the held scope's, whatever those reads'
timing against the warm-up.

Reported per size and store: ingest entries/s, the first (cold) prepare (on seekdb it
reads the scope's vectors and texts into the process), p50/p95 per gate arm, the median scope
listing (``scope_counts``, what ``satchel scopes`` reads) and the store's bytes on disk;
per size and arm: OceanBase p50 / SQLite p50, the share of queries whose packs
cite the same entries in the same order on both stores, the share citing the same set of
entries, and the mean overlap (Jaccard) of the cited sets. The two stores score with
different numerics (adjacent near-ties can swap), and above 10,000 records per scope
OceanBase searches vectors through its HNSW index while SQLite always searches exactly,
so the citations may differ: they are reported, not asserted. JSON goes to
``bench/results/stores.json``.

Run: ``python -m bench stores [--sizes 10000,100000] [--queries 200]``. The 100k seekdb
ingest takes a few minutes; progress goes to stderr.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import anyio
import numpy as np
import threadpoolctl

import satchel
from bench import _corpus
from bench._citations import citation_key, delivered_citations
from satchel.stores import open_store
from satchel.stores.oceanbase._engine import PACKAGE_LOAD_WAIT, PACKAGES_LOADED

if TYPE_CHECKING:
    from satchel._workload import CitationKey

RESULTS = Path(__file__).parent / "results"
SCOPE: Final = "bench"
BATCH: Final = 512
WARMUP: Final = 10
PROGRESS_EVERY: Final = 10_000
BUDGET: Final = 8000
#: The stores compared, by URL scheme, with their names in the report.
STORES: Final = {"sqlite": "SQLite", "seekdb": "OceanBase (seekdb)"}
ARMS: Final = ("off", "on")


@dataclass
class StoreRun:
    """What one store measured at one size."""

    ingest_entries_per_s: float
    first_call_s: float
    #: Seconds per timed query, per gate arm.
    latency: dict[str, list[float]] = field(default_factory=lambda: {arm: [] for arm in ARMS})
    #: The corpus indices each timed query's pack cites, in order (-1: not a corpus entry).
    cited: dict[str, list[list[int]]] = field(default_factory=lambda: {arm: [] for arm in ARMS})
    #: The median scope listing (``scope_counts``), and the store's bytes on disk.
    listing_s: float = 0.0
    folder_bytes: int = 0


def percentile_ms(seconds: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(seconds), q)) * 1e3


def store_url(scheme: str, directory: Path) -> str:
    """``sqlite:///DIR/stores.db`` or ``seekdb:///DIR/seekdb`` (``directory`` is absolute)."""
    return f"{scheme}://{directory / ('stores.db' if scheme == 'sqlite' else 'seekdb')}"


async def prepare(rt: satchel.Runtime, query: str) -> tuple[float, satchel.PreparedContext]:
    request = satchel.PrepareContextRequest(scope_id=SCOPE, query=query, max_bytes=BUDGET)
    started = time.perf_counter()
    context = await rt.prepare_context(request)
    return time.perf_counter() - started, context


async def ingest(
    rt: satchel.Runtime, texts: list[str], label: str
) -> tuple[float, dict[CitationKey, int]]:
    """Add ``texts`` in batches; returns entries/s and each citation key's corpus index."""
    owners: dict[CitationKey, int] = {}
    started = time.perf_counter()
    for start in range(0, len(texts), BATCH):
        batch = [satchel.MemoryEntry(text=t) for t in texts[start : start + BATCH]]
        refs = await rt.add_memories(SCOPE, batch)
        for index, ref in enumerate(refs, start):
            owners["memory", ref.scope_id, ref.entry_id, ref.version] = index
        done = start + len(batch)
        if done // PROGRESS_EVERY > start // PROGRESS_EVERY or done == len(texts):
            rate = done / (time.perf_counter() - started)
            print(f"  {label}: {done:,}/{len(texts):,} entries, {rate:,.0f}/s", file=sys.stderr)
    return len(texts) / (time.perf_counter() - started), owners


async def measure_size(
    size: int, query_count: int, embedder: satchel.Embedder, directory: Path
) -> dict[str, Any]:
    """Ingest the size's entries into each store, then time its queries on both stores
    interleaved: query by query, every store and arm, the first store and the first arm
    alternating, so that the machine's other load falls on both alike."""
    texts = _corpus.english_texts(size, function_head=True)
    queries = _corpus.queries(texts, WARMUP + query_count)
    runs: dict[str, StoreRun] = {}
    owners: dict[str, dict[CitationKey, int]] = {}
    async with contextlib.AsyncExitStack() as stack:
        arms: dict[str, dict[str, satchel.Runtime]] = {}
        for scheme, name in STORES.items():
            label = f"{name} {size:,}"
            print(f"{label}: ingesting", file=sys.stderr)
            store = await open_store(store_url(scheme, directory))
            if scheme == "seekdb":
                waited = await engine_settled(store)
                print(
                    f"{label}: the new engine's start-up job took {waited:.1f} s", file=sys.stderr
                )
            # Both arms search one store object (the runtimes close it once, on exit).
            off = await stack.enter_async_context(
                satchel.open_runtime(store=store, embedder=embedder)
            )
            on = await stack.enter_async_context(
                satchel.open_runtime(
                    store=store, embedder=embedder, recall_policy=satchel.RecallSufficiencyPolicy()
                )
            )
            arms[scheme] = {"off": off, "on": on}
            rate, owners[scheme] = await ingest(off, texts, label)
            warmup = queries[:WARMUP]
            cold = [
                (await prepare(arms[scheme][arm], query))[0] for query in warmup for arm in ARMS
            ]
            if scheme == "seekdb":  # time the held scope, not the engine's scans meanwhile
                waited = await background_reads_done(store)
                print(f"{label}: the background reads of the scope took {waited:.1f} s more",
                      file=sys.stderr)  # fmt: skip
            runs[scheme] = StoreRun(ingest_entries_per_s=rate, first_call_s=cold[0])
            runs[scheme].listing_s = await listing_seconds(store)
            runs[scheme].folder_bytes = folder_bytes(directory, scheme)
        timed = queries[WARMUP:]
        print(
            f"{size:,}: {len(timed)} queries x {len(ARMS)} arms x {len(STORES)} stores",
            file=sys.stderr,
        )
        order = [(scheme, arm) for scheme in STORES for arm in ARMS]
        for number, query in enumerate(timed):
            turn = order if number % 2 == 0 else order[::-1]
            for scheme, arm in turn:
                seconds, context = await prepare(arms[scheme][arm], query)
                runs[scheme].latency[arm].append(seconds)
                runs[scheme].cited[arm].append(
                    [
                        owners[scheme].get(citation_key(c), -1)
                        for c in delivered_citations(context.content)
                    ]
                )
    return summarise(size, query_count, runs)


async def engine_settled(store: Any, poll: float = 0.1) -> float:
    """Wait until a new seekdb engine has run its one-time job of loading its system
    packages (``_engine.PACKAGES_LOADED``: 3-5 s of one core, a few seconds after the
    engine first starts on a new folder), so that the ingest timed is the store's and
    not that job's; the seconds waited. An engine without the view is not waited for,
    nor one still running the job after ``_engine.PACKAGE_LOAD_WAIT``."""
    started = time.perf_counter()

    async def job(cur: Any) -> Any:
        await cur.execute(PACKAGES_LOADED)
        return await cur.fetchone()

    while time.perf_counter() - started < PACKAGE_LOAD_WAIT:
        try:
            found = await store._call("bench", job)
        except satchel.StoreError:  # no such view in this engine: nothing to wait for
            break
        if found is not None and found[0] == "SUCCESS":
            break
        await anyio.sleep(poll)
    return time.perf_counter() - started


async def background_reads_done(store: Any) -> float:
    """Wait for the seekdb store's background reads of scopes' vectors and texts to end;
    the seconds waited."""
    started = time.perf_counter()
    await store._bridge.run(store._loads_done)
    return time.perf_counter() - started


async def listing_seconds(store: Any, repeat: int = 20) -> float:
    """The median time of the store's scope listing (``scope_counts``, what ``satchel
    scopes`` reads)."""
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        await store.scope_counts()
        times.append(time.perf_counter() - started)
    return float(np.median(times))


def folder_bytes(directory: Path, scheme: str) -> int:
    """Bytes the store's files take on disk (the SQLite file and its sidecars, or the
    seekdb engine's folder)."""
    if scheme == "sqlite":
        files = [path for path in directory.iterdir() if path.name.startswith("stores.db")]
    else:
        files = [path for path in (directory / "seekdb").rglob("*") if path.is_file()]
    return sum(path.stat().st_blocks * 512 for path in files if not path.is_symlink())


def summarise(size: int, query_count: int, runs: dict[str, StoreRun]) -> dict[str, Any]:
    stores = {
        scheme: {
            "ingest_entries_per_s": round(run.ingest_entries_per_s),
            "first_call_ms": run.first_call_s * 1e3,
            "scope_listing_ms": run.listing_s * 1e3,
            "folder_mb": run.folder_bytes / 1e6,
            **{
                f"{arm}_p{q}_ms": percentile_ms(run.latency[arm], q)
                for arm in ARMS
                for q in (50, 95)
            },
        }
        for scheme, run in runs.items()
    }
    # Each timed query's cited indices on SQLite and on OceanBase, per arm.
    matched = {
        arm: list(zip(runs["sqlite"].cited[arm], runs["seekdb"].cited[arm], strict=True))
        for arm in ARMS
    }
    return {
        "entries": size,
        "queries": query_count,
        "stores": stores,
        "p50_ratio_oceanbase_sqlite": {
            arm: stores["seekdb"][f"{arm}_p50_ms"] / stores["sqlite"][f"{arm}_p50_ms"]
            for arm in ARMS
        },
        "identical_citations": {
            arm: float(np.mean([a == b for a, b in matched[arm]])) for arm in ARMS
        },
        "identical_cited_sets": {
            arm: float(np.mean([set(a) == set(b) for a, b in matched[arm]])) for arm in ARMS
        },
        "mean_citation_overlap": {
            arm: float(np.mean([jaccard(a, b) for a, b in matched[arm]])) for arm in ARMS
        },
    }


def jaccard(first: list[int], second: list[int]) -> float:
    a, b = set(first), set(second)
    return len(a & b) / len(a | b) if a | b else 1.0


def report(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| entries | store | ingest entries/s | first call ms | gate off p50 ms"
        " | gate off p95 ms | gate on p50 ms | gate on p95 ms | scope listing ms | folder MB |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        for scheme, name in STORES.items():
            s = row["stores"][scheme]
            lines.append(
                f"| {row['entries']:,} | {name} | {s['ingest_entries_per_s']:,}"
                f" | {s['first_call_ms']:.1f} | {s['off_p50_ms']:.2f} | {s['off_p95_ms']:.2f}"
                f" | {s['on_p50_ms']:.2f} | {s['on_p95_ms']:.2f}"
                f" | {s['scope_listing_ms']:.2f} | {s['folder_mb']:.0f} |"
            )
    lines += [
        "",
        "| entries | gate | p50 OceanBase/SQLite | identical citation lists"
        " | identical cited sets | mean cited-set overlap |",
        "|---:|---|---:|---:|---:|---:|",
    ]
    for row in rows:
        for arm in ARMS:
            lines.append(
                f"| {row['entries']:,} | {arm} | {row['p50_ratio_oceanbase_sqlite'][arm]:.2f}"
                f" | {row['identical_citations'][arm]:.3f}"
                f" | {row['identical_cited_sets'][arm]:.3f}"
                f" | {row['mean_citation_overlap'][arm]:.3f} |"
            )
    return "\n".join(lines)


def sizes(text: str) -> list[int]:
    try:
        values = [int(part.replace("_", "")) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected sizes like 10000,100000, not {text!r}"
        ) from None
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"expected positive sizes, not {text!r}")
    return values


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--sizes", type=sizes, default=[10_000, 100_000], metavar="N,N,...")
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    embedder = satchel.StaticEmbedder()  # the default embedder, loaded once for every store
    rows = []
    # One BLAS thread, as the runtime's default (blas_threads=1).
    with threadpoolctl.threadpool_limits(limits=1, user_api="blas"):
        for size in sorted(args.sizes):
            with tempfile.TemporaryDirectory(prefix="satchel-bench-stores-") as directory:
                rows.append(anyio.run(measure_size, size, args.queries, embedder, Path(directory)))
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "stores.json").write_text(json.dumps(rows, indent=2) + "\n")
    print(report(rows))


if __name__ == "__main__":
    main()
