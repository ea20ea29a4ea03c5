"""Evidence recall by category and by budget, for ablations of satchel's recall channels.

``python -m bench recall`` ingests a workload (by default the hard synthetic
conversations of ``bench/_hard_conversations.py``, generated into
``bench/.cache/hard-conversations`` when missing; delete that folder to regenerate)
once into a fresh SQLite file with the bundled static embedder, then asks every
question through every arm with the recall-sufficiency gate on (the runtime's default
``RecallSufficiencyPolicy()``, as ``python -m bench peer`` runs it):

- at each budget of ``--budgets`` (default 2000, 4000 and 8000 bytes) with the default
  ``satchel.Limits()``, and
- at 8000 bytes with ``satchel.Limits.classic()`` (the row ``classic``).

An arm is an ablation through public knobs only: round 0's ``satchel.FusionWeights``
passed to ``satchel.open_runtime(..., fusion=...)``, and the runtime's ``clock``.
``default`` is the shipped weights on the real clock (a stored conversation is not live,
so a question's relative dates select nothing), ``live`` asks each question an hour
after its scope's newest turn (a live chat: "last week" is the week before that),
``neighbour-share-0.5`` gives a thread neighbour half its hit's score (the default is 0.8),
``no-neighbours`` turns the neighbour channel off, ``no-time`` the time channel,
``no-named-speaker`` the lift of the turns said by a person the question names. Add an
arm by adding a line to ``ARMS``.

Per arm and budget: evidence recall (the share of a question's expected entries the
pack cites) overall and per category, and prepare p50 in ms (the median over questions
of each question's median time). Every runtime shares one store object (the same loaded
matrices and caches), and each question goes through all of them in a rotating order,
so a slow spell of the machine falls on every arm alike; a warm-up pass goes first.
Writes JSON (``--out``, default ``bench/results/recall.json``) and prints a Markdown
table: a row per arm and budget, a column per category.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import tempfile
import time
from collections import defaultdict
from contextlib import AsyncExitStack
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TypeVar

import anyio
import attrs
import threadpoolctl

import satchel
from bench import _hard_conversations, orchestrator
from bench._citations import citation_key, delivered_citations
from satchel._workload import read_queries
from satchel.stores import SqliteStore

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping, Sequence

    from satchel._workload import WorkloadQuery

T = TypeVar("T")
CACHE: Final = orchestrator.CACHE
RESULTS: Final = orchestrator.RESULTS
BUDGETS: Final = (2000, 4000, 8000)
CLASSIC: Final = "classic"
CLASSIC_BYTES: Final = 8000


@attrs.frozen
class Arm:
    """One ablation: a name, round 0's fusion weights, and whether each question is
    asked as if live (an hour after its scope's newest turn) or on the real clock."""

    name: str
    fusion: satchel.FusionWeights
    live: bool = False


ARMS: Final = (
    Arm("default", satchel.FusionWeights()),
    Arm("live", satchel.FusionWeights(), live=True),
    Arm("neighbour-share-0.5", satchel.FusionWeights(neighbour_share=0.5)),
    Arm("no-neighbours", satchel.FusionWeights(neighbour_share=0.0)),
    Arm("no-time", satchel.FusionWeights(time=0.0)),
    Arm("no-named-speaker", satchel.FusionWeights(named_speaker=0.0)),
)


@attrs.frozen
class Setting:
    """Where one arm is asked: its runtime (default or classic limits) and budget."""

    arm: str
    row: str
    classic: bool
    max_bytes: int

    @property
    def key(self) -> tuple[str, str]:
        return self.arm, self.row


def settings(arms: Sequence[Arm], budgets: Sequence[int]) -> list[Setting]:
    """Every arm at every budget with the default limits, then at ``classic``."""
    out: list[Setting] = []
    for arm in arms:
        out += [Setting(arm.name, str(b), False, b) for b in budgets]
        out.append(Setting(arm.name, CLASSIC, True, CLASSIC_BYTES))
    return out


async def evaluate(
    db: Path,
    workload: Path,
    owners: Mapping[Any, str],
    *,
    arms: Sequence[Arm] = ARMS,
    budgets: Sequence[int] = BUDGETS,
    repeat: int = 3,
) -> dict[str, dict[str, Any]]:
    """Every question through every arm and budget, interleaved, on one store.

    Returns:
        arm name -> row (a budget in bytes as text, or ``classic``) ->
        ``{"recall": {"all": ..., category: ...}, "p50_ms": ...}``.
    """
    queries = [q for q in read_queries(workload / "queries.jsonl")[0] if q.expected]
    newest = newest_turns(workload)
    clock = LiveClock()
    plan = settings(arms, budgets)
    seconds: dict[tuple[str, str], dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    recall: dict[tuple[str, str], dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    store = await SqliteStore.open(str(db))
    async with AsyncExitStack() as stack:
        stack.push_async_callback(store.aclose)  # idempotent: the runtimes close it too
        runtimes = await _open(stack, store, arms, clock)
        for rep, query, order in rotations(queries, plan, repeat):
            clock.now = newest.get(query.scopes[0], 0.0) + LIVE_AFTER
            for setting in order:
                rt = runtimes[setting.arm, setting.classic]
                request = orchestrator.request(query, setting.max_bytes)
                elapsed, context = await orchestrator.timed(rt, request)
                if rep == 0:  # the first pass warms every runtime up
                    continue
                seconds[setting.key][query.id].append(elapsed)
                if rep == 1:
                    value = _recall(query, owners, context.content)
                    for category in ("all", query.category):
                        recall[setting.key][category].append(value)
    results: dict[str, dict[str, Any]] = defaultdict(dict)
    for setting in plan:
        per_query = [statistics.median(v) for v in seconds[setting.key].values()]
        results[setting.arm][setting.row] = {
            "recall": {c: statistics.fmean(v) for c, v in _ordered(recall[setting.key])},
            "p50_ms": statistics.median(per_query) * 1e3,
        }
    return dict(results)


def rotations(
    queries: Sequence[WorkloadQuery], plan: Sequence[T], repeat: int
) -> Iterator[tuple[int, WorkloadQuery, list[T]]]:
    """Pass 0 (a warm-up) and ``repeat`` timed passes over ``queries``, each query with
    the ``plan``'s settings in an order rotated by question and pass, so that a slow
    spell of the machine falls on every setting alike."""
    for rep in range(repeat + 1):
        for index, query in enumerate(queries):
            turn = (index + rep) % len(plan)
            yield rep, query, [*plan[turn:], *plan[:turn]]


@attrs.define
class LiveClock:
    """A clock for asking questions as if live: set before each question to just after
    its scope's newest turn (``newest_turns``), read by the runtime (``clock=``)."""

    now: float = 0.0

    def read(self) -> float:
        return self.now


#: How long after its scope's newest turn a live arm asks each question.
LIVE_AFTER: Final = 3600.0


def newest_turns(workload: Path) -> dict[str, float]:
    """Each scope's newest ``created_at`` in ``entries.jsonl``, in epoch seconds (a time
    without an offset is UTC, as ingestion reads it)."""
    newest: dict[str, float] = {}
    with (workload / "entries.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            entry = json.loads(line) if line.strip() else {}
            said, scope = entry.get("created_at"), entry.get("scope")
            if isinstance(said, str) and isinstance(scope, str):
                moment = datetime.fromisoformat(said)
                if moment.tzinfo is None:
                    moment = moment.replace(tzinfo=UTC)
                newest[scope] = max(newest.get(scope, -math.inf), moment.timestamp())
    return newest


async def _open(
    stack: AsyncExitStack, store: SqliteStore, arms: Sequence[Arm], clock: LiveClock
) -> dict[tuple[str, bool], satchel.Runtime]:
    """A runtime per arm and limits, all over ``store``, the gate on in each."""
    runtimes: dict[tuple[str, bool], satchel.Runtime] = {}
    embedder = satchel.StaticEmbedder()
    for arm in arms:
        for classic in (False, True):
            runtime = satchel.open_runtime(
                store=store,
                embedder=embedder,
                limits=satchel.Limits.classic() if classic else satchel.Limits(),
                recall_policy=satchel.RecallSufficiencyPolicy(),
                fusion=arm.fusion,
                clock=clock.read if arm.live else time.time,
            )
            runtimes[arm.name, classic] = await stack.enter_async_context(runtime)
    return runtimes


def _recall(query: WorkloadQuery, owners: Mapping[Any, str], content: str | None) -> float:
    got = {owners.get(citation_key(c)) for c in delivered_citations(content)}
    return len(got & set(query.expected)) / len(query.expected)


def _ordered(values: Mapping[str, list[float]]) -> list[tuple[str, list[float]]]:
    """``all`` first, then the hard workload's categories in their order, then others."""
    order = {c: i for i, c in enumerate(("all", *_hard_conversations.CATEGORIES))}
    return sorted(values.items(), key=lambda item: (order.get(item[0], len(order)), item[0]))


async def run(
    workload: Path, arms: Sequence[Arm], budgets: Sequence[int], repeat: int
) -> dict[str, Any]:
    """Ingest ``workload`` into a fresh SQLite file and evaluate it."""
    with tempfile.TemporaryDirectory(prefix="satchel-recall-") as folder:
        db = Path(folder) / "recall.db"
        owners = await orchestrator.ingest_workload(db, workload, satchel.StaticEmbedder())
        arms_result = await evaluate(
            db, workload, owners, arms=arms, budgets=budgets, repeat=repeat
        )
    questions = len(read_queries(workload / "queries.jsonl")[0])
    return {
        "arms": arms_result,
        "workload": {"dir": str(workload), "turns": len(owners), "questions": questions},
    }


def report(arms: Mapping[str, Mapping[str, Any]]) -> str:
    """A Markdown table: a row per arm and budget, recall per category and p50."""
    first = next(iter(next(iter(arms.values())).values()))
    categories = list(first["recall"])
    lines = [
        "| arm | budget | " + " | ".join(categories) + " | p50 ms |",
        "|---|---|" + "---:|" * (len(categories) + 1),
    ]
    for name, rows in arms.items():
        for row, values in rows.items():
            cells = " | ".join(f"{values['recall'].get(c, float('nan')):.3f}" for c in categories)
            lines.append(f"| {name} | {row} | {cells} | {values['p50_ms']:.2f} |")
    return "\n".join(lines)


def _budgets(text: str) -> tuple[int, ...]:
    try:
        values = tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected bytes like 2000,4000,8000, not {text!r}"
        ) from None
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError("expected at least one positive budget")
    return values


def _arms(text: str) -> tuple[Arm, ...]:
    known = {arm.name: arm for arm in ARMS}
    names = [part.strip() for part in text.split(",") if part.strip()]
    unknown = [name for name in names if name not in known]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"unknown arm {', '.join(unknown) or '(none)'}; choose from {', '.join(known)}"
        )
    return tuple(known[name] for name in names)


def workload_options(parser: argparse.ArgumentParser) -> None:
    """Add ``--workload`` and ``--conversations``: what :func:`default_workload` reads."""
    parser.add_argument(
        "--workload",
        type=Path,
        help="any workload folder (docs/workload.md); default: the hard synthetic "
        "conversations in bench/.cache/hard-conversations, generated when missing",
    )
    parser.add_argument(
        "--conversations",
        type=int,
        default=10,
        help="conversations of the generated workload (default 10; other counts are "
        "cached as bench/.cache/hard-conversations-N)",
    )


def parser() -> argparse.ArgumentParser:
    out = argparse.ArgumentParser(
        prog="python -m bench recall",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    workload_options(out)
    out.add_argument(
        "--arms",
        type=_arms,
        default=ARMS,
        help="comma-separated arms (default: " + ",".join(a.name for a in ARMS) + ")",
    )
    out.add_argument(
        "--budgets",
        type=_budgets,
        default=BUDGETS,
        help="comma-separated byte budgets with the default limits (default 2000,4000,8000);"
        " the classic row is always 8000 bytes with Limits.classic()",
    )
    out.add_argument(
        "--repeat", type=int, default=3, help="timed passes after the warm-up (default 3)"
    )
    out.add_argument(
        "--out",
        type=Path,
        default=RESULTS / "recall.json",
        help="JSON results (default bench/results/recall.json)",
    )
    return out


def default_workload(conversations: int) -> Path:
    """The hard conversations in the cache, generated when missing."""
    suffix = "" if conversations == 10 else f"-{conversations}"
    folder = CACHE / f"hard-conversations{suffix}"
    if not (folder / "queries.jsonl").exists():
        _hard_conversations.generate(folder, conversations=conversations)
    return folder


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    workload = args.workload or default_workload(args.conversations)
    started = time.perf_counter()
    with threadpoolctl.threadpool_limits(limits=1, user_api="blas"):
        result = anyio.run(run, workload, args.arms, args.budgets, max(1, args.repeat))
    result["config"] = {
        "arms": {arm.name: {**attrs.asdict(arm.fusion), "live": arm.live} for arm in args.arms},
        "budgets": list(args.budgets),
        "classic": f"{CLASSIC_BYTES} bytes, Limits.classic()",
        "gate": "on: RecallSufficiencyPolicy()",
        "embedder": "static",
        "repeat": args.repeat,
    }
    result["seconds"] = time.perf_counter() - started
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(report(result["arms"]))
    counts = result["workload"]
    print(f"\n{counts['questions']} questions over {counts['turns']} turns, ", end="")
    print(f"{result['seconds']:.0f} s; written to {args.out}")


if __name__ == "__main__":
    main()
