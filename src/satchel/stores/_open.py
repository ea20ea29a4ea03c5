"""``open_store(url)``: a store named by a URL, for the CLI and for configuration.

- ``sqlite:///path/to/file.db`` (``sqlite://`` or ``sqlite:///:memory:``: in memory)
- ``memory://``: the in-process reference store
- ``seekdb:///abs/dir``: an embedded seekdb engine on that directory, started here and
  stopped when the store closes (``?database=NAME``, default ``satchel``); a keeper
  process keeps it up until a killed process's writes are rolled back
  (``oceanbase/_engine.py``). The directory is new, empty or the engine's own: one that
  holds anything else (a mistyped path into a checkout) is refused before the engine
  writes its ``etc``, ``log``, ``run`` and ``store`` folders there.
- ``oceanbase://user:pass@host:port/db`` (``?unix_socket=/path`` for a local socket)

``create=False`` opens only a store that exists (an SQLite file, a seekdb directory the
engine has written), so a reader's mistyped path is refused instead of becoming a new,
empty store. Credentials in a URL never reach a message, a log line or a ``repr``:
:func:`redact`.
"""

from __future__ import annotations

import importlib.util
import os
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import parse_qs, unquote, urlsplit, urlunsplit

import anyio.to_thread

from ..vocabulary import _telemetry as tracing
from ..vocabulary._errors import InvalidRequestError, StoreError
from .memory import MemoryStore
from .sqlite import SqliteStore

if TYPE_CHECKING:
    from collections.abc import Generator
    from types import TracebackType

    from opentelemetry.trace import TracerProvider

    from ._protocol import Store
    from .oceanbase import OceanBaseStore

SCHEMES = ("sqlite", "memory", "seekdb", "oceanbase")
#: What the seekdb engine keeps in its directory. A directory holding anything else is
#: not one of its own, unless it holds the engine's configuration and data (``etc`` and
#: ``store``): a directory the engine has written is its own, whatever else is in it.
SEEKDB_ENTRIES: Final = frozenset({"etc", "log", "run", "store"})
#: The first bytes of every SQLite database file.
SQLITE_HEADER: Final = b"SQLite format 3\x00"


