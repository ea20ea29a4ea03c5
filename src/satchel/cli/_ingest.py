"""``satchel ingest``: write a workload folder's entries.jsonl, or a messaging app's chat
export (``--chat SCOPE``), into a database.

Malformed lines are reported as the reader meets them and skipped; every workload id is
its record's idempotency key, and beside a --db file an id map (``DB.ids.jsonl``) maps
each id to the citation it was written under, batch by batch, so an interrupted ingest
maps what it wrote. SIGINT and SIGTERM stop it after the batch being written.
"""

from __future__ import annotations

import sys
from collections import Counter
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Final

import attrs

import satchel

from .._otlp import telemetry_from_env
from .._workload import (
    DATE_ORDERS,
    Change,
    CitationKey,
    DatesReadBothWays,
    IdMap,
    IngestError,
    IngestReport,
    MalformedLine,
    WorkloadEntry,
    ingest,
    iter_entries,
    read_chat_export,
)
from . import _options as options
from ._progress import ProgressBar
from ._running import (
    ID_MAP_SUFFIX,
    CommandError,
    counted,
    make_embedder,
    open_command_runtime,
    refuse_in_memory,
    run_async,
    stop_on_signals,
    store_label,
)

if TYPE_CHECKING:
    import argparse
    from collections.abc import Iterable, Iterator, Mapping

    from .._otlp import Telemetry

MAX_SHOWN_ERRORS: Final = 100

_DESCRIPTION = """\
Read WORKLOAD/entries.jsonl (or WORKLOAD itself, when it is that file) and
write every entry into the database at --db, creating it if needed. Each line
is one JSON object, for example
  {"id": "c1/3", "scope": "chat-1", "text": "Alice: I moved to Lisbon.",
   "kind": "dialog", "created_at": "2023-05-08T13:56:00Z", "session": 1}
"family" is memory (the default), experience (situation, action, outcome,
lesson), topic-memory (title, text), resource (uri, body, abstract,
overview) or profile (text). created_at without a timezone is UTC; thread,
or an integer session, groups a conversation's turns; other fields are
ignored. Malformed lines are reported on stderr as FILE:LINE: message and
skipped. Each workload id's citation key is appended to DB.ids.jsonl as
it is written, so delivered citations can be mapped back to workload ids;
the map keeps one line per id (the latest).

Every workload id is its record's idempotency key, so the report counts
each entry against the id map as new, a new version (new content under a
known id) or unchanged (nothing written): ingesting the same workload again
writes nothing. With --store there is no id map, and the report does not
tell them apart.

Exits 0 when every line was ingested; 1 when any line was skipped as
malformed or refused by the runtime (what was written stays, mapped; with
--allow-skips that is a success as long as anything was ingested), when
nothing was (missing folder, every line malformed) or when a write failed.
Ctrl-C (SIGINT) or SIGTERM stops after the batch being written, which commits
and is mapped, and exits 130; running the same ingest again resumes it, since
every workload id is its record's idempotency key.

With --chat SCOPE, WORKLOAD is one chat exported from WhatsApp ("Export
chat": a text file of lines such as "12/05/2023, 13:56 - Kate: hi" or
"[12/05/2023, 13:56:12] Kate: hi", or the zip an iPhone shares it in) or
from Telegram ("Export chat history" as JSON: its result.json or folder).
Each message becomes a memory entry "Kate: hi" of kind dialog in SCOPE,
said at its time (read as UTC), a message of several lines whole; what the
app wrote itself (no sender) and media sent without text are counted and
skipped. A WhatsApp file's day or month first is read off its dates, or
--date-order when they read both ways. Each message's id is SCOPE and
Telegram's message id, or WhatsApp's time and place among messages of that
time, so importing a later export of the same chat writes only what is new
or edited."""

_EPILOG = """\
examples:
  satchel ingest ./locomo --db locomo.db
  satchel ingest ./locomo --db locomo.db --batch-size 2048 2> ingest.log
  satchel ingest ./scraped --db notes.db --allow-skips
  satchel ingest "WhatsApp Chat with Kate.txt" --chat chat:kate --db me.db
"""


