"""``satchel ingest``, ``prepare``, ``get``, ``scopes``, ``forget``, ``erase`` and
``reembed``: the CLI's calls into the public runtime and stores.

Every command returns an exit code: 0 on success, 1 when it could not do its work, 2 for
bad input. Results go to stdout; progress, notes and errors to stderr. Nothing here
reaches below the public API (``satchel.open_runtime``, ``satchel.stores``), the workload
reader, the ids as a pack spells them (``_wire.full_id``) and the OTLP setup
(``tracer_provider_from_env``, and ``telemetry_from_env`` for ``prepare``: every command
that opens a store exports its spans, and ``prepare`` its metrics, when the standard
OpenTelemetry variables ask for it).
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import signal
import sys
import threading
from collections import Counter
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TextIO, TypeVar

import anyio
import attrs

import satchel
from satchel.embedders import from_spec

from .._otlp import NO_TELEMETRY, Telemetry, telemetry_from_env, tracer_provider_from_env
from .._wire import full_id
from .._workload import (
    Change,
    CitationKey,
    IdMap,
    IngestError,
    IngestReport,
    MalformedLine,
    WorkloadEntry,
    ingest,
    iter_entries,
)
from ._explain import print_explanation, print_explanation_json
from ._progress import ProgressBar
from ._table import print_table

if TYPE_CHECKING:
    import argparse
    from collections.abc import (
        AsyncIterator,
        Awaitable,
        Callable,
        Iterable,
        Iterator,
        Mapping,
        Sequence,
    )

    from opentelemetry.trace import TracerProvider

MAX_SHOWN_ERRORS: Final = 100
#: The families ``satchel scopes`` counts searchable records of, in the table's order.
SEARCHABLE: Final = tuple(
    family for family, rules in satchel.stores.FAMILY_RULES.items() if rules.searchable
)
ID_MAP_SUFFIX: Final = ".ids.jsonl"
#: The first bytes of every SQLite file (a --db that starts otherwise is no database).
SQLITE_HEADER: Final = b"SQLite format 3\x00"

T = TypeVar("T")


class CommandError(Exception):
    """A command cannot go on; ``main`` prints the message and exits with ``code``."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


def run_async(fn: Callable[[], Awaitable[T]], backend: str) -> T:
    """Run a command's coroutine under ``backend`` (``asyncio`` or ``trio``)."""
    if backend == "trio" and importlib.util.find_spec("trio") is None:
        raise CommandError("--backend trio needs trio: pip install 'satchel[trio]'", code=2)
    return anyio.run(fn, backend=backend)


# ------------------------------------------------------------------------------ prepare


def make_embedder(spec: str) -> satchel.Embedder:
    """The embedder a ``--embedder`` choice names: static, hashing or ``st:PATH``."""
    try:
        return from_spec(spec)
    except satchel.ModelLoadError as exc:
        raise CommandError(str(exc)) from exc


def reembed_command(args: argparse.Namespace) -> int:
    """``satchel reembed``: rebuild every vector of a database with another embedder."""
    database = existing_database(args.db)
    embedder = make_embedder(args.embedder)

    async def run() -> int:
        store = await satchel.SqliteStore.open(database)
        try:
            return await store.reembed(
                embedder, progress=lambda done, total: _reembed_progress(done, total)
            )
        finally:
            await store.aclose()

    count = run_async(run, args.backend)
    print(f"re-embedded {count} records of {database} with {args.embedder}", file=sys.stderr)
    return 0


def _reembed_progress(done: int, total: int) -> None:
    print(f"\rembedding {done}/{total}", end="" if done < total else "\n", file=sys.stderr)


def prepare_command(args: argparse.Namespace) -> int:
    """``satchel prepare``: print one context pack for a query, with ``--explain`` its
    receipts and omissions after it, and with ``--effort`` its effort."""
    if args.db is not None:
        existing_database(args.db)
    request = satchel.PrepareContextRequest(
        scope_id=args.scope,
        query=args.query,
        max_bytes=args.max_bytes,
        references=tuple(args.reference),
        assembly=satchel.Assembly(tuple(args.section)) if args.section else None,
    )
    record = _EffortRecord() if args.effort else None
    absent: list[str] = []  # the request's scopes that hold nothing, when the pack is empty
    embedder = make_embedder(args.embedder)
    # Spans and metrics leave over OTLP when the environment asks for it (flushed as the
    # block ends, waiting at most a second).
    with telemetry_from_env() as telemetry:
        run = partial(
            _prepare, args, request, gate=args.gate, record=record, embedder=embedder,
            prepare_timeout=args.timeout, telemetry=telemetry, explain=args.explain,
            absent=absent,
        )  # fmt: skip
        prepared = run_async(run, args.backend)
    explanation = prepared if isinstance(prepared, satchel.Explanation) else None
    context = prepared.context if isinstance(prepared, satchel.Explanation) else prepared
    if args.json and explanation is not None:
        print_explanation_json(explanation)
    elif args.json:
        print(json.dumps(attrs.asdict(context), ensure_ascii=False, indent=2))
    elif context.status == "empty":
        print(_empty_note((args.scope, *args.reference), absent), file=sys.stderr)
    else:
        print(context.content)
    if explanation is not None and not args.json:
        print_explanation(explanation)
    if record is not None:
        record.report(sys.stderr)
    return 0


