"""The client: each Runtime method as one request to the service, each answer read back
into the value the Runtime returns, each error answer into the error it would raise.

What it must never do: retry a request whose repetition could change what the service
holds or answers (a write without a key, an erase whose count would be lost, a prepare
that is a session's turn), or wait on a prepare longer than the service's own deadline
for it and the network's share.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Final, NoReturn, Self
from urllib.parse import quote

import anyio

import satchel

from .. import _wire as wire
from ..vocabulary import DEFAULT_PAGE, validate_request, validate_scope
from ..vocabulary._listing import listed_families, place_of, validate_flag, validate_limit

try:
    import httpx
except ModuleNotFoundError as missing:  # pragma: no cover - the extra is installed in tests
    raise ModuleNotFoundError(
        "satchel.Client needs httpx: pip install 'satchel[client]'", name=missing.name
    ) from missing

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from types import TracebackType


#: Seconds a request may take on the network (connecting, sending, each read) when the
#: caller gives no ``timeout``; a prepare gets its service-side deadline on top.
DEFAULT_TIMEOUT: Final = 10.0
#: Tries of an idempotent request: the first and two retries.
ATTEMPTS: Final = 3
#: Seconds before the first retry (doubling after), and the most a ``Retry-After`` waits.
FIRST_BACKOFF: Final = 0.05
MOST_BACKOFF: Final = 2.0

#: The service's error types (``error.type``) and the satchel error each becomes.
_ERRORS: Final[Mapping[str, type[satchel.SatchelError]]] = {
    "invalid_request": satchel.InvalidRequestError,
    "bad_request": satchel.InvalidRequestError,
    "payload_too_large": satchel.InvalidRequestError,
    "unsupported_media_type": satchel.InvalidRequestError,
    "not_found": satchel.NotFoundError,
    "timeout": satchel.PrepareTimeoutError,
    "store_unavailable": satchel.StoreUnavailableError,
    "store_error": satchel.StoreError,
    "insufficient_storage": satchel.StoreError,
}
#: Refusals of the token: the Runtime has no such error; these are PermissionErrors too.
_REFUSALS: Final = frozenset({"unauthorized", "forbidden", "misdirected_request"})


class _RefusedError(satchel.SatchelError, PermissionError):
    """The service refused the token (401) or its grant (403)."""


class Client:
    """The Runtime's public methods over a ``satchel serve`` service, so host code
    switches between ``open_runtime(...)`` and ``Client(url, token=...)`` by one line.

    Use it as ``async with satchel.Client(url, token=...) as rt:``; it keeps a pool of
    connections to the service until it closes. It runs on asyncio and on trio.

    Args:
        url: the service's base URL, e.g. ``http://127.0.0.1:8765``.
        token: the bearer token the service was given (``satchel serve --tokens``);
            None for a service without tokens.
        timeout: seconds each request may take on the network: connecting, sending,
            each read (10 when None). A prepare or explain waits, on top, the deadline
            the service sets for it (``deadline_for``), as a Runtime's call would.

    Raises:
        InvalidRequestError: an argument is malformed (the message names it).
    """

    def __init__(self, url: str, *, token: str | None = None, timeout: float | None = None) -> None:
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise satchel.InvalidRequestError("url must be an http:// or https:// URL")
        if token is not None and (not isinstance(token, str) or not token):
            raise satchel.InvalidRequestError("token must be a non-empty string or None")
        if timeout is None:
            timeout = DEFAULT_TIMEOUT
        if isinstance(timeout, bool) or not isinstance(timeout, int | float):
            raise satchel.InvalidRequestError("timeout must be a positive number of seconds")
        if not 0 < timeout < math.inf:
            raise satchel.InvalidRequestError("timeout must be a positive number of seconds")
        self._url = url.rstrip("/")
        self._timeout = float(timeout)
        headers = {} if token is None else {"Authorization": f"Bearer {token}"}
        self._http = httpx.AsyncClient(
            base_url=self._url, headers=headers, timeout=self._timeout, trust_env=False
        )
        #: The service's prepare deadline (the same for every valid request: it follows
        #: the service's options), read once, on the first prepare.
        self._deadline: float | None = None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the pooled connections."""
        with anyio.CancelScope(shield=True):
            await self._http.aclose()

    # -- prepare --------------------------------------------------------------------

    async def prepare_context(
        self, request: object, *, session_owner: str | None = None
    ) -> satchel.PreparedContext:
        """:meth:`satchel.Runtime.prepare_context`, served by the service.

        The service names the session's owner by the token (``session_owner`` must be
        None). The request is checked here first, as the Runtime checks it.

        Raises:
            InvalidRequestError, PrepareFailedError, PrepareTimeoutError: as the
                Runtime's; StoreUnavailableError: the service cannot be reached.
        """
        body = await self._prepare("/v1/context/prepare", request, session_owner)
        return wire.context_of(body)

    async def explain_context(
        self, request: object, *, session_owner: str | None = None
    ) -> satchel.Explanation:
        """:meth:`satchel.Runtime.explain_context`, served by the service."""
        body = await self._prepare("/v1/context/explain", request, session_owner)
        return wire.explanation_of(body)

    async def deadline_for(self, request: object) -> float:
        """:meth:`satchel.Runtime.deadline_for` as the service computes it, in seconds
        (``math.inf``: unbounded). Awaited: the one method a Runtime answers without
        waiting and a client asks the service for (once; it keeps the answer)."""
        checked = _checked(request)
        if self._deadline is None:
            body = await self._call(
                "POST", "/v1/context/deadline", json=wire.request_json(checked), retry=True
            )
            seconds = body["deadline_seconds"]
            self._deadline = math.inf if seconds is None else float(seconds)
        return self._deadline

    async def _prepare(self, path: str, request: object, session_owner: str | None) -> Any:
        if session_owner is not None:
            raise satchel.InvalidRequestError(
                "session_owner must be None: the service names the session's owner by the token"
            )
        checked = _checked(request)
        deadline = await self.deadline_for(checked)
        # A request with a session is a turn: sent twice, it would be two.
        retry = checked.session_id is None
        read = None if math.isinf(deadline) else deadline + self._timeout
        limits = httpx.Timeout(self._timeout, read=read)
        return await self._call(
            "POST", path, json=wire.request_json(checked), retry=retry, limits=limits
        )

    # -- memories -------------------------------------------------------------------

    async def add_memories(
        self, scope_id: str, entries: Sequence[satchel.MemoryEntry]
    ) -> list[satchel.MemoryRef]:
        """:meth:`satchel.Runtime.add_memories`: one batch, all or nothing. Retried
        when the connection fails only if every entry has a key (a keyed write is
        idempotent: its repetition writes nothing)."""
        if isinstance(entries, satchel.MemoryEntry | str) or not _is_sequence(entries):
            raise satchel.InvalidRequestError("entries must be a sequence of satchel.MemoryEntry")
        spelled = []
        for index, entry in enumerate(entries):
            if not isinstance(entry, satchel.MemoryEntry):
                raise satchel.InvalidRequestError(f"entries[{index}] must be a satchel.MemoryEntry")
            spelled.append(wire.entry_json(entry))
        keyed = all(entry.key is not None for entry in entries)
        body = await self._call(
            "POST", "/v1/memories", json={"scope_id": scope_id, "entries": spelled}, retry=keyed
        )
        return [wire.ref_of(ref) for ref in body["refs"]]

    async def get_memory(self, ref: satchel.MemoryRef) -> satchel.MemoryRecord:
        """:meth:`satchel.Runtime.get_memory`: exactly the version ``ref`` names.

        Raises:
            NotFoundError: the entry or version does not exist, or was erased.
        """
        ref = _memory_ref(ref)
        params = {"version": str(ref.version)}
        body = await self._call("GET", _memory_path(ref), params=params, retry=True)
        return wire.record_of(body)

    async def update_memory(
        self, ref: satchel.MemoryRef, entry: satchel.MemoryEntry
    ) -> satchel.MemoryRef:
        """:meth:`satchel.Runtime.update_memory`: a new version of the entry. Not
        retried: each update is a version."""
        ref = _memory_ref(ref)
        if not isinstance(entry, satchel.MemoryEntry):
            raise satchel.InvalidRequestError("entry must be a satchel.MemoryEntry")
        body = await self._call(
            "PUT",
            _memory_path(ref),
            params={"version": str(ref.version)},
            json={"entry": wire.entry_json(entry)},
            retry=False,
        )
        return wire.ref_of(body)

    async def forget_memory(self, ref: satchel.MemoryRef) -> None:
        """:meth:`satchel.Runtime.forget_memory` (idempotent: retried)."""
        ref = _memory_ref(ref)
        params = {"version": str(ref.version)}
        await self._call("DELETE", _memory_path(ref), params=params, retry=True)

    async def erase(self, target: satchel.Citation | satchel.MemoryRef) -> int:
        """:meth:`satchel.Runtime.erase`: every version of the record ``target`` names.
        Not retried: a repeated erase answers 0, and the first one's count would be
        lost.

        Returns:
            How many versions were erased (a profile is one).
        """
        if isinstance(target, satchel.MemoryRef):
            ref = _memory_ref(target, "target")
            body = await self._call(
                "DELETE", _memory_path(ref), params={"erase": "true"}, retry=False
            )
            return int(body["erased_versions"])
        if not isinstance(target, satchel.Citation):
            raise satchel.InvalidRequestError(
                "target must be a satchel.Citation or a satchel.MemoryRef"
            )
        cited = wire.citation_json(target)
        body = await self._call("POST", "/v1/erase", json={"target": cited}, retry=False)
        return int(body["erased_versions"])

    async def erase_scope(self, scope_id: str) -> int:
        """:meth:`satchel.Runtime.erase_scope`. Not retried (see :meth:`erase`)."""
        validate_scope(scope_id, "scope_id")
        body = await self._call("DELETE", f"/v1/scopes/{quote(scope_id, safe='')}", retry=False)
        return int(body["erased_records"])

    # -- listing --------------------------------------------------------------------

    async def list_scopes(self) -> tuple[satchel.ScopeSummary, ...]:
        """:meth:`satchel.Runtime.list_scopes`: the scopes the token may read."""
        body = await self._call("GET", "/v1/scopes", retry=True)
        return tuple(wire.scope_summary_of(summary) for summary in body["scopes"])

    async def list_records(
        self,
        scope_id: str,
        family: str | None = None,
        *,
        include_forgotten: bool = False,
        cursor: str | None = None,
        limit: int = DEFAULT_PAGE,
    ) -> satchel.RecordPage:
        """:meth:`satchel.Runtime.list_records`: one keyset page, newest first."""
        # Checked as the Runtime checks them: the same errors, before sending.
        validate_scope(scope_id, "scope_id")
        listed_families(family)
        validate_flag(include_forgotten, "include_forgotten")
        validate_limit(limit)
        place_of(cursor)
        params = {"forgotten": "true" if include_forgotten else "false", "limit": str(limit)}
        if family is not None:
            params["family"] = family
        if cursor is not None:
            params["cursor"] = cursor
        path = f"/v1/scopes/{quote(scope_id, safe='')}/records"
        return wire.record_page_of(await self._call("GET", path, params=params, retry=True))

    # -- the other families -----------------------------------------------------------

    async def add_experiences(
        self, scope_id: str, experiences: Sequence[satchel.Experience]
    ) -> list[satchel.RecordRef]:
        """:meth:`satchel.Runtime.add_experiences` (retried only when every one has a key)."""
        return await self._batch("/v1/experiences", "experiences", scope_id, experiences)

    async def add_topic_memories(
        self, scope_id: str, topics: Sequence[satchel.TopicMemory]
    ) -> list[satchel.RecordRef]:
        """:meth:`satchel.Runtime.add_topic_memories` (retried only when every one has a
        key)."""
        return await self._batch("/v1/topic-memories", "topics", scope_id, topics)

    async def add_resources(
        self, scope_id: str, resources: Sequence[satchel.Resource]
    ) -> list[satchel.RecordRef]:
        """:meth:`satchel.Runtime.add_resources` (retried only when every one has a key)."""
        return await self._batch("/v1/resources", "resources", scope_id, resources)

    async def set_profile(self, scope_id: str, profile: satchel.Profile) -> None:
        """:meth:`satchel.Runtime.set_profile` (idempotent, latest wins: retried)."""
        validate_scope(scope_id, "scope_id")
        if not isinstance(profile, satchel.Profile):
            raise satchel.InvalidRequestError("profile must be a satchel.Profile")
        path = f"/v1/profiles/{quote(scope_id, safe='')}"
        await self._call("PUT", path, json={"profile": wire.fields_json(profile)}, retry=True)

    async def _batch(
        self, path: str, argument: str, scope_id: str, records: Sequence[Any]
    ) -> list[satchel.RecordRef]:
        kind = wire.RECORD_TYPES[argument]
        if not _is_sequence(records):
            raise satchel.InvalidRequestError(
                f"{argument} must be a sequence of satchel.{kind.__name__}"
            )
        for index, record in enumerate(records):
            if not isinstance(record, kind):
                raise satchel.InvalidRequestError(
                    f"{argument}[{index}] must be a satchel.{kind.__name__}"
                )
        spelled = [wire.fields_json(record) for record in records]
        keyed = all(record.key is not None for record in records)
        body = await self._call(
            "POST", path, json={"scope_id": scope_id, argument: spelled}, retry=keyed
        )
        return [wire.record_ref_of(ref) for ref in body["refs"]]

    # -- the wire -------------------------------------------------------------------

    async def _call(
        self,
        method: str,
        path: str,
        *,
        retry: bool,
        json: object = None,
        params: Mapping[str, str] | None = None,
        limits: httpx.Timeout | None = None,
    ) -> Any:
        """One request's JSON answer (None for 204), retried when ``retry`` allows it
        and the failure was the connection's or the store's (503)."""
        extra: dict[str, Any] = {} if limits is None else {"timeout": limits}
        for attempt in range(ATTEMPTS):
            last = attempt == ATTEMPTS - 1
            try:
                response = await self._http.request(method, path, json=json, params=params, **extra)
            except httpx.TimeoutException as exc:
                if path.startswith(("/v1/context/prepare", "/v1/context/explain")):
                    raise satchel.PrepareTimeoutError(
                        "the prepare did not finish before its deadline"
                    ) from exc
                if retry and not last:
                    await anyio.sleep(_backoff(attempt))
                    continue
                raise _unreachable(self._url, exc) from exc
            except httpx.TransportError as exc:
                # A refused connection sent nothing: any request may go again.
                if (retry or isinstance(exc, httpx.ConnectError)) and not last:
                    await anyio.sleep(_backoff(attempt))
                    continue
                raise _unreachable(self._url, exc) from exc
            if response.status_code == 503 and retry and not last:
                await anyio.sleep(_retry_after(response, attempt))
                continue
            if response.is_success:
                return None if response.status_code == 204 else _answer(response)
            _raise_for(response)
        raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises


