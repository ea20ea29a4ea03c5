"""``satchel get``: print exactly the memory version a citation names, with its key.

A forgotten entry's versions stay readable; an erased one's say they were erased.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Final

from .._wire import compact_id
from . import _options as options
from ._running import on_memory_version

if TYPE_CHECKING:
    import argparse

_DESCRIPTION = """\
Read exactly one version of one memory entry, as a pack's citation names it
(scope, entry_id, version), and print it as one JSON object: the citation
(its entry_id spelled as the pack spells it),
its key (the workload id it was ingested under, or the caller's key), text,
kind, tags, created_at and thread. A forgotten entry's versions stay readable.
--id takes the id as a pack prints it (22 characters) or the full entry id;
--version defaults to 1, as a pack omits version 1 from its citations.

Exits 1 when no such entry or version exists, 2 for bad input (no database
at --db or --store: get never creates one)."""

_EPILOG = """\
examples:
  satchel get --db team.db --scope chat-1 --id cl8WCM5gQQyj74nwc5mGcQ
  satchel get --db team.db --scope chat-1 --id 3f2a... --version 2 --pretty
"""


def _arguments(command: argparse.ArgumentParser) -> None:
    options.where_option(command, "an existing database file")
    command.add_argument("--scope", required=True, metavar="S", help="the citation's scope")
    command.add_argument(
        "--id", required=True, metavar="ENTRY_ID", help="its id, as a pack prints it or in full"
    )
    command.add_argument(
        "--version",
        type=options.positive,
        default=1,
        metavar="N",
        help="its version (default: 1, the version a pack's citation means when it names none)",
    )
    command.add_argument("--pretty", action="store_true", help="indent the JSON")


def get_command(args: argparse.Namespace) -> int:
    """``satchel get``: print exactly the memory version a citation names, with its key."""
    ref, record = on_memory_version(args, lambda store, ref: store.get_memory(ref))
    created = None if record.created_at is None else record.created_at.isoformat()
    fields = {
        "scope": ref.scope_id, "entry_id": compact_id(ref.entry_id), "version": ref.version,
        "key": record.key, "text": record.text, "kind": record.kind, "tags": list(record.tags),
        "created_at": created, "thread": record.thread,
    }  # fmt: skip
    print(json.dumps(fields, ensure_ascii=False, indent=2 if args.pretty else None))
    return 0


COMMAND: Final = options.Command(
    "get",
    summary="print the memory version a citation names, with its idempotency key",
    description=_DESCRIPTION,
    epilog=_EPILOG,
    arguments=_arguments,
    run=get_command,
)
