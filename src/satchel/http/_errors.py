"""The service's error bodies, and how satchel's errors become HTTP statuses.

Every error is one JSON object ``{"error": {"type": ..., "message": ..., "field": ...}}``:
``field`` names the request field at fault (``max_bytes``, ``entries[2].created_at``,
``version``) or is null. A response never carries a traceback; an unexpected exception
is logged on the server (logger ``satchel.http``) and answered with a generic 500.

A store fault is not unexpected: a :class:`satchel.StoreError` (the database file was
removed, replaced or damaged, the store is closed) is a 503 whose message is the
store's own, after its type name, and a full disk is a 507; both are logged too. Only
:class:`satchel.StoreUnavailableError`, whose cause may name hosts, keeps its message
to the log.
"""

from __future__ import annotations

import errno
import logging
import re
import sqlite3
from typing import TYPE_CHECKING, Final

from starlette.responses import JSONResponse

import satchel

if TYPE_CHECKING:
    from collections.abc import Collection, Mapping

    from .._contract import ErrorType

logger: Final = logging.getLogger("satchel.http")

#: Headers every API response carries: memory is private and never cached.
NO_STORE: Final = {"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"}

#: A field path as satchel's messages spell it: ``entries[2].tags[0]``, ``detail['memory']``.
_FIELD: Final = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*|\[[^\]\s]*\])*")
#: satchel names a reference's parts ``ref.*``; the service's URL calls them so.
_REF_FIELDS: Final = {"ref.scope_id": "scope", "ref.entry_id": "entry_id", "ref.version": "version"}


class HttpError(Exception):
    """A request the service refuses: the status, the error's type, a message and the
    field at fault (None when no one field is)."""

    def __init__(
        self,
        status: int,
        kind: ErrorType,
        message: str,
        field: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.kind = kind
        self.message = message
        self.field = field
        self.headers = dict(headers or {})

    def response(self) -> JSONResponse:
        return error_response(self.status, self.kind, self.message, self.field, self.headers)


def error_response(
    status: int,
    kind: ErrorType,
    message: str,
    field: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> JSONResponse:
    """The JSON error body with ``status``.

    A message or field may echo what the client sent (an unknown field's name), which
    can hold a lone surrogate that UTF-8 cannot encode: such characters are written as
    their ``\\udXXX`` escape, so every error body can be sent whatever the request held.
    """
    body = {"error": {"type": kind, "message": _encodable(message), "field": _encodable(field)}}
    return JSONResponse(body, status_code=status, headers={**NO_STORE, **(headers or {})})


def _encodable(text: str | None) -> str | None:
    """``text`` with every character UTF-8 cannot encode (a lone surrogate) escaped."""
    if text is None:
        return None
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def invalid(message: str, field: str | None) -> HttpError:
    """A 422 ``invalid_request`` naming ``field``."""
    return HttpError(422, "invalid_request", message, field)


def from_satchel(error: satchel.SatchelError, fields: Collection[str]) -> HttpError:
    """The HTTP error a satchel error raised while serving a request becomes.

    ``fields`` are the top-level request fields of the endpoint: an
    ``InvalidRequestError`` whose message starts with one of them (``max_bytes must
    be ...``, ``entries[2].text must be ...``) names it as its ``field``.
    """
    if isinstance(error, satchel.InvalidRequestError):
        message, field = _named(str(error), fields)
        return invalid(message, field)
    if isinstance(error, satchel.NotFoundError):
        return HttpError(404, "not_found", str(error))
    if isinstance(error, satchel.StoreUnavailableError):
        # The cause may name hosts or paths: the log has it, the client only a retry hint.
        logger.warning("store unavailable: %s", error)
        return HttpError(
            503,
            "store_unavailable",
            "the store cannot be reached now; retry later",
            headers={"Retry-After": "1"},
        )
    if isinstance(error, satchel.PrepareTimeoutError):
        return timed_out()
    fault = _store_fault(error)
    if fault is not None:
        return store_failed(fault)
    logger.error("satchel error while serving a request", exc_info=error)
    return internal(error)


def store_failed(fault: satchel.StoreError) -> HttpError:
    """A 503 (507 when the disk is full) carrying the store's own message."""
    logger.error("store fault while serving a request: %s", fault, exc_info=fault)
    if _disk_full(fault):
        return HttpError(507, "insufficient_storage", f"{type(fault).__name__}: {fault}")
    return HttpError(503, "store_error", f"{type(fault).__name__}: {fault}")


def _store_fault(error: satchel.SatchelError) -> satchel.StoreError | None:
    """The store error behind ``error``: itself, or the first a failed prepare's
    searches raised (the prepare raises PrepareFailedError from their group)."""
    if isinstance(error, satchel.StoreError):
        return error
    group = error.__cause__
    if not isinstance(error, satchel.PrepareFailedError) or not isinstance(
        group, BaseExceptionGroup
    ):
        return None
    faults, _ = group.split(satchel.StoreError)
    return None if faults is None else _first(faults)


def _first(group: BaseExceptionGroup[satchel.StoreError]) -> satchel.StoreError:
    first = group.exceptions[0]
    return _first(first) if isinstance(first, BaseExceptionGroup) else first


def _disk_full(fault: BaseException) -> bool:
    """Whether ``fault`` comes of a full disk: SQLite's SQLITE_FULL, or ENOSPC/EDQUOT."""
    cause: BaseException | None = fault
    while cause is not None:
        if (
            isinstance(cause, sqlite3.Error)
            and cause.sqlite_errorcode & 0xFF == sqlite3.SQLITE_FULL
        ):
            return True
        if isinstance(cause, OSError) and cause.errno in (errno.ENOSPC, errno.EDQUOT):
            return True
        cause = cause.__cause__
    return "database or disk is full" in str(fault)


def timed_out() -> HttpError:
    """A 504: the prepare did not finish before its deadline."""
    return HttpError(504, "timeout", "the prepare did not finish before its deadline")


def internal(error: BaseException) -> HttpError:
    """A 500 that names the error's kind and nothing else (the log has the rest)."""
    return HttpError(
        500,
        "internal",
        f"the request could not be served ({type(error).__name__}); see the server log",
    )


def _named(message: str, fields: Collection[str]) -> tuple[str, str | None]:
    """satchel's message, and the field it starts with if that is one of ``fields``."""
    for prefix, name in _REF_FIELDS.items():
        if message.startswith(prefix):
            message = name + message.removeprefix(prefix)
    match = _FIELD.match(message)
    if match is None:
        return message, None
    field = match.group()
    root = re.split(r"[.\[]", field, maxsplit=1)[0]
    return message, field if root in fields else None
