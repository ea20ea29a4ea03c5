"""``satchel export --store URL FILE``: every record of a store into one archive file,
with a progress bar and an interruption that leaves no half-written file.

Nothing here reaches below the public API: ``satchel.stores.export_archive`` writes
the archive (docs/archives.md describes its format).
"""

from __future__ import annotations

import sys
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Final

import satchel

from .._otlp import tracer_provider_from_env
from . import _options as options
from ._moving import Stopped, print_report, refuse_missing, stopping_progress, store_url
from ._progress import ProgressBar
from ._running import CommandError, refuse_missing_extra, run_async, stop_on_signals

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable

    from opentelemetry.trace import TracerProvider

_DESCRIPTION = """\
Write every record of the store at --store (or only the scopes named by --scope)
into the archive FILE: every version of every entry, experience, topic memory and
resource with its id, version number, idempotency key, dates, thread, tags, kind,
summaries, body, vector and whether it is searchable (a forgotten entry stays
forgotten); each scope's profile; the tombstones of erased entries; and the
fingerprint of the embedder that built the vectors. Erased records are never in it.

'satchel import' reads FILE into any store (SQLite, seekdb, OceanBase): every
citation a pack made before the export resolves there to the same text.

The archive is one gzip'd JSON-lines file of a versioned format (docs/archives.md),
written a page at a time: memory stays flat however many records the store holds.
It is written beside FILE and renamed into place when whole, so a stopped export
leaves no archive. Stop writing to the store while it is exported.

--store is a store URL (sqlite:///abs/file.db, seekdb:///abs/dir,
oceanbase://user:pass@host:port/db) or the path of a SQLite file. Passwords are
never printed.

Exits 0 when the archive is written; 1 when the store or the file failed; 2 for bad
input (no SQLite file at --store, an unknown scope); 130 when interrupted."""

_EPILOG = """\
examples:
  satchel export --store team.db team.satchel
  satchel export --store seekdb:///srv/seekdb --scope project:demo demo.satchel
  satchel import --store sqlite:///backup/team.db team.satchel
"""


def _arguments(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--store", required=True, metavar="URL", help="store URL or SQLite file to read"
    )
    command.add_argument(
        "--scope",
        action="append",
        default=None,
        metavar="S",
        help="export this scope (repeatable; default: every scope)",
    )
    command.add_argument(
        "file", metavar="FILE", help="the archive to write (replaced if it exists)"
    )


def export_command(args: argparse.Namespace) -> int:
    """``satchel export``: write the archive, then say what it holds."""
    source = store_url(args.store, "--store")
    refuse_missing(source, "--store")
    refuse_missing_extra(source, "--store")
    bar = ProgressBar(0, sys.stderr, label="exporting")
    with stop_on_signals() as stopping, tracer_provider_from_env() as provider:
        progress = stopping_progress(bar, stopping)
        try:
            report = run_async(
                partial(_export, source, args.file, args.scope, progress, provider), args.backend
            )
        except satchel.InvalidRequestError as exc:
            raise CommandError(str(exc).replace("scopes:", "--scope:", 1), code=2) from exc
        except Stopped:
            bar.finish()
            print("satchel export: interrupted; no archive was written", file=sys.stderr)
            return 130
    bar.finish()
    print_report(report, satchel.stores.redact(source), str(Path(args.file)), verb="exported")
    return 0


COMMAND: Final = options.Command(
    "export",
    summary="write every record of a store into one archive file",
    description=_DESCRIPTION,
    epilog=_EPILOG,
    arguments=_arguments,
    run=export_command,
)


async def _export(
    source: str,
    file: str,
    scopes: list[str] | None,
    progress: Callable[[int, int], object],
    provider: TracerProvider | None,
) -> satchel.stores.CopyReport:
    async with satchel.stores.open_store(source, tracer_provider=provider) as reading:
        if not isinstance(reading, satchel.stores.CopySource):
            raise CommandError("--store is a store that cannot be exported")
        return await satchel.stores.export_archive(reading, file, scopes=scopes, progress=progress)
