"""The recall orchestrator's cost and benefit, gate off vs gate on, on one store in one run.

Part 1, on the synthetic workload (``bench/_synthetic.py``: direct and paraphrased
questions with known evidence, multi-scope, 512-byte and empty-scope queries):
- queries the gate does not expand: p50 latency gate on / gate off;
- queries it expands: added latency per committed round / that query's round-0 latency;
- share of queries expanded, added embeddings, evidence recall per category per arm.
Part 2: one prepare over S scopes x 3 families, the round's searches concurrent vs one
after another (a store that serves one search call at a time), S = 1..16.

Run: ``python -m bench.orchestrator [--repeat 5] [--scopes 1 2 4 8 16]``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import anyio
import numpy as np
import threadpoolctl

import satchel
from bench import _corpus, _synthetic
from bench._citations import citation_key, delivered_citations
from satchel._workload import ingest, read_entries, read_queries
from satchel.embedders import from_spec
from satchel.stores import SqliteStore

CACHE = Path(__file__).parent / ".cache"
RESULTS = Path(__file__).parent / "results"


class FullTextOnly:
    """Embeds everything to the zero vector: no vector candidate is ever admitted, so
    recall is the full-text channel's alone (the "full-text only" arm)."""

    dimension = 8
    fingerprint = "full-text-only"

    async def embed(self, texts: Any) -> Any:
        return np.zeros((len(texts), self.dimension), dtype=np.float32)


def make_embedder(name: str) -> satchel.Embedder:
    """``static``, ``hashing``, ``st:PATH`` (a sentence-transformers model folder) or
    ``none`` (full-text only)."""
    return FullTextOnly() if name == "none" else from_spec(name)


class CountingRows(SqliteStore):
    """The embedded store, counting the evidence rows its searches ask for."""

    rows = 0

    async def evidence(self, family: Any, scope_id: str, keys: Any) -> Any:
        self.rows += len(keys)
        return await super().evidence(family, scope_id, keys)


class OneSearchAtATime(SqliteStore):
    """The embedded store serving one search call at a time: a round's searches then run
    one after another, as if there were no concurrency (the "sequential" arm)."""

    _turn: anyio.Lock | None = None

    def _lock(self) -> anyio.Lock:
        if self._turn is None:
            self._turn = anyio.Lock()
        return self._turn

    async def retrieve(self, *args: Any) -> Any:
        async with self._lock():
            return await super().retrieve(*args)

    async def neighbours(self, *args: Any, **kwargs: Any) -> Any:
        async with self._lock():
            return await super().neighbours(*args, **kwargs)

    async def evidence(self, *args: Any) -> Any:
        async with self._lock():
            return await super().evidence(*args)


async def build(
    db: Path, workload: Path, filler: int, embedder: satchel.Embedder
) -> dict[Any, str]:
    """Generate the synthetic workload if needed and ingest it once."""
    if not (workload / "entries.jsonl").exists():
        _synthetic.generate(workload, filler=filler)
    return await ingest_workload(db, workload, embedder)


async def ingest_workload(db: Path, workload: Path, embedder: satchel.Embedder) -> dict[Any, str]:
    """Ingest any workload folder once (cached by ``db``); citation key -> workload id."""
    ids_path = db.with_suffix(".ids.json")
    if not await anyio.Path(db).exists():
        entries, errors = read_entries(workload / "entries.jsonl")
        for error in errors[:20]:
            print(f"skipped {error}", file=sys.stderr)
        async with satchel.open_runtime(str(db), embedder=embedder) as rt:
            report = await ingest(rt, entries, batch_size=1000)
        ids_path.write_text(json.dumps([[wid, list(key)] for wid, key in report.ids.items()]))
    return {tuple(key): wid for wid, key in json.loads(ids_path.read_text())}


def request(query: Any, budget: int = 8000) -> satchel.PrepareContextRequest:
    # The synthetic generator's "budget-512" questions are asked at the 512-byte floor.
    max_bytes = 512 if query.category == "budget-512" else budget
    return satchel.PrepareContextRequest(
        scope_id=query.scopes[0],
        query=query.query,
        references=query.scopes[1:],
        max_bytes=max_bytes,
    )


