"""satchel embedded in an asyncio web app (Starlette): a context pack for each chat message.

The app opens one satchel runtime for its whole life, in Starlette's lifespan, and calls
it in process: no satchel service in between. Each user's memories live in the scope
``user:<name>``.

``POST /remember`` ``{"user": "ana", "text": "Deploys happen on Thursdays"}``
    stores a memory; answers ``{"ref": {"scope_id", "entry_id", "version"}}``.
``POST /chat`` ``{"user": "ana", "message": "When do we deploy?", "session_id": "c-1"}``
    prepares the context for the message (``session_id`` is optional) and answers
    ``{"context": PACK or null, "fallback": null, "timeout" or "error"}``.

A chat must answer on time with or without memory, so the prepare runs under
``asyncio.timeout(runtime.deadline_for(request))``: past the request's deadline, or if
satchel fails, the chat goes on without context and says why in ``fallback``.

Run: ``python examples/asyncio_web_app.py [--db satchel.db] [--port 8000]`` (Hypercorn on
asyncio; needs ``satchel[service]``), or serve the module's ``app`` with any ASGI server:
``SATCHEL_DB=satchel.db hypercorn examples/asyncio_web_app:app``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import math
import os
from typing import TYPE_CHECKING, Any, cast

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.responses import JSONResponse
from starlette.routing import Route

import satchel

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from hypercorn.typing import Framework
    from starlette.requests import Request

logger = logging.getLogger("asyncio_web_app")
#: The pack's byte budget: what the chat's prompt can spare.
MAX_BYTES = 4000


def create_app(database: str = ":memory:", **runtime_options: Any) -> Starlette:
    """The chat app over a satchel database (``runtime_options`` go to ``open_runtime``)."""

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with satchel.open_runtime(database, **runtime_options) as runtime:
            app.state.runtime = runtime
            yield

    routes = [
        Route("/remember", remember, methods=["POST"]),
        Route("/chat", chat, methods=["POST"]),
    ]
    return Starlette(routes=routes, lifespan=lifespan)


async def remember(request: Request) -> JSONResponse:
    body = await _body(request, "user", "text")
    runtime: satchel.Runtime = request.app.state.runtime
    try:
        (ref,) = await runtime.add_memories(
            f"user:{body['user']}", [satchel.MemoryEntry(text=body["text"])]
        )
    except satchel.InvalidRequestError as exc:
        raise HTTPException(422, str(exc)) from None
    return JSONResponse(
        {"ref": {"scope_id": ref.scope_id, "entry_id": ref.entry_id, "version": ref.version}}
    )


async def chat(request: Request) -> JSONResponse:
    body = await _body(request, "user", "message")
    session = body.get("session_id")
    if session is not None and not isinstance(session, str):
        raise HTTPException(422, "session_id must be a string")
    runtime: satchel.Runtime = request.app.state.runtime
    prepare = satchel.PrepareContextRequest(
        scope_id=f"user:{body['user']}",
        query=body["message"],
        max_bytes=MAX_BYTES,
        session_id=session,
    )
    try:
        deadline = runtime.deadline_for(prepare)  # also validates the request
    except satchel.InvalidRequestError as exc:
        raise HTTPException(422, str(exc)) from None
    context, fallback = await context_within(runtime, prepare, deadline)
    # Your model call goes here: the pack (when there is one) into the system prompt,
    # the message as the user's turn.
    return JSONResponse({"context": context, "fallback": fallback})


async def context_within(
    runtime: satchel.Runtime, prepare: satchel.PrepareContextRequest, deadline: float
) -> tuple[str | None, str | None]:
    """The pack (None when nothing fits) and None; or None and why there is none."""
    try:
        async with asyncio.timeout(None if math.isinf(deadline) else deadline):
            context = await runtime.prepare_context(prepare)
    except TimeoutError:  # our deadline, or satchel's prepare_timeout (PrepareTimeoutError)
        logger.warning("no context: the prepare overran its %.3g s deadline", deadline)
        return None, "timeout"
    except satchel.SatchelError:  # the store is down, a search failed: answer without memory
        logger.exception("no context: the prepare failed")
        return None, "error"
    return context.content, None


async def _body(request: Request, *names: str) -> dict[str, Any]:
    """The JSON object body, with a non-empty string in each of ``names``."""
    try:
        body = await request.json()
    except ValueError:
        raise HTTPException(400, "the body must be JSON") from None
    if not isinstance(body, dict):
        raise HTTPException(422, "the body must be a JSON object")
    for name in names:
        if not isinstance(body.get(name), str) or not body[name].strip():
            raise HTTPException(422, f"{name} must be a non-empty string")
    return body


app = create_app(os.environ.get("SATCHEL_DB", ":memory:"))


async def main(database: str, host: str, port: int) -> None:
    from hypercorn.asyncio import serve
    from hypercorn.config import Config

    config = Config()
    config.bind = [f"{host}:{port}"]  # Hypercorn logs "Running on http://HOST:PORT"
    # An ASGI 3 app, which Hypercorn's types spell otherwise than Starlette's.
    framework = cast("Framework", create_app(database))
    # Hypercorn runs the lifespan, and stops gracefully on SIGINT or SIGTERM.
    await serve(framework, config, mode="asgi")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="A chat app with satchel context.")
    parser.add_argument("--db", default=os.environ.get("SATCHEL_DB", ":memory:"))
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args()
    asyncio.run(main(args.db, args.host, args.port))
