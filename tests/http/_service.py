"""A satchel HTTP service in process, and an httpx client speaking to it over ASGI.

``httpx.ASGITransport`` runs the app in the caller's task, on asyncio or trio alike, so
every test drives the same app on both backends.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import quote

import attrs
import httpx

import satchel
from satchel._wire import compact_id
from satchel.http import create_app

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Mapping, Sequence

    from opentelemetry.trace import TracerProvider

    from satchel.http import TokenGrant

BASE: Final = "http://127.0.0.1:8765"


@contextlib.asynccontextmanager
async def serving(
    *,
    store: satchel.Store | None = None,
    tokens: Mapping[str, TokenGrant] | None = None,
    max_body_bytes: int = 1_048_576,
    tracer_provider: TracerProvider | None = None,
    allowed_hosts: Sequence[str] | None = None,
    **options: Any,
) -> AsyncIterator[tuple[httpx.AsyncClient, satchel.Runtime]]:
    """A client of an app over a fresh runtime (an in-memory SQLite store unless
    ``store`` is given), and the runtime itself for checking what was written."""
    async with satchel.open_runtime(
        ":memory:",
        store=store,
        embedder=satchel.HashingEmbedder(),
        tracer_provider=tracer_provider,
        **options,
    ) as runtime:
        app = create_app(
            runtime,
            tokens=tokens,
            max_body_bytes=max_body_bytes,
            tracer_provider=tracer_provider,
            allowed_hosts=allowed_hosts,
        )
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url=BASE) as client:
            yield client, runtime


def memory_path(scope: str, entry_id: str) -> str:
    """The URL path of a memory entry, its scope and id percent-encoded."""
    return f"/v1/memories/{quote(scope, safe='')}/{quote(entry_id, safe='')}"


def error_of(response: httpx.Response) -> dict[str, Any]:
    """The ``error`` object of a JSON error response (checking its shape)."""
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert set(body) == {"error"}
    error: dict[str, Any] = body["error"]
    assert set(error) == {"type", "message", "field"}
    assert "Traceback" not in response.text
    return error


async def add(
    client: httpx.AsyncClient,
    scope: str,
    *entries: Mapping[str, Any],
    headers: Mapping[str, str] | None = None,
) -> list[dict[str, Any]]:
    """Add ``entries`` to ``scope``; their refs (the request must succeed)."""
    response = await client.post(
        "/v1/memories", json={"scope_id": scope, "entries": list(entries)}, headers=headers
    )
    assert response.status_code == 200, response.text
    refs: list[dict[str, Any]] = response.json()["refs"]
    return refs


async def prepare(
    client: httpx.AsyncClient,
    scope: str,
    query: str,
    headers: Mapping[str, str] | None = None,
    **fields: Any,
) -> httpx.Response:
    return await client.post(
        "/v1/context/prepare",
        json={"scope_id": scope, "query": query, **fields},
        headers=headers,
    )


def cited(context: Mapping[str, Any]) -> list[satchel.Citation]:
    """The citations of a prepared context's JSON, in delivery order, each id spelled as
    the pack writes it (the spelling of every answer of the service)."""
    return [pack_spelled(item.citation) for item in satchel.parse_context(context["content"])]


def pack_spelled(citation: satchel.Citation) -> satchel.Citation:
    """``citation`` with its id as a pack writes it."""
    if citation.id is None:
        return citation
    return attrs.evolve(citation, id=compact_id(citation.id))