async def _prepare(
    args: argparse.Namespace,
    request: satchel.PrepareContextRequest,
    *,
    gate: bool,
    record: _EffortRecord | None,
    embedder: satchel.Embedder,
    prepare_timeout: float | None = None,
    telemetry: Telemetry = NO_TELEMETRY,
    explain: bool = False,
    absent: list[str] | None = None,
) -> satchel.PreparedContext | satchel.Explanation:
    """One prepare (or explanation); when it comes back empty, ``absent`` receives the
    request's scopes that hold no record at all (a misspelt scope looks empty too)."""
    async with observed_runtime(
        args,
        embedder,
        telemetry,
        existing=True,
        gate=gate,
        # without a sink the runtime computes no effort at all
        recall_effort_sink=None if record is None else record.keep,
        prepare_timeout=prepare_timeout,
    ) as runtime:
        prepared: satchel.PreparedContext | satchel.Explanation
        try:
            # The one deadline function every host uses (infinite unless --timeout).
            with anyio.fail_after(runtime.deadline_for(request)):
                if explain:
                    prepared = await runtime.explain_context(request)
                else:
                    prepared = await runtime.prepare_context(request)
        except satchel.InvalidRequestError as exc:
            raise CommandError(str(exc), code=2) from exc
        context = prepared.context if isinstance(prepared, satchel.Explanation) else prepared
        if absent is not None and context.status == "empty":
            held = await runtime.store.scope_counts()
            absent.extend(s for s in (request.scope_id, *request.references) if s not in held)
    return prepared


def _empty_note(scopes: Sequence[str], absent: Sequence[str]) -> str:
    """The note on an empty pack, naming the searched scopes that hold nothing at all:
    an empty pack alone cannot tell a new scope from a misspelt one."""
    note = f"satchel prepare: nothing relevant in {', '.join(scopes)} (status empty)"
    if not absent:
        return note
    names = ", ".join(repr(scope) for scope in absent)
    which = f"scope {names} holds" if len(absent) == 1 else f"scopes {names} hold"
    return f"{note}; {which} no record at all (misspelt? 'satchel scopes' lists them)"


@attrs.define
class _EffortRecord:
    """The runtime's recall-effort sink for ``--effort``: keeps what one prepare spent."""

    effort: satchel.RecallEffort | None = None

    async def keep(self, effort: satchel.RecallEffort) -> None:
        self.effort = effort

    def report(self, stream: TextIO) -> None:
        """Write the effort as one JSON object on one line of ``stream``."""
        if self.effort is None:  # the runtime awaits the sink after every successful prepare
            raise CommandError("the runtime reported no recall effort")
        line = json.dumps(self.effort.to_json(), ensure_ascii=False, sort_keys=False)
        print(line, file=stream)


def get_command(args: argparse.Namespace) -> int:
    """``satchel get``: print exactly the memory version a citation names, with its key."""
    try:
        # the id as a pack prints it (22 characters) or in full
        ref = satchel.MemoryRef(args.scope, full_id(args.id), args.version)
        record = _on_store(args, lambda store: store.get_memory(ref))
    except satchel.InvalidRequestError as exc:
        raise CommandError(str(exc), code=2) from exc
    except satchel.NotFoundError as exc:
        raise CommandError(str(exc)) from exc
    created = None if record.created_at is None else record.created_at.isoformat()
    fields = {
        "scope": ref.scope_id, "entry_id": ref.entry_id, "version": ref.version,
        "key": record.key, "text": record.text, "kind": record.kind, "tags": list(record.tags),
        "created_at": created, "thread": record.thread,
    }  # fmt: skip
    print(json.dumps(fields, ensure_ascii=False, indent=2 if args.pretty else None))
    return 0


def scopes_command(args: argparse.Namespace) -> int:
    """``satchel scopes``: every scope with its searchable records per family, and whether
    it has a profile; a table, or with ``--json`` a JSON array."""
    counts = _on_store(args, lambda store: store.scope_counts())
    rows = [_ScopeRow.of(scope, counts[scope]) for scope in sorted(counts)]
    if args.json:
        print(json.dumps([row.to_json() for row in rows], ensure_ascii=False, indent=2))
    elif rows:
        print_table(
            ["scope", *SEARCHABLE, "profile"], [row.cells() for row in rows], numeric=SEARCHABLE
        )
    else:
        print(f"satchel scopes: {store_label(args)} holds no scope yet", file=sys.stderr)
    return 0


