"""Prompt caches: a pack at the head of every prompt against new items appended to the turn.

A model provider's prompt cache serves the part of a prompt that repeats, byte for byte,
the start of a prompt it has seen before; everything after the first changed byte is
read again at full price. A host that puts each turn's pack at the head of its prompt
(in the system prompt) changes the prompt's start every turn, so nothing after the
pack's first differing byte (the whole conversation so far) is ever served from cache.

``python -m bench prompt-cache`` replays conversations through a host loop that keeps
the history and asks each question of a workload (by default every question of the hard
synthetic conversations ``python -m bench recall`` asks, from the same loader, generated
into ``bench/.cache/hard-conversations`` when missing) once, in file order, as one
user turn of its scope's conversation. The model's reply is a stand-in of
``--reply-bytes`` bytes. The store is ingested once into a fresh SQLite file with the
bundled static embedder; the gate is on (``RecallSufficiencyPolicy()``) and the clock
real, as the recall benchmark's ``default`` arm. The arms:

- ``head`` (a): each turn's pack (``--budget`` bytes) at the head of the prompt, after a
  one-line system prompt: prompt = system + pack, the conversation so far, the new user
  message. The model sees this turn's pack only.
- ``tail``: the same packs, placed after the conversation so far, just before the new
  user message, and not kept in the history (the next turn's pack replaces it).
- ``append-N`` (b): a session (``session_id``, ``dedup_turns`` longer than any
  conversation), so each turn's pack holds new items only, of at most N bytes, appended
  to that turn's user message and kept in the history with it. The model sees every
  item delivered at this turn or before.
- ``append-matched``: the largest per-turn budget (to ``MATCH_STEP`` bytes) at which
  ``append`` sends no more prompt bytes over the whole replay than ``head`` does.

Per arm: the share of each prompt's bytes that are a byte-stable prefix of the previous
turn's prompt (the mean over every turn but a conversation's first), the total prompt
bytes, the bytes after that prefix (what a cache cannot serve; a first turn's are all
of them), the mean prompt bytes of a conversation's last turn, the pack bytes
delivered, and evidence recall: the share of a question's expected entries among the
items the prompt of its turn shows the model. Writes JSON (``--out``, default
``bench/results/prompt_cache.json``) and prints a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import anyio
import attrs
import threadpoolctl

import satchel
from bench import _hard_conversations, orchestrator, recall
from bench._citations import citation_key, delivered_citations
from satchel._workload import read_queries
from satchel.stores import SqliteStore

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Mapping, Sequence

    from satchel._workload import WorkloadQuery

RESULTS: Final = orchestrator.RESULTS
BUDGET: Final = 8000
APPEND_BUDGETS: Final = (1000, 2000, 4000, 8000)
REPLY_BYTES: Final = 400
SYSTEM: Final = "You are a helpful assistant."
#: Turns a delivered item is held back in the appending arms: longer than any replay.
HELD_TURNS: Final = 10_000
#: The smallest budget a request takes (``max_bytes``).
FLOOR: Final = 512
#: The matched per-turn budget is searched to this many bytes.
MATCH_STEP: Final = 32
HEAD: Final = "head"
TAIL: Final = "tail"
APPEND: Final = "append"
MATCHED: Final = "append-matched"


@attrs.frozen
class Turn:
    """One turn of one arm: its prompt's size, the bytes it shares from its start with
    the previous turn's prompt (0 on a conversation's first turn), the pack bytes
    delivered, and the question's evidence recall in what the prompt shows."""

    conversation: str
    category: str
    prompt_bytes: int
    prefix_bytes: int
    pack_bytes: int
    recall: float
    first: bool


