"""Listing over HTTP: ``GET /v1/scopes`` names only the scopes a token may read, and
``GET /v1/scopes/{scope}/records`` pages a scope's records by an opaque cursor, refusing
a bad query field by name."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import quote

import pytest

import satchel
from satchel.http import TokenGrant

from ._service import add, error_of, memory_path, serving

if TYPE_CHECKING:
    import httpx

pytestmark = pytest.mark.anyio

TEAM: Final = "team-token-0123456789"
OTHER: Final = "other-token-0123456789"
TOKENS: Final = {
    TEAM: TokenGrant(scopes=("team/*",), name="team"),
    OTHER: TokenGrant(scopes=("other",), write=True, name="other"),
}


def records_path(scope: str) -> str:
    return f"/v1/scopes/{quote(scope, safe='')}/records"


async def page(client: httpx.AsyncClient, scope: str, **params: Any) -> dict[str, Any]:
    """One page of records (the request must succeed)."""
    response = await client.get(records_path(scope), params=params)
    assert response.status_code == 200, response.text
    assert response.headers["cache-control"] == "no-store"
    body: dict[str, Any] = response.json()
    return body


async def test_scopes_lists_counts_and_last_write_sorted() -> None:
    """Every scope holding anything, sorted, with its searchable records per family and
    an ISO 8601 time of its last write."""
    async with serving() as (client, runtime):
        await add(client, "b", {"text": "two"}, {"text": "three"})
        (ref,) = await add(client, "a/one", {"text": "one"})
        response = await client.get("/v1/scopes")
        await runtime.forget_memory(runtime_ref(ref))
        after = await client.get("/v1/scopes")
    scopes = response.json()["scopes"]
    assert [(s["scope_id"], s["records"]) for s in scopes] == [
        ("a/one", {"memory": 1}),
        ("b", {"memory": 2}),
    ]
    assert all(datetime.fromisoformat(s["updated_at"]).tzinfo is not None for s in scopes)
    assert [s["records"] for s in after.json()["scopes"]] == [{}, {"memory": 2}]


def runtime_ref(ref: dict[str, Any]) -> satchel.MemoryRef:
    return satchel.MemoryRef(ref["scope_id"], ref["entry_id"], ref["version"])


async def test_a_token_sees_only_the_scopes_it_may_read() -> None:
    """Scopes outside a token's grant are never named, and their records are refused
    with the same 403 whether or not they exist."""
    async with serving(tokens=TOKENS) as (client, runtime):
        await runtime.add_memories("team/a", [entry("alpha")])
        await runtime.add_memories("other", [entry("secret")])
        team = {"Authorization": f"Bearer {TEAM}"}
        seen = await client.get("/v1/scopes", headers=team)
        other = await client.get("/v1/scopes", headers={"Authorization": f"Bearer {OTHER}"})
        refused = await client.get(records_path("other"), headers=team)
        missing = await client.get(records_path("nowhere"), headers=team)
        anonymous = await client.get("/v1/scopes")
    assert [s["scope_id"] for s in seen.json()["scopes"]] == ["team/a"]
    assert [s["scope_id"] for s in other.json()["scopes"]] == ["other"]
    assert refused.status_code == missing.status_code == 403
    assert error_of(refused) == error_of(missing)
    assert anonymous.status_code == 401


def entry(text: str) -> satchel.MemoryEntry:
    return satchel.MemoryEntry(text)


async def test_records_page_by_cursor_newest_first_with_filters() -> None:
    """Pages of 2 follow the cursor over five entries newest first; the family and
    forgotten filters narrow and widen the listing; the erased never shows."""
    async with serving() as (client, _):
        refs = await add(client, "s", *({"text": f"entry {n}", "key": f"k{n}"} for n in range(5)))
        await client.delete(memory_path("s", refs[1]["entry_id"]), params={"version": 1})
        await client.delete(memory_path("s", refs[2]["entry_id"]), params={"erase": "true"})
        first = await page(client, "s", limit=2)
        second = await page(client, "s", limit=2, cursor=first["cursor"])
        everything = await page(client, "s", forgotten="true")
        none = await page(client, "s", family="experience")
    assert [r["text"] for r in first["records"]] == ["entry 4", "entry 3"]
    assert [r["text"] for r in second["records"]] == ["entry 0"]
    assert second["cursor"] is None
    assert first["records"][0] == {
        "citation": {"family": "memory", "scope": "s", "id": refs[4]["entry_id"], "version": 1},
        "text": "entry 4",
        "created_at": None,
        "key": "k4",
        "forgotten": False,
    }
    assert [(r["text"], r["forgotten"]) for r in everything["records"]] == [
        ("entry 4", False), ("entry 3", False), ("entry 1", True), ("entry 0", False),
    ]  # fmt: skip
    assert none == {"records": [], "cursor": None}


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"limit": "0"}, "limit"),
        ({"limit": "1001"}, "limit"),
        ({"limit": "ten"}, "limit"),
        ({"limit": ["1", "2"]}, "limit"),
        ({"family": "memories"}, "family"),
        ({"forgotten": "yes"}, "forgotten"),
        ({"cursor": "garbage!"}, "cursor"),
        ({"offset": "100"}, "offset"),
    ],
)
async def test_a_bad_query_field_is_refused_by_name(params: dict[str, Any], field: str) -> None:
    """Each malformed or unknown query field is a 422 naming it."""
    async with serving() as (client, _):
        response = await client.get(records_path("s"), params=params)
    assert response.status_code == 422
    assert error_of(response)["field"] == field


async def test_scopes_takes_no_query_field() -> None:
    """GET /v1/scopes refuses a query field by name."""
    async with serving() as (client, _):
        response = await client.get("/v1/scopes", params={"scope": "x"})
    assert response.status_code == 422
    assert error_of(response)["field"] == "scope"


async def test_listing_writes_nothing_and_erase_scope_still_routes() -> None:
    """Listing leaves the scope's write version; DELETE of a scope ending in /records
    still erases that scope."""
    async with serving() as (client, runtime):
        await add(client, "s", {"text": "kept"})
        await runtime.add_memories("x/records", [entry("gone")])
        version = runtime.store.scope_version("s")
        await page(client, "s")
        await client.get("/v1/scopes")
        erased = await client.delete(f"/v1/scopes/{quote('x/records', safe='')}")
        assert runtime.store.scope_version("s") == version
    assert erased.json() == {"scope_id": "x/records", "erased_records": 1}