@attrs.frozen
class _ScopeRow:
    """One scope as ``satchel scopes`` shows it."""

    scope: str
    records: dict[satchel.stores.Family, int]  # every searchable family, 0 when it holds none
    profile: bool

    @classmethod
    def of(cls, scope: str, counts: Mapping[satchel.stores.Family, int]) -> _ScopeRow:
        records = {family: counts.get(family, 0) for family in SEARCHABLE}
        return cls(scope, records, counts.get("profile", 0) > 0)

    def to_json(self) -> dict[str, object]:
        return {"scope": self.scope, "records": self.records, "profile": self.profile}

    def cells(self) -> list[str]:
        counts = [f"{self.records[family]:,}" for family in SEARCHABLE]
        return [self.scope, *counts, "yes" if self.profile else "no"]


def forget_command(args: argparse.Namespace) -> int:
    """``satchel forget``: take the memory entry a citation names out of search."""
    try:
        ref = satchel.MemoryRef(args.scope, full_id(args.id), args.version)
        taken = _on_store(args, lambda store: store.forget_memory(ref))
    except satchel.InvalidRequestError as exc:
        raise CommandError(str(exc), code=2) from exc
    except satchel.NotFoundError as exc:
        raise CommandError(str(exc)) from exc
    what = f"memory entry {args.id!r} in scope {ref.scope_id!r}"
    if taken is False:  # a store of another make may answer None: it did forget
        done = f"{what} was forgotten already; nothing changed (every version"
    else:
        done = f"forgot {what}: every version is out of search (and each"
    print(f"satchel forget: {done} stays readable with 'satchel get')", file=sys.stderr)
    return 0


def erase_command(args: argparse.Namespace) -> int:
    """``satchel erase``: erase every version of one memory entry (``--id``) or every
    record of a scope (``--all``), once the user confirmed it or passed ``--yes``."""
    if args.db is not None:
        existing_database(args.db)  # before the question: nothing to confirm without one
    scope = args.scope
    if args.all:
        _confirm(args, f"erase every record of scope {scope!r} in {store_label(args)}")
        records = _on_store(args, lambda store: store.erase_scope(scope))
        if not records:
            raise CommandError(f"nothing erased: scope {scope!r} holds no record")
        erased = f"{_count(records, 'record')} of every family in scope {scope!r}"
    else:
        entry_id = full_id(args.id)  # as a pack prints it (22 characters) or in full
        what = f"memory entry {entry_id!r} in scope {scope!r}"
        _confirm(args, f"erase every version of {what} in {store_label(args)}")
        versions = _on_store(args, lambda store: store.erase("memory", scope, entry_id))
        if not versions:
            raise CommandError(f"nothing erased: no {what} (never written, or erased already)")
        erased = f"{_count(versions, 'version')} of {what}"
    if args.db is not None:  # the ingest id map beside it must not keep the erased keys
        IdMap.load(args.db + ID_MAP_SUFFIX).purge(scope, None if args.all else entry_id)
    print(f"satchel erase: erased {erased}; nothing of them stays readable", file=sys.stderr)
    return 0


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


def _count(number: int, noun: str) -> str:
    return f"{number:,} {noun}{'' if number == 1 else 's'}"


def _on_store(args: argparse.Namespace, call: Callable[[satchel.Store], Awaitable[T]]) -> T:
    """``call`` on the existing store ``args`` names, closed after, with its DB spans
    exported when the environment asks. No embedder: the store alone answers a read or
    a forget, whatever built its vectors."""
    if args.db is not None:
        existing_database(args.db)

    async def run(provider: TracerProvider | None) -> T:
        store = await open_store(args, existing=True, tracer_provider=provider)
        try:
            return await call(store)
        finally:
            await store.aclose()

    with tracer_provider_from_env() as provider:
        return run_async(partial(run, provider), args.backend)


def store_label(args: argparse.Namespace) -> str:
    """Where the command reads or writes, as shown to the user (no password)."""
    return str(args.db) if args.store is None else satchel.stores.redact(args.store)


async def open_store(
    args: argparse.Namespace, *, existing: bool, tracer_provider: TracerProvider | None = None
) -> satchel.Store:
    """The store ``--db`` or ``--store`` names; ``existing``: a --db file must exist.
    ``tracer_provider`` receives its DB spans (the global provider's, if any, when None)."""
    if args.store is None:
        database = existing_database(args.db) if existing else args.db
        return await satchel.SqliteStore.open(database, tracer_provider=tracer_provider)
    try:
        return await satchel.stores.open_store(
            args.store, create=not existing, tracer_provider=tracer_provider
        )
    except satchel.InvalidRequestError as exc:
        raise CommandError(f"--store: {exc}", code=2) from exc