async def timed(
    rt: satchel.Runtime, req: satchel.PrepareContextRequest
) -> tuple[float, satchel.PreparedContext]:
    started = time.perf_counter()
    context = await rt.prepare_context(req)
    return time.perf_counter() - started, context


async def gate_part(repeat: int, filler: int, embedder_name: str) -> dict[str, Any]:
    CACHE.mkdir(exist_ok=True)
    suffix = "" if embedder_name == "hashing" else f"-{embedder_name}"
    db = CACHE / f"orchestrator-{filler}{suffix}.db"
    workload = CACHE / f"workload-synthetic-{filler}"
    embedder = make_embedder(embedder_name)
    owners = await build(db, workload, filler, embedder)
    return await evaluate(db, workload, embedder, owners, repeat=repeat)


async def evaluate(
    db: Path,
    workload: Path,
    embedder: satchel.Embedder,
    owners: dict[Any, str],
    *,
    repeat: int,
    budget: int = 8000,
) -> dict[str, Any]:
    """Every query of ``workload`` gate off and gate on, interleaved, on one store."""
    queries, _ = read_queries(workload / "queries.jsonl")
    efforts: dict[str, list[satchel.RecallEffort]] = {"off": [], "on": []}

    def sink(arm: str) -> Any:
        async def keep(effort: satchel.RecallEffort) -> None:
            efforts[arm].append(effort)

        return keep

    latency: dict[str, dict[str, list[float]]] = {"off": defaultdict(list), "on": defaultdict(list)}
    delivered: dict[str, dict[str, list[str]]] = {"off": {}, "on": {}}
    rounds: dict[str, int] = {}
    sizes: dict[str, list[int]] = {"off": [], "on": []}
    # Both arms search one store object: the same loaded matrices and caches, so neither
    # arm gains from where its own copy of a 400 MB matrix happened to land in memory
    # (two stores at 400k entries measured gate on 14% faster on queries it never expanded).
    store = await SqliteStore.open(str(db))
    async with (
        satchel.open_runtime(store=store, embedder=embedder, recall_effort_sink=sink("off")) as off,
        satchel.open_runtime(
            store=store,
            embedder=embedder,
            recall_policy=satchel.RecallSufficiencyPolicy(),
            recall_effort_sink=sink("on"),
        ) as on,
    ):
        arms = {"off": off, "on": on}
        for query in queries:  # warm-up: matrices loaded, caches filled
            for rt in arms.values():
                await rt.prepare_context(request(query, budget))
        for rep in range(repeat):
            for query in queries:
                order = ("off", "on") if rep % 2 == 0 else ("on", "off")
                for arm in order:
                    efforts[arm].clear()
                    seconds, context = await timed(arms[arm], request(query, budget))
                    sizes[arm].append(context.content_bytes)
                    latency[arm][query.id].append(seconds)
                    (effort,) = efforts[arm]
                    if arm == "on":
                        rounds[query.id] = effort.rounds
                    delivered[arm][query.id] = [
                        owners.get(citation_key(c), "?")
                        for c in delivered_citations(context.content)
                    ]
    summary = summarise(queries, latency, delivered, rounds, efforts)
    summary["mean_content_bytes"] = {arm: float(np.mean(v)) for arm, v in sizes.items()}
    # Each query's median latency per arm, for the latency CDF plot (bench/_plots.py).
    summary["latency_samples_ms"] = {
        arm: [statistics.median(v) * 1e3 for v in latency[arm].values()] for arm in latency
    }
    summary["latency_ms"] = {
        arm: {
            f"p{q}": float(np.percentile([np.median(v) for v in latency[arm].values()], q) * 1e3)
            for q in (50, 95, 99)
        }
        for arm in latency
    }
    return summary


