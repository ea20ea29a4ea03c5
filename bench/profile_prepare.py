"""Where one prepare's time goes, on ``bench peer``'s conversations.

``python -m bench.profile_prepare`` asks satchel the questions of ``bench peer``'s
headline pass (the same workload and store, each question once, the scopes interleaved,
after the unmeasured warm-up questions; gate on, 8,000 bytes, the bundled static
embedder), first unprofiled, for the wall and process CPU time per prepare, then under
``cProfile``, and prints each prepare's time by part:

- *SQLite statements*: the time inside ``sqlite3``'s C methods (``execute``,
  ``fetchall``, ...);
- the self time of satchel's Python by package: the store's side of a read (decoding
  rows, the vector matrices), recall (fusion, admission, the gate: ``satchel.recall``),
  orchestration (the coordinator's rounds), fitting (``satchel.builder`` but its
  renderer), rendering (``satchel.builder._render``), query analysis (tokens, dates),
  embedding the question;
- a C function's time (numpy, ``re``, ``sorted``...) goes to the part of the Python
  function that called it; what is left (anyio, the event loop, the bench) is *other*.

cProfile's overhead falls on every Python call, so it inflates the Python parts against
SQLite's; with pyinstrument installed (``pip install pyinstrument``, not a dependency)
a sampling profile of the same pass follows, its self time by the same parts (a C
function's time, SQLite's too, is its caller's there). Prints the parts and the
functions with the most self time; changes nothing on disk but the caches ``bench
peer`` shares.

``--first-touch`` runs only this: on one fresh runtime, after the warm-up, every
question asked once and then again, with the process CPU time of each pass and the
time in each synchronous step a record's first read runs (``FIRST_TOUCH``: the
evidence and thread-neighbours statements, the rating, ranking what was read, the
fit's encoding, a scope's postings read to be held), per prepare and as the
difference: what a question asked for the first time pays for the records no earlier
question read.

``--after-writes`` runs only this: on a copy of the store, after the warm-up and every
question asked once, every question asked again right after a write of one turn to its
scope (the question as the user's message), then every question again with no write,
with the process CPU time of the prepares and the time in each step of
``AFTER_WRITE`` (``FIRST_TOUCH``'s, the rating's counts, each item rated anew, the
evidence rebuilt): what a write's new version of its scope makes the next prepare do.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import functools
import inspect
import pstats
import shutil
import tempfile
import time
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import anyio
import threadpoolctl

import satchel
from bench import _lifelike_conversations as lifelike
from bench import orchestrator, peer
from satchel._workload import read_queries
from satchel.builder import _build, _fitting, _selection
from satchel.embedders import _static
from satchel.orchestration import _packer, _prepare, _search
from satchel.stores import _postings as _held_postings
from satchel.stores import _term_counts
from satchel.stores.sqlite import _connections, _evidence_cache, _postings
from satchel.stores.sqlite import _search as _sqlite_search

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from satchel._workload import WorkloadQuery

#: (part, path fragment) in order: a function belongs to the first part whose fragment
#: its file's path holds (an attrs-generated method: its class's module).
PARTS: Final = (
    ("rendering", "satchel/builder/_render"),
    ("fitting", "satchel/builder/"),
    ("recall: fusion, admission, gate", "satchel/recall/"),
    ("orchestration: rounds, searches", "satchel/orchestration/"),
    ("store, Python side: rows, vectors", "satchel/stores/"),
    ("query analysis: terms, dates", "satchel/vocabulary/_analysis"),
    ("query analysis: terms, dates", "satchel/vocabulary/_dates"),
    ("embedding the question", "satchel/embedders/"),
    ("satchel, other: runtime, types", "satchel/"),
    ("event loop, anyio", "/asyncio/"),
    ("event loop, anyio", "/anyio/"),
    ("event loop, anyio", "/sniffio/"),
    ("event loop, anyio", "/selectors.py"),
    ("the bench", "/bench/"),
)
SQLITE: Final = "SQLite statements"
OTHER: Final = "other"


def own_part(path: str, name: str) -> str | None:
    """The part a function's self time belongs to; None for a function that works for
    its callers (a C function, numpy, the stemmer...)."""
    if path == "~":
        return SQLITE if "sqlite3." in name else None
    where = path.replace("\\", "/")
    if where.startswith("<attrs generated"):
        where = where.replace(".", "/")
    for part, fragment in PARTS:
        if fragment in where:
            return part
    return None


def parts(stats: pstats.Stats) -> dict[str, float]:
    """Seconds of self time by part. A function of no part (a C function, numpy, the
    stemmer) counts for its callers' parts, each caller by the self time spent in it
    from there, up the calls until a part is found; ``sqlite3``'s methods are SQLite."""
    table: dict[Any, Any] = stats.stats  # type: ignore[attr-defined]
    memo: dict[Any, dict[str, float]] = {}

    def shares(func: Any, visiting: frozenset[Any]) -> dict[str, float]:
        if func in memo:
            return memo[func]
        part = own_part(func[0], func[2])
        callers = table[func][4] if func in table else {}
        if part is not None or not callers or func in visiting:
            return {part or OTHER: 1.0}
        weights = {caller: edge[2] or edge[3] or 1e-9 for caller, edge in callers.items()}
        total = sum(weights.values())
        found: dict[str, float] = defaultdict(float)
        for caller, weight in weights.items():
            for name, share in shares(caller, visiting | {func}).items():
                found[name] += share * weight / total
        memo[func] = dict(found)
        return memo[func]

    seconds: dict[str, float] = defaultdict(float)
    for func, (_, _, self_time, _, _) in table.items():
        for name, share in shares(func, frozenset()).items():
            seconds[name] += self_time * share
    return dict(seconds)