@contextlib.asynccontextmanager
async def observed_runtime(
    args: argparse.Namespace,
    embedder: satchel.Embedder,
    telemetry: Telemetry,
    *,
    existing: bool,
    gate: bool,
    **options: Any,
) -> AsyncIterator[satchel.Runtime]:
    """The runtime a command prepares with: over the store ``--db`` or ``--store`` names
    (``existing``: a --db file must exist), reporting to ``telemetry`` (its tracer and
    meter, scope names on spans only when it says so), the gate on when ``gate``, and
    ``options`` as ``open_runtime`` takes them. The one place a command opens both."""
    provider = telemetry.tracer_provider
    store = await open_store(args, existing=existing, tracer_provider=provider)
    async with satchel.open_runtime(
        store=store,
        embedder=embedder,
        tracer_provider=provider,
        meter_provider=telemetry.meter_provider,
        trace_identifiers=telemetry.trace_identifiers,
        recall_policy=satchel.RecallSufficiencyPolicy() if gate else None,
        **options,
    ) as runtime:
        yield runtime


def refuse_in_memory(args: argparse.Namespace, command: str) -> None:
    """A command that writes refuses a store that is gone when it ends."""
    if args.db == ":memory:" or (args.store or "").rstrip("/") in ("memory:", "sqlite:"):
        raise CommandError(
            f"--db must be a file: an in-memory store is gone when {command} ends", code=2
        )


def existing_database(path: str) -> str:
    """The path of a database that already exists; reading never creates one, nor
    opens a file of another kind (bad input, as a missing one)."""
    if not Path(path).is_file():
        raise CommandError(
            f"no database at {path}; create one with: satchel ingest WORKLOAD_DIR --db {path}",
            code=2,
        )
    with Path(path).open("rb") as file:
        if file.read(len(SQLITE_HEADER)) != SQLITE_HEADER:
            raise CommandError(f"{path} is not a satchel database (not an SQLite file)", code=2)
    return path


# ------------------------------------------------------------------------------- ingest


def ingest_command(args: argparse.Namespace) -> int:
    """``satchel ingest``: write a workload folder's entries into a database."""
    entries_path = _entries_file(Path(args.workload_dir))
    refuse_in_memory(args, "ingest")
    bar = ProgressBar(_count_lines(entries_path), sys.stderr, label="ingesting")
    skipped = _SkippedLines(bar)
    entries = skipped.filter(iter_entries(entries_path))
    # The workload's ids are stored as idempotency keys either way; the side file that
    # maps them to citations sits beside a --db file only.
    id_map = None if args.db is None else _MappedIds.beside(args.db)
    embedder = make_embedder(args.embedder)
    try:
        # Spans leave over OTLP when the environment asks for it (flushed as the block ends).
        with tracer_provider_from_env() as provider:
            run = partial(
                _ingest, args, entries, args.batch_size, bar, skipped, id_map, embedder, provider
            )
            report, failure = run_async(run, args.backend)
    finally:
        bar.finish()
        if id_map is not None:
            id_map.ids.compact()  # one line per id, also after a failure or a stop
    _print_report(report, skipped, store_label(args), id_map)
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
    batch_size: int,
    bar: ProgressBar,
    skipped: _SkippedLines,
    id_map: _MappedIds | None,
    embedder: satchel.Embedder,
    tracer_provider: TracerProvider | None,
) -> tuple[IngestReport, IngestError | None]:
    store = await open_store(args, existing=False, tracer_provider=tracer_provider)
    async with satchel.open_runtime(
        store=store, embedder=embedder, tracer_provider=tracer_provider
    ) as runtime:
        with _stop_on_signals() as stopping:
            try:
                report = await ingest(
                    runtime,
                    entries,
                    batch_size=batch_size,
                    progress=lambda done: bar.update(done + skipped.count),
                    # mapped batch by batch, so an interrupted ingest maps what it wrote
                    on_written=None if id_map is None else id_map.record,
                    should_stop=stopping.is_set,
                )
            except IngestError as exc:
                return exc.report, exc
    return report, None


@contextlib.contextmanager
def _stop_on_signals() -> Iterator[threading.Event]:
    """Turn SIGINT and SIGTERM into a request to stop between batches: the batch being
    written commits (and is mapped), the store closes, nothing is cut mid-write."""
    stopping = threading.Event()
    handled = [signal.SIGINT, signal.SIGTERM]
    previous = {number: signal.getsignal(number) for number in handled}
    for number in handled:
        signal.signal(number, lambda *_: stopping.set())
    try:
        yield stopping
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


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
        versions = _count(counts["new version"], "new version")
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
