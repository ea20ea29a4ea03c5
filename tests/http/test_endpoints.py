"""Every endpoint of the HTTP service does what the public API it wraps does."""

from __future__ import annotations

import json
from typing import Any

import attrs
import pytest
from starlette.routing import Route

import satchel
from satchel._wire import full_id
from satchel.http import OPENAPI, create_app, route_template

from ._service import add, cited, error_of, memory_path, prepare, serving

pytestmark = pytest.mark.anyio

BACKUPS = {"text": "Backups run nightly at 02:00 UTC", "kind": "fact", "tags": ["ops"]}
RESTORE = {"text": "A restore of the backups takes twenty minutes", "kind": "fact"}


async def test_health_answers_ok() -> None:
    async with serving() as (client, _):
        response = await client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


async def test_the_openapi_document_describes_every_route() -> None:
    """The routes and methods the app serves are exactly the OpenAPI 3.1 document's
    operations, the served document is valid JSON equal to the module's, and every
    $ref resolves."""
    async with serving() as (client, runtime):
        response = await client.get("/openapi.json")
        app = create_app(runtime)
    assert response.status_code == 200
    document = json.loads(response.text)
    assert document == OPENAPI
    assert document["openapi"].startswith("3.1")
    served = {
        (route_template(route.path), method.lower())
        for route in app.routes
        if isinstance(route, Route) and not route.path.startswith("/ui")  # HTML, not the API
        for method in route.methods or ()
        if method != "HEAD"
    }
    documented = {
        (path, method)
        for path, operations in document["paths"].items()
        for method in operations
        if method in {"get", "post", "put", "patch", "delete"}
    }
    # The app's routes and the document's operations are the same set, both ways.
    assert served == documented, (served - documented, documented - served)
    schemas = document["components"]["schemas"]
    refs = _refs(document)
    assert refs
    for ref in refs:
        assert ref.removeprefix("#/components/schemas/") in schemas, ref


def _refs(value: object) -> list[str]:
    if isinstance(value, dict):
        found = [value["$ref"]] if "$ref" in value else []
        return found + [ref for item in value.values() for ref in _refs(item)]
    if isinstance(value, list):
        return [ref for item in value for ref in _refs(item)]
    return []


async def test_added_memories_are_prepared_and_cited() -> None:
    """POST /v1/memories returns one ref per entry in order; a prepare's pack cites them
    by exactly those refs, and its four fields are PreparedContext's."""
    async with serving() as (client, _):
        refs = await add(client, "project:demo", BACKUPS, RESTORE)
        response = await prepare(client, "project:demo", "when do backups run?")
    assert [ref["scope_id"] for ref in refs] == ["project:demo", "project:demo"]
    assert [ref["version"] for ref in refs] == [1, 1]
    assert response.status_code == 200
    assert response.headers["cache-control"] == "no-store"
    context = response.json()
    assert set(context) == {"schema", "status", "content", "content_bytes"}
    assert context["schema"] == "satchel.prepared-context.v2"
    assert context["status"] == "ready"
    assert context["content_bytes"] == len(context["content"].encode())
    assert "Backups run nightly at 02:00 UTC" in context["content"]
    entry_ids = {citation.id for citation in cited(context)}
    assert refs[0]["entry_id"] in entry_ids


async def test_the_service_answers_exactly_what_the_runtime_does() -> None:
    """Same store, same request: the HTTP answer is the runtime's PreparedContext."""
    async with serving() as (client, runtime):
        await add(client, "s", BACKUPS, RESTORE)
        response = await prepare(client, "s", "restore backups", max_bytes=600)
        direct = await runtime.prepare_context(
            satchel.PrepareContextRequest(scope_id="s", query="restore backups", max_bytes=600)
        )
    assert response.json() == attrs.asdict(direct)


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({}, None),
        ({"round_timeout": 0.25}, 0.25),
        ({"round_timeout": 0.25, "prepare_timeout": 0.1}, 0.1),
    ],
)
async def test_the_deadline_is_the_runtimes_for_the_same_body(
    options: dict[str, Any], expected: float | None
) -> None:
    """POST /v1/context/deadline answers ``deadline_for`` of the body a prepare would
    take (null when unbounded), so a client times its prepare call by it."""
    body = {"scope_id": "s", "query": "when do backups run?", "max_bytes": 900}
    async with serving(**options) as (client, runtime):
        response = await client.post("/v1/context/deadline", json=body)
        direct = runtime.deadline_for(
            satchel.PrepareContextRequest(scope_id="s", query="when do backups run?", max_bytes=900)
        )
    assert response.status_code == 200
    assert response.headers["cache-control"] == "no-store"
    assert response.json() == {"deadline_seconds": expected}
    assert direct == (float("inf") if expected is None else expected)


