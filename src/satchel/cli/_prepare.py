"""``satchel prepare``: print the context pack satchel prepares for a query.

With ``--explain`` the pack's receipts and omissions follow it (``_explain``), with
``--effort`` what the prepare spent on recall goes to stderr as one JSON line. An empty
pack is a success, with a note on stderr naming the searched scopes that hold nothing.
"""

from __future__ import annotations

import argparse
import json
import sys
from functools import partial
from typing import TYPE_CHECKING, Final, TextIO

import anyio
import attrs

import satchel

from .._otlp import telemetry_from_env
from . import _options as options
from ._explain import print_explanation, print_explanation_json
from ._running import (
    CommandError,
    existing_database,
    make_embedder,
    open_command_runtime,
    run_async,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from .._otlp import Telemetry

_DESCRIPTION = """\
Search the memory of --scope (and of every --reference scope) for QUERY, fit
the result into --max-bytes and print the rendered, cited context pack. When
nothing relevant is found, stdout stays empty and a note goes to stderr; it
says so when a searched scope holds no record at all (new, or misspelt:
'satchel scopes' lists them). That is still a success (exit 0): an empty
scope is a normal answer, as it is over HTTP and MCP.

--gate turns on the recall-sufficiency gate. When the first search round looks
thin (too few candidates, a weak top hit, weak lexical evidence, or a family
that found entries but admitted none), it runs at most two bounded expansion
rounds that only lower the admission floor on the pool already retrieved:
never more families, higher limits or a larger byte budget. A query that is
well served prints the same pack with or without it.

--effort prints what the prepare spent on recall as one JSON object on one
line of stderr, after the pack (stdout is unchanged): policy ("disabled"
without --gate), assessment (the gate's final reason), rounds (1..3),
expansion_actions, candidates_by_round, admission_by_family (retrieved and
admitted per family and scope), added_embeddings, added_generation_calls,
truncated_items, dropped_items, dropped_below_min_bytes,
dropped_no_fitting_truncation and stages (the host planner's and digest's
outcomes: off, ok, failed, timeout, no_relevant). It carries counts only: no
query text and no entry ids or content.

--explain prints, on stdout after the pack (which is unchanged), why each item
is in it: one row per item in pack order with its citation, the rank it had in
each search channel that ranked it (lexical, vector, time, neighbour), its
fused score, the round that committed it (0..2), its tier and whether it was
truncated; then the best candidates left out (at most 8) with their cause:
budget, held-back, excluded, duplicate or floor. With --json the receipts and
omitted lists join the pack's four fields in one JSON object.

Exits 2 for bad input (e.g. --max-bytes outside 512..32768, no database at
--db or --store, or a file that is not one: prepare never creates one)."""

_EPILOG = """\
examples:
  satchel prepare --db team.db --scope project:demo "Why was the deploy slow?"
  satchel prepare --db team.db --scope chat-1 --reference chat-2 \\
      --max-bytes 2000 --json "Where does Alice live?"
  satchel prepare --db team.db --scope project:demo --section profile=1 \\
      --section memory=4 --section resource=2 "How do I deploy?"
  satchel prepare --db team.db --scope project:demo --gate --effort \\
      "Why was the deploy slow?" 2> effort.log
  satchel prepare --db team.db --scope project:demo --explain \\
      "Why was the deploy slow?"
"""


def _arguments(command: argparse.ArgumentParser) -> None:
    command.add_argument("query", metavar="QUERY", help="what the agent needs context for")
    options.where_option(command, "an existing database file")
    command.add_argument("--scope", required=True, metavar="S", help="the scope to search")
    command.add_argument(
        "--reference",
        action="append",
        default=[],
        metavar="R",
        help="another scope to search as well (repeatable)",
    )
    command.add_argument(
        "--max-bytes",
        type=int,
        default=8000,
        metavar="N",
        help="byte budget of the pack, 512..32768 (default: 8000)",
    )
    command.add_argument(
        "--section",
        action="append",
        default=[],
        type=_section,
        metavar="FAMILY=LIMIT",
        help=(
            "deliver an assembly: each family's items as their own groups of the pack's"
            " JSON lines, in the order given (memory, experience, topic-memory, profile,"
            " resource; repeatable; limits 1..8, experience at most 2, at most 8 in all;"
            " docs/pack-format.md)"
        ),
    )
    command.add_argument(
        "--json",
        action="store_true",
        help="print the result's four fields (schema, status, content, content_bytes) as JSON",
    )
    command.add_argument(
        "--gate",
        action="store_true",
        help=(
            "run the recall-sufficiency gate: up to two bounded expansion rounds when the "
            "first round looks thin (default: off)"
        ),
    )
    command.add_argument(
        "--timeout",
        type=options.seconds,
        default=None,
        metavar="SECONDS",
        help="bound the whole prepare; past it the command fails (default: no bound)",
    )
    command.add_argument(
        "--effort",
        action="store_true",
        help="print the prepare's recall effort on stderr as one JSON object (no query text)",
    )
    command.add_argument(
        "--explain",
        action="store_true",
        help=(
            "after the pack, print why each item is in it (channel ranks, fused score, "
            "round, tier, truncation) and the best candidates left out, with their cause"
        ),
    )
    options.embedder_option(command)


def _section(text: str) -> satchel.Section:
    family, sep, limit = text.partition("=")
    if not sep or not limit.strip().isdigit():
        raise argparse.ArgumentTypeError(f"expected FAMILY=LIMIT, e.g. memory=4, not {text!r}")
    return satchel.Section(family.strip(), int(limit))


def prepare_command(args: argparse.Namespace) -> int:
    """``satchel prepare``: print one context pack for a query, with ``--explain`` its
    receipts and omissions after it, and with ``--effort`` its effort."""
    if args.db is not None:
        existing_database(args.db)
    request = satchel.PrepareContextRequest(
        scope_id=args.scope,
        query=args.query,
        max_bytes=args.max_bytes,
        references=tuple(args.reference),
        assembly=satchel.Assembly(tuple(args.section)) if args.section else None,
    )
    record = _EffortRecord() if args.effort else None
    absent: list[str] = []  # the request's scopes that hold nothing, when the pack is empty
    embedder = make_embedder(args.embedder)
    # Spans and metrics leave over OTLP when the environment asks for it (flushed as the
    # block ends, waiting at most a second).
    with telemetry_from_env() as telemetry:
        run = partial(_prepare, args, request, embedder, telemetry, record, absent)
        prepared = run_async(run, args.backend)
    explanation = prepared if isinstance(prepared, satchel.Explanation) else None
    context = prepared.context if isinstance(prepared, satchel.Explanation) else prepared
    if args.json and explanation is not None:
        print_explanation_json(explanation)
    elif args.json:
        print(json.dumps(attrs.asdict(context), ensure_ascii=False, indent=2))
    elif context.status == "empty":
        print(_empty_note((args.scope, *args.reference), absent), file=sys.stderr)
    else:
        print(context.content)
    if explanation is not None and not args.json:
        print_explanation(explanation)
    if record is not None:
        record.report(sys.stderr)
    return 0


COMMAND: Final = options.Command(
    "prepare",
    summary="print the context pack satchel prepares for a query",
    description=_DESCRIPTION,
    epilog=_EPILOG,
    arguments=_arguments,
    run=prepare_command,
)


async def _prepare(
    args: argparse.Namespace,
    request: satchel.PrepareContextRequest,
    embedder: satchel.Embedder,
    telemetry: Telemetry,
    record: _EffortRecord | None,
    absent: list[str],
) -> satchel.PreparedContext | satchel.Explanation:
    """One prepare (or explanation); when it comes back empty, ``absent`` receives the
    request's scopes that hold no record at all (a misspelt scope looks empty too)."""
    async with open_command_runtime(
        args,
        embedder,
        telemetry,
        existing=True,
        gate=args.gate,
        # without a sink the runtime computes no effort at all
        recall_effort_sink=None if record is None else record.keep,
        prepare_timeout=args.timeout,
    ) as runtime:
        prepared: satchel.PreparedContext | satchel.Explanation
        try:
            # The one deadline function every host uses (infinite unless --timeout).
            with anyio.fail_after(runtime.deadline_for(request)):
                if args.explain:
                    prepared = await runtime.explain_context(request)
                else:
                    prepared = await runtime.prepare_context(request)
        except satchel.InvalidRequestError as exc:
            raise CommandError(str(exc), code=2) from exc
        except TimeoutError as exc:  # fail_after's own, which says nothing
            raise CommandError(
                f"the prepare did not finish before its deadline (--timeout {args.timeout:g} s)"
            ) from exc
        context = prepared.context if isinstance(prepared, satchel.Explanation) else prepared
        if context.status == "empty":
            held = await runtime.store.scope_counts()
            absent.extend(s for s in (request.scope_id, *request.references) if s not in held)
    return prepared


def _empty_note(scopes: Sequence[str], absent: Sequence[str]) -> str:
    """The note on an empty pack, naming the searched scopes that hold nothing at all:
    an empty pack alone cannot tell a new scope from a misspelt one."""
    note = f"satchel prepare: nothing relevant in {', '.join(scopes)} (status empty)"
    if not absent:
        return note
    names = ", ".join(repr(scope) for scope in absent)
    which = f"scope {names} holds" if len(absent) == 1 else f"scopes {names} hold"
    return f"{note}; {which} no record at all (misspelt? 'satchel scopes' lists them)"


@attrs.define
class _EffortRecord:
    """The runtime's recall-effort sink for ``--effort``: keeps what one prepare spent."""

    effort: satchel.RecallEffort | None = None

    async def keep(self, effort: satchel.RecallEffort) -> None:
        self.effort = effort

    def report(self, stream: TextIO) -> None:
        """Write the effort as one JSON object on one line of ``stream``."""
        if self.effort is None:  # the runtime awaits the sink after every successful prepare
            raise CommandError("the runtime reported no recall effort")
        line = json.dumps(self.effort.to_json(), ensure_ascii=False, sort_keys=False)
        print(line, file=stream)
