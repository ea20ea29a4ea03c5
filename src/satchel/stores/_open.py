"""``open_store(url)``: a store named by a URL, for the CLI and for configuration.

- ``sqlite:///path/to/file.db`` (``sqlite://`` or ``sqlite:///:memory:``: in memory)
- ``memory://``: the in-process reference store
- ``seekdb:///abs/dir``: an embedded seekdb engine on that directory, started here and
  stopped when the store closes (``?database=NAME``, default ``satchel``); a keeper
  process keeps it up until a killed process's writes are rolled back
  (``oceanbase/_engine.py``)
- ``oceanbase://user:pass@host:port/db`` (``?unix_socket=/path`` for a local socket)

Credentials in a URL never reach a message, a log line or a ``repr``: :func:`redact`.
"""

from __future__ import annotations

import importlib.util
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, unquote, urlsplit, urlunsplit

import anyio.to_thread

from ..vocabulary import _telemetry as tracing
from ..vocabulary._errors import InvalidRequestError, StoreError
from .memory import MemoryStore
from .oceanbase import OceanBaseStore
from .oceanbase._engine import EmbeddedEngine
from .sqlite import SqliteStore

if TYPE_CHECKING:
    from collections.abc import Generator
    from types import TracebackType

    from opentelemetry.trace import TracerProvider

    from ._protocol import Store

SCHEMES = ("sqlite", "memory", "seekdb", "oceanbase")


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

    def __init__(self, url: str, tracer_provider: TracerProvider | None = None) -> None:
        if not isinstance(url, str):
            raise InvalidRequestError("url must be a string")
        tracing.check_provider(tracer_provider)
        self._url = url
        self._tracer_provider = tracer_provider
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
            return await SqliteStore.open(path, tracer_provider=self._tracer_provider)
        if scheme == "memory":
            return MemoryStore()
        if scheme == "seekdb":
            directory = unquote(parts.path) if not parts.netloc else parts.netloc + parts.path
            database = query.get("database", "satchel")
            return await _embedded_seekdb(directory, database, self._tracer_provider)
        if scheme == "oceanbase":
            return _oceanbase(parts.hostname, port, parts, query, self._tracer_provider)
        raise InvalidRequestError(
            f"url scheme must be one of {', '.join(SCHEMES)}, not {scheme!r}"
            f" (in {redact(self._url)!r})"
        )


def open_store(url: str, *, tracer_provider: TracerProvider | None = None) -> StoreOpening:
    """The store ``url`` names (see the module); ``await`` it, or ``async with`` it.

    ``tracer_provider`` receives the store's DB spans (the global provider when None;
    the in-process ``memory://`` store traces nothing).

    Raises:
        InvalidRequestError: the URL is malformed or names no known scheme, or
            ``tracer_provider`` is not a ``TracerProvider``.
        StoreError: the store cannot be opened.
    """
    return StoreOpening(url, tracer_provider)


async def _embedded_seekdb(
    directory: str, database: str, tracer_provider: TracerProvider | None
) -> OceanBaseStore:
    if not directory.startswith("/"):
        raise InvalidRequestError(
            f"a seekdb URL names an absolute directory (seekdb:///abs/dir), not {directory!r}"
        )
    if importlib.util.find_spec("pylibseekdb") is None:
        raise StoreError("seekdb:// needs the pylibseekdb package: pip install satchel[seekdb]")
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
