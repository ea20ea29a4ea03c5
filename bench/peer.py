"""satchel against PowerContext 1.4.1 on the same conversations and questions, in one run.

``python -m bench peer`` writes conversations shaped like real chats
(``bench/_lifelike_conversations.py``; by default 10 scopes of 25 dated, threaded
sessions, ~600 turns of ~27 words each, 290 questions of ~10 words), prints their
measured shape, ingests every turn into both systems and asks both every question at
8,000 bytes with the recall-sufficiency gate on:

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
PowerContext's inside its driver.

The headline is what an agent sees: one pass over the questions, each asked once, in an
order that interleaves the scopes (each scope's questions shuffled, then one scope after
another in turn), after ``WARM_UP`` questions per scope that are not measured (so no
scope is read cold). The questions run in blocks, the two systems taking turns per
block, the first alternating, so a slow spell of the machine falls on both. Then
``--repeat`` more passes ask every question again: the *repeated* figure, over each
question's median, which warm repeats flatter. Last, the *lexical probe* (``--no-probe``
skips it) asks each question once more rewritten from ``PROBE_WORDS`` words of its
evidence: the workload's questions share few words with their evidence (they are the
hard conversations'), real ones mostly reuse some, and how much a system pays for that
distance is what the probe brackets.

Reported: the workload's measured shape (turn length, vocabulary, photos, question
length, the share of a question's terms its evidence holds), prepare p50/p95 for both,
once asked and repeated, satchel's process CPU time (user + system) per prepare, the
ratios PowerContext p50 / satchel p50, and evidence recall of the first pass (the share
of each question's evidence turns delivered; PowerContext's cited artifact ids map back
to turns by the id each create returned), overall and per category; the probe's p50s,
recall and ratio; the load average. JSON goes to
``bench/results/peer.json``. Both stores are cached in ``bench/.cache``: a second run
skips ingestion.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import os
import random
import re
import shutil
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TypeAlias

import anyio
import numpy as np
import threadpoolctl

import satchel
from bench import _lifelike_conversations as lifelike
from bench import orchestrator
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
from satchel._workload import WorkloadQuery, read_queries

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Mapping, Sequence

ARMS: Final = ("satchel", "powercontext")
#: Asked of every scope by both arms before the measured pass, and never measured.
WARM_UP: Final = ("How have things been lately?", "Any plans coming up?")
#: Words of its evidence a question of the lexical probe takes.
PROBE_WORDS: Final = 8


@dataclass(frozen=True)
class Answer:
    """One prepare: its time, the workload ids it cited in order, its size, and (satchel,
    which runs in this process) the process CPU time it took."""

    seconds: float
    cited: list[str]
    content_bytes: int
    cpu_seconds: float | None = None


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
    #: Process CPU time (user + system) per prepare, for the arm that runs in this process.
    cpu: dict[str, list[float]] = field(default_factory=lambda: {arm: [] for arm in ARMS})


async def ask_satchel(
    rt: satchel.Runtime, owners: Mapping[Any, str], query: WorkloadQuery, budget: int
) -> Answer:
    cpu = time.process_time()
    seconds, context = await orchestrator.timed(rt, orchestrator.request(query, budget))
    cpu = time.process_time() - cpu
    cited = [owners.get(citation_key(c), "?") for c in delivered_citations(context.content)]
    return Answer(seconds, cited, context.content_bytes, cpu)


async def ask_peer(peer: Peer, ids: Mapping[str, Any], query: WorkloadQuery, budget: int) -> Answer:
    scope_id = ids["scopes"][query.scopes[0]]
    got = await peer.call("prepare", scope_id=scope_id, query=query.query, max_bytes=budget)
    cited = [ids["artifacts"].get(a, "?") for a in got["artifact_ids"]]
    return Answer(got["seconds"], cited, got["content_bytes"])


def current_workload(conversations: int, sessions: int) -> Path:
    """The lifelike conversations the generator writes today, in a cache folder named
    by their content (``lifelike-conversations-10x25-<digest>``): a generator that
    changed gets a new folder, and new stores, rather than reusing stale ones."""
    with tempfile.TemporaryDirectory() as scratch:
        fresh = Path(scratch)
        lifelike.generate(fresh, conversations=conversations, sessions=sessions)
        digest = hashlib.sha256()
        for part in ("entries.jsonl", "queries.jsonl"):
            digest.update((fresh / part).read_bytes())
        name = f"lifelike-conversations-{conversations}x{sessions}-{digest.hexdigest()[:10]}"
        workload = orchestrator.CACHE / name
        if not (workload / "queries.jsonl").exists():
            workload.mkdir(parents=True, exist_ok=True)
            for part in ("entries.jsonl", "queries.jsonl"):
                shutil.copyfile(fresh / part, workload / part)
    return workload


def interleaved(queries: Sequence[WorkloadQuery], seed: int = 7) -> list[WorkloadQuery]:
    """The questions in the order an agent might ask them: each scope's shuffled, then
    one from each scope in turn."""
    rng = random.Random(seed)
    by_scope: dict[str, list[WorkloadQuery]] = defaultdict(list)
    for query in queries:
        by_scope[query.scopes[0]].append(query)
    for asked in by_scope.values():
        rng.shuffle(asked)
    rounds = itertools.zip_longest(*by_scope.values())
    return [query for turn in rounds for query in turn if query is not None]


def warm_up(queries: Sequence[WorkloadQuery]) -> list[WorkloadQuery]:
    """``WARM_UP``'s questions for every scope the questions ask."""
    scopes = dict.fromkeys(q.scopes[0] for q in queries)
    return [
        WorkloadQuery(f"{scope}/warm-up/{n}", (scope,), text, (), "warm-up")
        for scope in scopes
        for n, text in enumerate(WARM_UP)
    ]


