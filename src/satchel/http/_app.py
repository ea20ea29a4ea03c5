"""``create_app``: satchel's public API as an HTTP service (a Starlette ASGI app).

Routes (``docs/service.md`` and ``GET /openapi.json`` describe them in full):

=========================================  =============================================
``POST /v1/context/prepare``               ``Runtime.prepare_context``
``POST /v1/context/explain``               ``Runtime.explain_context`` (same body as prepare)
``POST /v1/context/deadline``              ``Runtime.deadline_for`` (same body as prepare)
``POST /v1/memories``                      ``Runtime.add_memories`` (all or nothing)
``GET /v1/memories/{scope}/{entry_id}``    ``Runtime.get_memory`` (``?version=N``)
``PUT /v1/memories/{scope}/{entry_id}``    ``Runtime.update_memory`` (``?version=N``)
``DELETE /v1/memories/{scope}/{entry_id}`` ``Runtime.forget_memory`` (``?version=N``), or
                                           ``Runtime.erase`` (``?erase=true``)
``GET /v1/scopes``                         ``Runtime.list_scopes`` (those the token may read)
``GET /v1/scopes/{scope}/records``         ``Runtime.list_records`` (``?family=&forgotten=``
                                           ``&cursor=&limit=``)
``DELETE /v1/scopes/{scope}``              ``Runtime.erase_scope``
``POST /v1/experiences``                   ``Runtime.add_experiences``
``POST /v1/topic-memories``                ``Runtime.add_topic_memories``
``POST /v1/resources``                     ``Runtime.add_resources``
``PUT /v1/profiles/{scope}``               ``Runtime.set_profile``
``POST /v1/erase``                         ``Runtime.erase`` of any record, by citation
``GET /healthz``                           liveness, no authentication
``GET /openapi.json``                      the OpenAPI 3.1 document, no authentication
``/ui/``                                   the inspector's pages (``ui=False``: none)
=========================================  =============================================

A request goes through, in order: the Host check (when ``allowed_hosts`` is given), the
bearer token (401), the media type (415), the body's size (413), its JSON syntax (400),
its shape (422), the token's grant on every scope it names (403), then satchel's own
validation (422) and the call (404, 503, 504, 500).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Final

import anyio
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import ClientDisconnect
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

import satchel

from .. import _wire as wire
from .._contract import DEFAULT_PAGE, MAX_PAGE
from . import _bodies as bodies
from ._auth import EVERYTHING, TokenGrant, Tokens, check_tokens
from ._errors import (
    NO_STORE,
    HttpError,
    error_response,
    from_satchel,
    internal,
    invalid,
    logger,
    timed_out,
)
from ._inspector import inspector_routes
from ._openapi import OPENAPI
from ._reading import DEFAULT_READ_TIMEOUT, RequestReading, checked_read_timeout
from ._spans import ServerSpans

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence

    from opentelemetry.trace import TracerProvider
    from starlette.requests import Request

    from .._contract import ErrorType

    Handler = Callable[[Request, TokenGrant], Awaitable[Response]]
    Endpoint = Callable[[Request], Awaitable[Response]]

DEFAULT_MAX_BODY_BYTES: Final = 1_048_576
#: The top-level fields each route's satchel errors may name.
_REF_FIELDS: Final = ("scope", "entry_id", "version", *bodies.UPDATE_FIELDS)
#: The query fields of a page of records, then the path's scope.
_LIST_FIELDS: Final = ("family", "forgotten", "cursor", "limit", "scope")
#: The batch routes of the families besides memory, and the Runtime argument each carries.
_BATCHES: Final = {
    "/v1/experiences": "experiences",
    "/v1/topic-memories": "topics",
    "/v1/resources": "resources",
}
#: The longest ``version`` a query string may spell (versions fit in 63 bits).
_MAX_VERSION_DIGITS: Final = 19


def _unauthorized() -> HttpError:
    return HttpError(
        401,
        "unauthorized",
        "a valid bearer token is required (Authorization: Bearer TOKEN)",
        headers={"WWW-Authenticate": 'Bearer realm="satchel"'},
    )


# One body whichever scope was refused and whether or not it exists: a refusal tells
# the caller nothing about a scope it may not see.
def _may_not_read() -> HttpError:
    return HttpError(403, "forbidden", "this token may not read every scope the request names")


def _may_not_write() -> HttpError:
    return HttpError(403, "forbidden", "this token may not write to the scope the request names")


def create_app(
    runtime: satchel.Runtime,
    *,
    tokens: Mapping[str, TokenGrant] | None = None,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    tracer_provider: TracerProvider | None = None,
    allowed_hosts: Collection[str] | None = None,
    read_timeout: float = DEFAULT_READ_TIMEOUT,
    ui: bool = True,
    playground: Mapping[str, satchel.Runtime] | None = None,
) -> Starlette:
    """An ASGI app serving ``runtime`` over HTTP (on asyncio or trio: Starlette runs on
    anyio). The app does not own the runtime: open it before serving, close it after.

    Args:
        runtime: the open runtime every request calls.
        tokens: bearer token -> what it may do. None: no authentication (every request
            may read and write every scope); an empty mapping refuses every request.
        max_body_bytes: the largest request body, counted as it arrives (413 beyond).
        tracer_provider: where the SERVER span of each request goes (the global
            provider when None). Open the runtime with the same provider, and satchel's
            own spans are children of the request's.
        allowed_hosts: when given, the host names the ``Host`` header may carry
            (e.g. ``{"127.0.0.1", "localhost", "::1"}``): any other is refused with 421.
            A service without tokens on the loopback interface should set it, so that
            a web page cannot reach it through DNS rebinding.
        read_timeout: seconds a request's body may take to arrive once its headers
            have: past it the answer is 408 and the connection is closed.
        ui: serve the inspector, a web page over the same runtime and tokens, at
            ``/ui/`` (``docs/inspector.md``).
        playground: the runtimes the inspector's prepare playground switches between
            by its gate switch, under ``"on"`` (the recall gate on) and ``"off"``; each
            over the same store as ``runtime``. None: no switch, the playground
            prepares with ``runtime``.

    Raises:
        InvalidRequestError: an argument is malformed (the message names it).
    """
    if not isinstance(runtime, satchel.Runtime):
        raise satchel.InvalidRequestError("runtime must be a satchel.Runtime")
    if isinstance(max_body_bytes, bool) or not isinstance(max_body_bytes, int):
        raise satchel.InvalidRequestError("max_body_bytes must be a positive integer")
    if max_body_bytes < 1:
        raise satchel.InvalidRequestError("max_body_bytes must be a positive integer")
    read_timeout = checked_read_timeout(read_timeout)
    checked = None if tokens is None else Tokens(check_tokens(tokens))
    hosts = None if allowed_hosts is None else _host_names(allowed_hosts)
    service = _Service(runtime, checked, max_body_bytes, hosts)
    if playground is not None and (
        set(playground) != {"on", "off"}
        or not all(isinstance(value, satchel.Runtime) for value in playground.values())
    ):
        raise satchel.InvalidRequestError(
            'playground must map "on" and "off" to a satchel.Runtime each'
        )
    routes = [
        Route(
            "/v1/context/prepare",
            service.endpoint(service.prepare, bodies.PREPARE_FIELDS),
            methods=["POST"],
        ),
        Route(
            "/v1/context/explain",
            service.endpoint(service.explain, bodies.PREPARE_FIELDS),
            methods=["POST"],
        ),
        Route(
            "/v1/context/deadline",
            service.endpoint(service.deadline, bodies.PREPARE_FIELDS),
            methods=["POST"],
        ),
        Route("/v1/memories", service.endpoint(service.add, bodies.ADD_FIELDS), methods=["POST"]),
        Route(
            "/v1/memories/{scope:path}/{entry_id}",
            service.endpoint(service.memory, _REF_FIELDS),
            methods=["GET", "PUT", "DELETE"],
        ),
        Route("/v1/scopes", service.endpoint(service.scopes, ()), methods=["GET"]),
        Route(
            "/v1/scopes/{scope:path}/records",
            service.endpoint(service.records, _LIST_FIELDS),
            methods=["GET"],
        ),
        Route(
            "/v1/scopes/{scope:path}",
            service.endpoint(service.erase_scope, ("scope",)),
            methods=["DELETE"],
        ),
        *(
            Route(
                path,
                service.endpoint(service.batch(argument), bodies.BATCH_FIELDS[argument]),
                methods=["POST"],
            )
            for path, argument in _BATCHES.items()
        ),
        Route(
            "/v1/profiles/{scope:path}",
            service.endpoint(service.set_profile, ("scope", *bodies.PROFILE_FIELDS)),
            methods=["PUT"],
        ),
        Route(
            "/v1/erase",
            service.endpoint(service.erase_record, bodies.ERASE_FIELDS),
            methods=["POST"],
        ),
        Route("/healthz", service.endpoint(_health, (), public=True), methods=["GET"]),
        Route("/openapi.json", service.endpoint(_openapi, (), public=True), methods=["GET"]),
    ]
    if ui:
        routes += inspector_routes(runtime, checked, hosts, playground)
    return Starlette(
        routes=routes,
        middleware=[
            Middleware(RequestReading, read_timeout=read_timeout),
            Middleware(ServerSpans, tracer_provider=tracer_provider),
        ],
        exception_handlers={HTTPException: _routing_error},
    )


def _host_names(hosts: Collection[str]) -> frozenset[str]:
    if isinstance(hosts, str) or not all(isinstance(host, str) for host in hosts):
        raise satchel.InvalidRequestError("allowed_hosts must be a collection of host names")
    return frozenset(host.strip("[]").lower() for host in hosts)


class _Service:
    """The endpoints, over one runtime and one set of tokens."""

    def __init__(
        self,
        runtime: satchel.Runtime,
        tokens: Tokens | None,
        max_body_bytes: int,
        allowed_hosts: frozenset[str] | None,
    ) -> None:
        self.runtime = runtime
        self.tokens = tokens
        self.max_body_bytes = max_body_bytes
        self.allowed_hosts = allowed_hosts

    def endpoint(
        self, handler: Handler, fields: Sequence[str], *, public: bool = False
    ) -> Endpoint:
        """``handler`` as a Starlette endpoint: the Host check, the token, and every
        refusal and error turned into its JSON error response (never a traceback)."""

        async def endpoint(request: Request) -> Response:
            try:
                self._check_host(request)
                grant = EVERYTHING if public else self._authenticate(request)
                return await handler(request, grant)
            except HttpError as exc:
                return exc.response()
            except satchel.SatchelError as exc:
                return from_satchel(exc, fields).response()
            except TimeoutError:  # the prepare's deadline (anyio.fail_after)
                return timed_out().response()
            except ClientDisconnect:  # nobody is left to read the answer
                return error_response(400, "bad_request", "the client disconnected")
            except Exception as exc:
                logger.exception("unexpected error in %s %s", request.method, handler.__name__)
                return internal(exc).response()

        return endpoint

    def _check_host(self, request: Request) -> None:
        if self.allowed_hosts is None:
            return
        if _host_name(request.headers.get("host", "")) not in self.allowed_hosts:
            raise HttpError(421, "misdirected_request", "this service does not answer that Host")

    def _authenticate(self, request: Request) -> TokenGrant:
        if self.tokens is None:
            return EVERYTHING
        presented = [value for name, value in request.scope["headers"] if name == b"authorization"]
        grant = self.tokens.grant_for(presented[0] if len(presented) == 1 else None)
        if grant is None:
            raise _unauthorized()
        return grant

    # -------------------------------------------------------------------- endpoints

    async def prepare(self, request: Request, grant: TokenGrant) -> Response:
        prepare, deadline = await self._prepare_request(request, grant)
        with anyio.fail_after(None if math.isinf(deadline) else deadline):
            # The session is the token's (by its name): the same session_id from another
            # token is another session, and no token's sessions push out another's.
            context = await self.runtime.prepare_context(prepare, session_owner=grant.name)
        return _json(wire.context_json(context))

    async def explain(self, request: Request, grant: TokenGrant) -> Response:
        """The pack a prepare of this body returns, with its receipts and omissions:
        the same turn of the token's session as a prepare."""
        prepare, deadline = await self._prepare_request(request, grant)
        with anyio.fail_after(None if math.isinf(deadline) else deadline):
            explanation = await self.runtime.explain_context(prepare, session_owner=grant.name)
        return _json(wire.explanation_json(explanation))

    async def deadline(self, request: Request, grant: TokenGrant) -> Response:
        """How long a prepare of this body may take: a client sets its own timeout
        from it (``null``: unbounded)."""
        _, deadline = await self._prepare_request(request, grant)
        return _json({"deadline_seconds": None if math.isinf(deadline) else deadline})

    async def _prepare_request(
        self, request: Request, grant: TokenGrant
    ) -> tuple[satchel.PrepareContextRequest, float]:
        """The prepare request a body spells, once the token may read every scope it
        names, and its deadline (which validates every field)."""
        body = await bodies.read_json(request, self.max_body_bytes)
        prepare = bodies.prepare_request(body)
        if not all(grant.may_read(scope) for scope in (prepare.scope_id, *prepare.references)):
            raise _may_not_read()
        return prepare, self.runtime.deadline_for(prepare)

    async def add(self, request: Request, grant: TokenGrant) -> Response:
        body = await bodies.read_json(request, self.max_body_bytes)
        scope_id, entries = bodies.memory_batch(body)
        if not grant.may_write(scope_id):
            raise _may_not_write()
        # The runtime validates the whole batch before it writes, and writes it in one
        # transaction: a refused or failed batch leaves nothing behind.
        refs = await self.runtime.add_memories(scope_id, entries)
        return _json({"refs": [wire.ref_json(ref) for ref in refs]})

    def batch(self, argument: str) -> Handler:
        """The handler of a batch of experiences, topic memories or resources: one
        ``Runtime.add_*`` call, all or nothing."""
        writes: dict[str, Callable[[str, Any], Awaitable[list[satchel.RecordRef]]]] = {
            "experiences": self.runtime.add_experiences,
            "topics": self.runtime.add_topic_memories,
            "resources": self.runtime.add_resources,
        }
        write = writes[argument]

        async def add(request: Request, grant: TokenGrant) -> Response:
            body = await bodies.read_json(request, self.max_body_bytes)
            scope_id, records = bodies.record_batch(argument, body)
            if not grant.may_write(scope_id):
                raise _may_not_write()
            refs = await write(scope_id, records)
            return _json({"refs": [wire.record_ref_json(ref) for ref in refs]})

        add.__name__ = f"add_{argument}"
        return add

    async def set_profile(self, request: Request, grant: TokenGrant) -> Response:
        scope: str = request.path_params["scope"]
        profile = bodies.profile(await bodies.read_json(request, self.max_body_bytes))
        if not grant.may_write(scope):
            raise _may_not_write()
        try:
            await self.runtime.set_profile(scope, profile)
        except satchel.InvalidRequestError as exc:  # satchel calls it scope_id, the URL scope
            if not str(exc).startswith("scope_id"):
                raise
            raise invalid(str(exc).replace("scope_id", "scope", 1), "scope") from None
        return Response(status_code=204, headers=NO_STORE)

    async def erase_record(self, request: Request, grant: TokenGrant) -> Response:
        """Erase any record by its citation (every version); 0 when none is held, so
        that a client may retry."""
        target = bodies.erase_target(await bodies.read_json(request, self.max_body_bytes))
        if not grant.may_write(target.scope):
            raise _may_not_write()
        return _json({"erased_versions": await self.runtime.erase(target)})

    async def memory(self, request: Request, grant: TokenGrant) -> Response:
        if request.method == "GET":
            return await self.get(request, grant)
        if request.method == "PUT":
            return await self.update(request, grant)
        if _erasing(request):
            return await self.erase(request, grant)
        return await self.forget(request, grant)

    async def get(self, request: Request, grant: TokenGrant) -> Response:
        ref = _memory_ref(request)
        if not grant.may_read(ref.scope_id):
            raise _may_not_read()
        return _json(wire.record_json(await self.runtime.get_memory(ref)))

    async def update(self, request: Request, grant: TokenGrant) -> Response:
        """A new version of the entry the URL names (its version, the one replaced)."""
        ref = _memory_ref(request)
        entry = bodies.updated_entry(await bodies.read_json(request, self.max_body_bytes))
        if not grant.may_write(ref.scope_id):
            raise _may_not_write()
        return _json(wire.ref_json(await self.runtime.update_memory(ref, entry)))

    async def forget(self, request: Request, grant: TokenGrant) -> Response:
        ref = _memory_ref(request)
        if not grant.may_write(ref.scope_id):
            raise _may_not_write()
        await self.runtime.forget_memory(ref)
        return Response(status_code=204, headers=NO_STORE)

    async def erase(self, request: Request, grant: TokenGrant) -> Response:
        ref = _memory_ref(request, erasing=True)
        if not grant.may_write(ref.scope_id):
            raise _may_not_write()
        # Every version: the one a ref names does not narrow an erase. Erasing what is
        # gone already is 0, not a 404, so that a client may retry an erase.
        erased = await self.runtime.erase(ref)
        return _json(wire.erased_entry_json(ref, erased))

    async def scopes(self, request: Request, grant: TokenGrant) -> Response:
        """The scopes the token may read; the others are never named."""
        bodies.known(request.query_params, ())
        summaries = await self.runtime.list_scopes()
        listed = [wire.scope_summary_json(s) for s in summaries if grant.may_read(s.scope_id)]
        return _json({"scopes": listed})

    async def records(self, request: Request, grant: TokenGrant) -> Response:
        params = request.query_params
        bodies.known(params, _LIST_FIELDS[:-1])
        scope: str = request.path_params["scope"]
        if not grant.may_read(scope):
            raise _may_not_read()
        forgotten = _once(request, "forgotten")
        if forgotten not in (None, "true", "false"):
            raise invalid("forgotten must be true or false", "forgotten")
        limit = _once(request, "limit")
        if limit is not None and not (limit.isascii() and limit.isdigit() and len(limit) < 9):
            raise invalid(f"limit must be an integer 1..{MAX_PAGE}", "limit")
        try:
            page = await self.runtime.list_records(
                scope, _once(request, "family"), include_forgotten=forgotten == "true",
                cursor=_once(request, "cursor"),
                limit=DEFAULT_PAGE if limit is None else int(limit),
            )  # fmt: skip
        except satchel.InvalidRequestError as exc:  # satchel calls it scope_id, the URL scope
            if str(exc).startswith("scope_id"):
                raise invalid(str(exc).replace("scope_id", "scope", 1), "scope") from None
            raise
        return _json(wire.record_page_json(page))

    async def erase_scope(self, request: Request, grant: TokenGrant) -> Response:
        unknown = next(iter(request.query_params), None)
        if unknown is not None:
            raise invalid(f"{unknown} is not a field (this route takes none)", unknown)
        scope: str = request.path_params["scope"]
        if not grant.may_write(scope):
            raise _may_not_write()
        try:
            erased = await self.runtime.erase_scope(scope)
        except satchel.InvalidRequestError as exc:  # satchel calls it scope_id, the URL scope
            raise invalid(str(exc).replace("scope_id", "scope", 1), "scope") from None
        return _json({"scope_id": scope, "erased_records": erased})