def _checked(request: object) -> satchel.PrepareContextRequest:
    """``request``, checked as the Runtime checks it (the same errors, before sending)."""
    validate_request(request)
    assert isinstance(request, satchel.PrepareContextRequest)
    return request


def _memory_ref(ref: object, name: str = "ref") -> satchel.MemoryRef:
    if not isinstance(ref, satchel.MemoryRef):
        raise satchel.InvalidRequestError(f"{name} must be a satchel.MemoryRef")
    for field in ("scope_id", "entry_id"):
        value = getattr(ref, field)
        if not isinstance(value, str) or not value:
            raise satchel.InvalidRequestError(f"{name}.{field} must be a non-empty string")
    version = ref.version
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise satchel.InvalidRequestError(f"{name}.version must be an integer in 1..2**63-1")
    return ref


def _memory_path(ref: satchel.MemoryRef) -> str:
    return f"/v1/memories/{quote(ref.scope_id, safe='')}/{quote(ref.entry_id, safe='')}"


def _is_sequence(value: object) -> bool:
    return isinstance(value, list | tuple)


def _retry_after(response: httpx.Response, attempt: int) -> float:
    """Seconds to wait before retrying a 503: its ``Retry-After``, within bounds."""
    spelled = response.headers.get("retry-after", "")
    if spelled.isdigit():
        return min(float(spelled), MOST_BACKOFF)
    return _backoff(attempt)


def _backoff(attempt: int) -> float:
    """Seconds before retry ``attempt + 1``: doubling from :data:`FIRST_BACKOFF`."""
    return FIRST_BACKOFF * float(2**attempt)


def _unreachable(url: str, exc: httpx.HTTPError) -> satchel.StoreUnavailableError:
    return satchel.StoreUnavailableError(
        f"the satchel service at {url} cannot be reached ({type(exc).__name__}: {exc})"
    )


def _answer(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        raise satchel.SatchelError(
            f"the service answered {response.status_code} with a body that is not JSON"
        ) from None


def _raise_for(response: httpx.Response) -> NoReturn:
    """The satchel error the service's error answer names."""
    try:
        error = response.json()["error"]
        kind, message = error["type"], error["message"]
    except (ValueError, KeyError, TypeError):
        raise satchel.SatchelError(
            f"the service answered {response.status_code} without a satchel error"
        ) from None
    if kind in _REFUSALS:
        raise _RefusedError(f"the service refused the request: {message}")
    raise _ERRORS.get(kind, satchel.SatchelError)(message)