def lexical_probe(queries: Sequence[WorkloadQuery], workload: Path) -> list[WorkloadQuery]:
    """Each question rewritten from its first evidence turn: "What did {speaker} say
    about {PROBE_WORDS words of the turn's first 14, in order}?". Not a question anyone
    asks: a bracket for what the workload's distance between questions and evidence
    costs each system (real questions mostly reuse some of their evidence's words)."""
    texts = {row["id"]: row["text"] for row in lifelike.read_rows(workload / "entries.jsonl")}
    rng = random.Random(3)
    probe = []
    for query in queries:
        speaker, said = texts[query.expected[0]].split(": ", 1)
        words = re.findall(r"[A-Za-z']+", said)[:14]
        kept = sorted(rng.sample(range(len(words)), min(PROBE_WORDS, len(words))))
        text = f"What did {speaker} say about {' '.join(words[k] for k in kept)}?"
        probe.append(reworded(query, text))
    return probe


def reworded(query: WorkloadQuery, text: str) -> WorkloadQuery:
    return WorkloadQuery(f"{query.id}/probe", query.scopes, text, query.expected, query.category)


async def measure(
    ask: Mapping[str, Ask],
    queries: Sequence[WorkloadQuery],
    warm: Sequence[WorkloadQuery],
    *,
    repeat: int,
    block: int,
) -> tuple[Samples, Samples]:
    """The ``warm`` questions on both arms, unmeasured; then every question once (the
    first samples), then ``repeat`` more times (the repeated ones), in blocks of
    ``block`` questions; the arm that goes first alternates from block to block."""
    for arm in ARMS:
        for query in warm:
            await ask[arm](query)
    first, repeated = Samples(), Samples()
    for rep in range(repeat + 1):
        samples = first if rep == 0 else repeated
        for number, start in enumerate(range(0, len(queries), block)):
            order = ARMS if (rep + number) % 2 == 0 else ARMS[::-1]
            for arm in order:
                for query in queries[start : start + block]:
                    answer = await ask[arm](query)
                    samples.seconds[arm][query.id].append(answer.seconds)
                    samples.delivered[arm][query.id] = answer.cited
                    samples.sizes[arm].append(answer.content_bytes)
                    if answer.cpu_seconds is not None:
                        samples.cpu[arm].append(answer.cpu_seconds)
    return first, repeated