def _arguments(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "workload_dir",
        metavar="WORKLOAD",
        help="folder with entries.jsonl, the entries file itself, or with --chat a chat export",
    )
    command.add_argument(
        "--chat",
        metavar="SCOPE",
        help="read WORKLOAD as a WhatsApp or Telegram chat export, every message into SCOPE",
    )
    command.add_argument(
        "--date-order",
        choices=DATE_ORDERS,
        help="with --chat: day (dmy) or month (mdy) first, when WhatsApp dates read both ways",
    )
    options.where_option(command, "database file to write (created if needed)")
    options.embedder_option(command)
    command.add_argument(
        "--batch-size",
        type=options.positive,
        default=512,
        metavar="N",
        help="entries per atomic write (default: 512)",
    )
    command.add_argument(
        "--allow-skips",
        action="store_true",
        help="exit 0 even when some lines were skipped (malformed or refused)",
    )


def ingest_command(args: argparse.Namespace) -> int:
    """``satchel ingest``: write a workload folder's entries into a database."""
    entries_path, items, total, not_said = _source(args)
    refuse_in_memory(args, "ingest")
    bar = ProgressBar(total, sys.stderr, label="ingesting")
    skipped = _SkippedLines(bar)
    entries = skipped.filter(items)
    # The workload's ids are stored as idempotency keys either way; the side file that
    # maps them to citations sits beside a --db file only.
    id_map = None if args.db is None else _MappedIds.beside(args.db)
    embedder = make_embedder(args.embedder)
    try:
        # Spans leave over OTLP when the environment asks for it (flushed as the block ends).
        with telemetry_from_env(metrics=False) as telemetry:
            run = partial(_ingest, args, entries, bar, skipped, id_map, embedder, telemetry)
            report, failure = run_async(run, args.backend)
    finally:
        bar.finish()
        if id_map is not None:
            id_map.ids.compact()  # one line per id, also after a failure or a stop
    _print_report(report, skipped, store_label(args), id_map)
    if not_said:
        print(f"skipped {not_said:,} lines the app wrote itself or messages without text")
    if report.stopped:
        print(f"satchel ingest: interrupted after {report.written:,} entries", file=sys.stderr)
        return 130
    if failure is not None:
        raise CommandError(f"{failure} ({report.written:,} entries were written first)")
    if not report.written:
        raise CommandError(_nothing_written(entries_path, skipped.count, report))
    left = skipped.count + len(report.rejected)
    if left and not args.allow_skips:
        raise CommandError(
            f"{left:,} lines were not ingested (malformed or refused; see above);"
            " what was written stays. Fix them and re-run, or pass --allow-skips"
        )
    return 0


COMMAND: Final = options.Command(
    "ingest",
    summary="write a workload folder's entries.jsonl into a database",
    description=_DESCRIPTION,
    epilog=_EPILOG,
    arguments=_arguments,
    run=ingest_command,
)


def _source(
    args: argparse.Namespace,
) -> tuple[Path, Iterable[WorkloadEntry | MalformedLine], int, int]:
    """What to ingest: the file, its entries (or lines in error), how many there are for
    the progress bar, and how many lines or messages of a chat export hold no one's
    words."""
    if args.chat is None:
        if args.date_order is not None:
            raise CommandError("--date-order reads a chat export: pass --chat SCOPE too")
        path = _entries_file(Path(args.workload_dir))
        return path, iter_entries(path), _count_lines(path), 0
    path = Path(args.workload_dir)
    try:
        chat = read_chat_export(path, args.chat, date_order=args.date_order)
    except OSError as exc:  # no such file, nor a Telegram folder holding result.json
        raise CommandError(f"no chat export at {path} ({exc.strerror or exc})") from None
    except DatesReadBothWays:
        raise CommandError(
            f"the dates of {path} read day-first and month-first alike:"
            " pass --date-order dmy or --date-order mdy"
        ) from None
    except satchel.InvalidRequestError as exc:
        raise CommandError(str(exc)) from None
    except UnicodeDecodeError as exc:
        raise CommandError(f"{path} is not UTF-8 text (byte {exc.start + 1})") from None
    return path, chat.items, len(chat.items), chat.skipped


def _entries_file(workload: Path) -> Path:
    """The entries file of a workload folder, or the file itself when given one."""
    if workload.is_file():
        return workload
    if not workload.is_dir():
        raise CommandError(f"no workload folder at {workload} (nor an entries file)")
    folder = workload
    entries = folder / "entries.jsonl"
    if not entries.is_file():
        raise CommandError(
            f"{folder} holds no entries.jsonl ('satchel ingest --help' shows its format)"
        )
    return entries


