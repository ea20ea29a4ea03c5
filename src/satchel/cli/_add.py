"""``satchel add``: write one memory entry from the shell or stdin and print its ref.

The one-record counterpart of ``satchel ingest``: a note, a decision or a hook's line
goes into a scope without a workload folder. The ref is printed as a pack cites it (the
22-character id and the version), which ``satchel get`` and ``satchel forget`` take back.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime
from functools import partial
from typing import TYPE_CHECKING, Final

import satchel

from .._otlp import telemetry_from_env
from .._wire import compact_id
from . import _options as options
from ._running import (
    CommandError,
    make_embedder,
    open_command_runtime,
    refuse_in_memory,
    run_async,
)

if TYPE_CHECKING:
    from .._otlp import Telemetry

_DESCRIPTION = """\
Write one memory entry into --scope and print its ref as one JSON object on stdout:
{"scope": ..., "id": ..., "version": N}, the id as a pack prints it (22 characters),
which 'satchel get' and 'satchel forget' take. TEXT is the entry's text; '-' reads it
from stdin (a trailing newline is dropped). The database at --db is created if needed.

--key makes the write idempotent, as every workload id is in 'satchel ingest': the
same key with the same text writes nothing and prints the ref it already has (a
forgotten entry stays forgotten); with new text it writes the entry's next version.
--at says when it was said (ISO 8601; without a timezone it is UTC), so that queries
naming that date find it; --thread names the conversation it belongs to.

Exits 2 for bad input (blank text, a key over 512 characters, a malformed --at)."""

_EPILOG = """\
examples:
  satchel add --db team.db --scope project:demo "Backups run nightly at 02:00 UTC"
  satchel add --db team.db --scope chat-1 --kind dialog --thread chat-1/s3 \\
      --at 2024-03-04T09:00:00Z "Alice: I moved to Lisbon."
  git log -1 --format=%B | satchel add --db team.db --scope repo:notes \\
      --key "$(git rev-parse HEAD)" -
"""


def _arguments(command: argparse.ArgumentParser) -> None:
    command.add_argument("text", metavar="TEXT", help="what to remember, or - to read stdin")
    options.where_option(command, "database file to write (created if needed)")
    command.add_argument("--scope", required=True, metavar="S", help="the scope to write to")
    command.add_argument(
        "--kind", default="fact", metavar="K", help="what sort of thing it is (default: fact)"
    )
    command.add_argument(
        "--tag", action="append", default=[], metavar="T", help="a label (repeatable)"
    )
    command.add_argument("--key", metavar="KEY", help="an idempotency key, unique per scope")
    command.add_argument("--thread", metavar="T", help="the conversation it belongs to")
    command.add_argument(
        "--at", type=_moment, metavar="ISO", help="when it was said (ISO 8601; default: unset)"
    )
    options.embedder_option(command)


def _moment(text: str) -> datetime:
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected an ISO 8601 date-time such as 2024-03-04T09:00:00Z, not {text!r}"
        ) from None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def add_command(args: argparse.Namespace) -> int:
    """``satchel add``: write one memory entry and print its ref."""
    refuse_in_memory(args, "add")
    text = sys.stdin.read().rstrip("\r\n") if args.text == "-" else args.text
    try:
        entry = satchel.MemoryEntry(
            text=text,
            kind=args.kind,
            tags=tuple(args.tag),
            created_at=args.at,
            thread=args.thread,
            key=args.key,
        )
    except satchel.InvalidRequestError as exc:
        raise CommandError(str(exc), code=2) from exc
    embedder = make_embedder(args.embedder)
    # Spans leave over OTLP when the environment asks for it (flushed as the block ends).
    with telemetry_from_env(metrics=False) as telemetry:
        ref = run_async(partial(_add, args, entry, embedder, telemetry), args.backend)
    fields = {"scope": ref.scope_id, "id": compact_id(ref.entry_id), "version": ref.version}
    print(json.dumps(fields, ensure_ascii=False))
    return 0


COMMAND: Final = options.Command(
    "add",
    summary="write one memory entry (TEXT, or - for stdin) and print its ref",
    description=_DESCRIPTION,
    epilog=_EPILOG,
    arguments=_arguments,
    run=add_command,
)


async def _add(
    args: argparse.Namespace,
    entry: satchel.MemoryEntry,
    embedder: satchel.Embedder,
    telemetry: Telemetry,
) -> satchel.MemoryRef:
    async with open_command_runtime(args, embedder, telemetry, existing=False) as runtime:
        try:
            [ref] = await runtime.add_memories(args.scope, [entry])
        except satchel.InvalidRequestError as exc:  # named as in a batch: entries[0].text
            raise CommandError(str(exc).removeprefix("entries[0]."), code=2) from exc
    return ref
