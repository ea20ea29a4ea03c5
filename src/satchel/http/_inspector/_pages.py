"""The inspector's routes: each page's handler, its checks, and the answer's headers.

Every answer carries a strict Content-Security-Policy (no script at all, styles and
images from satchel only, forms posting only to satchel, no framing) and
``Cache-Control: no-store``. Reading a page needs a session whose grant may read the
scope it names; a scope it may not read is answered as one that does not exist. Every
write is a POST whose form carries the session's CSRF token, from this origin, by a
grant that may write the record's scope; it answers with a redirect (303), so a reload
never repeats it.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import parse_qs

import anyio
import jinja2
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

import satchel

from ..._wire import full_id
from .._errors import logger
from . import _views as views
from ._forms import (
    PageError,
    citation_of,
    grant_of,
    not_found,
    prepare_request,
    readable,
    writable,
)

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Collection

    from starlette.requests import Request

    from .._auth import TokenGrant
    from ._sessions import Session, Sessions

    Page = Callable[[Request, Session], Awaitable[Response]]

HERE: Final = Path(__file__).parent
CSP: Final = (
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self';"
    " frame-ancestors 'none'; base-uri 'none'"
)
SECURITY_HEADERS: Final = {
    "Content-Security-Policy": CSP,
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
    "Cross-Origin-Opener-Policy": "same-origin",
}
#: The largest form a POST may send.
MAX_FORM_BYTES: Final = 65_536
#: What a redirect after a write may say, by name (never text from the request).
NOTICES: Final = {
    "forgotten": "Forgotten: the entry is no longer searchable; its versions stay readable.",
    "erased": "Erased: every version of the record is gone from the store.",
}
_STYLESHEET: Final = (HERE / "static" / "inspector.css").read_bytes()


class Inspector:
    """The inspector's pages over one runtime (``playground``: the runtimes the
    playground's gate switch chooses between, by ``"on"`` and ``"off"``)."""

    def __init__(
        self,
        runtime: satchel.Runtime,
        sessions: Sessions,
        allowed_hosts: Collection[str] | None,
        playground: dict[str, satchel.Runtime] | None,
    ) -> None:
        self.runtime = runtime
        self.sessions = sessions
        self.allowed_hosts = allowed_hosts
        self.playground = playground
        self.templates = jinja2.Environment(
            loader=jinja2.FileSystemLoader(HERE / "templates"),
            autoescape=True,  # every value a template shows is escaped
            undefined=jinja2.StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
        )

    def routes(self) -> list[Route]:
        return [
            Route("/ui", self._redirect_home, methods=["GET"]),
            Route("/ui/", self.page(self.scopes), methods=["GET"]),
            Route("/ui/login", self.page(self.login_form, public=True), methods=["GET"]),
            Route("/ui/login", self.page(self.login, public=True), methods=["POST"]),
            Route("/ui/logout", self.page(self.logout), methods=["POST"]),
            Route("/ui/scope", self.page(self.scope), methods=["GET"]),
            Route("/ui/record", self.page(self.record), methods=["GET"]),
            Route("/ui/prepare", self.page(self.prepare_form), methods=["GET"]),
            Route("/ui/prepare", self.page(self.prepare), methods=["POST"]),
            Route("/ui/confirm", self.page(self.confirm), methods=["GET"]),
            Route("/ui/forget", self.page(self.forget), methods=["POST"]),
            Route("/ui/erase", self.page(self.erase), methods=["POST"]),
            Route("/ui/inspector.css", self._stylesheet, methods=["GET"]),
        ]

    # ------------------------------------------------------------------ plumbing

    def page(
        self, handler: Page, *, public: bool = False
    ) -> Callable[[Request], Awaitable[Response]]:
        """``handler`` behind the Host check and the session (a visitor without a
        login is sent to the login form), every refusal shown as a page."""

        async def endpoint(request: Request) -> Response:
            if not self._host_allowed(request):
                return _plain(421, "This service does not answer that Host.")
            session = self.sessions.of(request)
            try:
                if session.grant is None and not public:
                    response: Response = RedirectResponse("/ui/login", status_code=303)
                else:
                    response = await handler(request, session)
            except PageError as exc:
                response = await self.render(
                    request, session, "error.html", {"message": exc.message}, exc.status
                )
            except satchel.NotFoundError:
                response = await self.render(
                    request, session, "error.html", {"message": not_found().message}, 404
                )
            except satchel.InvalidRequestError as exc:  # a malformed id, cursor, version
                response = await self.render(
                    request, session, "error.html", {"message": str(exc)}, 422
                )
            except satchel.SatchelError as exc:  # the store failed: say which kind, no more
                message = f"satchel could not answer ({type(exc).__name__}); try again."
                response = await self.render(
                    request, session, "error.html", {"message": message}, 503
                )
            except Exception:
                logger.exception("unexpected error in the inspector: %s", request.url.path)
                response = _plain(500, "The inspector failed on this page (the log says why).")
            if session.fresh and "set-cookie" not in response.headers:
                self.sessions.set_cookie(response, session, secure=_secure(request))
            response.headers.update(SECURITY_HEADERS)
            return response

        return endpoint

    def _host_allowed(self, request: Request) -> bool:
        if self.allowed_hosts is None:
            return True
        host = request.headers.get("host", "")
        name = host[1:].partition("]")[0] if host.startswith("[") else host.partition(":")[0]
        return name.lower() in self.allowed_hosts

    async def render(
        self,
        request: Request,
        session: Session,
        name: str,
        context: dict[str, Any],
        status: int = 200,
    ) -> Response:
        """The template ``name`` rendered (in a worker thread: a long page takes more
        than a millisecond) with what every page shows."""
        grant = session.grant
        shared = {
            "csrf": session.csrf,
            "signed_in": grant is not None,
            "logged_in": grant is not None and not self.sessions.open,
            "who": "" if grant is None else (grant.name or ""),
            "may_write_somewhere": grant is not None and grant.write,
        }
        template = self.templates.get_template(name)
        html = await anyio.to_thread.run_sync(template.render, {**shared, **context})
        return HTMLResponse(html, status_code=status)

    async def form(self, request: Request, session: Session) -> dict[str, str]:
        """A POST's urlencoded form, once it is from this origin and carries this
        session's CSRF token; every field given once."""
        if request.headers.get("sec-fetch-site", "same-origin") not in ("same-origin", "none"):
            raise PageError(403, "Refused: the form was not sent from this page.")
        origin = request.headers.get("origin")
        if origin is not None and origin != f"{request.url.scheme}://{request.url.netloc}":
            raise PageError(403, "Refused: the form was not sent from this page.")
        body = bytearray()
        async for chunk in request.stream():
            body += chunk
            if len(body) > MAX_FORM_BYTES:
                raise PageError(413, "Refused: the form is too large.")
        fields = parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True)
        form = {name: values[-1] for name, values in fields.items()}
        if not session.csrf_matches(form.get("csrf")):
            raise PageError(
                403, "Refused: the form's CSRF token is missing or stale. Reload the page."
            )
        return form

    async def _redirect_home(self, request: Request) -> Response:
        return RedirectResponse("/ui/", status_code=308)

    async def _stylesheet(self, request: Request) -> Response:
        headers = {**SECURITY_HEADERS, "Cache-Control": "max-age=3600"}
        return Response(_STYLESHEET, media_type="text/css", headers=headers)

    # ------------------------------------------------------------------ login

    async def login_form(self, request: Request, session: Session) -> Response:
        if session.grant is not None:
            return RedirectResponse("/ui/", status_code=303)
        return await self.render(request, session, "login.html", {"failed": False})

    async def login(self, request: Request, session: Session) -> Response:
        form = await self.form(request, session)
        logged_in = self.sessions.login(form.get("token", "").strip())
        if logged_in is None:
            return await self.render(request, session, "login.html", {"failed": True}, 401)
        response = RedirectResponse("/ui/", status_code=303)
        # A new nonce at login: a cookie planted before it is worth nothing after.
        self.sessions.set_cookie(response, logged_in, secure=_secure(request))
        return response

    async def logout(self, request: Request, session: Session) -> Response:
        await self.form(request, session)
        response = RedirectResponse("/ui/login", status_code=303)
        self.sessions.clear_cookie(response, secure=_secure(request))
        return response

    # ------------------------------------------------------------------ reading

    async def scopes(self, request: Request, session: Session) -> Response:
        grant = grant_of(session)
        rows = views.scope_rows(await views.readable_scopes(self.runtime, grant))
        return await self.render(request, session, "scopes.html", {"scopes": rows})

    async def scope(self, request: Request, session: Session) -> Response:
        grant = grant_of(session)
        params = request.query_params
        scope = readable(grant, params.get("scope", ""))
        family = params.get("family") or None
        if family is not None and family not in views.FAMILIES:
            raise PageError(422, f"family must be one of {', '.join(views.FAMILIES)}.")
        forgotten = params.get("forgotten") == "on"
        text = params.get("q", "").strip()
        cursor = params.get("cursor") or None
        try:
            records, following, read = await views.record_page(
                self.runtime, scope, family, forgotten=forgotten, text=text, cursor=cursor
            )
        except satchel.InvalidRequestError as exc:
            raise PageError(422, str(exc)) from None
        filters = {"scope": scope, "family": family, "forgotten": forgotten and "on", "q": text}
        context = {
            "scope": scope,
            "family": family or "",
            "families": views.FAMILIES,
            "forgotten": forgotten,
            "q": text,
            "rows": views.record_rows(records, grant),
            "read": read,
            "next": None if following is None else views.url("scope", **filters, cursor=following),
            "first": None if cursor is None else views.url("scope", **filters),
            "notice": NOTICES.get(params.get("notice", ""), ""),
            "prepare": views.url("prepare", scope=scope),
        }
        return await self.render(request, session, "scope.html", context)

    async def record(self, request: Request, session: Session) -> Response:
        grant = grant_of(session)
        scope = readable(grant, request.query_params.get("scope", ""))
        entry_id = full_id(request.query_params.get("id", ""))
        found = await views.versions(self.runtime, scope, entry_id)
        if not found:
            raise not_found()
        latest = satchel.Citation("memory", scope, entry_id, found[-1].ref.version)
        context = {
            "scope": scope,
            "citation": views.cited(latest),
            "group": views.pack_group(latest),
            "versions": views.version_rows(found),
            "actions": views.write_links(latest, grant),
            "back": views.url("scope", scope=scope),
        }
        return await self.render(request, session, "record.html", context)

    # ------------------------------------------------------------------ playground

    async def prepare_form(self, request: Request, session: Session) -> Response:
        grant = grant_of(session)
        chosen = request.query_params.get("scope", "")
        return await self.render_playground(request, session, grant, {"scope": chosen}, None)

    async def prepare(self, request: Request, session: Session) -> Response:
        grant = grant_of(session)
        form = await self.form(request, session)
        try:
            prepare = prepare_request(form)
            if not grant.may_read(prepare.scope_id):
                raise not_found()
            runtime = self._playground_runtime(form.get("gate", ""))
            deadline = runtime.deadline_for(prepare)
            with anyio.fail_after(None if math.isinf(deadline) else deadline):
                explained = await runtime.explain_context(prepare, session_owner=grant.name)
        except satchel.InvalidRequestError as exc:
            return await self.render_playground(request, session, grant, form, None, str(exc))
        except TimeoutError:
            message = "The prepare overran its deadline."
            return await self.render_playground(request, session, grant, form, None, message)
        result = views.explanation_view(explained)
        return await self.render_playground(request, session, grant, form, result)

    def _playground_runtime(self, gate: str) -> satchel.Runtime:
        if self.playground is None or gate not in self.playground:
            return self.runtime
        return self.playground[gate]

    async def render_playground(
        self,
        request: Request,
        session: Session,
        grant: TokenGrant,
        form: dict[str, str],
        result: dict[str, Any] | None,
        error: str = "",
    ) -> Response:
        scopes = [summary.scope_id for summary in await views.readable_scopes(self.runtime, grant)]
        families = [
            {
                "name": family,
                "checked": f"family-{family}" in form,
                "limit": form.get(f"limit-{family}", ""),
            }
            for family in views.FAMILIES
        ]
        context = {
            "scopes": scopes,
            "form": {
                "scope": form.get("scope", ""),
                "query": form.get("query", ""),
                "max_bytes": form.get("max_bytes", "8000"),
                "session_id": form.get("session_id", ""),
                "gate": form.get("gate", "off"),
            },
            "families": families,
            "gate_switch": self.playground is not None,
            "result": result,
            "error": error,
        }
        return await self.render(request, session, "prepare.html", context, 422 if error else 200)

    # ------------------------------------------------------------------ writes

    async def confirm(self, request: Request, session: Session) -> Response:
        grant = grant_of(session)
        params = request.query_params
        action = params.get("action", "")
        if action not in ("forget", "erase"):
            raise PageError(422, "action must be forget or erase.")
        citation = citation_of(dict(params))
        writable(grant, citation.scope)
        preview = ""
        if citation.family == "memory" and citation.id is not None:
            ref = satchel.MemoryRef(citation.scope, citation.id, citation.version or 1)
            preview = (await self.runtime.get_memory(ref)).text
        context = {
            "action": action,
            "citation": views.cited(citation),
            "preview": preview,
            "fields": {
                "scope": citation.scope,
                "family": citation.family,
                "id": params.get("id", ""),
                "v": params.get("v", ""),
            },
            "back": views.url("scope", scope=citation.scope),
        }
        return await self.render(request, session, "confirm.html", context)

    async def forget(self, request: Request, session: Session) -> Response:
        grant = grant_of(session)
        form = await self.form(request, session)
        citation = citation_of(form)
        writable(grant, citation.scope)
        if citation.family != "memory" or citation.id is None:
            raise PageError(422, "Only a memory entry can be forgotten (erase removes any record).")
        ref = satchel.MemoryRef(citation.scope, citation.id, citation.version or 1)
        await self.runtime.forget_memory(ref)
        return RedirectResponse(views.url("scope", scope=citation.scope, notice="forgotten"), 303)

    async def erase(self, request: Request, session: Session) -> Response:
        grant = grant_of(session)
        form = await self.form(request, session)
        citation = citation_of(form)
        writable(grant, citation.scope)
        await self.runtime.erase(citation)
        return RedirectResponse(views.url("scope", scope=citation.scope, notice="erased"), 303)


def _secure(request: Request) -> bool:
    return request.url.scheme == "https"


def _plain(status: int, message: str) -> Response:
    return Response(message, status_code=status, media_type="text/plain")