#: (stage, module, attribute): the functions a prepare's stages run in, timed with
#: ``perf_counter`` around each call (a microsecond or so each, unlike a profiler's cost
#: on every call). Reads include decoding their rows; fitting includes its dedup.
STAGES: Final = (
    ("store reads (SQLite statements, rows, vectors)", _connections.Connections, "read_inline"),
    ("store reads (SQLite statements, rows, vectors)", _connections.Connections, "read"),
    ("admission and fusion", _search, "admit"),
    ("admission and fusion", _search, "fuse"),
    ("admission and fusion", _search, "with_neighbours"),
    ("fitting", _packer.Packer, "pack"),
    ("of which repeated texts set aside", _fitting, "distinct"),
    ("rendering", _build, "_prepared"),
    ("query analysis", _prepare, "analyse_query"),
    ("embedding the question", _prepare.Preparer, "_embed"),
)


#: (step, module or class, attribute): the synchronous steps a question asked for the
#: first time pays for what it reads for the first time (``--first-touch``), each timed
#: exactly (nothing awaited inside them). A step called inside another counts in both.
FIRST_TOUCH: Final = (
    ("the query's analysis", _prepare, "analyse_query"),
    ("embedding the query", _static.StaticEmbedder, "embed_sync"),
    ("evidence: the statement and its rows", _sqlite_search, "fetch"),
    ("evidence: rating (rarity)", _term_counts, "rarity"),
    ("thread neighbours: the statement", _sqlite_search, "thread_neighbours"),
    ("full text: the query's postings", _sqlite_search, "lexical_hits"),
    ("ranking what was read", _search, "_ranked_as_read"),
    ("  of which: a turn's kind", _search, "_tell"),
    ("  of which: whether it says when", _search, "says_when"),
    ("fit: encoding a new candidate", _fitting.FitMemo, "candidate"),
    ("fit: repeated texts' keys", _selection, "_key_of"),
    ("rendering the pack", _build, "_prepared"),
    ("once a scope: its postings read to be held", _postings, "read_postings"),
    ("once a scope: its vectors loaded", _sqlite_search, "load_matrix"),
)


#: The steps of :data:`FIRST_TOUCH` and those a write to its scope makes the next
#: prepare take again (``--after-writes``): every rating and its terms' counts are made
#: per write version of a scope, and the rated evidence kept at a version is rebuilt
#: from the store's evidence of each row.
AFTER_WRITE: Final = (
    *FIRST_TOUCH,
    ("rating: its terms' counts from held postings", _held_postings.ScopePostings, "frequencies"),
    ("rating: each item rated anew", _term_counts, "with_rarity"),
    ("evidence rebuilt from the store's rows", _evidence_cache.EvidenceCache, "split"),
)