def _host_name(host: str) -> str:
    """The name in a ``Host`` header: ``[::1]:8765`` is ``::1``, ``localhost:8765`` is
    ``localhost``."""
    if host.startswith("["):
        return host[1:].partition("]")[0].lower()
    return host.partition(":")[0].lower()


def _erasing(request: Request) -> bool:
    """Whether a DELETE erases (``?erase=true``) rather than forgets (``false``, or no
    ``erase``)."""
    spelled = request.query_params.getlist("erase")
    if len(spelled) > 1:
        raise invalid("erase appears twice", "erase")
    if spelled and spelled[0] not in ("true", "false"):
        raise invalid("erase must be true or false", "erase")
    return spelled == ["true"]


def _once(request: Request, name: str) -> str | None:
    """The query field ``name``, which may appear at most once (None: absent)."""
    spelled = request.query_params.getlist(name)
    if len(spelled) > 1:
        raise invalid(f"{name} appears twice", name)
    return spelled[0] if spelled else None


def _memory_ref(request: Request, *, erasing: bool = False) -> satchel.MemoryRef:
    """The exact version ``/v1/memories/{scope}/{entry_id}?version=N`` names. The scope
    is every path segment but the last, percent-decoded (so it may hold ``/`` and
    ``:``); the entry id is the last segment. An erase needs no version (it erases
    every one): its ref names version 1 when the URL names none."""
    params = request.query_params
    bodies.known(params, ("version", "erase") if request.method == "DELETE" else ("version",))
    spelled = params.getlist("version")
    if not spelled and erasing:
        spelled = ["1"]
    if not spelled:
        raise invalid("version is required (?version=N)", "version")
    if len(spelled) > 1:
        raise invalid("version appears twice", "version")
    text = spelled[0]
    if not text.isascii() or not text.isdigit() or len(text) > _MAX_VERSION_DIGITS:
        raise invalid("version must be an integer in 1..2**63-1", "version")
    path: dict[str, Any] = request.path_params
    return satchel.MemoryRef(path["scope"], wire.full_id(path["entry_id"]), int(text))


def _json(body: object, status: int = 200) -> JSONResponse:
    return JSONResponse(body, status_code=status, headers=NO_STORE)


async def _health(request: Request, grant: TokenGrant) -> Response:
    return _json({"status": "ok"})


async def _openapi(request: Request, grant: TokenGrant) -> Response:
    return JSONResponse(OPENAPI)


_ROUTING_KINDS: Final[dict[int, ErrorType]] = {404: "not_found", 405: "method_not_allowed"}


async def _routing_error(request: Request, exc: Exception) -> Response:
    """An unknown path (404) or method (405), as the same JSON error as the rest."""
    assert isinstance(exc, HTTPException)
    kind = _ROUTING_KINDS.get(exc.status_code, "bad_request")
    message = {
        404: "no such endpoint (GET /openapi.json lists them)",
        405: f"{request.method} is not allowed here",
    }.get(exc.status_code, str(exc.detail))
    return error_response(exc.status_code, kind, message, headers=exc.headers)
