"""``satchel import --store URL FILE``: every record of an archive into a store, with a
progress bar and an interruption that keeps what was written (run it again to finish).

Nothing here reaches below the public API: ``satchel.stores.import_archive`` reads
the archive.
"""

from __future__ import annotations

import sys
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Final

import satchel
from satchel.embedders import SPEC_HELP

from .._otlp import tracer_provider_from_env
from . import _options as options
from ._moving import Stopped, option_named, print_report, stopping_progress, store_url
from ._progress import ProgressBar
from ._running import (
    CommandError,
    make_embedder,
    refuse_missing_extra,
    run_async,
    stop_on_signals,
)

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable

    from opentelemetry.trace import TracerProvider

_DESCRIPTION = """\
Write every record of the archive FILE ('satchel export' wrote it) into the store at
--store: every version with its id, version number, key, dates, thread, tags, kind,
summaries, body and searchability; each scope's profile; the tombstones of erased
entries (erased stays erased). Every citation a pack made before the export
resolves in the store to the same text. The store is created if needed and may
already hold other scopes.

Vectors are written as the archive holds them when the store's vectors come from
the embedder that built them (the archive records its fingerprint), or the store
holds none yet; otherwise pass the store's embedder with --embedder and every
record is embedded again with it.

The import is resumable: it writes a page of records per transaction, and a run
that is stopped (Ctrl-C, SIGTERM, a crash) keeps what it wrote. Run the same
command again: it writes only what the store lacks (by scope, family, id and
version), so it finishes without duplicates. An archive from a newer satchel (a
newer format) is refused: import it with that satchel or a later one.

Exits 0 when everything was imported; 1 when the store failed; 2 for bad input (no
archive at FILE, a damaged or newer archive, a missing --embedder); 130 when
interrupted."""

_EPILOG = """\
examples:
  satchel import --store restored.db team.satchel
  satchel import --store seekdb:///srv/seekdb team.satchel
  satchel import --store other.db --embedder hashing team.satchel   # other.db's embedder
"""


def _arguments(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--store", required=True, metavar="URL", help="store URL or SQLite file to write"
    )
    command.add_argument(
        "--embedder",
        type=options.embedder_spec,
        default=None,
        metavar=SPEC_HELP,
        help=(
            "the store's embedder: static (the bundled model), hashing or st:PATH. Needed"
            " only when the store's vectors come from another embedder than the archive's:"
            " every record is then embedded again with it"
        ),
    )
    command.add_argument("file", metavar="FILE", help="the archive to read")


def import_command(args: argparse.Namespace) -> int:
    """``satchel import``: read the archive into the store, then say what was written."""
    target = store_url(args.store, "--store")
    refuse_missing_extra(target, "--store")
    embedder = None if args.embedder is None else make_embedder(args.embedder)
    bar = ProgressBar(0, sys.stderr, label="importing")
    with stop_on_signals() as stopping, tracer_provider_from_env() as provider:
        progress = stopping_progress(bar, stopping)
        run = partial(_import, args.file, target, progress, embedder, provider)
        try:
            report = run_async(run, args.backend)
        except satchel.InvalidRequestError as exc:
            raise CommandError(option_named(str(exc)), code=2) from exc
        except Stopped:
            bar.finish()
            print(
                f"satchel import: interrupted after {bar.done:,} of {bar.total:,} records;"
                " what was imported stays: run the same command again to finish",
                file=sys.stderr,
            )
            return 130
    bar.finish()
    print_report(report, str(Path(args.file)), satchel.stores.redact(target), verb="imported")
    return 0


COMMAND: Final = options.Command(
    "import",
    summary="write every record of an archive file into a store (resumable)",
    description=_DESCRIPTION,
    epilog=_EPILOG,
    arguments=_arguments,
    run=import_command,
)


async def _import(
    file: str,
    target: str,
    progress: Callable[[int, int], object],
    embedder: satchel.Embedder | None,
    provider: TracerProvider | None,
) -> satchel.stores.CopyReport:
    async with satchel.stores.open_store(target, tracer_provider=provider) as writing:
        if not isinstance(writing, satchel.stores.CopyTarget):
            raise CommandError("--store is a store that cannot be imported into")
        return await satchel.stores.import_archive(
            file, writing, progress=progress, embedder=embedder
        )