def summarise(
    queries: list[Any], latency: Any, delivered: Any, rounds: dict[str, int], efforts: Any
) -> dict[str, Any]:
    median = {
        arm: {qid: statistics.median(v) for qid, v in latency[arm].items()} for arm in latency
    }
    quiet = [q.id for q in queries if rounds[q.id] == 1]
    loud = [q.id for q in queries if rounds[q.id] > 1]
    added = {qid: (median["on"][qid] - median["off"][qid]) / (rounds[qid] - 1) for qid in loud}
    per_round = [added[qid] / median["off"][qid] for qid in loud]
    recall: dict[str, dict[str, list[float]]] = {"off": defaultdict(list), "on": defaultdict(list)}
    for query in queries:
        if not query.expected:
            continue
        for arm in ("off", "on"):
            got = set(delivered[arm][query.id]) & set(query.expected)
            value = len(got) / len(query.expected)
            recall[arm][query.category].append(value)
            recall[arm]["all"].append(value)
    quiet_ms = {
        arm: float(np.median([median[arm][q] for q in quiet]) * 1e3) if quiet else None
        for arm in ("off", "on")
    }
    return {
        "queries": len(queries),
        "expanded_share": len(loud) / len(queries),
        "quiet_p50_ratio_on_off": (
            quiet_ms["on"] / quiet_ms["off"] if quiet_ms["on"] and quiet_ms["off"] else None
        ),
        "quiet_p50_ms": quiet_ms,
        "full_recall_share": {
            arm: float(np.mean([v == 1.0 for v in values["all"]])) if values["all"] else None
            for arm, values in recall.items()
        },
        "expanded_added_per_round_ratio_p50": float(np.median(per_round)) if per_round else None,
        "expanded_added_per_round_ratio_mean": float(np.mean(per_round)) if per_round else None,
        # The same in milliseconds: what a round costs, and the round 0 it is compared with.
        "expanded_added_per_round_ms_p50": (
            float(np.median(list(added.values())) * 1e3) if added else None
        ),
        "expanded_round0_ms_p50": (
            float(np.median([median["off"][qid] for qid in loud]) * 1e3) if loud else None
        ),
        "rounds": {str(r): sum(1 for v in rounds.values() if v == r) for r in (1, 2, 3)},
        "added_embeddings": sum(e.added_embeddings for arm in efforts.values() for e in arm),
        "recall": {
            arm: {cat: float(np.mean(v)) for cat, v in sorted(values.items())}
            for arm, values in recall.items()
        },
    }


async def concurrency_part(scopes: list[int], entries: int) -> list[dict[str, Any]]:
    CACHE.mkdir(exist_ok=True)
    db = CACHE / f"scopes-{max(scopes)}x{entries}.db"
    names = [f"s{i}" for i in range(max(scopes))]
    if not db.exists():
        texts = _corpus.texts(entries * len(names), seed=3)
        async with satchel.open_runtime(str(db), embedder=satchel.HashingEmbedder()) as rt:
            for i, scope in enumerate(names):
                chunk = texts[i * entries : (i + 1) * entries]
                for start in range(0, entries, 2000):
                    await rt.add_memories(
                        scope, [satchel.MemoryEntry(text=t) for t in chunk[start : start + 2000]]
                    )
                await rt.add_experiences(
                    scope, [satchel.Experience(t, "act", "ok", "learn") for t in chunk[:200]]
                )
                await rt.add_topic_memories(
                    scope, [satchel.TopicMemory(title=t[:30], text=t) for t in chunk[200:400]]
                )
    queries = _corpus.queries(_corpus.texts(entries, seed=3), 60, seed=21)
    return [await scope_point(db, names[:count], queries) for count in scopes]


async def scope_point(db: Path, names: list[str], queries: list[str]) -> dict[str, Any]:
    """p50 of one prepare over ``names``: searches at once, one after another (each still
    overlapping its own two channels), and fully serial (no overlap anywhere).

    The three arms are open at once and take turns per query, in rotating order, so a
    slow spell of this shared machine falls on all of them alike.
    """
    arms = ("concurrent", "sequential", "serial")
    requests = [
        satchel.PrepareContextRequest(scope_id=names[0], query=q, references=tuple(names[1:]))
        for q in queries
    ]
    times: dict[str, list[float]] = {arm: [] for arm in arms}
    async with contextlib.AsyncExitStack() as stack:
        runtimes = {}
        for arm in arms:
            kind = CountingRows if arm == "concurrent" else OneSearchAtATime
            store = await kind.open(str(db))
            runtimes[arm] = await stack.enter_async_context(
                satchel.open_runtime(store=store, embedder=satchel.HashingEmbedder())
            )
        # No overlap anywhere: a lone search's vector product stays on its own thread too.
        runtimes["serial"].store._vectors.parallel_rows = 1 << 62  # type: ignore[attr-defined]
        for req in requests[:10]:
            for rt in runtimes.values():
                await rt.prepare_context(req)
        counting = runtimes["concurrent"].store
        assert isinstance(counting, CountingRows)
        counting.rows = 0
        for index, req in enumerate(requests):
            turn = index % len(arms)
            for arm in arms[turn:] + arms[:turn]:
                times[arm].append((await timed(runtimes[arm], req))[0])
        rows_read = counting.rows / len(requests)
    p50 = {arm: float(np.median(values) * 1e3) for arm, values in times.items()}
    return {
        "scopes": len(names),
        "searches": 2 * len(names) + 1,
        **{f"{arm}_p50_ms": value for arm, value in p50.items()},
        "ratio": p50["concurrent"] / p50["sequential"],
        "ratio_serial": p50["concurrent"] / p50["serial"],
        "evidence_rows_per_prepare": rows_read,
    }