def redact(url: str) -> str:
    """``url`` with any password replaced by ``***``."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    user = parts.username or ""
    return urlunsplit(parts._replace(netloc=f"{user}:***@{host}"))


class StoreOpening:
    """What :func:`open_store` returns: await it for the store (the caller closes it),
    or use it as ``async with open_store(url) as store`` (closed on exit)."""

    def __init__(
        self, url: str, tracer_provider: TracerProvider | None = None, *, create: bool = True
    ) -> None:
        if not isinstance(url, str):
            raise InvalidRequestError("url must be a string")
        tracing.check_provider(tracer_provider)
        self._url = url
        self._tracer_provider = tracer_provider
        self._create = create
        self._store: Store | None = None

    def __await__(self) -> Generator[Any, None, Store]:
        return self._open().__await__()

    async def __aenter__(self) -> Store:
        self._store = await self._open()
        return self._store

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._store is not None:
            await self._store.aclose()

    async def _open(self) -> Store:
        try:
            parts = urlsplit(self._url)
            port = parts.port
        except ValueError as exc:
            raise InvalidRequestError(f"url is malformed: {redact(self._url)!r}") from exc
        scheme = parts.scheme
        query = {key: values[-1] for key, values in parse_qs(parts.query).items()}
        if scheme == "sqlite":
            path = unquote(parts.path) or ":memory:"
            if path != ":memory:" and path.startswith("/:memory:"):
                path = ":memory:"
            if not self._create and path != ":memory:":
                await anyio.to_thread.run_sync(_existing_sqlite, path)
            return await SqliteStore.open(path, tracer_provider=self._tracer_provider)
        if scheme == "memory":
            return MemoryStore()
        if scheme == "seekdb":
            directory = unquote(parts.path) if not parts.netloc else parts.netloc + parts.path
            database = query.get("database", "satchel")
            return await _embedded_seekdb(
                directory, database, self._tracer_provider, create=self._create
            )
        if scheme == "oceanbase":
            return _oceanbase(parts.hostname, port, parts, query, self._tracer_provider)
        raise InvalidRequestError(
            f"url scheme must be one of {', '.join(SCHEMES)}, not {scheme!r}"
            f" (in {redact(self._url)!r})"
        )


def open_store(
    url: str, *, create: bool = True, tracer_provider: TracerProvider | None = None
) -> StoreOpening:
    """The store ``url`` names (see the module); ``await`` it, or ``async with`` it.

    ``create=False`` opens an existing SQLite file or seekdb directory only (a reader's
    choice: a mistyped path is refused, not made into an empty store); OceanBase and
    in-memory stores open either way. ``tracer_provider`` receives the store's DB spans
    (the global provider when None; the in-process ``memory://`` store traces nothing).

    Raises:
        InvalidRequestError: the URL is malformed or names no known scheme; with
            ``create=False`` it names no existing store; a seekdb directory holds files
            that are not the engine's; or ``tracer_provider`` is not a ``TracerProvider``.
        StoreError: the store cannot be opened.
    """
    return StoreOpening(url, tracer_provider, create=create)


def _existing_sqlite(path: str) -> None:
    """Refuse ``path`` unless it is an SQLite database file."""
    try:
        with open(path, "rb") as file:
            header = file.read(len(SQLITE_HEADER))
    except FileNotFoundError:
        raise InvalidRequestError(f"url names no store: there is no file at {path!r}") from None
    except OSError as exc:
        raise InvalidRequestError(f"url names no store: cannot read {path!r}: {exc}") from exc
    if header != SQLITE_HEADER:
        raise InvalidRequestError(f"url names no store: {path!r} is not an SQLite database")


def _check_seekdb_directory(directory: str, *, create: bool) -> None:
    """Refuse a directory the engine must not start in: one holding anything but its own
    folders (it would write them among someone else's files) and, unless ``create``,
    one it has not written yet."""
    folder = Path(directory)
    if not folder.exists():
        if create:  # the engine makes its own folder, but not the folders above it
            try:
                folder.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise InvalidRequestError(
                    f"url names a seekdb directory whose parent cannot be made: {exc}"
                ) from exc
            return
        raise InvalidRequestError(f"url names no store: there is no directory at {directory!r}")
    if not folder.is_dir():
        raise InvalidRequestError(f"url names no seekdb directory: {directory!r} is a file")
    entries = set(os.listdir(folder))
    foreign = sorted(entries - SEEKDB_ENTRIES)
    if foreign and not {"etc", "store"} <= entries:
        shown = ", ".join(foreign[:3]) + (", ..." if len(foreign) > 3 else "")
        raise InvalidRequestError(
            f"url names a directory that is not a seekdb engine's: {directory!r} holds"
            f" {shown}; give seekdb an empty or new directory of its own"
        )
    if not create and "store" not in entries:
        raise InvalidRequestError(f"url names no store: {directory!r} holds no seekdb engine")


async def _embedded_seekdb(
    directory: str, database: str, tracer_provider: TracerProvider | None, *, create: bool
) -> OceanBaseStore:
    if not directory.startswith("/"):
        raise InvalidRequestError(
            f"a seekdb URL names an absolute directory (seekdb:///abs/dir), not {directory!r}"
        )
    await anyio.to_thread.run_sync(partial(_check_seekdb_directory, directory, create=create))
    if importlib.util.find_spec("pylibseekdb") is None:
        raise StoreError("seekdb:// needs the pylibseekdb package: pip install satchel[seekdb]")
    from .oceanbase import OceanBaseStore  # imported when used: see satchel.stores
    from .oceanbase._engine import EmbeddedEngine

    try:
        engine = await anyio.to_thread.run_sync(EmbeddedEngine.start, directory)
    except Exception as exc:
        raise StoreError(f"cannot start seekdb on {directory!r}: {exc}") from exc
    return OceanBaseStore(
        unix_socket=engine.socket,
        database=database,
        tracer_provider=tracer_provider,
        on_close=engine.close,
    )


def _oceanbase(
    host: str | None,
    port: int | None,
    parts: Any,
    query: dict[str, str],
    tracer_provider: TracerProvider | None,
) -> OceanBaseStore:
    from .oceanbase import OceanBaseStore  # imported when used: see satchel.stores

    database = unquote(parts.path.lstrip("/")) or "satchel"
    socket = query.get("unix_socket")
    if host is None and socket is None:
        raise InvalidRequestError(
            "an oceanbase URL names a host (oceanbase://user:pass@host:port/db)"
        )
    return OceanBaseStore(
        host=host,
        port=port or 2881,
        user=unquote(parts.username or "root"),
        password=unquote(parts.password or ""),
        database=database,
        unix_socket=socket,
        tracer_provider=tracer_provider,
    )
