"""Conversation-aware recall, one channel at a time, on the conversational workload.

``python -m bench channels [--workload DIR] [--repeat 3]`` ingests the synthetic
conversations (``bench/_conversations.py``; any workload folder with threads and
``created_at`` works) once with the bundled static embedder, then evaluates arms that
add one channel at a time, each gate off and gate on, at 8000 bytes with the default
limits and with ``Limits.classic()``:

- ``base``: lexical and vector lists at equal weight (BM25 is always over the scope's
  own postings: scope-prefixed terms are how the store indexes);
- ``+half-vector``: the vector list at half weight;
- ``+time``: the time channel (entries recorded in the windows a query's dates name);
- ``+neighbours``: the best hits' thread neighbours fused in round 0 (the default);
- ``neighbours-gated``: policy v2 instead: neighbours only as expansion round 1.

Per arm: evidence recall overall and per category, and prepare p50 in ms (all arms
interleaved per query, on one store). Gate off is a policy with no expansion round, so
every arm fuses with its own weights. Questions are asked as if live, an hour after
their scope's newest turn (the runtime's ``clock``), since the ``relative`` questions
are about a conversation's last sessions. Writes ``bench/results/channels.json``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import attrs
import threadpoolctl

import satchel
from bench import _conversations, orchestrator
from bench import recall as recall_bench
from bench._citations import citation_key, delivered_citations
from satchel._workload import read_queries
from satchel.recall._fusion import FusionWeights

if TYPE_CHECKING:
    from collections.abc import Callable
    from contextlib import AsyncExitStack

CACHE = orchestrator.CACHE
RESULTS = orchestrator.RESULTS
BASE = FusionWeights(lexical=1.0, vector=1.0, time=0.0, neighbour_share=0.0)


@attrs.frozen
class Arm:
    """One configuration: fusion weights and policy."""

    name: str
    weights: FusionWeights
    conversational: bool = False


ARMS = (
    Arm("base", BASE),
    Arm("+half-vector", attrs.evolve(BASE, vector=0.5)),
    Arm("+time", attrs.evolve(BASE, vector=0.5, time=2.0)),
    Arm("+neighbours", FusionWeights()),
    Arm("neighbours-gated", FusionWeights(neighbour_share=0.0), conversational=True),
)


def policy(arm: Arm, gate: bool) -> satchel.RecallSufficiencyPolicy:
    base = (
        satchel.RecallSufficiencyPolicy.conversational()
        if arm.conversational
        else satchel.RecallSufficiencyPolicy()
    )
    return attrs.evolve(base, max_expansions=2 if gate else 0)


async def open_arms(
    stack: AsyncExitStack,
    db: Path,
    embedder: satchel.Embedder,
    limits: satchel.Limits,
    clock: Callable[[], float],
) -> dict[str, satchel.Runtime]:
    runtimes: dict[str, satchel.Runtime] = {}
    for arm in ARMS:
        for gate in (False, True):
            if arm.conversational and not gate:
                continue  # without the gate v2 is "+time"
            runtime = satchel.open_runtime(
                str(db),
                embedder=embedder,
                limits=limits,
                recall_policy=policy(arm, gate),
                fusion=arm.weights,
                clock=clock,
            )
            runtimes[
                f"{arm.name} gate {'on' if gate else 'off'}"
            ] = await stack.enter_async_context(runtime)
    return runtimes


async def evaluate(
    db: Path, workload: Path, owners: dict[Any, str], limits: satchel.Limits, repeat: int
) -> dict[str, Any]:
    """Every query through every arm, interleaved; recall and p50 per arm."""
    from contextlib import AsyncExitStack

    queries, _ = read_queries(workload / "queries.jsonl")
    newest = recall_bench.newest_turns(workload)
    clock = recall_bench.LiveClock()
    embedder = satchel.StaticEmbedder()
    recall: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    latency: dict[str, list[float]] = defaultdict(list)
    async with AsyncExitStack() as stack:
        arms = await open_arms(stack, db, embedder, limits, clock.read)
        for rep in range(repeat + 1):  # the first pass warms every arm up
            for query in queries:
                clock.now = newest.get(query.scopes[0], 0.0) + recall_bench.LIVE_AFTER
                for name, rt in arms.items():
                    request = orchestrator.request(query)
                    started = time.perf_counter()
                    context = await rt.prepare_context(request)
                    elapsed = time.perf_counter() - started
                    if rep == 0:
                        continue
                    latency[name].append(elapsed)
                    if rep == 1:
                        got = {
                            owners.get(citation_key(c))
                            for c in delivered_citations(context.content)
                        }
                        value = len(got & set(query.expected)) / len(query.expected)
                        recall[name][query.category].append(value)
                        recall[name]["all"].append(value)
    return {
        name: {
            "recall": {cat: statistics.fmean(v) for cat, v in sorted(recall[name].items())},
            "p50_ms": statistics.median(latency[name]) * 1e3,
        }
        for name in latency
    }


def report(results: dict[str, dict[str, Any]]) -> str:
    lines: list[str] = []
    for limits, arms in results.items():
        categories = sorted(next(iter(arms.values()))["recall"])
        lines += [
            f"\n### {limits}\n",
            "| arm | " + " | ".join(categories) + " | p50 ms |",
            "|---|" + "---:|" * (len(categories) + 1),
        ]
        for name, row in arms.items():
            cells = " | ".join(f"{row['recall'][c]:.3f}" for c in categories)
            lines.append(f"| {name} | {cells} | {row['p50_ms']:.2f} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench channels", description=__doc__)
    parser.add_argument("--workload", type=Path, default=CACHE / "conversations")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if not (args.workload / "entries.jsonl").exists():
        _conversations.generate(args.workload)
    db = CACHE / f"channels-{args.workload.name}.db"

    async def run() -> dict[str, Any]:
        owners = await orchestrator.ingest_workload(db, args.workload, satchel.StaticEmbedder())
        return {
            name: await evaluate(db, args.workload, owners, limits, args.repeat)
            for name, limits in (
                ("default limits", satchel.Limits()),
                ("classic", satchel.Limits.classic()),
            )
        }

    with threadpoolctl.threadpool_limits(limits=1, user_api="blas"):
        results = anyio.run(run)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "channels.json").write_text(json.dumps(results, indent=2) + "\n")
    print(report(results))


if __name__ == "__main__":
    main()
