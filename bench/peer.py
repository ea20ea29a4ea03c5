"""satchel against PowerContext 1.4.1 on the same conversations and questions, in one run.

``python -m bench peer`` writes the synthetic conversations (``bench/_conversations.py``;
by default 10 scopes of 31 dated, threaded sessions, ~590 turns each, 300 questions),
ingests every turn into both systems and asks both every question at 8,000 bytes with
the recall-sufficiency gate on:

- satchel in this process: ``satchel.open_runtime(db, recall_policy=RecallSufficiencyPolicy())``
  with the bundled static embedder, turns ingested with their dates and threads;
- PowerContext in its own virtual environment (``bench/.cache/peers/``, created on first
  use from ``/usr/bin/python3 -m venv`` and ``pip install powercontext[builtin]==1.4.1``:
  it loads sqlite-vec, so it needs a Python whose ``sqlite3`` can load extensions, such
  as Debian's), driven through its public API by ``bench/peers/powercontext_driver.py``
  over JSON lines: one atomic memory per turn (text only: its memories carry no date or
  thread), ``context.for_scope(id).prepare(PrepareContextRequest(query, max_bytes))``.

Both rank with the same vectors: the driver's embedding model serves the vectors the
static embedder gives here for each turn's text (the ones satchel stores) and each
question, so no model runs inside PowerContext's timed call, while satchel's includes
embedding its question (~0.1 ms). Both gates run as they ship: PowerContext's records
its recall effort in its database on every prepare; satchel's computes none without a
sink. Each prepare is timed with ``perf_counter`` around the one call, satchel's here and
PowerContext's inside its driver. The questions run in blocks, the two systems taking
turns per block, the first alternating, so a slow spell of the machine falls on both; a
warm-up pass goes first.

Reported: prepare p50/p95 (over each question's median) for both, the ratio
PowerContext p50 / satchel p50, and evidence recall (the share of each question's evidence
turns delivered; PowerContext's cited artifact ids map back to turns by the id each
create returned), overall and per category. JSON goes to ``bench/results/peer.json``.
Both stores are cached in ``bench/.cache``: a second run skips ingestion.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TypeAlias

import anyio
import numpy as np
import threadpoolctl

import satchel
from bench import _conversations, orchestrator
from bench._citations import citation_key, delivered_citations
from bench._powercontext import (
    VERSION,
    Peer,
    PeerError,
    load_or_ingest,
    open_peer,
    peer_python,
    peer_store,
)
from satchel._workload import read_queries

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Mapping, Sequence

    from satchel._workload import WorkloadQuery

ARMS: Final = ("satchel", "powercontext")


@dataclass(frozen=True)
class Answer:
    """One prepare: its time, the workload ids it cited in order, its size."""

    seconds: float
    cited: list[str]
    content_bytes: int


if TYPE_CHECKING:
    #: How the measurement asks one arm one question.
    Ask: TypeAlias = Callable[[WorkloadQuery], Awaitable[Answer]]


@dataclass
class Samples:
    """What each arm delivered and how long each prepare took, per question."""

    seconds: dict[str, dict[str, list[float]]] = field(
        default_factory=lambda: {arm: defaultdict(list) for arm in ARMS}
    )
    delivered: dict[str, dict[str, list[str]]] = field(
        default_factory=lambda: {arm: {} for arm in ARMS}
    )
    sizes: dict[str, list[int]] = field(default_factory=lambda: {arm: [] for arm in ARMS})


async def ask_satchel(
    rt: satchel.Runtime, owners: Mapping[Any, str], query: WorkloadQuery, budget: int
) -> Answer:
    seconds, context = await orchestrator.timed(rt, orchestrator.request(query, budget))
    cited = [owners.get(citation_key(c), "?") for c in delivered_citations(context.content)]
    return Answer(seconds, cited, context.content_bytes)


async def ask_peer(peer: Peer, ids: Mapping[str, Any], query: WorkloadQuery, budget: int) -> Answer:
    scope_id = ids["scopes"][query.scopes[0]]
    got = await peer.call("prepare", scope_id=scope_id, query=query.query, max_bytes=budget)
    cited = [ids["artifacts"].get(a, "?") for a in got["artifact_ids"]]
    return Answer(got["seconds"], cited, got["content_bytes"])


async def measure(
    ask: Mapping[str, Ask], queries: Sequence[WorkloadQuery], *, repeat: int, block: int
) -> Samples:
    """Every question on both arms, ``repeat`` times after a warm-up pass, in blocks of
    ``block`` questions; the arm that goes first alternates from block to block."""
    samples = Samples()
    for rep in range(repeat + 1):
        for number, start in enumerate(range(0, len(queries), block)):
            order = ARMS if (rep + number) % 2 == 0 else ARMS[::-1]
            for arm in order:
                for query in queries[start : start + block]:
                    answer = await ask[arm](query)
                    if rep > 0:
                        samples.seconds[arm][query.id].append(answer.seconds)
                        samples.delivered[arm][query.id] = answer.cited
                        samples.sizes[arm].append(answer.content_bytes)
    return samples


def summarise(queries: Sequence[WorkloadQuery], samples: Samples) -> dict[str, Any]:
    arms: dict[str, Any] = {}
    for arm in ARMS:
        medians = [float(np.median(v)) * 1e3 for v in samples.seconds[arm].values()]
        recall: dict[str, list[float]] = defaultdict(list)
        for query in queries:
            got = set(samples.delivered[arm][query.id]) & set(query.expected)
            for key in ("all", query.category):
                recall[key].append(len(got) / len(query.expected))
        arms[arm] = {
            "p50_ms": float(np.percentile(medians, 50)),
            "p95_ms": float(np.percentile(medians, 95)),
            "recall": {key: float(np.mean(v)) for key, v in sorted(recall.items())},
            "full_recall_share": float(np.mean([v == 1.0 for v in recall["all"]])),
            "mean_content_bytes": float(np.mean(samples.sizes[arm])),
            "mean_items": float(np.mean([len(v) for v in samples.delivered[arm].values()])),
        }
    ratio = arms["powercontext"]["p50_ms"] / arms["satchel"]["p50_ms"]
    return {"arms": arms, "ratio_p50": ratio}


async def run(args: argparse.Namespace, python: Path, workload: Path) -> dict[str, Any]:
    queries = [q for q in read_queries(workload / "queries.jsonl")[0] if q.expected]
    embedder = satchel.StaticEmbedder()
    satchel_db = orchestrator.CACHE / f"peer-satchel-{workload.name}.db"
    owners = await orchestrator.ingest_workload(satchel_db, workload, embedder)
    peer_db, ids_path = peer_store(workload.name)
    async with (
        open_peer(python, peer_db, embedder.dimension) as peer,
        satchel.open_runtime(
            str(satchel_db), embedder=embedder, recall_policy=satchel.RecallSufficiencyPolicy()
        ) as rt,
    ):
        ids = await load_or_ingest(peer, ids_path, workload, embedder)
        vectors = await embedder.embed([q.query for q in queries])
        pairs = zip(queries, vectors, strict=True)
        await peer.call("vectors", items=[[q.query, v.tolist()] for q, v in pairs])
        ask: dict[str, Ask] = {
            "satchel": lambda q: ask_satchel(rt, owners, q, args.max_bytes),
            "powercontext": lambda q: ask_peer(peer, ids, q, args.max_bytes),
        }
        samples = await measure(ask, queries, repeat=args.repeat, block=args.block)
    if peer.embedding_misses:  # a zero vector would handicap the peer: no result
        raise PeerError(f"the driver embedded {peer.embedding_misses} texts without a vector")
    counts = {"turns": len(owners), "peer_turns": len(ids["artifacts"]), "questions": len(queries)}
    return {**summarise(queries, samples), "workload": {"dir": workload.name, **counts}}


def report(result: dict[str, Any]) -> str:
    satchel_row, peer_row = (result["arms"][arm] for arm in ARMS)
    categories = list(satchel_row["recall"])
    lines = [
        "| | prepare p50 ms | p95 ms | evidence recall | at recall 1.0 | mean bytes | mean items |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, row in (("satchel", satchel_row), (f"PowerContext {VERSION}", peer_row)):
        lines.append(
            f"| {name} | {row['p50_ms']:.2f} | {row['p95_ms']:.2f} | {row['recall']['all']:.3f}"
            f" | {row['full_recall_share']:.1%} | {row['mean_content_bytes']:.0f}"
            f" | {row['mean_items']:.1f} |"
        )
    lines += [
        f"\nratio PowerContext p50 / satchel p50: **{result['ratio_p50']:.1f}x**\n",
        "| recall | " + " | ".join(categories) + " |",
        "|---|" + "---:|" * len(categories),
        *(
            f"| {name} | " + " | ".join(f"{row['recall'][c]:.3f}" for c in categories) + " |"
            for name, row in (("satchel", satchel_row), ("PowerContext", peer_row))
        ),
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench peer", description=__doc__)
    parser.add_argument("--python", type=Path, default=Path("/usr/bin/python3"))
    parser.add_argument("--conversations", type=int, default=10)
    parser.add_argument("--sessions", type=int, default=31, help="per conversation")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--block", type=int, default=25, help="questions per block; the arms alternate per block"
    )
    parser.add_argument("--max-bytes", type=int, default=8000)
    args = parser.parse_args()
    try:
        python = peer_python(args.python)
    except PeerError as exc:
        raise SystemExit(f"bench peer: {exc}") from None
    workload = orchestrator.CACHE / f"conversations-{args.conversations}x{args.sessions}"
    if not (workload / "queries.jsonl").exists():
        _conversations.generate(workload, conversations=args.conversations, sessions=args.sessions)
    started = time.perf_counter()
    try:
        with threadpoolctl.threadpool_limits(limits=1, user_api="blas"):
            result = anyio.run(run, args, python, workload)
    except PeerError as exc:
        raise SystemExit(f"bench peer: {exc}") from None
    result["config"] = {
        "conversations": args.conversations,
        "sessions": args.sessions,
        "max_bytes": args.max_bytes,
        "repeat": args.repeat,
        "block": args.block,
        "gate": "on in both",
        "peer": f"powercontext {VERSION} on {args.python}",
    }
    result["seconds"] = time.perf_counter() - started
    orchestrator.RESULTS.mkdir(exist_ok=True)
    (orchestrator.RESULTS / "peer.json").write_text(json.dumps(result, indent=2) + "\n")
    print(report(result))


if __name__ == "__main__":
    main()
