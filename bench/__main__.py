"""``python -m bench COMMAND``: satchel's benchmarks behind one entry point.

Commands:
  evaluate WORKLOAD_DIR   ingest any workload folder (docs/workload.md) once and
                          evaluate gate off vs gate on on it: evidence recall overall and
                          per category, share of queries at recall 1.0, mean content_bytes,
                          latency p50/p95/p99, rounds, expansion share, added embeddings
  latency                 prepare latency against the bare search floor (bench/latency.py)
  orchestrator            the gate on the synthetic workload and the concurrency curve
  calibrate               an embedder's similarity distributions and suggested floors
  embedders               query-embedding latency and embedding throughput per embedder
  channels                conversation-aware recall one channel at a time (per-scope BM25,
                          half-weight vectors, time, neighbours) on synthetic conversations
  offtopic                abstention: general-knowledge questions no scope discusses, asked
                          of the hard conversations and the CLI's team sample, asyncio and
                          trio, gate off and on: share abstaining, mean bytes (bench/offtopic.py)
  recall                  evidence recall per category at 2000/4000/8000 bytes and classic
                          limits, for ablations of the recall channels (default, live,
                          neighbour share 0.5, no neighbours, no time), on the hard synthetic
                          conversations or any workload folder (bench/recall.py)
  locomo PATH             evidence recall on LoCoMo (real long conversations; PATH is the
                          release's locomo10.zip, its folder or locomo10.json) per
                          category at 2000/4000/8000 bytes and classic limits, gate off
                          and on, p50, and where missed evidence went (bench/locomo.py)
  scale                   prepare latency, cold first call and peak RSS of one scope of
                          10k, 100k and 1M entries, each in a fresh subprocess (bench/scale.py)
  client                  satchel.Client over satchel serve against a Runtime over the same
                          file, asyncio and trio: prepare, get, keyed add, SatchelStore
                          get and search, p50/p95 and the Client's p50 over the
                          Runtime's, packs compared byte for byte (bench/client.py)
  listing                 Runtime.list_records on one SQLite scope of 100k entries: a page
                          of 100 near the newest and 10/100/1,000 pages deep (p50/p95, the
                          deep page over the first), and a whole walk by cursors
                          (bench/listing.py)
  inspector               the inspector's pages (satchel serve's /ui/) on one SQLite scope of
                          100k entries: the server's time for the scopes page, a scope's
                          page 1 and 1,000 deep, filtered pages and a record (bench/inspector.py)
  chat-scale              many users' chat scopes in one seekdb engine grown to 1M entries,
                          resumable: ingest rate, prepare p50/p99 on a hot and on cold
                          scopes, scope listing, engine RSS and disk (bench/chat_scale.py)
  partitions              after chat-scale: its users' records copied into a table
                          partitioned by scope and one not; bulk copy rows/s, a scoped
                          full-text statement's p50 on each, ALTER ... PARTITION BY's
                          time (bench/partitions.py)
  stores                  SQLite vs OceanBase (embedded seekdb) on one scope of 10k and 100k
                          entries: ingest entries/s, prepare p50/p95 gate off and on, and
                          whether both deliver the same citations (bench/stores.py)
  seekdb-prepare          where one seekdb prepare goes on one scope of 10k entries: store
                          calls and statements per prepare, each statement's p50, the
                          engine's share of the prepare (bench/seekdb_prepare.py)
  service                 satchel serve under load over loopback HTTP, asyncio and trio: 200
                          clients for 30 s with concurrent writes against 10k entries;
                          errors, nothing lost, req/s, p50/p95/p99, and the service's
                          latency over the in-process call (bench/service.py)
  replicas                1, 2 and 3 satchel serve replicas over one seekdb engine on
                          loopback, shared sessions, a round-robin balancer: req/s,
                          p50/p99, CPU per component; the store's share of a prepare,
                          store calls per prepare, bytes per entry, HNSW memory per
                          entry, token checks (bench/replicas.py)
  peer                    satchel vs PowerContext 1.4.1 (its own virtual environment, created
                          on first use) on the same conversations and questions, gate on:
                          prepare p50/p95, their ratio, evidence recall (bench/peer.py)
  hostile                 satchel serve under hostile clients on loopback: slow bodies and
                          headers, refusals on a pooled client, malformed HTTP, storage
                          faults, and the MCP probes over stdio; tries, held and failed
                          per class, exit 1 if any failed (bench/hostile.py)
  crash                   kill -9 a satchel ingest into an embedded seekdb engine at random
                          points and resume each: kills, resumed with exactly the
                          workload's entries, failed (bench/crash.py)
  loop                    how long satchel holds the host's event loop: a 1 ms heartbeat's lag
                          p50/p99/max beside 1 and 4 concurrent prepares on scopes of 2k,
                          20k and 100k entries, and beside writes of up to 5 MB, asyncio
                          and trio (bench/loop.py)
  primitives              what a round's pieces cost alone, asyncio and trio: a task group,
                          a memory stream, the loop's turn (a lock), a cancel scope, a
                          checkpoint, a store read's commit check (bench/primitives.py)
  versions                CPU per prepare of two satchel installs (an earlier commit's and
                          this checkout's), their processes alternated: each question asked
                          once, then again, on any workload, the lifelike chats or LoCoMo;
                          the ratio and whether the packs are the same (bench/versions.py)
  postings                a full-text search by FTS5's statement and from held postings,
                          and reading and patching a scope's postings, per scope size
                          (bench/postings.py)
  prompt-cache            a host's prompt cache: each turn's pack at the head of the prompt
                          against only its new items appended to the turn, over the hard
                          conversations' 29-turn chats: the share of each prompt that is a
                          byte-stable prefix of the last, prompt bytes, evidence recall
                          (bench/prompt_cache.py)
  archive                 export + import of an archive against copy_store on 10k and 100k
                          entries: seconds of each, their ratio, the archive's size and each
                          step's peak memory under tracemalloc (bench/archive.py)
  imports                 what import satchel costs (cold, median of fresh interpreters) and
                          what a core install weighs, now and at an earlier commit (by
                          default the last before usearch left the core dependencies)
                          (bench/imports.py)
  plots                   PNG figures of the results in bench/results (needs the bench
                          extra: pip install -e ".[bench]")
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
import threadpoolctl

from bench import _plots, orchestrator

if TYPE_CHECKING:
    from collections.abc import Callable

RESULTS = Path(__file__).parent / "results"


def evaluate_main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench evaluate", description=__doc__)
    parser.add_argument("workload", type=Path, metavar="WORKLOAD_DIR")
    parser.add_argument(
        "--embedder", type=_embedder_choice, default="static", metavar="static|hashing|none|st:PATH"
    )
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--max-bytes", type=int, default=8000)
    parser.add_argument("--db", type=Path, help="store to ingest into (default: bench/.cache)")
    args = parser.parse_args(argv)
    name = args.workload.resolve().name
    embedder = orchestrator.make_embedder(args.embedder)
    label = _embedder_label(args.embedder, embedder)
    db = args.db or orchestrator.CACHE / f"evaluate-{name}-{label}.db"
    db.parent.mkdir(parents=True, exist_ok=True)

    async def run() -> dict[str, object]:
        owners = await orchestrator.ingest_workload(db, args.workload, embedder)
        return await orchestrator.evaluate(
            db, args.workload, embedder, owners, repeat=args.repeat, budget=args.max_bytes
        )

    with threadpoolctl.threadpool_limits(limits=1, user_api="blas"):
        result = anyio.run(run)
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / f"evaluate-{name}-{label}.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(orchestrator.report(result, []))
    print(
        f"\nmean content_bytes: {result['mean_content_bytes']}; latency ms: {result['latency_ms']}"
    )
    print(f"share of queries at recall 1.0: {result['full_recall_share']}; written to {out}")
    try:
        figures = _plots.gate_figures(result, out.stem, RESULTS)
    except ModuleNotFoundError:
        figures = []
        print(f"(no figures: {_plots.MISSING})")
    for figure in figures:
        print(f"![{figure.stem}]({figure})")


def _embedder_choice(text: str) -> str:
    if text in ("static", "hashing", "none") or (text.startswith("st:") and len(text) > 3):
        return text
    raise argparse.ArgumentTypeError(f"expected static, hashing, none or st:PATH, not {text!r}")


def _embedder_label(choice: str, embedder: object) -> str:
    """A file-name-safe label: ``st:PATH`` becomes ``st-FOLDER-DIGEST``, so a cached store
    is reused only for the same model weights."""
    if not choice.startswith("st:"):
        return choice
    identity = getattr(embedder, "identity", "")
    return "st-" + identity.removeprefix("sentence-transformers/").replace("/", "-")


#: Each command's module in ``bench`` and whether its ``main`` takes the arguments (else
#: it reads ``sys.argv``). A module is imported only when its command runs, so each
#: benchmark needs only its own extras (``client`` needs LangGraph, ``plots`` matplotlib).
COMMANDS: dict[str, tuple[str, bool]] = {
    "latency": ("latency", False),
    "orchestrator": ("orchestrator", False),
    "calibrate": ("calibrate", False),
    "embedders": ("embedders", False),
    "channels": ("channels", False),
    "offtopic": ("offtopic", True),
    "recall": ("recall", True),
    "locomo": ("locomo", True),
    "scale": ("scale", False),
    "client": ("client", False),
    "listing": ("listing", False),
    "inspector": ("inspector", False),
    "chat-scale": ("chat_scale", False),
    "partitions": ("partitions", False),
    "stores": ("stores", False),
    "seekdb-prepare": ("seekdb_prepare", False),
    "archive": ("archive", False),
    "imports": ("imports", False),
    "service": ("service", False),
    "replicas": ("replicas", False),
    "peer": ("peer", False),
    "hostile": ("hostile", False),
    "crash": ("crash", False),
    "loop": ("loop", False),
    "postings": ("postings", True),
    "primitives": ("primitives", True),
    "versions": ("versions", False),
    "prompt-cache": ("prompt_cache", True),
    "plots": ("_plots", False),
}


def _run_module_main(main: Callable[[], None], argv: list[str]) -> None:
    sys.argv = [sys.argv[0], *argv]
    main()


def main() -> None:
    name = sys.argv[1] if len(sys.argv) > 1 else None
    if name == "evaluate":
        evaluate_main(sys.argv[2:])
        return
    if name not in COMMANDS:
        print(__doc__)
        raise SystemExit(0 if name in (None, "-h", "--help") else 2)
    module, takes_arguments = COMMANDS[name]
    command = importlib.import_module(f"bench.{module}").main
    if takes_arguments:
        command(sys.argv[2:])
    else:
        _run_module_main(command, sys.argv[2:])


if __name__ == "__main__":
    main()