def summarise(
    queries: Sequence[WorkloadQuery], first: Samples, repeated: Samples
) -> dict[str, Any]:
    arms: dict[str, Any] = {}
    for arm in ARMS:
        once = [v[0] * 1e3 for v in first.seconds[arm].values()]
        medians = [float(np.median(v)) * 1e3 for v in repeated.seconds[arm].values()]
        recall: dict[str, list[float]] = defaultdict(list)
        for query in queries:
            got = set(first.delivered[arm][query.id]) & set(query.expected)
            for key in ("all", query.category):
                recall[key].append(len(got) / len(query.expected))
        changed = sum(
            repeated.delivered[arm].get(q.id, first.delivered[arm][q.id])
            != first.delivered[arm][q.id]
            for q in queries
        )
        arms[arm] = {
            "p50_ms": float(np.percentile(once, 50)),
            "p95_ms": float(np.percentile(once, 95)),
            # Process CPU per prepare (None for the peer, which runs in its own process).
            "cpu_us": float(np.mean(first.cpu[arm])) * 1e6 if first.cpu[arm] else None,
            "repeated_p50_ms": float(np.percentile(medians, 50)) if medians else None,
            "repeated_p95_ms": float(np.percentile(medians, 95)) if medians else None,
            "recall": {key: float(np.mean(v)) for key, v in sorted(recall.items())},
            "full_recall_share": float(np.mean([v == 1.0 for v in recall["all"]])),
            "mean_content_bytes": float(np.mean(first.sizes[arm])),
            "mean_items": float(np.mean([len(v) for v in first.delivered[arm].values()])),
            "repeats_delivering_otherwise": changed,
        }
    satchel_row, peer_row = arms["satchel"], arms["powercontext"]
    repeated_ratio = (
        peer_row["repeated_p50_ms"] / satchel_row["repeated_p50_ms"]
        if satchel_row["repeated_p50_ms"]
        else None
    )
    return {
        "arms": arms,
        "ratio_p50": peer_row["p50_ms"] / satchel_row["p50_ms"],
        "repeated_ratio_p50": repeated_ratio,
    }


async def run(args: argparse.Namespace, python: Path, workload: Path) -> dict[str, Any]:
    queries = interleaved([q for q in read_queries(workload / "queries.jsonl")[0] if q.expected])
    warm = warm_up(queries)
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
        probe = lexical_probe(queries, workload) if args.probe else []
        texts = list(dict.fromkeys(q.query for q in (*queries, *warm, *probe)))
        vectors = await embedder.embed(texts)
        pairs = zip(texts, vectors, strict=True)
        await peer.call("vectors", items=[[text, v.tolist()] for text, v in pairs])
        ask: dict[str, Ask] = {
            "satchel": lambda q: ask_satchel(rt, owners, q, args.max_bytes),
            "powercontext": lambda q: ask_peer(peer, ids, q, args.max_bytes),
        }
        first, repeated = await measure(ask, queries, warm, repeat=args.repeat, block=args.block)
        probed, _ = await measure(ask, probe, (), repeat=0, block=args.block)
    if peer.embedding_misses:  # a zero vector would handicap the peer: no result
        raise PeerError(f"the driver embedded {peer.embedding_misses} texts without a vector")
    counts = {"turns": len(owners), "peer_turns": len(ids["artifacts"]), "questions": len(queries)}
    result = {**summarise(queries, first, repeated), "workload": {"dir": workload.name, **counts}}
    if probe:
        result["probe"] = summarise(probe, probed, Samples())
        result["probe"]["terms_in_evidence"] = probe_overlap(probe, workload)
    return result


def probe_overlap(probe: Sequence[WorkloadQuery], workload: Path) -> float:
    """The share of a probe question's terms its evidence holds, mean over questions."""
    rows = lifelike.read_rows(workload / "entries.jsonl")
    texts = {row["id"]: row["text"] for row in rows}
    names: dict[str, set[str]] = defaultdict(set)
    for row in rows:
        names[row["scope"]].add(row["text"].split(":", 1)[0])
    return float(
        np.mean(
            [
                lifelike.overlap(q.query, [texts[e] for e in q.expected], names[q.scopes[0]])
                for q in probe
            ]
        )
    )


