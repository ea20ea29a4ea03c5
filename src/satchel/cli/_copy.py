"""``satchel copy SOURCE TARGET``: every record of one store into another, with a progress
bar, an interruption that keeps what was written (run it again to finish), and
``--verify`` (``_verify``) to check the copy from both stores afresh.

Nothing here reaches below the public API: ``satchel.stores.copy_store`` does the copy.
"""

from __future__ import annotations

import sys
from functools import partial
from typing import TYPE_CHECKING, Final

import satchel
from satchel.embedders import SPEC_HELP

from .._otlp import tracer_provider_from_env
from . import _options as options
from ._moving import (
    Stopped,
    option_named,
    print_report,
    refuse_missing,
    stopping_progress,
    store_url,
)
from ._progress import ProgressBar
from ._running import (
    CommandError,
    make_embedder,
    refuse_missing_extra,
    run_async,
    stop_on_signals,
)
from ._verify import verify

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable

    from opentelemetry.trace import TracerProvider

_DESCRIPTION = """\
Copy every record of every family from the store at SOURCE into the store at TARGET
(or only the scopes named by --scope): every version of every entry, experience,
topic memory and resource with its id, version number, idempotency key, dates,
thread, tags, kind, summaries and body; each scope's profile; which versions are
searchable (a forgotten entry stays forgotten, a replaced version readable but not
searched); and the tombstones of erased entries (erased stays erased). Every citation
a pack made from SOURCE resolves in TARGET to the same text, and a whole store
copied into an empty one of the same kind gives byte-identical packs.

SOURCE and TARGET are store URLs (sqlite:///abs/file.db, seekdb:///abs/dir,
oceanbase://user:pass@host:port/db) or paths of SQLite files. TARGET is created if
needed and may already hold other scopes; SOURCE's records are only read. Stop
writing to SOURCE while it is copied. Passwords are never printed.

Vectors are copied as they are when TARGET's vectors come from the embedder that
built SOURCE's (or TARGET holds none yet); otherwise pass TARGET's embedder with
--embedder and every copied record is embedded again with it.

The copy is resumable: it writes a page of records per transaction, and a run that
is stopped (Ctrl-C, SIGTERM, a crash, a lost connection) keeps what it wrote. Run
the same command again: it copies only what TARGET lacks (by scope, family, id and
version), so it finishes without duplicates.

--verify then opens both stores afresh and compares them: versions per scope and
family, searchable records, profiles and tombstones; a sample of memory versions
read back with 'satchel get' semantics; and a sample of prepares, byte for byte when
both stores are of the same kind and share an embedder (different engines rank by
their own full-text scoring, so there every citation of SOURCE's packs must resolve
in TARGET instead). The prepares need the stores' embedder: --embedder, or the
built-in one (static, hashing) that the store recorded.

Exits 0 when everything was copied (and verified); 1 when a store failed or
--verify found a difference; 2 for bad input (no SQLite file at SOURCE, the same
store twice, an in-memory store); 130 when interrupted."""

_EPILOG = """\
examples:
  satchel copy team.db sqlite:///backup/team.db --verify
  satchel copy sqlite:///srv/team.db seekdb:///srv/seekdb --verify
  satchel copy team.db "oceanbase://satchel:s3cret@db.internal:2881/satchel" \\
      --scope project:demo --scope user:ana
  satchel copy old.db new.db --embedder static     # new.db's vectors are static's
"""


def _arguments(command: argparse.ArgumentParser) -> None:
    command.add_argument("source", metavar="SOURCE", help="store URL or SQLite file to read")
    command.add_argument("target", metavar="TARGET", help="store URL or SQLite file to write")
    command.add_argument(
        "--scope",
        action="append",
        default=None,
        metavar="S",
        help="copy this scope (repeatable; default: every scope)",
    )
    command.add_argument(
        "--verify",
        action="store_true",
        help="then compare both stores: counts, sample records and sample prepares",
    )
    command.add_argument(
        "--embedder",
        type=options.embedder_spec,
        default=None,
        metavar=SPEC_HELP,
        help=(
            "TARGET's embedder: static (the bundled model), hashing or st:PATH. Needed when"
            " TARGET's vectors come from another embedder than SOURCE's: every copied record"
            " is then embedded again with it. --verify's prepares use it too (default: the"
            " built-in embedder each store recorded)"
        ),
    )


def copy_command(args: argparse.Namespace) -> int:
    """``satchel copy``: copy, report, and with ``--verify`` check the copy."""
    source, target = store_url(args.source, "SOURCE"), store_url(args.target, "TARGET")
    if source == target:
        raise CommandError("SOURCE and TARGET name the same store", code=2)
    refuse_missing(source, "SOURCE")
    refuse_missing_extra(source, "SOURCE")
    refuse_missing_extra(target, "TARGET")
    embedder = None if args.embedder is None else make_embedder(args.embedder)
    shown = (satchel.stores.redact(source), satchel.stores.redact(target))
    bar = ProgressBar(0, sys.stderr, label="copying")
    with stop_on_signals() as stopping, tracer_provider_from_env() as provider:
        progress = stopping_progress(bar, stopping)
        run = partial(_copy, source, target, args.scope, progress, embedder, provider)
        try:
            report = run_async(run, args.backend)
        except Stopped:
            bar.finish()
            print(
                f"satchel copy: interrupted after {bar.done:,} of {bar.total:,} records;"
                " what was copied stays: run the same command again to finish",
                file=sys.stderr,
            )
            return 130
        except satchel.InvalidRequestError as exc:
            raise CommandError(option_named(str(exc)), code=2) from exc
    bar.finish()
    print_report(report, *shown)
    if not args.verify:
        return 0
    found = run_async(partial(verify, source, target, report, args.embedder), args.backend)
    for line in found.checked:
        print(f"verified: {line}")
    for problem in found.problems:
        print(f"satchel copy: verify: {problem}", file=sys.stderr)
    if found.problems:
        raise CommandError(f"--verify found {len(found.problems)} difference(s) (see above)")
    return 0


COMMAND: Final = options.Command(
    "copy",
    summary="copy every record of one store into another (resumable, verifiable)",
    description=_DESCRIPTION,
    epilog=_EPILOG,
    arguments=_arguments,
    run=copy_command,
)


async def _copy(
    source: str,
    target: str,
    scopes: list[str] | None,
    progress: Callable[[int, int], object],
    embedder: satchel.Embedder | None,
    provider: TracerProvider | None,
) -> satchel.stores.CopyReport:
    async with (
        satchel.stores.open_store(source, tracer_provider=provider) as reading,
        satchel.stores.open_store(target, tracer_provider=provider) as writing,
    ):
        if not isinstance(reading, satchel.stores.CopySource):
            raise CommandError("SOURCE is a store that cannot be copied from")
        if not isinstance(writing, satchel.stores.CopyTarget):
            raise CommandError("TARGET is a store that cannot be copied into")
        return await satchel.stores.copy_store(
            reading, writing, scopes=scopes, progress=progress, embedder=embedder
        )