def _count_lines(path: Path) -> int:
    with path.open("rb") as lines:
        return sum(1 for line in lines if line.strip())


async def _ingest(
    args: argparse.Namespace,
    entries: Iterable[WorkloadEntry],
    bar: ProgressBar,
    skipped: _SkippedLines,
    id_map: _MappedIds | None,
    embedder: satchel.Embedder,
    telemetry: Telemetry,
) -> tuple[IngestReport, IngestError | None]:
    async with open_command_runtime(args, embedder, telemetry, existing=False) as runtime:
        with stop_on_signals() as stopping:
            try:
                report = await ingest(
                    runtime,
                    entries,
                    batch_size=args.batch_size,
                    progress=lambda done: bar.update(done + skipped.count),
                    # mapped batch by batch, so an interrupted ingest maps what it wrote
                    on_written=None if id_map is None else id_map.record,
                    should_stop=stopping.is_set,
                )
            except IngestError as exc:
                return exc.report, exc
    return report, None


@attrs.define
class _MappedIds:
    """An ingest's id map beside its --db file, and what each id it wrote was to it."""

    ids: IdMap
    changes: Counter[Change] = attrs.Factory(Counter)

    @classmethod
    def beside(cls, database: str) -> _MappedIds:
        """The id map of ``database``, at one line per id before anything is appended (a
        line a crash cut short would swallow the next); a map beside no database is
        stale, and replaced."""
        path = Path(database + ID_MAP_SUFFIX)
        if not Path(database).exists():
            path.unlink(missing_ok=True)
        ids = IdMap.load(path)
        ids.compact()
        return cls(ids)

    def record(self, written: Mapping[str, CitationKey]) -> None:
        self.changes.update(self.ids.record(written))

    def summary(self) -> str:
        counts = self.changes
        versions = counted(counts["new version"], "new version")
        return f"{counts['new']:,} new, {versions}, {counts['unchanged']:,} unchanged"


@attrs.define
class _SkippedLines:
    """Reports malformed lines on stderr as the reader meets them, and counts them."""

    bar: ProgressBar
    count: int = 0

    def filter(self, items: Iterable[WorkloadEntry | MalformedLine]) -> Iterator[WorkloadEntry]:
        for item in items:
            if isinstance(item, MalformedLine):
                self.skip(item)
            else:
                yield item

    def skip(self, error: MalformedLine) -> None:
        self.count += 1
        if self.count <= MAX_SHOWN_ERRORS:
            self.bar.note(str(error))
        elif self.count == MAX_SHOWN_ERRORS + 1:
            self.bar.note("... further malformed lines are counted but not shown")


def _print_report(
    report: IngestReport, skipped: _SkippedLines, database: str, id_map: _MappedIds | None
) -> None:
    if id_map is None:  # new and unchanged alike: the store says not which
        print(f"ingested {report.written:,} entries into {database} (new or already held)")
    else:
        print(f"ingested {report.written:,} entries into {database}: {id_map.summary()}")
    for family, count in report.written_by_family():
        print(f"  {family:<13} {count:>8,}")
    for rejected in report.rejected:
        where = f"{rejected.family} entry {rejected.id!r} in scope {rejected.scope!r}"
        print(f"satchel ingest: {where} refused: {rejected.message}", file=sys.stderr)
    if report.rejected:
        print(f"rejected {len(report.rejected):,} entries (see stderr)")
    if skipped.count > MAX_SHOWN_ERRORS:
        print(f"skipped {skipped.count:,} malformed lines (the first {MAX_SHOWN_ERRORS} on stderr)")
    elif skipped.count:
        print(f"skipped {skipped.count:,} malformed lines (see stderr)")
    if report.ids and id_map is not None:
        print(f"id map {id_map.ids.path} maps {len(id_map.ids.keys):,} workload ids")


def _nothing_written(path: Path, skipped: int, report: IngestReport) -> str:
    if skipped or report.rejected:
        return f"nothing ingested: every entry of {path} was malformed or rejected"
    return f"nothing ingested: {path} holds no entries"
