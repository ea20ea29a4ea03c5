"""Every refusal and failure is one JSON error with the right status, naming the field
at fault where there is one, and never a traceback; a refused batch writes nothing."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import anyio
import pytest

import satchel
from satchel.http import create_app

from ._service import add, error_of, memory_path, prepare, serving

if TYPE_CHECKING:
    from collections.abc import MutableMapping

    from satchel.stores import Family, MemoryRecord, MemoryRef, Pool, PoolRequest, Ref

pytestmark = pytest.mark.anyio

PREPARE = "/v1/context/prepare"
MEMORIES = "/v1/memories"
JSON = {"content-type": "application/json"}


# --------------------------------------------------------------------------------- 400


@pytest.mark.parametrize(
    "body",
    [
        b'{"scope_id": "s", "query": ',
        b'{"scope_id": "s", "query": "q", "max_bytes": NaN}',
        b"[" * 100_000 + b"]" * 100_000,
        b'{"scope_id": "s", "query": "\xff\xfe"}',
        b"",
        '{"scope_id": "s", "query": "q"}'.encode("utf-16"),
        '{"scope_id": "s", "query": "q"}'.encode("utf-16-le"),
        '{"scope_id": "s", "query": "q"}'.encode("utf-32"),
    ],
    ids=["truncated", "nan", "nested-too-deep", "not-utf8", "empty", "utf16", "utf16le", "utf32"],
)
@pytest.mark.parametrize("path", [PREPARE, MEMORIES])
async def test_a_body_that_is_not_json_is_400(path: str, body: bytes) -> None:
    async with serving(max_body_bytes=1_000_000) as (client, _):
        response = await client.post(path, content=body, headers=JSON)
    assert response.status_code == 400
    error = error_of(response)
    assert error["type"] == "bad_request"
    assert error["message"].startswith("the body is not valid JSON")


# --------------------------------------------------------------------------------- 415


@pytest.mark.parametrize("content_type", [None, "text/plain", "application/x-www-form-urlencoded"])
async def test_a_body_that_is_not_declared_json_is_415(content_type: str | None) -> None:
    """Only application/json is read: a browser's cross-site simple request (a form or
    text/plain) can never write."""
    headers = {} if content_type is None else {"content-type": content_type}
    body = b'{"scope_id": "s", "entries": [{"text": "x"}]}'
    async with serving() as (client, runtime):
        response = await client.post(MEMORIES, content=body, headers=headers)
        counts = await runtime.store.scope_counts()
    assert response.status_code == 415
    assert error_of(response)["type"] == "unsupported_media_type"
    assert counts == {}


async def test_a_utf8_body_with_a_byte_order_mark_is_read() -> None:
    """UTF-8 with a leading BOM is still UTF-8: read, as before (only other encodings are
    refused)."""
    async with serving() as (client, _):
        response = await client.post(
            PREPARE, content='{"scope_id": "s", "query": "q"}'.encode("utf-8-sig"), headers=JSON
        )
    assert response.status_code == 200, response.text


async def test_a_json_media_type_with_parameters_is_read() -> None:
    async with serving() as (client, _):
        response = await client.post(
            PREPARE,
            content=b'{"scope_id": "s", "query": "q"}',
            headers={"content-type": "Application/JSON; charset=utf-8"},
        )
    assert response.status_code == 200, response.text


# --------------------------------------------------------------------------------- 413

LIMIT = 300


def _batch(size: int) -> bytes:
    """A valid add-memories body of exactly ``size`` bytes."""
    head, tail = b'{"scope_id": "s", "entries": [{"text": "', b'"}]}'
    return head + b"x" * (size - len(head) - len(tail)) + tail


async def test_a_body_at_the_limit_is_read() -> None:
    async with serving(max_body_bytes=LIMIT) as (client, _):
        response = await client.post(MEMORIES, content=_batch(LIMIT), headers=JSON)
    assert response.status_code == 200, response.text


async def test_a_declared_length_over_the_limit_is_413() -> None:
    async with serving(max_body_bytes=LIMIT) as (client, runtime):
        response = await client.post(MEMORIES, content=_batch(LIMIT + 1), headers=JSON)
        counts = await runtime.store.scope_counts()
    assert response.status_code == 413
    assert error_of(response)["type"] == "payload_too_large"
    assert counts == {}


@pytest.mark.parametrize("declared", [None, "120"], ids=["chunked", "lying-length"])
async def test_a_streamed_body_over_the_limit_is_413_whatever_it_declares(
    declared: str | None,
) -> None:
    """A chunked body declares no length, and a declared length is only a claim: the
    limit holds on the bytes counted as they arrive, and reading stops at the first
    chunk past it. (Driven at the ASGI level, so that the test server's own reader
    cannot make up for a lie.)"""
    body = _batch(10 * LIMIT)
    chunks = [body[start : start + 100] for start in range(0, len(body), 100)]
    pulled = 0

    async def receive() -> dict[str, Any]:
        nonlocal pulled
        pulled += 1
        chunk = chunks[pulled - 1]
        return {"type": "http.request", "body": chunk, "more_body": pulled < len(chunks)}

    sent: list[MutableMapping[str, Any]] = []

    async def send(message: MutableMapping[str, Any]) -> None:
        sent.append(message)

    headers = [(b"content-type", b"application/json"), (b"host", b"127.0.0.1")]
    if declared is not None:
        headers.append((b"content-length", declared.encode()))
    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
        "scheme": "http", "path": MEMORIES, "raw_path": MEMORIES.encode(), "query_string": b"",
        "root_path": "", "headers": headers, "client": ("127.0.0.1", 1), "server": None,
    }  # fmt: skip
    async with satchel.open_runtime(embedder=satchel.HashingEmbedder()) as runtime:
        await create_app(runtime, max_body_bytes=LIMIT)(scope, receive, send)
        counts = await runtime.store.scope_counts()
    assert sent[0]["status"] == 413
    assert b"payload_too_large" in sent[1]["body"]
    assert pulled == LIMIT // 100 + 1  # it stopped at the first chunk past the limit
    assert counts == {}


async def test_a_declared_length_that_is_not_a_number_is_400() -> None:
    async with serving() as (client, _):
        response = await client.post(
            PREPARE, content=b"{}", headers={**JSON, "content-length": "2x"}
        )
    assert response.status_code == 400


# --------------------------------------------------------------------------------- 422

PREPARE_CASES: list[tuple[dict[str, Any], str | None]] = [
    ({"scope_id": "s", "query": "q", "max_bytes": 100}, "max_bytes"),
    ({"scope_id": "s", "query": "q", "max_bytes": 40000}, "max_bytes"),
    ({"scope_id": "s", "query": "q", "max_bytes": "8000"}, "max_bytes"),
    ({"scope_id": "s", "query": "q", "max_bytes": True}, "max_bytes"),
    ({"scope_id": "s", "query": "q", "max_bytes": 8000.0}, "max_bytes"),
    ({"scope_id": "s", "query": ""}, "query"),
    ({"scope_id": "s", "query": 5}, "query"),
    ({"scope_id": "s", "query": "x" * 8193}, "query"),
    ({"scope_id": "s"}, "query"),
    ({"query": "q"}, "scope_id"),
    ({"scope_id": 7, "query": "q"}, "scope_id"),
    ({"scope_id": " ", "query": "q"}, "scope_id"),
    ({"scope_id": "s", "query": "q", "references": "other"}, "references"),
    ({"scope_id": "s", "query": "q", "references": [1]}, "references[0]"),
    ({"scope_id": "s", "query": "q", "references": ["a", ""]}, "references[1]"),
    ({"scope_id": "s", "query": "q", "session_id": ""}, "session_id"),
    ({"scope_id": "s", "query": "q", "detail": "deep"}, "detail"),
    ({"scope_id": "s", "query": "q", "detail": ["full"]}, "detail"),
    ({"scope_id": "s", "query": "q", "detail": {"memory": "deep"}}, "detail['memory']"),
    ({"scope_id": "s", "query": "q", "assembly": []}, "assembly"),
    ({"scope_id": "s", "query": "q", "assembly": {}}, "assembly.sections"),
    (
        {"scope_id": "s", "query": "q", "assembly": {"sections": [{"family": "x", "limit": 1}]}},
        "assembly.sections[0].family",
    ),
    (
        {"scope_id": "s", "query": "q", "assembly": {"sections": [{"family": "memory"}]}},
        "assembly.sections[0].limit",
    ),
    (
        {
            "scope_id": "s",
            "query": "q",
            "assembly": {"sections": [{"family": "memory", "limit": 9}]},
        },
        "assembly.sections[0].limit",
    ),
    ({"scope_id": "s", "query": "q", "exclude": {}}, "exclude"),
    ({"scope_id": "s", "query": "q", "exclude": [{"family": "memory"}]}, "exclude[0].scope"),
    (
        {"scope_id": "s", "query": "q", "exclude": [{"family": "nope", "scope": "s"}]},
        "exclude[0].family",
    ),
    (
        {"scope_id": "s", "query": "q", "exclude": [{"family": "memory", "scope": "s", "x": 1}]},
        "exclude[0].x",
    ),
    (
        {
            "scope_id": "s",
            "query": "q",
            "exclude": [{"family": "memory", "scope": "s", "id": "a", "entry_id": "a"}],
        },
        "exclude[0].entry_id",
    ),
    ({"scope_id": "s", "query": "q", "colour": "blue"}, "colour"),
    ({"scope_id": "s", "query": "half a pair \ud800"}, "query"),
]


@pytest.mark.parametrize(("body", "field"), PREPARE_CASES)
async def test_a_malformed_prepare_is_422_naming_the_field(
    body: dict[str, Any], field: str
) -> None:
    async with serving() as (client, _):
        # json.dumps escapes a lone surrogate as \ud800, as a JSON client may send it
        response = await client.post(PREPARE, content=json.dumps(body), headers=JSON)
    assert response.status_code == 422, response.text
    error = error_of(response)
    assert error["type"] == "invalid_request"
    assert error["field"] == field
    assert error["message"].startswith(field)


ADD_CASES: list[tuple[dict[str, Any], str]] = [
    ({"entries": []}, "scope_id"),
    ({"scope_id": "s"}, "entries"),
    ({"scope_id": "s", "entries": "text"}, "entries"),
    ({"scope_id": "s", "entries": ["text"]}, "entries[0]"),
    ({"scope_id": "s", "entries": [{}]}, "entries[0].text"),
    ({"scope_id": "s", "entries": [{"text": "a", "when": 1}]}, "entries[0].when"),
    ({"scope_id": "s", "entries": [{"text": "a", "tags": "ops"}]}, "entries[0].tags"),
    ({"scope_id": "s", "entries": [{"text": "a", "created_at": 5}]}, "entries[0].created_at"),
    (
        {"scope_id": "s", "entries": [{"text": "a", "created_at": "yesterday"}]},
        "entries[0].created_at",
    ),
    (
        {"scope_id": "s", "entries": [{"text": "a", "created_at": "2024-03-04T09:00 am"}]},
        "entries[0].created_at",
    ),  # without an offset a time is UTC (test_endpoints); this is no ISO 8601 time
    ({"scope_id": "s", "entries": [{"text": 5}]}, "entries[0].text"),
    ({"scope_id": "s", "entries": [{"text": "a", "kind": ""}]}, "entries[0].kind"),
    ({"scope_id": "s", "entries": [{"text": "a", "thread": 3}]}, "entries[0].thread"),
    ({"scope_id": "", "entries": [{"text": "a"}]}, "scope_id"),
    ({"scope_id": "s", "entries": [{"text": "a"}], "extra": 1}, "extra"),
]


@pytest.mark.parametrize(("body", "field"), ADD_CASES)
async def test_a_malformed_batch_is_422_naming_the_field(body: dict[str, Any], field: str) -> None:
    async with serving() as (client, _):
        response = await client.post(MEMORIES, json=body)
    assert response.status_code == 422, response.text
    error = error_of(response)
    assert error["type"] == "invalid_request"
    assert error["field"] == field


@pytest.mark.parametrize(
    ("bad", "field"),
    [
        ({"text": ""}, "entries[2].text"),
        ({"text": "a lone \ud800 surrogate"}, "entries[2].text"),
        ({"text": "a", "tags": ["ok", ""]}, "entries[2].tags[1]"),
        ({"text": "a", "key": "k1"}, "entries[2].key"),
        ({"text": "a", "created_at": "0001-01-01T00:00:00+01:00"}, "entries[2].created_at"),
        ({"text": "a", "colour": "red"}, "entries[2].colour"),
    ],
    ids=["blank-text", "surrogate", "blank-tag", "repeated-key", "before-utc-min", "unknown"],
)
async def test_a_batch_with_one_bad_entry_writes_nothing(bad: dict[str, Any], field: str) -> None:
    """All or nothing: two good entries and a bad third are refused together, whether
    the service or satchel finds the fault, and the scope stays empty."""
    good = [{"text": "Backups run nightly", "key": "k1"}, {"text": "Restores take an hour"}]
    async with serving() as (client, runtime):
        batch = {"scope_id": "s", "entries": [*good, bad]}
        response = await client.post(MEMORIES, content=json.dumps(batch), headers=JSON)
        counts = await runtime.store.scope_counts()
        after = await prepare(client, "s", "backups restores")
    assert response.status_code == 422, response.text
    assert error_of(response)["field"] == field
    assert counts == {}
    assert after.json()["status"] == "empty"


async def test_a_repeated_json_key_is_422_naming_it() -> None:
    async with serving() as (client, _):
        response = await client.post(
            PREPARE, content=b'{"scope_id": "s", "query": "a", "query": "b"}', headers=JSON
        )
    assert response.status_code == 422
    assert error_of(response)["field"] == "query"


_LONE = "\\ud800"  # JSON's escape of a lone surrogate: Python reads it as one


@pytest.mark.parametrize(
    ("path", "body"),
    [
        (PREPARE, '{"scope_id": "s", "query": "q", "%s": 1}'),
        (PREPARE, '{"scope_id": "s", "query": "q", "%s": 1, "%s": 2}'),
        (PREPARE, '{"scope_id": "s", "query": "q", "assembly": {"%s": 1}}'),
        (PREPARE, '{"scope_id": "s", "query": "q", "assembly": {"sections": [{"%s": 1}]}}'),
        (PREPARE, '{"scope_id": "s", "query": "q", "exclude": [{"%s": 1}]}'),
        (PREPARE, '{"scope_id": "s", "query": "q", "detail": {"%s": "full"}}'),
        ("/v1/context/explain", '{"scope_id": "s", "query": "q", "%s": 1}'),
        (MEMORIES, '{"scope_id": "s", "%s": 1, "entries": [{"text": "x"}]}'),
        (MEMORIES, '{"scope_id": "s", "entries": [{"text": "x", "%s": 1}]}'),
    ],
    ids=[
        "unknown",
        "repeated",
        "assembly",
        "section",
        "exclude",
        "detail",
        "explain",
        "batch",
        "entry",
    ],
)
async def test_an_echoed_lone_surrogate_is_escaped_in_the_422(path: str, body: str) -> None:
    """An error that echoes a field name holding a lone surrogate is still a JSON 422 (the
    name escaped), never a plain-text 500 from a body UTF-8 could not encode."""
    raw = (body % ((_LONE,) * body.count("%s"))).encode()
    async with serving() as (client, _):
        response = await client.post(path, content=raw, headers=JSON)
    assert response.status_code == 422, response.text
    assert response.headers["content-type"] == "application/json"
    assert "\\ud800" in error_of(response)["message"]


@pytest.mark.parametrize("part", ["scope", "id"])
async def test_a_lone_surrogate_in_an_excluded_citation_is_422_naming_it(part: str) -> None:
    """exclude[].scope and exclude[].id must be text UTF-8 can store, as every other field."""
    cited = {"family": "memory", "scope": "cited-scope", "id": "cited-id", "version": 1}
    body = json.dumps({"scope_id": "s", "query": "q", "exclude": [cited]})
    body = body.replace(f'"{cited[part]}"', f'"{_LONE}"')
    async with serving() as (client, _):
        response = await client.post(PREPARE, content=body.encode(), headers=JSON)
    assert response.status_code == 422, response.text
    assert error_of(response)["field"] == f"exclude[0].{part}"


@pytest.mark.parametrize("body", [b"[]", b'"text"', b"null", b"7"])
async def test_a_body_that_is_not_an_object_is_422(body: bytes) -> None:
    async with serving() as (client, _):
        response = await client.post(PREPARE, content=body, headers=JSON)
    assert response.status_code == 422
    error = error_of(response)
    assert error["field"] is None
    assert error["message"] == "the body must be a JSON object"


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("", "version"),
        ("?version=abc", "version"),
        ("?version=-1", "version"),
        ("?version=0", "version"),
        ("?version=1.0", "version"),
        ("?version=" + "9" * 40, "version"),
        ("?version=9223372036854775808", "version"),
        ("?version=1&version=2", "version"),
        ("?version=1&scope=x", "scope"),
    ],
)
@pytest.mark.parametrize("method", ["GET", "DELETE"])
async def test_a_malformed_version_is_422(method: str, query: str, field: str) -> None:
    async with serving() as (client, _):
        (ref,) = await add(client, "s", {"text": "x"})
        path = memory_path("s", ref["entry_id"]) + query
        response = await client.request(method, path)
    assert response.status_code == 422, response.text
    assert error_of(response)["field"] == field


# ------------------------------------------------------------------------- 404 and 405


async def test_an_unknown_endpoint_is_a_json_404() -> None:
    async with serving() as (client, _):
        response = await client.get("/v2/anything")
    assert response.status_code == 404
    assert error_of(response)["type"] == "not_found"


async def test_a_wrong_method_is_a_json_405_listing_the_allowed() -> None:
    async with serving() as (client, _):
        response = await client.get(PREPARE)
    assert response.status_code == 405
    assert error_of(response)["type"] == "method_not_allowed"
    assert response.headers["allow"] == "POST"


# ------------------------------------------------------------------- store failures


class UnavailableStore(satchel.MemoryStore):
    """A store whose database went away: every read and write raises."""

    async def retrieve(self, family: Family, scope_id: str, request: PoolRequest) -> Pool:
        raise satchel.StoreUnavailableError("engine at db.internal:2881 stopped")

    async def get_memory(self, ref: MemoryRef) -> MemoryRecord:
        raise satchel.StoreUnavailableError("engine at db.internal:2881 stopped")

    async def write(self, *args: Any, **kwargs: Any) -> list[Ref]:
        raise satchel.StoreUnavailableError("engine at db.internal:2881 stopped")

    async def forget_memory(self, ref: MemoryRef) -> bool:
        raise satchel.StoreUnavailableError("engine at db.internal:2881 stopped")


@pytest.mark.parametrize("call", ["prepare", "add", "get", "delete"])
async def test_an_unavailable_store_is_503_with_a_retry_hint(call: str) -> None:
    """The client is told to retry, not where the store lives."""
    async with serving(store=UnavailableStore()) as (client, _):
        path = memory_path("s", "e" * 32)
        if call == "prepare":
            response = await prepare(client, "s", "backups")
        elif call == "add":
            response = await client.post(
                MEMORIES, json={"scope_id": "s", "entries": [{"text": "x"}]}
            )
        elif call == "get":
            response = await client.get(path, params={"version": 1})
        else:
            response = await client.delete(path, params={"version": 1})
    assert response.status_code == 503
    error = error_of(response)
    assert error["type"] == "store_unavailable"
    assert "db.internal" not in response.text
    assert response.headers["retry-after"] == "1"


class StalledStore(satchel.MemoryStore):
    """A store whose searches never answer."""

    async def retrieve(self, family: Family, scope_id: str, request: PoolRequest) -> Pool:
        await anyio.sleep_forever()
        raise AssertionError("unreachable")


async def test_a_prepare_past_its_deadline_is_504() -> None:
    async with serving(store=StalledStore(), round_timeout=0.05) as (client, _):
        response = await prepare(client, "s", "backups")
    assert response.status_code == 504
    assert error_of(response)["type"] == "timeout"


class BrokenStore(satchel.MemoryStore):
    """A store with a defect: its searches raise something satchel never means to."""

    async def retrieve(self, family: Family, scope_id: str, request: PoolRequest) -> Pool:
        raise RuntimeError("secret internals /srv/satchel/team.db")


async def test_a_failed_prepare_is_a_json_500_that_reveals_nothing() -> None:
    """PrepareFailedError (a SatchelError) is a 500 naming only its kind."""
    async with serving(store=BrokenStore()) as (client, _):
        response = await prepare(client, "s", "backups")
    assert response.status_code == 500
    error = error_of(response)
    assert error["type"] == "internal"
    assert "PrepareFailedError" in error["message"]
    assert "secret" not in response.text


async def test_an_unexpected_exception_is_a_json_500(monkeypatch: pytest.MonkeyPatch) -> None:
    """Even an exception satchel never raises on purpose leaves as a JSON 500."""

    async def broken(ref: object) -> satchel.MemoryRecord:
        raise KeyError("secret internals")

    async with serving() as (client, runtime):
        monkeypatch.setattr(runtime, "get_memory", broken)
        response = await client.get(memory_path("s", "e"), params={"version": 1})
    assert response.status_code == 500
    assert error_of(response)["type"] == "internal"
    assert "secret" not in response.text


# --------------------------------------------------------------------------- arguments


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        ({"max_body_bytes": 0}, "max_body_bytes"),
        ({"max_body_bytes": True}, "max_body_bytes"),
        ({"tokens": ["secret"]}, "tokens"),
        ({"tokens": {"": None}}, "tokens"),
        ({"allowed_hosts": "localhost"}, "allowed_hosts"),
    ],
)
async def test_create_app_refuses_malformed_arguments(
    arguments: dict[str, Any], named: str
) -> None:
    async with satchel.open_runtime(embedder=satchel.HashingEmbedder()) as runtime:
        with pytest.raises(satchel.InvalidRequestError, match=named):
            create_app(runtime, **arguments)
    with pytest.raises(satchel.InvalidRequestError, match="runtime"):
        create_app(object())  # type: ignore[arg-type]