@contextlib.contextmanager
def stage_timers(
    stages: Sequence[tuple[str, Any, str]] = STAGES, spent: dict[str, float] | None = None
) -> Iterator[dict[str, float]]:
    """Seconds spent in each of ``stages`` while open (patched in, restored after), and
    under ``"<stage>#"`` the calls; added to ``spent`` when given."""
    if spent is None:
        spent = defaultdict(float)
    saved = []
    for stage, owner, name in stages:
        original = getattr(owner, name)
        saved.append((owner, name, original))
        setattr(owner, name, _timed(stage, original, spent))
    try:
        yield spent
    finally:
        for owner, name, original in reversed(saved):
            setattr(owner, name, original)


def _timed(stage: str, function: Any, spent: dict[str, float]) -> Any:
    if inspect.iscoroutinefunction(function):

        @functools.wraps(function)
        async def timed_async(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return await function(*args, **kwargs)
            finally:
                spent[stage] = spent.get(stage, 0.0) + time.perf_counter() - started
                spent[f"{stage}#"] = spent.get(f"{stage}#", 0) + 1

        return timed_async

    @functools.wraps(function)
    def timed(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            spent[stage] = spent.get(stage, 0.0) + time.perf_counter() - started
            spent[f"{stage}#"] = spent.get(f"{stage}#", 0) + 1

    return timed


async def ask_all(
    rt: satchel.Runtime, queries: Sequence[WorkloadQuery], budget: int
) -> list[float]:
    times = []
    for query in queries:
        seconds, _ = await orchestrator.timed(rt, orchestrator.request(query, budget))
        times.append(seconds)
    return times


async def one_pass(
    db: Path,
    queries: Sequence[WorkloadQuery],
    budget: int,
    profiler: Any = None,
    cpu: list[float] | None = None,
) -> list[float]:
    """Every question once on a fresh runtime (its caches empty) after the warm-up
    questions, under ``profiler`` (``enable``/``disable``) when one is given; each
    prepare's wall time, and the pass's process CPU time (user + system) appended to
    ``cpu`` when given."""
    async with satchel.open_runtime(
        str(db), embedder=satchel.StaticEmbedder(), recall_policy=satchel.RecallSufficiencyPolicy()
    ) as rt:
        await ask_all(rt, peer.warm_up(queries), budget)
        if profiler is not None:
            profiler.enable()
        started = time.process_time()
        try:
            return await ask_all(rt, queries, budget)
        finally:
            if cpu is not None:
                cpu.append(time.process_time() - started)
            if profiler is not None:
                profiler.disable()


async def store_and_questions(workload: Path) -> tuple[Path, list[WorkloadQuery]]:
    """``bench peer``'s store of ``workload`` (written on first use) and its headline
    questions, the scopes interleaved."""
    queries = peer.interleaved(
        [q for q in read_queries(workload / "queries.jsonl")[0] if q.expected]
    )
    db = orchestrator.CACHE / f"peer-satchel-{workload.name}.db"
    await orchestrator.ingest_workload(db, workload, satchel.StaticEmbedder())
    return db, queries


async def run(workload: Path, budget: int, top: int) -> None:
    db, queries = await store_and_questions(workload)
    count = len(queries)
    cpu: list[float] = []
    times = await one_pass(db, queries, budget, cpu=cpu)
    with stage_timers() as timers:
        staged = await one_pass(db, queries, budget)
    spent = {stage: seconds for stage, seconds in timers.items() if not stage.endswith("#")}
    print(f"{count} prepares, each question once, scopes interleaved; p50 / mean ms: "
          f"{_ms(times, count)} plain (CPU {cpu[0] / count * 1e6:.0f} us per prepare),"
          f" {_ms(staged, count)} with the stage timers")  # fmt: skip
    rest = sum(staged) - sum(v for k, v in spent.items() if not k.startswith("of which"))
    print(table("stage timers (wall clock)", {**spent, "the rest": rest}, count, sum(staged)))
    profiler = cProfile.Profile(time.process_time)
    profiled = await one_pass(db, queries, budget, profiler)
    print(f"\nunder cProfile (CPU time): mean {sum(profiled) / count * 1e3:.2f} ms")
    stats = pstats.Stats(profiler)
    print(table("cProfile, self time by part", parts(stats), count))
    sampled = await sample(db, queries, budget)
    if sampled is not None:
        print(table("pyinstrument, self time by part (SQLite inside its callers)", sampled, count))
    print(f"\nfunctions with the most self time under cProfile (top {top}):")
    stats.sort_stats("tottime").print_stats(top)


async def first_touch(workload: Path, budget: int) -> None:
    """On one fresh runtime, after the warm-up questions: every question asked for the
    first time, then asked again; the process CPU time per prepare of each pass and the
    time in each of :data:`FIRST_TOUCH`'s steps, so the difference says what a question
    asked once pays for reading what no earlier question read."""
    db, queries = await store_and_questions(workload)
    passes: dict[str, tuple[float, dict[str, float]]] = {}
    async with satchel.open_runtime(
        str(db), embedder=satchel.StaticEmbedder(), recall_policy=satchel.RecallSufficiencyPolicy()
    ) as rt:
        await ask_all(rt, peer.warm_up(queries), budget)
        for name in ("once", "again"):
            with stage_timers(FIRST_TOUCH) as spent:
                started = time.process_time()
                await ask_all(rt, queries, budget)
                passes[name] = (time.process_time() - started, dict(spent))
    print(first_touch_table(passes, len(queries)))


async def after_writes(workload: Path, budget: int) -> None:
    """On a copy of the store, after the warm-up and every question asked once: every
    question asked again, each right after a write of one turn to its scope (the
    question as the user's message, as an agent records a turn before preparing for
    it), then every question again with no write; process CPU time per prepare (the
    writes not counted) and the time in each of :data:`AFTER_WRITE`'s steps."""
    db, queries = await store_and_questions(workload)
    passes: dict[str, tuple[float, dict[str, float]]] = {}
    when = datetime(2031, 1, 1, tzinfo=UTC)
    with tempfile.TemporaryDirectory(prefix="satchel-profile-") as directory:
        copy = Path(directory) / "store.db"
        shutil.copyfile(db, copy)
        policy = satchel.RecallSufficiencyPolicy()
        embedder = satchel.StaticEmbedder()
        async with satchel.open_runtime(str(copy), embedder=embedder, recall_policy=policy) as rt:
            await ask_all(rt, peer.warm_up(queries), budget)
            await ask_all(rt, queries, budget)
            for name in ("after a write", "no write"):
                spent: dict[str, float] = defaultdict(float)
                cpu = 0.0
                for number, query in enumerate(queries):
                    if name == "after a write":
                        turn = satchel.MemoryEntry(
                            text=f"User: {query.query}",
                            created_at=when + timedelta(minutes=number),
                            thread="profile-after-writes",
                        )
                        await rt.add_memories(query.scopes[0], [turn])
                    with stage_timers(AFTER_WRITE, spent):
                        started = time.process_time()
                        await ask_all(rt, [query], budget)
                        cpu += time.process_time() - started
                passes[name] = (cpu, dict(spent))
    title = f"{len(queries)} questions, each asked again after a write to its scope, then not"
    print(steps_table(passes, len(queries), AFTER_WRITE, title))


def first_touch_table(passes: dict[str, tuple[float, dict[str, float]]], count: int) -> str:
    """The Markdown table of :func:`first_touch`: microseconds per prepare, asked once,
    asked again and their difference, then the calls per prepare of each pass."""
    title = f"{count} questions on one fresh runtime, asked once then again"
    return steps_table(passes, count, FIRST_TOUCH, title)


def steps_table(
    passes: dict[str, tuple[float, dict[str, float]]],
    count: int,
    steps: Sequence[tuple[str, Any, str]],
    title: str,
) -> str:
    """Microseconds per prepare in each of ``steps`` in the first pass of ``passes``
    and in the second (named by their keys), their difference, then the calls per
    prepare of each pass."""
    (first, (once_cpu, once)), (second, (again_cpu, again)) = passes.items()
    lines = [
        f"\n{title} (us per prepare)\n",
        f"| step | {first} | {second} | difference | calls {first} / {second} |",
        "|---|---:|---:|---:|---:|",
    ]

    def row(label: str, first: float, second: float, calls: str) -> str:
        per = [value / count * 1e6 for value in (first, second, first - second)]
        return f"| {label} | {per[0]:.0f} | {per[1]:.0f} | {per[2]:.0f} | {calls} |"

    lines.append(row("process CPU time", once_cpu, again_cpu, ""))
    for step, _, _ in steps:
        calls = f"{once.get(step + '#', 0) / count:.1f} / {again.get(step + '#', 0) / count:.1f}"
        lines.append(row(step, once.get(step, 0.0), again.get(step, 0.0), calls))
    return "\n".join(lines)


def _ms(times: Sequence[float], count: int) -> str:
    return f"{sorted(times)[count // 2] * 1e3:.2f} / {sum(times) / count * 1e3:.2f}"


def table(title: str, seconds: dict[str, float], count: int, total: float = 0.0) -> str:
    """A Markdown table of ``seconds`` by part, per prepare and as shares of ``total``
    (by default their sum)."""
    total = total or sum(seconds.values())
    lines = [f"\n{title}\n", "| part | ms per prepare | share |", "|---|---:|---:|"]
    for part, spent in sorted(seconds.items(), key=lambda kv: -kv[1]):
        lines.append(f"| {part} | {spent / count * 1e3:.2f} | {spent / total:.0%} |")
    lines.append(f"| all | {total / count * 1e3:.2f} | 100% |")
    return "\n".join(lines)


async def sample(
    db: Path, queries: Sequence[WorkloadQuery], budget: int
) -> dict[str, float] | None:
    """Self time by part from pyinstrument over the same pass, if it is installed."""
    try:
        from pyinstrument import Profiler  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        print("\npyinstrument is not installed: no sampling profile")
        return None

    class Sampler:
        def __init__(self) -> None:
            self.profiler = Profiler(interval=0.0005, async_mode="disabled")

        def enable(self) -> None:
            self.profiler.start()

        def disable(self) -> None:
            self.profiler.stop()

    sampler = Sampler()
    await one_pass(db, queries, budget, sampler)
    seconds: dict[str, float] = defaultdict(float)
    session = sampler.profiler.last_session
    assert session is not None
    # A frame's self time is a "[self]" child without a file; a frame of no part (numpy,
    # the stemmer, a C function's caller) counts for the nearest caller that has one.
    stack = [(session.root_frame(), OTHER)]
    while stack:
        frame, inherited = stack.pop()
        if frame is None:
            continue
        part = own_part(frame.file_path or "~", frame.function or "") or inherited
        children = frame.children
        seconds[part] += frame.time - sum(c.time for c in children)
        stack.extend((child, part) for child in children)
    return dict(seconds)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.profile_prepare", description=__doc__)
    parser.add_argument("--conversations", type=int, default=10)
    parser.add_argument("--sessions", type=int, default=lifelike.SESSIONS)
    parser.add_argument("--max-bytes", type=int, default=8000)
    parser.add_argument("--top", type=int, default=25, help="functions to list")
    parser.add_argument(
        "--first-touch",
        action="store_true",
        help="only the split of a question asked once against the same asked again, by"
        " step (FIRST_TOUCH): what reading records for the first time costs",
    )
    parser.add_argument(
        "--after-writes",
        action="store_true",
        help="only a question asked again right after a write of one turn to its scope"
        " against the same with no write, by step (AFTER_WRITE): what the scope's new"
        " write version makes a prepare do again",
    )
    args = parser.parse_args()
    workload = peer.current_workload(args.conversations, args.sessions)
    with threadpoolctl.threadpool_limits(limits=1, user_api="blas"):
        if args.after_writes:
            anyio.run(after_writes, workload, args.max_bytes)
        elif args.first_touch:
            anyio.run(first_touch, workload, args.max_bytes)
        else:
            anyio.run(run, workload, args.max_bytes, args.top)


if __name__ == "__main__":
    main()
