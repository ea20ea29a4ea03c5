"""What ``satchel copy``, ``export`` and ``import`` share: the stores they name (a URL
or a SQLite file's path, never an in-memory store), a progress callback that stops on
SIGINT or SIGTERM between pages, and the report of what they moved.

Nothing here opens a store or runs a command.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Final
from urllib.parse import urlsplit

import satchel

from ._running import CommandError

if TYPE_CHECKING:
    import threading
    from collections.abc import Callable

    from ._progress import ProgressBar

#: Schemes whose stores live in this process only: nothing to copy from, nothing kept.
IN_MEMORY: Final = ("memory",)


class Stopped(Exception):
    """SIGINT or SIGTERM arrived: the copy (export, import) stops after the page it wrote."""


def stopping_progress(bar: ProgressBar, stopping: threading.Event) -> Callable[[int, int], None]:
    """A ``progress(done, total)`` that moves ``bar`` and raises :class:`Stopped` once
    ``stopping`` is set (``stop_on_signals``)."""

    def progress(done: int, total: int) -> None:
        bar.total = total
        bar.update(done)
        if stopping.is_set():
            raise Stopped

    return progress


def store_url(text: str, name: str) -> str:
    """A store URL as given, or the SQLite file a plain path names; never an in-memory
    store (nothing to read from, nothing kept)."""
    if "://" not in text:
        return "sqlite://" + str(Path(text).resolve())
    parts = urlsplit(text)
    if parts.scheme in IN_MEMORY or (
        parts.scheme == "sqlite" and parts.path in ("", "/", "/:memory:")
    ):
        raise CommandError(f"{name} must be a lasting store, not an in-memory one", code=2)
    if parts.scheme == "sqlite":  # one spelling per file, so the same file is seen as such
        return "sqlite://" + str(Path(parts.path).resolve())
    return text


def refuse_missing(source: str, name: str) -> None:
    """A SQLite store read from must exist: reading never creates one."""
    parts = urlsplit(source)
    if parts.scheme == "sqlite" and not Path(parts.path).is_file():
        raise CommandError(f"no database at {parts.path} ({name})", code=2)


def option_named(message: str) -> str:
    """A library message as the command's options name it."""
    if message.startswith("embedder:"):
        return "--" + message.replace(" (embedder=...)", " (--embedder)")
    return message.replace("scopes:", "--scope:", 1)


def print_report(
    report: satchel.stores.CopyReport, source: str, target: str, *, verb: str = "copied"
) -> None:
    """What was copied (exported, imported), per family, on stdout."""
    skipped = sum(report.skipped.values())
    print(
        f"{verb} {report.written:,} versions and profiles of {len(report.scopes):,} scopes"
        f" from {source} into {target} ({skipped:,} were there already)"
    )
    families = [f for f in satchel.stores.FAMILY_RULES if f in {*report.versions, *report.skipped}]
    if families:
        print(f"  {'family':<13} {'records':>8} {'versions':>9} {'skipped':>8}")
    for family in families:
        counts = (report.records.get(family, 0), report.versions.get(family, 0))
        print(f"  {family:<13} {counts[0]:>8,} {counts[1]:>9,} {report.skipped.get(family, 0):>8,}")
    print(
        f"vectors: {report.vectors_copied:,} copied, {report.vectors_embedded:,} embedded again;"
        f" {report.tombstones:,} tombstones of erased entries kept;"
        f" {report.retired:,} versions taken out of search"
    )