async def test_the_deadline_refuses_what_a_prepare_refuses() -> None:
    """A malformed field is a 422 naming it, an unknown one too: the same rules as the
    prepare the body is for."""
    async with serving() as (client, _):
        bad = await client.post(
            "/v1/context/deadline", json={"scope_id": "s", "query": "q", "max_bytes": 10}
        )
        unknown = await client.post(
            "/v1/context/deadline", json={"scope_id": "s", "query": "q", "colour": "red"}
        )
    assert bad.status_code == unknown.status_code == 422
    assert error_of(bad)["field"] == "max_bytes"
    assert error_of(unknown)["field"] == "colour"


async def test_a_prepare_over_an_empty_scope_is_empty() -> None:
    async with serving() as (client, _):
        response = await prepare(client, "nobody", "anything at all")
    assert response.status_code == 200
    assert response.json() == {
        "schema": "satchel.prepared-context.v2",
        "status": "empty",
        "content": None,
        "content_bytes": 0,
    }


async def test_references_assembly_detail_and_session_are_honoured() -> None:
    """references search another scope; an assembly delivers its families as groups within
    its limits; a detail pin and a session are accepted as the runtime takes them."""
    async with serving(dedup_turns=2) as (client, _):
        await add(client, "team", BACKUPS)
        await add(client, "team", RESTORE)
        other = await add(client, "other", {"text": "Backups of the other team run weekly"})
        response = await prepare(
            client,
            "team",
            "backups",
            references=["other"],
            assembly={"sections": [{"family": "memory", "limit": 2}]},
            detail={"memory": "full"},
            session_id="chat-1",
        )
        assert response.status_code == 200, response.text
        context = response.json()
        assert '{"family":"memory","scope":"team"}' in context["content"]
        citations = cited(context)
        assert len(citations) == 2
        # the session holds back what it was given: the next turn delivers the rest
        again = await prepare(client, "team", "backups", references=["other"], session_id="chat-1")
    scopes = {citation.scope for citation in citations + cited(again.json())}
    assert scopes == {"team", "other"}
    assert other[0]["entry_id"] in {c.id for c in citations + cited(again.json())}
    assert not {c.id for c in citations} & {c.id for c in cited(again.json())}


@pytest.mark.parametrize("spelling", ["service", "pack"])
async def test_excluded_citations_are_never_delivered(spelling: str) -> None:
    """exclude takes citations as the schema spells them (id, version) or as a pack
    does (entry_id, version); the excluded entry is left out, the other delivered."""
    async with serving() as (client, _):
        refs = await add(client, "s", BACKUPS, RESTORE)
        first = refs[0]
        citation: dict[str, Any] = {"family": "memory", "scope": "s", "version": 1}
        citation["id" if spelling == "service" else "entry_id"] = first["entry_id"]
        response = await prepare(client, "s", "backups", exclude=[citation])
    assert response.status_code == 200, response.text
    delivered = {c.id for c in cited(response.json())}
    assert first["entry_id"] not in delivered
    assert refs[1]["entry_id"] in delivered


async def test_get_reads_exactly_the_version_named() -> None:
    """A keyed entry written again with new text is version 2; each version reads back
    with every field, created_at in ISO 8601 with its offset."""
    entry = {
        "text": "Deploys happen on Thursdays",
        "kind": "dialog",
        "tags": ["deploy", "ops"],
        "created_at": "2024-03-04T09:00:00+01:00",
        "thread": "chat-42",
        "key": "chat-42/7",
    }
    async with serving() as (client, _):
        (first,) = await add(client, "user:ana", entry)
        (second,) = await add(client, "user:ana", {**entry, "text": "Deploys moved to Fridays"})
        path = memory_path("user:ana", first["entry_id"])
        one = await client.get(path, params={"version": 1})
        two = await client.get(path, params={"version": 2})
    assert second == {**first, "version": 2}
    assert one.status_code == two.status_code == 200
    assert one.json() == {
        "ref": first,
        "text": "Deploys happen on Thursdays",
        "kind": "dialog",
        "tags": ["deploy", "ops"],
        "created_at": "2024-03-04T09:00:00+01:00",
        "thread": "chat-42",
        "key": "chat-42/7",
    }
    assert two.json()["text"] == "Deploys moved to Fridays"
    assert two.json()["ref"] == second


@pytest.mark.parametrize(
    ("given", "read"),
    [
        ("2023-07-10", "2023-07-10T00:00:00+00:00"),
        ("2023-07-10T09:30", "2023-07-10T09:30:00+00:00"),
        ("2023-07-10T09:30:00Z", "2023-07-10T09:30:00+00:00"),
    ],
)
async def test_created_at_without_an_offset_is_utc(given: str, read: str) -> None:
    """A created_at without a UTC offset is read as UTC, as ``satchel add --at`` and
    ``satchel ingest`` read it (it was refused with a 422)."""
    async with serving() as (client, _):
        (ref,) = await add(client, "s", {**BACKUPS, "created_at": given})
        got = await client.get(memory_path("s", ref["entry_id"]), params={"version": 1})
    assert got.status_code == 200
    assert got.json()["created_at"] == read


