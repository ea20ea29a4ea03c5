"""``satchel reembed``: rebuild every vector of a database with another embedder.

A database refuses an embedder other than the one that built its vectors; this is how
to switch. The store does it in one transaction (``SqliteStore.reembed``).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Final

import satchel

from . import _options as options
from ._running import existing_database, make_embedder, run_async

if TYPE_CHECKING:
    import argparse

_DESCRIPTION = """\
Re-embed every searchable record of the database at --db with --embedder and
record that embedder as the one that built the vectors, in one transaction:
an interrupted run changes nothing. A database refuses to be opened with an
embedder other than the one that built its vectors; this is how to switch.
Run it while nothing else uses the database."""

_EPILOG = """\
examples:
  satchel reembed --db team.db --embedder static
"""


def _arguments(command: argparse.ArgumentParser) -> None:
    command.add_argument("--db", required=True, metavar="PATH", help="database file to rewrite")
    options.embedder_option(command, required=True)


def reembed_command(args: argparse.Namespace) -> int:
    """``satchel reembed``: rebuild every vector of a database with another embedder."""
    database = existing_database(args.db)
    embedder = make_embedder(args.embedder)

    async def run() -> int:
        store = await satchel.SqliteStore.open(database)
        try:
            return await store.reembed(embedder, progress=_progress)
        finally:
            await store.aclose()

    count = run_async(run, args.backend)
    print(f"re-embedded {count} records of {database} with {args.embedder}", file=sys.stderr)
    return 0


COMMAND: Final = options.Command(
    "reembed",
    summary="rebuild a database's vectors with another embedder",
    description=_DESCRIPTION,
    epilog=_EPILOG,
    arguments=_arguments,
    run=reembed_command,
)


def _progress(done: int, total: int) -> None:
    print(f"\rembedding {done}/{total}", end="" if done < total else "\n", file=sys.stderr)
