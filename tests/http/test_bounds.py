"""Every bound the OpenAPI document states is one the service applies: a body at the bound
is accepted and one just past it refused with a 422 naming the field (each bound is read
off the served document, so changing the contract or satchel's validation alone fails)."""

from __future__ import annotations

from typing import Any

import pytest

from satchel._contract import SECTION_LIMITS
from satchel.http import OPENAPI

from ._service import error_of, serving

pytestmark = pytest.mark.anyio

SCHEMAS = OPENAPI["components"]["schemas"]
PREPARE = SCHEMAS["PrepareContextRequest"]["properties"]
SECTION = SCHEMAS["Assembly"]["properties"]["sections"]
ENTRY = SCHEMAS["MemoryEntry"]["properties"]
REF = SCHEMAS["MemoryRef"]["properties"]
QUERY = PREPARE["query"]["maxLength"]
SCOPE = PREPARE["scope_id"]["maxLength"]
LOW, HIGH = PREPARE["max_bytes"]["minimum"], PREPARE["max_bytes"]["maximum"]
REFERENCES = PREPARE["references"]["maxItems"]
LIMIT = SECTION["items"]["properties"]["limit"]["maximum"]
FAMILIES = SECTION["items"]["properties"]["family"]["enum"]
TIERS = PREPARE["detail"]["oneOf"][0]["enum"]
KEY = ENTRY["key"]["maxLength"]
VERSION = REF["version"]["maximum"]


def body(**fields: Any) -> dict[str, Any]:
    return {"scope_id": "s", "query": "q", **fields}


def sections(*limits: tuple[str, int]) -> dict[str, Any]:
    return {"sections": [{"family": family, "limit": limit} for family, limit in limits]}


def scopes(count: int) -> list[str]:
    return [f"r{n}" for n in range(count)]


#: (what, a body at the bound, the body just past it, the field the refusal names).
PREPARE_BOUNDS = [
    ("query length", body(query="q" * QUERY), body(query="q" * (QUERY + 1)), "query"),
    ("query not blank", body(query="q"), body(query="   "), "query"),
    ("scope length", body(scope_id="s" * SCOPE), body(scope_id="s" * (SCOPE + 1)), "scope_id"),
    ("scope not blank", body(scope_id="s"), body(scope_id=" "), "scope_id"),
    ("least max_bytes", body(max_bytes=LOW), body(max_bytes=LOW - 1), "max_bytes"),
    ("most max_bytes", body(max_bytes=HIGH), body(max_bytes=HIGH + 1), "max_bytes"),
    (
        "references",
        body(references=scopes(REFERENCES)),
        body(references=scopes(REFERENCES + 1)),
        "references",
    ),
    (
        "section limit",
        body(assembly=sections((FAMILIES[0], LIMIT))),
        body(assembly=sections((FAMILIES[0], LIMIT + 1))),
        "assembly.sections[0].limit",
    ),
    (
        "section family",
        body(assembly=sections((FAMILIES[-1], 1))),
        body(assembly=sections(("note", 1))),
        "assembly.sections[0].family",
    ),
    ("tier", body(detail=TIERS[-1]), body(detail="deep"), "detail"),
    (
        "session not blank",
        body(session_id="conversation"),
        body(session_id=" "),
        "session_id",
    ),
]


@pytest.mark.parametrize(
    ("accepted", "refused", "field"),
    [case[1:] for case in PREPARE_BOUNDS],
    ids=[case[0] for case in PREPARE_BOUNDS],
)
async def test_a_prepare_at_a_bound_is_accepted_and_one_past_it_refused(
    accepted: dict[str, Any], refused: dict[str, Any], field: str
) -> None:
    """At the document's bound a prepare body is accepted; just past it, a 422 names it."""
    async with serving() as (client, _):
        ok = await client.post("/v1/context/deadline", json=accepted)
        bad = await client.post("/v1/context/deadline", json=refused)
    assert ok.status_code == 200, ok.text
    assert bad.status_code == 422, bad.text
    assert error_of(bad)["field"] == field


@pytest.mark.parametrize(("family", "limit"), SECTION_LIMITS.items())
async def test_each_familys_section_limit_is_the_one_the_document_says(
    family: str, limit: int
) -> None:
    """A family's own section limit (the document's maximum, or lower where its
    description says so) is accepted, one more refused."""
    described = SECTION["items"]["properties"]["limit"]["description"]
    assert limit == LIMIT or f"{family}: 1..{limit}" in described
    async with serving() as (client, _):
        ok = await client.post(
            "/v1/context/deadline", json=body(assembly=sections((family, limit)))
        )
        bad = await client.post(
            "/v1/context/deadline", json=body(assembly=sections((family, limit + 1)))
        )
    assert ok.status_code == 200, ok.text
    assert error_of(bad)["field"] == "assembly.sections[0].limit"


async def test_every_family_fits_in_one_assembly_but_none_twice() -> None:
    """``maxItems`` is the number of families: each once is accepted, a repeat refused."""
    assert SECTION["maxItems"] == len(FAMILIES)
    each = sections(*((family, 1) for family in FAMILIES))
    again = sections(*((family, 1) for family in [*FAMILIES[:-1], FAMILIES[0]]))
    async with serving() as (client, _):
        ok = await client.post("/v1/context/deadline", json=body(assembly=each))
        bad = await client.post("/v1/context/deadline", json=body(assembly=again))
    assert ok.status_code == 200, ok.text
    assert error_of(bad)["field"] == f"assembly.sections[{len(FAMILIES) - 1}].family"


async def test_a_key_at_its_bound_is_written_and_one_past_it_refused() -> None:
    """An entry's idempotency key of the document's maxLength is written; one longer is not."""
    entry = {"text": "Backups run nightly"}
    async with serving() as (client, _):
        ok = await client.post(
            "/v1/memories", json={"scope_id": "s", "entries": [{**entry, "key": "k" * KEY}]}
        )
        bad = await client.post(
            "/v1/memories", json={"scope_id": "s", "entries": [{**entry, "key": "k" * (KEY + 1)}]}
        )
    assert ok.status_code == 200, ok.text
    assert error_of(bad)["field"] == "entries[0].key"


async def test_a_version_at_its_bound_is_read_and_one_past_it_refused() -> None:
    """A ref's largest version is a valid (absent) version; one more is refused."""
    async with serving() as (client, _):
        ok = await client.get("/v1/memories/s/e1", params={"version": VERSION})
        bad = await client.get("/v1/memories/s/e1", params={"version": VERSION + 1})
    assert ok.status_code == 404, ok.text
    assert bad.status_code == 422, bad.text
    assert error_of(bad)["field"] == "version"