async def test_an_id_is_spelled_as_the_pack_writes_it_and_read_in_either_spelling() -> None:
    """The ref a write answers spells its id as a pack's line does (22 characters), so a
    host matches the two by eye; get, delete and exclude take that spelling and the full
    32-hex one alike."""
    async with serving() as (client, _):
        (ref,) = await add(client, "s", BACKUPS)
        content = (await prepare(client, "s", "backups")).json()["content"]
        item = json.loads(content.split("\n")[3])  # preamble, BEGIN, group line, item
        short = item[2]
        full = full_id(short)
        got = {
            spelled: await client.get(memory_path("s", spelled), params={"version": 1})
            for spelled in (short, full)
        }
        excluded = [
            await prepare(
                client, "s", "backups",
                exclude=[{"family": "memory", "scope": "s", "id": spelled, "version": 1}],
            )
            for spelled in (short, full)
        ]  # fmt: skip
    assert len(short) == 22
    assert len(full) == 32
    assert ref["entry_id"] == short
    for response in got.values():
        assert response.status_code == 200, response.text
        assert response.json()["ref"] == ref
    assert [response.json()["status"] for response in excluded] == ["empty", "empty"]


async def test_writing_the_same_keyed_batch_twice_writes_nothing_twice() -> None:
    batch = [{"text": "one", "key": "k1"}, {"text": "two", "key": "k2"}]
    async with serving() as (client, runtime):
        first = await add(client, "s", *batch)
        again = await add(client, "s", *batch)
        counts = await runtime.store.scope_counts()
    assert first == again
    assert counts["s"]["memory"] == 2


@pytest.mark.parametrize(
    ("scope", "entry", "version"),
    [("s", "0" * 32, 1), ("nowhere", "0" * 32, 1), ("s", "real", 2)],
    ids=["unknown-entry", "unknown-scope", "unknown-version"],
)
async def test_get_and_delete_of_an_absent_version_are_404(
    scope: str, entry: str, version: int
) -> None:
    async with serving() as (client, _):
        (ref,) = await add(client, "s", BACKUPS)
        entry_id = ref["entry_id"] if entry == "real" else entry
        path = memory_path(scope, entry_id)
        got = await client.get(path, params={"version": version})
        deleted = await client.delete(path, params={"version": version})
    for response in (got, deleted):
        assert response.status_code == 404
        assert error_of(response)["type"] == "not_found"


async def test_delete_forgets_out_of_search_and_the_version_stays_readable() -> None:
    async with serving() as (client, _):
        backups, restore = await add(client, "s", BACKUPS, RESTORE)
        path = memory_path("s", backups["entry_id"])
        response = await client.delete(path, params={"version": 1})
        after = await prepare(client, "s", "backups")
        still = await client.get(path, params={"version": 1})
        again = await client.delete(path, params={"version": 1})
    assert response.status_code == 204
    assert response.content == b""
    delivered = {c.id for c in cited(after.json())}
    assert backups["entry_id"] not in delivered
    assert restore["entry_id"] in delivered
    assert still.status_code == 200
    assert still.json()["text"] == BACKUPS["text"]
    assert again.status_code == 204  # forgetting again changes nothing


async def test_posting_a_deleted_keyed_entry_again_returns_it_forgotten() -> None:
    """Forget is forever: DELETE, then POST the same key and content, returns the forgotten ref."""
    keyed = {**BACKUPS, "key": "ops/1"}
    async with serving() as (client, runtime):
        (backups,) = await add(client, "s", keyed)
        path = memory_path("s", backups["entry_id"])
        deleted = await client.delete(path, params={"version": 1})
        (again,) = await add(client, "s", keyed)
        after = await prepare(client, "s", "when do backups run?")
        counts = await runtime.store.scope_counts()
    assert deleted.status_code == 204
    assert again == backups
    assert after.json()["status"] == "empty"
    assert counts.get("s", {}).get("memory", 0) == 0


@pytest.mark.parametrize("encoded", [True, False], ids=["percent-encoded", "raw-slashes"])
async def test_a_scope_with_colons_and_slashes_is_addressed_in_the_url(encoded: bool) -> None:
    """Every path segment before the last is the scope: ':' and '/' in a scope work
    percent-encoded (the documented way) and as they are."""
    scope = "team/eu:ops/chat 7"
    async with serving() as (client, _):
        (ref,) = await add(client, scope, BACKUPS)
        if encoded:
            path = memory_path(scope, ref["entry_id"])
        else:
            path = f"/v1/memories/team/eu:ops/chat%207/{ref['entry_id']}"
        got = await client.get(path, params={"version": 1})
        deleted = await client.delete(path, params={"version": 1})
        after = await prepare(client, scope, "backups")
    assert got.status_code == 200, got.text
    assert got.json()["ref"] == ref
    assert deleted.status_code == 204
    assert after.json()["status"] == "empty"


async def test_an_empty_batch_writes_nothing() -> None:
    async with serving() as (client, runtime):
        refs = await add(client, "s")
        counts = await runtime.store.scope_counts()
    assert refs == []
    assert "s" not in counts