def common_prefix(left: bytes, right: bytes) -> int:
    """The length of the longest common prefix of two byte strings (a binary search of
    slice comparisons, so the comparing runs in C)."""
    low, high = 0, min(len(left), len(right))
    while low < high:
        middle = (low + high + 1) // 2
        if left[:middle] == right[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def render(messages: Sequence[tuple[str, str]]) -> bytes:
    """A prompt as a provider receives it: the messages in order, each tagged with its
    role. Appending a message leaves every earlier byte in place."""
    return "".join(f"<|{role}|>\n{text}\n" for role, text in messages).encode()


def reply(turn: int, size: int) -> str:
    """The stand-in for the model's reply to ``turn``: ``size`` ASCII bytes."""
    text = f"(the model's reply to turn {turn}) "
    return (text + "lorem ipsum " * (size // 12 + 1))[:size]


def conversations(workload: Path) -> dict[str, list[WorkloadQuery]]:
    """The workload's questions with evidence, grouped by scope in file order: each
    scope's questions are the user turns of one conversation."""
    out: dict[str, list[WorkloadQuery]] = defaultdict(list)
    for query in read_queries(workload / "queries.jsonl")[0]:
        if query.expected:
            out[query.scopes[0]].append(query)
    return dict(out)


async def replay_head(
    rt: satchel.Runtime,
    scope: str,
    questions: Sequence[WorkloadQuery],
    owners: Mapping[Any, str],
    *,
    budget: int,
    reply_bytes: int,
) -> tuple[list[Turn], list[Turn]]:
    """One conversation with a full pack each turn (no session): the ``head`` arm's turns
    and the ``tail`` arm's, from the same packs."""
    history: list[tuple[str, str]] = []
    previous = {HEAD: b"", TAIL: b""}
    turns: dict[str, list[Turn]] = {HEAD: [], TAIL: []}
    for number, query in enumerate(questions, start=1):
        context = await rt.prepare_context(_request(scope, query, budget))
        pack = context.content or ""
        shown = _recall(query, owners, [context.content])
        prompts = {
            HEAD: render([("system", _joined(SYSTEM, pack)), *history, ("user", query.query)]),
            TAIL: render([("system", SYSTEM), *history, ("user", _joined(pack, query.query))]),
        }
        for arm, prompt in prompts.items():
            turns[arm].append(
                _turn(scope, query, prompt, previous[arm], context.content_bytes, shown, number)
            )
            previous[arm] = prompt
        history += [("user", query.query), ("assistant", reply(number, reply_bytes))]
    return turns[HEAD], turns[TAIL]


async def replay_append(
    rt: satchel.Runtime,
    scope: str,
    questions: Sequence[WorkloadQuery],
    owners: Mapping[Any, str],
    *,
    budget: int,
    reply_bytes: int,
    session: str,
) -> list[Turn]:
    """One conversation in a session whose packs hold new items only, each appended to
    its turn's user message and kept in the history (``rt`` holds a delivered item back
    for longer than the conversation)."""
    messages: list[tuple[str, str]] = [("system", SYSTEM)]
    previous = b""
    packs: list[str | None] = []
    turns: list[Turn] = []
    for number, query in enumerate(questions, start=1):
        request = _request(scope, query, budget, session=session)
        context = await rt.prepare_context(request)
        packs.append(context.content)
        messages.append(("user", _joined(query.query, context.content or "")))
        prompt = render(messages)
        shown = _recall(query, owners, packs)
        turns.append(_turn(scope, query, prompt, previous, context.content_bytes, shown, number))
        previous = prompt
        messages.append(("assistant", reply(number, reply_bytes)))
    return turns


def _request(
    scope: str, query: WorkloadQuery, budget: int, *, session: str | None = None
) -> satchel.PrepareContextRequest:
    return satchel.PrepareContextRequest(
        scope_id=scope, query=query.query, max_bytes=budget, session_id=session
    )


def _joined(first: str, second: str) -> str:
    return f"{first}\n\n{second}" if first and second else first or second


def _turn(
    scope: str,
    query: WorkloadQuery,
    prompt: bytes,
    previous: bytes,
    pack_bytes: int,
    recall_value: float,
    number: int,
) -> Turn:
    return Turn(
        conversation=scope,
        category=query.category,
        prompt_bytes=len(prompt),
        prefix_bytes=common_prefix(prompt, previous),
        pack_bytes=pack_bytes,
        recall=recall_value,
        first=number == 1,
    )


def _recall(query: WorkloadQuery, owners: Mapping[Any, str], packs: Sequence[str | None]) -> float:
    """The share of ``query``'s expected entries cited by any of ``packs``."""
    shown = {owners.get(citation_key(c)) for pack in packs for c in delivered_citations(pack)}
    return len(shown & set(query.expected)) / len(query.expected)


def summary(turns: Sequence[Turn], per_turn_budget: int) -> dict[str, Any]:
    """An arm's figures over every conversation it replayed."""
    later = [t for t in turns if not t.first]
    last: dict[str, int] = {}
    recalls: dict[str, list[float]] = defaultdict(list)
    for t in turns:
        last[t.conversation] = t.prompt_bytes
        for category in ("all", t.category):
            recalls[category].append(t.recall)
    order = {c: i for i, c in enumerate(("all", *_hard_conversations.CATEGORIES))}
    ordered = sorted(recalls.items(), key=lambda item: (order.get(item[0], len(order)), item[0]))
    return {
        "per_turn_budget": per_turn_budget,
        "conversations": len(last),
        "turns": len(turns),
        "prefix_share": statistics.fmean(t.prefix_bytes / t.prompt_bytes for t in later),
        "prompt_bytes": sum(t.prompt_bytes for t in turns),
        "uncached_bytes": sum(t.prompt_bytes - t.prefix_bytes for t in turns),
        "last_prompt_bytes": statistics.fmean(last.values()),
        "pack_bytes": sum(t.pack_bytes for t in turns),
        "recall": {category: statistics.fmean(v) for category, v in ordered},
    }


async def evaluate(
    store: SqliteStore,
    workload: Path,
    owners: Mapping[Any, str],
    *,
    budget: int = BUDGET,
    append_budgets: Sequence[int] = APPEND_BUDGETS,
    match: bool = True,
    reply_bytes: int = REPLY_BYTES,
) -> dict[str, dict[str, Any]]:
    """Every arm over every conversation of ``workload``, on one store.

    Returns:
        arm name -> its :func:`summary`, ``head``, ``tail``, each ``append-N`` and (with
        ``match``) ``append-matched`` in that order.
    """
    chats = conversations(workload)
    runtime = satchel.open_runtime(
        store=store,
        embedder=satchel.StaticEmbedder(),
        recall_policy=satchel.RecallSufficiencyPolicy(),
        dedup_turns=HELD_TURNS,
    )
    async with runtime as rt:
        head: list[Turn] = []
        tail: list[Turn] = []
        for scope, questions in chats.items():
            a, c = await replay_head(
                rt, scope, questions, owners, budget=budget, reply_bytes=reply_bytes
            )
            head += a
            tail += c
        arms = {HEAD: summary(head, budget), TAIL: summary(tail, budget)}
        replays = 0

        async def appended(per_turn: int) -> dict[str, Any]:
            nonlocal replays
            replays += 1  # a fresh session per replay: nothing held back from another
            turns: list[Turn] = []
            for scope, questions in chats.items():
                session = f"{scope}/append/{replays}"
                turns += await replay_append(
                    rt,
                    scope,
                    questions,
                    owners,
                    budget=per_turn,
                    reply_bytes=reply_bytes,
                    session=session,
                )
            return summary(turns, per_turn)

        ladder = {per_turn: await appended(per_turn) for per_turn in append_budgets}
        arms |= {f"{APPEND}-{per_turn}": figures for per_turn, figures in ladder.items()}
        if match:
            limit = arms[HEAD]["prompt_bytes"]
            arms[MATCHED] = await _matched(appended, limit, budget, ladder)
    return arms


async def _matched(
    appended: Callable[[int], Awaitable[dict[str, Any]]],
    limit: int,
    budget: int,
    known: Mapping[int, dict[str, Any]],
) -> dict[str, Any]:
    """The appending arm at the largest per-turn budget (the request floor plus a multiple
    of ``MATCH_STEP`` bytes, or one of ``known``, at most ``budget``) whose prompt bytes
    stay within ``limit``; at the floor, marked ``"within": false``, when even that
    exceeds it. A binary search, on the assumption that prompt bytes grow with the
    per-turn budget, between the replays ``known`` already made (budget -> figures)."""
    low, high = 0, (budget - FLOOR) // MATCH_STEP
    best: dict[str, Any] | None = None
    for per_turn, figures in sorted(known.items()):
        if figures["prompt_bytes"] > limit:
            high = min(high, -(-(per_turn - FLOOR) // MATCH_STEP) - 1)
        elif per_turn <= budget:
            best, low = figures, (per_turn - FLOOR) // MATCH_STEP + 1
    while low <= high:
        middle = (low + high) // 2
        figures = await appended(FLOOR + middle * MATCH_STEP)
        if figures["prompt_bytes"] <= limit:
            best, low = figures, middle + 1
        else:
            high = middle - 1
    if best is None:
        return {**await appended(FLOOR), "within": False}
    return {**best, "within": True}


async def run(
    workload: Path,
    *,
    budget: int = BUDGET,
    append_budgets: Sequence[int] = APPEND_BUDGETS,
    match: bool = True,
    reply_bytes: int = REPLY_BYTES,
) -> dict[str, Any]:
    """Ingest ``workload`` into a fresh SQLite file and replay it through every arm."""
    with tempfile.TemporaryDirectory(prefix="satchel-prompt-cache-") as folder:
        db = Path(folder) / "prompt-cache.db"
        owners = await orchestrator.ingest_workload(db, workload, satchel.StaticEmbedder())
        store = await SqliteStore.open(str(db))
        arms = await evaluate(
            store,
            workload,
            owners,
            budget=budget,
            append_budgets=append_budgets,
            match=match,
            reply_bytes=reply_bytes,
        )
    head = arms[HEAD]
    compared = {
        name: {
            "recall_loss": head["recall"]["all"] - figures["recall"]["all"],
            "prompt_bytes_ratio": figures["prompt_bytes"] / head["prompt_bytes"],
            "uncached_bytes_ratio": figures["uncached_bytes"] / head["uncached_bytes"],
            "last_prompt_bytes_ratio": figures["last_prompt_bytes"] / head["last_prompt_bytes"],
        }
        for name, figures in arms.items()
        if name != HEAD
    }
    return {
        "arms": arms,
        "against_head": compared,
        "workload": {
            "dir": str(workload),
            "turns": len(owners),
            "conversations": head["conversations"],
            "questions": head["turns"],
        },
    }


def report(arms: Mapping[str, Mapping[str, Any]]) -> str:
    """A Markdown table: a row per arm."""
    head = arms[HEAD]
    lines = [
        "| arm | bytes per turn | prefix share | prompt KB | uncached KB | last prompt KB "
        "| pack KB | recall | recall vs head |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, f in arms.items():
        loss = f["recall"]["all"] - head["recall"]["all"]
        over = " (over head's bytes)" if f.get("within") is False else ""
        lines.append(
            f"| {name} | {f['per_turn_budget']}{over} | {f['prefix_share']:.1%} "
            f"| {f['prompt_bytes'] / 1000:,.0f} | {f['uncached_bytes'] / 1000:,.0f} "
            f"| {f['last_prompt_bytes'] / 1000:,.1f} | {f['pack_bytes'] / 1000:,.0f} "
            f"| {f['recall']['all']:.3f} | {loss:+.3f} |"
        )
    return "\n".join(lines)


def _budgets(text: str) -> tuple[int, ...]:
    try:
        values = tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected bytes like 1000,2000, not {text!r}") from None
    if any(value < FLOOR for value in values):
        raise argparse.ArgumentTypeError("a per-turn budget is at least 512 bytes")
    return values


def parser() -> argparse.ArgumentParser:
    out = argparse.ArgumentParser(
        prog="python -m bench prompt-cache",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    recall.workload_options(out)
    out.add_argument(
        "--budget", type=int, default=BUDGET, help="the head arm's pack bytes (default 8000)"
    )
    out.add_argument(
        "--append-budgets",
        type=_budgets,
        default=APPEND_BUDGETS,
        help="comma-separated per-turn budgets of the appending arm (default 1000,2000,4000,8000)",
    )
    out.add_argument(
        "--no-match",
        action="store_true",
        help="skip the search for the appending budget that matches head's prompt bytes",
    )
    out.add_argument(
        "--reply-bytes",
        type=int,
        default=REPLY_BYTES,
        help="bytes of the stand-in for each model reply (default 400)",
    )
    out.add_argument(
        "--out",
        type=Path,
        default=RESULTS / "prompt_cache.json",
        help="JSON results (default bench/results/prompt_cache.json)",
    )
    return out


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    workload = args.workload or recall.default_workload(args.conversations)
    started = time.perf_counter()
    with threadpoolctl.threadpool_limits(limits=1, user_api="blas"):
        result = anyio.run(
            lambda: run(
                workload,
                budget=args.budget,
                append_budgets=args.append_budgets,
                match=not args.no_match,
                reply_bytes=args.reply_bytes,
            )
        )
    result["config"] = {
        "budget": args.budget,
        "append_budgets": list(args.append_budgets),
        "match_step": MATCH_STEP,
        "reply_bytes": args.reply_bytes,
        "system": SYSTEM,
        "dedup_turns": HELD_TURNS,
        "gate": "on: RecallSufficiencyPolicy()",
        "embedder": "static",
    }
    result["seconds"] = time.perf_counter() - started
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(report(result["arms"]))
    counts = result["workload"]
    print(
        f"\n{counts['conversations']} conversations, {counts['questions']} user turns "
        f"over {counts['turns']} stored turns, {result['seconds']:.0f} s; written to {args.out}"
    )


if __name__ == "__main__":
    main()