def report(result: dict[str, Any]) -> str:
    satchel_row, peer_row = (result["arms"][arm] for arm in ARMS)
    categories = list(satchel_row["recall"])
    repeat = result["config"]["repeat"]
    load = result["load_average"]
    lines = [
        f"workload: {lifelike.describe(result['workload']['shape'])}",
        f"load average (1 min) at the start {load['start']:.1f}, at the end {load['end']:.1f}\n",
        f"| | asked once: p50 ms | p95 ms | CPU us per prepare | repeated ({repeat} more,"
        " median): p50 ms | p95 ms | evidence recall | at recall 1.0 | mean bytes | mean items |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, row in (("satchel", satchel_row), (f"PowerContext {VERSION}", peer_row)):
        lines.append(
            f"| {name} | {row['p50_ms']:.2f} | {row['p95_ms']:.2f} | {_us(row.get('cpu_us'))}"
            f" | {_ms(row['repeated_p50_ms'])}"
            f" | {_ms(row['repeated_p95_ms'])} | {row['recall']['all']:.3f}"
            f" | {row['full_recall_share']:.1%} | {row['mean_content_bytes']:.0f}"
            f" | {row['mean_items']:.1f} |"
        )
    repeated = result["repeated_ratio_p50"]
    lines += [
        f"\nratio PowerContext p50 / satchel p50, each question asked once: "
        f"**{result['ratio_p50']:.1f}x**"
        + (f" (repeated questions: {repeated:.1f}x)" if repeated else "")
        + "\n",
        *_probe_lines(result.get("probe")),
        "| recall | " + " | ".join(categories) + " |",
        "|---|" + "---:|" * len(categories),
        *(
            f"| {name} | " + " | ".join(f"{row['recall'][c]:.3f}" for c in categories) + " |"
            for name, row in (("satchel", satchel_row), ("PowerContext", peer_row))
        ),
    ]
    return "\n".join(lines)


def _probe_lines(probe: dict[str, Any] | None) -> list[str]:
    if probe is None:
        return []
    satchel_row, peer_row = (probe["arms"][arm] for arm in ARMS)
    return [
        f"lexical probe (each question rewritten from {PROBE_WORDS} words of its evidence, "
        f"{probe['terms_in_evidence']:.0%} of its terms in it; asked once): satchel p50 "
        f"{satchel_row['p50_ms']:.2f} ms, recall {satchel_row['recall']['all']:.3f}; "
        f"PowerContext p50 {peer_row['p50_ms']:.2f} ms, recall {peer_row['recall']['all']:.3f}; "
        f"ratio **{probe['ratio_p50']:.1f}x**\n"
    ]


def _us(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}"


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench peer", description=__doc__)
    parser.add_argument("--python", type=Path, default=Path("/usr/bin/python3"))
    parser.add_argument("--conversations", type=int, default=10)
    parser.add_argument("--sessions", type=int, default=lifelike.SESSIONS, help="per conversation")
    parser.add_argument(
        "--repeat", type=int, default=3, help="passes after the first, for the repeated figure"
    )
    parser.add_argument(
        "--block", type=int, default=25, help="questions per block; the arms alternate per block"
    )
    parser.add_argument("--max-bytes", type=int, default=8000)
    parser.add_argument(
        "--probe",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="also ask the lexical probe: each question rewritten from its evidence's words",
    )
    args = parser.parse_args()
    try:
        python = peer_python(args.python)
    except PeerError as exc:
        raise SystemExit(f"bench peer: {exc}") from None
    workload = current_workload(args.conversations, args.sessions)
    shape = lifelike.shape(workload)
    started, load = time.perf_counter(), os.getloadavg()[0]
    try:
        with threadpoolctl.threadpool_limits(limits=1, user_api="blas"):
            result = anyio.run(run, args, python, workload)
    except PeerError as exc:
        raise SystemExit(f"bench peer: {exc}") from None
    result["workload"]["shape"] = shape
    result["load_average"] = {"start": load, "end": os.getloadavg()[0]}
    result["config"] = {
        "conversations": args.conversations,
        "sessions": args.sessions,
        "max_bytes": args.max_bytes,
        "repeat": args.repeat,
        "block": args.block,
        "order": "each scope's questions shuffled, scopes interleaved; each asked once, "
        f"then {args.repeat} more passes, then the lexical probe once"
        + ("" if args.probe else " (skipped)"),
        "gate": "on in both",
        "peer": f"powercontext {VERSION} on {args.python}",
    }
    result["seconds"] = time.perf_counter() - started
    orchestrator.RESULTS.mkdir(exist_ok=True)
    (orchestrator.RESULTS / "peer.json").write_text(json.dumps(result, indent=2) + "\n")
    print(report(result))


if __name__ == "__main__":
    main()
