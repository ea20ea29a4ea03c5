"""``satchel forget``: take the memory entry a citation names out of search.

Every version leaves search and stays readable with ``satchel get`` (``satchel erase``
is the command after which nothing stays readable).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Final

from .._wire import compact_id
from . import _options as options
from ._running import on_memory_version

if TYPE_CHECKING:
    import argparse

_DESCRIPTION = """\
Forget one memory entry, named as a pack's citation names it (scope,
entry_id, version): every version of the entry leaves search, so no later
pack delivers it, and every version stays readable with 'satchel get'. The
version must exist; forgetting an entry already forgotten changes nothing,
and says so. --id takes the id as a pack prints it (22 characters) or the
full entry id. What was done is printed on stderr.

Exits 1 when no such scope, entry or version exists, 2 for bad input (no
database at --db or --store: forget never creates one)."""

_EPILOG = """\
examples:
  satchel forget --db team.db --scope chat-1 --id 3f2a... --version 1
  satchel forget --store "sqlite:///srv/team.db" --scope chat-1 --id 3f2a... \\
      --version 2
"""


def _arguments(command: argparse.ArgumentParser) -> None:
    options.where_option(command, "an existing database file")
    command.add_argument(
        "--scope", required=True, type=options.nonblank, metavar="S", help="the citation's scope"
    )
    command.add_argument(
        "--id",
        required=True,
        type=options.nonblank,
        metavar="ENTRY_ID",
        help="its id, as a pack prints it or in full",
    )
    command.add_argument(
        "--version", required=True, type=options.positive, metavar="N", help="its version"
    )


def forget_command(args: argparse.Namespace) -> int:
    """``satchel forget``: take the memory entry a citation names out of search."""
    ref, taken = on_memory_version(args, lambda store, ref: store.forget_memory(ref))
    what = f"memory entry {compact_id(ref.entry_id)!r} in scope {ref.scope_id!r}"
    if taken is False:  # a store of another make may answer None: it did forget
        done = f"{what} was forgotten already; nothing changed (every version"
    else:
        done = f"forgot {what}: every version is out of search (and each"
    print(f"satchel forget: {done} stays readable with 'satchel get')", file=sys.stderr)
    return 0


COMMAND: Final = options.Command(
    "forget",
    summary="take the memory entry a citation names out of search",
    description=_DESCRIPTION,
    epilog=_EPILOG,
    arguments=_arguments,
    run=forget_command,
)