def report(gate: dict[str, Any], curve: list[dict[str, Any]]) -> str:
    lines = [] if not gate else gate_lines(gate)
    if not curve:
        return "\n".join(lines)
    lines += [
        "",
        "| scopes | searches | concurrent | sequential | serial | ratio | ratio to serial"
        " | evidence rows read |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    lines += [
        f"| {r['scopes']} | {r['searches']} | {r['concurrent_p50_ms']:.2f}"
        f" | {r['sequential_p50_ms']:.2f} | {r['serial_p50_ms']:.2f} | {r['ratio']:.2f}"
        f" | {r['ratio_serial']:.2f} | {r['evidence_rows_per_prepare']:.0f} |"
        for r in curve
    ]
    return "\n".join(lines)


def gate_lines(gate: dict[str, Any]) -> list[str]:
    quiet = gate["quiet_p50_ms"]
    quiet_ms = (
        f" ({quiet['on']:.3f} ms / {quiet['off']:.3f} ms)" if quiet["on"] and quiet["off"] else ""
    )
    lines = [
        f"- queries: {gate['queries']}; expanded: {gate['expanded_share']:.1%};"
        f" rounds: {gate['rounds']}",
        f"- not expanded: p50 gate on / gate off = {_ratio(gate['quiet_p50_ratio_on_off'])}"
        + quiet_ms,
        "- expanded: added latency per committed round / round-0 latency: p50"
        f" {_ratio(gate['expanded_added_per_round_ratio_p50'])},"
        f" mean {_ratio(gate['expanded_added_per_round_ratio_mean'])}" + _milliseconds(gate),
        f"- added embeddings: {gate['added_embeddings']}",
        "",
        "| category | recall gate off | recall gate on |",
        "|---|---:|---:|",
    ]
    recall = gate["recall"]
    lines += [f"| {c} | {recall['off'][c]:.3f} | {recall['on'][c]:.3f} |" for c in recall["off"]]
    return lines


def _milliseconds(gate: dict[str, Any]) -> str:
    added, round0 = gate.get("expanded_added_per_round_ms_p50"), gate.get("expanded_round0_ms_p50")
    if added is None or round0 is None:
        return ""
    return f" ({added:.3f} ms per round; round 0 {round0:.3f} ms)"


def _ratio(value: float | None) -> str:
    return "n/a (no such query)" if value is None else f"{value:.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--scopes", type=int, nargs="+", default=[1, 2, 4, 8, 16])
    parser.add_argument("--scope-entries", type=int, default=24000)
    parser.add_argument("--filler", type=int, default=2500, help="filler notes per scope")
    parser.add_argument(
        "--embedder",
        choices=("hashing", "static", "none"),
        default="hashing",
        help="none: full-text only (zero vectors)",
    )
    parser.add_argument("--skip-concurrency", action="store_true")
    parser.add_argument("--skip-gate", action="store_true")
    args = parser.parse_args()
    with threadpoolctl.threadpool_limits(limits=1, user_api="blas"):
        gate = (
            {} if args.skip_gate else anyio.run(gate_part, args.repeat, args.filler, args.embedder)
        )
        curve = (
            []
            if args.skip_concurrency
            else anyio.run(concurrency_part, args.scopes, args.scope_entries)
        )
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"orchestrator-{args.filler}-{args.embedder}.json").write_text(
        json.dumps({"gate": gate, "concurrency": curve}, indent=2) + "\n"
    )
    print(report(gate, curve))


if __name__ == "__main__":
    main()
