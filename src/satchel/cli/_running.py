"""How a command runs: its one error, its event loop, and the store and runtime it opens.

Every command that opens a store and a runtime does it with :func:`open_command_runtime`,
and one that needs the store alone with :func:`on_store`: the store ``--db`` or
``--store`` names, its spans (and a runtime's spans and metrics) exported when the
standard OpenTelemetry variables ask for it (``_otlp``). Nothing here reaches below the
public API (``satchel.open_runtime``, ``satchel.stores``), and nothing here parses an
argument (``_options`` does) or prints a result (each command does).
"""

from __future__ import annotations

import contextlib
import importlib.util
import signal
import threading
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TypeVar
from urllib.parse import unquote, urlsplit

import anyio

import satchel
from satchel.embedders import from_spec

from .._otlp import tracer_provider_from_env
from .._wire import full_id

if TYPE_CHECKING:
    import argparse
    from collections.abc import AsyncIterator, Awaitable, Callable, Iterator

    from opentelemetry.trace import TracerProvider

    from .._otlp import Telemetry

#: The first bytes of every SQLite file (a --db that starts otherwise is no database).
SQLITE_HEADER: Final = b"SQLite format 3\x00"
#: The ingest id map beside a --db file: ``DB.ids.jsonl``.
ID_MAP_SUFFIX: Final = ".ids.jsonl"

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


def make_embedder(spec: str) -> satchel.Embedder:
    """The embedder a ``--embedder`` choice names: static, hashing or ``st:PATH``."""
    try:
        return from_spec(spec)
    except satchel.ModelLoadError as exc:
        raise CommandError(str(exc)) from exc


@contextlib.asynccontextmanager
async def open_command_runtime(
    args: argparse.Namespace,
    embedder: satchel.Embedder,
    telemetry: Telemetry,
    *,
    existing: bool,
    gate: bool = False,
    **options: Any,
) -> AsyncIterator[satchel.Runtime]:
    """The runtime a command works with: over the store ``--db`` or ``--store`` names
    (``existing``: a --db file must exist), reporting to ``telemetry`` (its tracer and
    meter, scope names on spans only when it says so), the gate on when ``gate``, and
    ``options`` as ``open_runtime`` takes them. The one place a command opens both.

    Keep ``with telemetry_from_env() as telemetry:`` around the whole ``run_async``, so
    that what the last calls recorded is exported before the process exits.
    """
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


def on_store(args: argparse.Namespace, call: Callable[[satchel.Store], Awaitable[T]]) -> T:
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


def on_memory_version(
    args: argparse.Namespace,
    call: Callable[[satchel.Store, satchel.MemoryRef], Awaitable[T]],
) -> tuple[satchel.MemoryRef, T]:
    """``call`` (as :func:`on_store`) on the memory version ``--scope``, ``--id`` (as a
    pack prints it, 22 characters, or in full) and ``--version`` name, and that version.
    A malformed one is bad input (exit 2); one the store does not hold exits 1."""
    try:
        ref = satchel.MemoryRef(args.scope, full_id(args.id), args.version)
        return ref, on_store(args, lambda store: call(store, ref))
    except satchel.InvalidRequestError as exc:
        raise CommandError(str(exc), code=2) from exc
    except satchel.NotFoundError as exc:
        raise CommandError(str(exc)) from exc


async def open_store(
    args: argparse.Namespace, *, existing: bool, tracer_provider: TracerProvider | None = None
) -> satchel.Store:
    """The store ``--db`` or ``--store`` names; ``existing``: a --db file must exist.
    ``tracer_provider`` receives its DB spans (the global provider's, if any, when None)."""
    if args.store is None:
        database = existing_database(args.db) if existing else new_or_existing(args.db)
        return await satchel.SqliteStore.open(database, tracer_provider=tracer_provider)
    refuse_missing_extra(args.store, "--store")
    try:
        return await satchel.stores.open_store(
            args.store, create=not existing, tracer_provider=tracer_provider
        )
    except satchel.InvalidRequestError as exc:
        raise CommandError(f"--store: {exc}", code=2) from exc


def store_label(args: argparse.Namespace) -> str:
    """Where the command reads or writes, as shown to the user (no password)."""
    return str(args.db) if args.store is None else satchel.stores.redact(args.store)


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


def new_or_existing(path: str) -> str:
    """The path of a database to write: a file, or none yet; a directory is bad input."""
    if Path(path).is_dir():
        raise CommandError(f"--db {path} is a directory, not a database file", code=2)
    return path


#: The packages a store URL's scheme needs, and the line that installs them.
STORE_EXTRAS: Final = {
    "seekdb": (("asyncmy", "pylibseekdb"), "pip install 'satchel[seekdb]'"),
    "oceanbase": (("asyncmy",), "pip install 'satchel[oceanbase]'"),
}


def refuse_missing_extra(url: str, option: str) -> None:
    """A store whose packages are not installed is bad input (exit 2, as every missing
    extra of every command), naming the extra that installs them."""
    scheme = urlsplit(url).scheme
    needed, install = STORE_EXTRAS.get(scheme, ((), ""))
    missing = [name for name in needed if importlib.util.find_spec(name) is None]
    if missing:
        raise CommandError(
            f"{option}: a {scheme}:// store needs {', '.join(missing)}: {install}",
            code=2,
        )


def missing_store(args: argparse.Namespace) -> str | None:
    """The file or directory ``--db`` or ``--store`` names when no store is there yet;
    None when one is, or when the store is not a local one (OceanBase, in memory)."""
    scheme, path = "sqlite", args.db
    if args.store is not None:
        parts = urlsplit(args.store)
        scheme, path = parts.scheme, unquote(parts.netloc + parts.path)
    if scheme not in ("sqlite", "seekdb") or path in ("", ":memory:", "/:memory:"):
        return None
    there = Path(path) / "store" if scheme == "seekdb" else Path(path)
    return None if there.exists() else path


def refuse_missing_store(args: argparse.Namespace, command: str) -> str | None:
    """A server's store must exist unless ``--create`` is given (a mistyped path would
    serve an empty store, and every prepare would come back empty); the path it will
    create, if any."""
    missing = missing_store(args)
    if missing is not None and not args.create:
        option = "--db" if args.store is None else "--store"
        raise CommandError(
            f"{option}: no store at {missing}; pass --create to {command} a new, empty one"
            " there (or check the path)",
            code=2,
        )
    return missing


def refuse_in_memory(args: argparse.Namespace, command: str) -> None:
    """A command that writes refuses a store that is gone when it ends."""
    if args.db == ":memory:" or (args.store or "").rstrip("/") in ("memory:", "sqlite:"):
        raise CommandError(
            f"--db must be a file: an in-memory store is gone when {command} ends", code=2
        )


@contextlib.contextmanager
def stop_on_signals() -> Iterator[threading.Event]:
    """Turn SIGINT and SIGTERM into a request to stop between batches: the batch being
    written commits, the store closes, nothing is cut mid-write."""
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


def counted(number: int, noun: str) -> str:
    """``1 version``, ``1,024 versions``."""
    return f"{number:,} {noun}{'' if number == 1 else 's'}"
