"""``satchel erase``: erase every version of a memory entry, or every record of a scope.

Unlike ``satchel forget``, nothing stays readable. It asks on the terminal first (``--yes``
answers for a script), and purges the erased keys from the ingest id map beside a --db
file.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Final

from .._wire import compact_id, full_id
from .._workload import IdMap
from . import _options as options
from ._running import ID_MAP_SUFFIX, CommandError, counted, existing_database, on_store, store_label

if TYPE_CHECKING:
    import argparse

_DESCRIPTION = """\
Erase every version of one memory entry (--id), or every record of every
family in a scope, its profile included (--all). Unlike 'satchel forget',
nothing stays readable: the text, analysed terms, vectors, idempotency key and
dates leave every place the store keeps them (a SQLite database zeroes what it
deletes, rewrites its full-text index, empties its write-ahead log and deletes
the scope's vector index files). Afterwards 'satchel get' of any erased
version says it was erased, no pack delivers it, and its key is free again.

What no erase reaches: backups and copies of the database (a copied file,
another store it was copied into, a replica, a snapshot), the disk under it,
swap, and for a while an OceanBase engine's own log and data files. The
'Erasing' section of docs/stores.md says what each store guarantees.

It asks for confirmation on the terminal; --yes answers for you, and is needed
when stdin is not a terminal. --id takes the id as a pack prints it (22
characters) or the full entry id. What was erased is printed on stderr.

Exits 1 when nothing was erased (no such entry or scope, erased already, or
not confirmed), 2 for bad input (no --yes when stdin is not a terminal, or no
database at --db or --store: erase never creates one)."""

_EPILOG = """\
examples:
  satchel erase --db team.db --scope chat-1 --id s4nK0m7LQb2mF1u3c9TzAw
  satchel erase --db team.db --scope chat-1 --all --yes
  satchel erase --store "sqlite:///srv/team.db" --scope user:ana --all --yes
"""


def _arguments(command: argparse.ArgumentParser) -> None:
    options.where_option(command, "an existing database file")
    command.add_argument(
        "--scope", required=True, type=options.nonblank, metavar="S", help="the scope to erase in"
    )
    what = command.add_mutually_exclusive_group(required=True)
    what.add_argument(
        "--id",
        type=options.nonblank,
        metavar="ENTRY_ID",
        help="erase every version of this memory entry (its id as a pack prints it, or in full)",
    )
    what.add_argument(
        "--all",
        action="store_true",
        help="erase every record of every family in the scope, its profile included",
    )
    command.add_argument(
        "--yes",
        action="store_true",
        help="erase without asking (needed when stdin is not a terminal)",
    )


def erase_command(args: argparse.Namespace) -> int:
    """``satchel erase``: erase every version of one memory entry (``--id``) or every
    record of a scope (``--all``), once the user confirmed it or passed ``--yes``."""
    if args.db is not None:
        existing_database(args.db)  # before the question: nothing to confirm without one
    scope = args.scope
    if args.all:
        _confirm(args, f"erase every record of scope {scope!r} in {store_label(args)}")
        records = on_store(args, lambda store: store.erase_scope(scope))
        if not records:
            raise CommandError(f"nothing erased: scope {scope!r} holds no record")
        erased = f"{counted(records, 'record')} of every family in scope {scope!r}"
    else:
        entry_id = full_id(args.id)  # as a pack prints it (22 characters) or in full
        what = f"memory entry {compact_id(entry_id)!r} in scope {scope!r}"
        _confirm(args, f"erase every version of {what} in {store_label(args)}")
        versions = on_store(args, lambda store: store.erase("memory", scope, entry_id))
        if not versions:
            raise CommandError(f"nothing erased: no {what} (never written, or erased already)")
        erased = f"{counted(versions, 'version')} of {what}"
    if args.db is not None:  # the ingest id map beside it must not keep the erased keys
        IdMap.load(args.db + ID_MAP_SUFFIX).purge(scope, None if args.all else entry_id)
    print(f"satchel erase: erased {erased}; nothing of them stays readable", file=sys.stderr)
    return 0


COMMAND: Final = options.Command(
    "erase",
    summary="erase a memory entry, or every record of a scope, so nothing stays readable",
    description=_DESCRIPTION,
    epilog=_EPILOG,
    arguments=_arguments,
    run=erase_command,
)


def _confirm(args: argparse.Namespace, action: str) -> None:
    """Ask on the terminal before ``action``; ``--yes`` answers for the user, and is
    needed when stdin is no terminal (a script must say what it means)."""
    if args.yes:
        return
    if sys.stdin is None or not sys.stdin.isatty():
        raise CommandError(
            f"will not {action} without confirmation: stdin is not a terminal; pass --yes",
            code=2,
        )
    print(f"satchel erase: {action}? It cannot be undone. [y/N] ", end="", file=sys.stderr)
    sys.stderr.flush()
    if sys.stdin.readline().strip().lower() not in ("y", "yes"):
        raise CommandError("nothing erased: not confirmed")
