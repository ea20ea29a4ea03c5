"""The other families over HTTP: ``POST /v1/experiences``, ``/v1/topic-memories``,
``/v1/resources``, ``PUT /v1/profiles/{scope}`` and ``POST /v1/erase`` (any record by
its citation), each the Runtime method it names, with the token's write grant."""

from __future__ import annotations

from typing import Any, Final
from urllib.parse import quote

import pytest

import satchel
from satchel._wire import compact_id
from satchel.http import TokenGrant

from ._service import cited, error_of, prepare, serving

pytestmark = pytest.mark.anyio

READER: Final = "reader-token-0123456789"
WRITER: Final = "writer-token-0123456789"
TOKENS: Final = {
    READER: TokenGrant(scopes=("*",), name="reader"),
    WRITER: TokenGrant(scopes=("team/*",), write=True, name="writer"),
}
EXPERIENCE: Final = {
    "situation": "The backup failed",
    "action": "Re-ran it",
    "outcome": "It worked",
    "lesson": "Check the backup disk first",
    "key": "backup-failure",
}
TOPIC: Final = {"title": "Backups", "text": "Backups run nightly"}
RESOURCE: Final = {"uri": "docs://backup", "body": "Stop writers.", "abstract": "Backup runbook"}
#: Route, body field, and a record, by family.
BATCHES: Final = [
    ("/v1/experiences", "experiences", EXPERIENCE, "experience"),
    ("/v1/topic-memories", "topics", TOPIC, "topic-memory"),
    ("/v1/resources", "resources", RESOURCE, "resource"),
]
EVERY_FAMILY: Final = {
    "sections": [
        {"family": "profile", "limit": 1},
        {"family": "experience", "limit": 1},
        {"family": "topic-memory", "limit": 1},
        {"family": "resource", "limit": 1},
    ]
}


def profile_path(scope: str) -> str:
    return f"/v1/profiles/{quote(scope, safe='')}"


@pytest.mark.parametrize(("path", "argument", "record", "family"), BATCHES)
async def test_a_batch_answers_one_ref_per_record(
    path: str, argument: str, record: dict[str, Any], family: str
) -> None:
    """Each batch route writes its records and answers their refs in input order."""
    async with serving() as (client, runtime):
        response = await client.post(path, json={"scope_id": "team/ops", argument: [record]})
        assert response.status_code == 200, response.text
        [ref] = response.json()["refs"]
        assert (ref["family"], ref["scope_id"], ref["revision"]) == (family, "team/ops", 1)
        request = satchel.PrepareContextRequest(
            scope_id="team/ops",
            query="backup",
            assembly=satchel.Assembly((satchel.Section(family, 1),)),
        )
        context = await runtime.prepare_context(request)
        assert context.content is not None
        [item] = satchel.parse_context(context.content)
        assert compact_id(str(item.citation.id)) == ref["id"]


@pytest.mark.parametrize(("path", "argument", "record", "family"), BATCHES)
async def test_a_bad_batch_names_the_field_and_writes_nothing(
    path: str, argument: str, record: dict[str, Any], family: str
) -> None:
    """A missing field, an unknown one, or a value satchel refuses is a 422 naming it."""
    first = next(iter(record))
    async with serving() as (client, _):
        lacking = {name: value for name, value in record.items() if name != first}
        for body, field in (
            (
                {"scope_id": "s", argument: [record, {**record, first: ""}]},
                f"{argument}[1].{first}",
            ),
            ({"scope_id": "s", argument: [lacking]}, f"{argument}[0].{first}"),
            ({"scope_id": "s", argument: [record], "colour": 1}, "colour"),
            ({"scope_id": "s", argument: "x"}, argument),
        ):
            response = await client.post(path, json=body)
            assert response.status_code == 422, response.text
            assert error_of(response)["field"] == field
        answer = await prepare(client, "s", "backup", assembly=EVERY_FAMILY)
        assert answer.json()["status"] == "empty"


async def test_the_profile_is_set_under_its_scope() -> None:
    """PUT /v1/profiles/{scope} replaces the profile; 204; latest wins."""
    async with serving() as (client, _):
        for text in ("Ana runs ops", "Ana runs backups"):
            response = await client.put(profile_path("team/ops"), json={"profile": {"text": text}})
            assert response.status_code == 204, response.text
        context = (await prepare(client, "team/ops", "who", assembly=EVERY_FAMILY)).json()
        assert "Ana runs backups" in context["content"]
        assert "Ana runs ops" not in context["content"]
        bad = await client.put(profile_path("team/ops"), json={"profile": {"text": ""}})
        assert error_of(bad)["field"] == "profile.text"


async def test_erase_by_citation_takes_any_family() -> None:
    """POST /v1/erase erases the record a pack's citation names (its short id too)."""
    async with serving() as (client, _):
        await client.post(
            "/v1/experiences", json={"scope_id": "team/ops", "experiences": [EXPERIENCE]}
        )
        await client.put(profile_path("team/ops"), json={"profile": {"text": "Ana"}})
        context = (await prepare(client, "team/ops", "backup", assembly=EVERY_FAMILY)).json()
        for citation in cited(context):
            target = {"family": citation.family, "scope": citation.scope, "id": citation.id}
            if citation.id is not None:
                target["id"] = compact_id(citation.id)
            response = await client.post("/v1/erase", json={"target": target})
            assert response.status_code == 200, response.text
            assert response.json() == {"erased_versions": 1}
        profile = {"family": "profile", "scope": "team/ops", "id": None}
        again = await client.post("/v1/erase", json={"target": profile})
        assert again.json() == {"erased_versions": 0}
        refused = await client.post("/v1/erase", json={"target": {"family": "diary", "scope": "s"}})
        assert error_of(refused)["field"] == "target.family"


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("POST", "/v1/experiences", {"scope_id": "team/ops", "experiences": [EXPERIENCE]}),
        ("POST", "/v1/topic-memories", {"scope_id": "team/ops", "topics": [TOPIC]}),
        ("POST", "/v1/resources", {"scope_id": "team/ops", "resources": [RESOURCE]}),
        ("PUT", profile_path("team/ops"), {"profile": {"text": "Ana"}}),
        ("POST", "/v1/erase", {"target": {"family": "profile", "scope": "team/ops", "id": None}}),
        ("POST", "/v1/experiences", {"scope_id": "other", "experiences": [EXPERIENCE]}),
    ],
)
async def test_writes_need_the_write_grant(method: str, path: str, body: dict[str, Any]) -> None:
    """A read-only token (or a writer outside its scopes) is refused with 403."""
    async with serving(tokens=TOKENS) as (client, _):
        token = WRITER if "other" in str(body) else READER
        response = await client.request(
            method, path, json=body, headers={"Authorization": f"Bearer {token}"}
        )
        assert response.status_code == 403, response.text
        assert error_of(response)["type"] == "forbidden"
