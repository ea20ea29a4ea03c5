"""Erasing over HTTP: ``DELETE /v1/memories/{scope}/{entry_id}?erase=true`` and
``DELETE /v1/scopes/{scope}``, with the token's write grant."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import quote

import pytest

import satchel
from satchel._wire import compact_id, full_id
from satchel.http import TokenGrant

from ._service import add, cited, error_of, memory_path, prepare, serving

if TYPE_CHECKING:
    import httpx

pytestmark = pytest.mark.anyio

BACKUPS: Final = {"text": "Backups run nightly at 02:00 UTC", "key": "ops/backups"}
RESTORE: Final = {"text": "A restore of the backups takes twenty minutes"}
READER: Final = "reader-token-0123456789"
WRITER: Final = "writer-token-0123456789"
TOKENS: Final = {
    READER: TokenGrant(scopes=("*",), name="reader"),
    WRITER: TokenGrant(scopes=("team/*",), write=True, name="writer"),
}


def scope_path(scope: str) -> str:
    return f"/v1/scopes/{quote(scope, safe='')}"


async def erase(client: httpx.AsyncClient, scope: str, entry_id: str, **params: Any) -> Any:
    """Erase an entry; its answer's JSON (the request must succeed)."""
    response = await client.delete(memory_path(scope, entry_id), params={"erase": "true", **params})
    assert response.status_code == 200, response.text
    assert response.headers["cache-control"] == "no-store"
    return response.json()


async def test_erase_takes_every_version_and_get_says_it_was_erased() -> None:
    """Both versions of a keyed entry are erased (the count says 2); a GET of either is a
    404 saying it was erased, a prepare no longer finds the text, the other entry stays."""
    async with serving() as (client, _):
        (first,) = await add(client, "s", BACKUPS)
        (second,) = await add(client, "s", {**BACKUPS, "text": "Backups run hourly now"})
        (restore,) = await add(client, "s", RESTORE)
        assert second["version"] == 2
        answer = await erase(client, "s", first["entry_id"])
        got = [
            await client.get(memory_path("s", first["entry_id"]), params={"version": version})
            for version in (1, 2)
        ]
        # A question both texts answer: the erased entry would be served if it were not.
        after = await prepare(client, "s", "when do backups run, and how long does a restore take?")
    assert answer == {"scope_id": "s", "entry_id": first["entry_id"], "erased_versions": 2}
    for response in got:
        assert response.status_code == 404
        error = error_of(response)
        assert error["type"] == "not_found"
        assert "was erased" in error["message"]
    assert "Backups run" not in after.text
    assert [citation.id for citation in cited(after.json())] == [restore["entry_id"]]


@pytest.mark.parametrize("spelling", ["pack", "full"])
async def test_an_id_in_either_spelling_erases_the_same_entry(spelling: str) -> None:
    """The 22-character id a pack prints, or its full 32-hex spelling, names the entry an
    erase takes; the answer spells it as the pack does."""
    async with serving() as (client, _):
        (ref,) = await add(client, "s", BACKUPS)
        content = (await prepare(client, "s", "backups")).json()["content"]
        short = json.loads(content.split("\n")[3])[2]  # preamble, BEGIN, group line, item
        assert len(short) == 22
        answer = await erase(client, "s", short if spelling == "pack" else full_id(short))
        after = await prepare(client, "s", "backups")
    assert answer == {"scope_id": "s", "entry_id": short, "erased_versions": 1}
    assert ref["entry_id"] == short
    assert after.json()["status"] == "empty"


async def test_erasing_again_or_erasing_nothing_answers_zero() -> None:
    """An erase may be retried: what is gone already, or was never there, is 0 erased."""
    async with serving() as (client, _):
        (ref,) = await add(client, "s", BACKUPS)
        once = await erase(client, "s", ref["entry_id"])
        again = await erase(client, "s", ref["entry_id"])
        nowhere = await erase(client, "nowhere", "0" * 32)
    assert (once["erased_versions"], again["erased_versions"]) == (1, 0)
    assert nowhere == {
        "scope_id": "nowhere", "entry_id": compact_id("0" * 32), "erased_versions": 0
    }  # fmt: skip


async def test_a_version_does_not_narrow_an_erase_and_need_not_exist() -> None:
    """?version=N may be given (as a citation names it): it must be an integer, and the
    erase still takes every version."""
    async with serving() as (client, _):
        (ref,) = await add(client, "s", BACKUPS)
        await add(client, "s", {**BACKUPS, "text": "Backups run hourly now"})
        answer = await erase(client, "s", ref["entry_id"], version="7")
    assert answer["erased_versions"] == 2


async def test_the_key_is_free_after_an_erase() -> None:
    """The same key and content written after an erase is a new entry at version 1."""
    async with serving() as (client, _):
        (ref,) = await add(client, "s", BACKUPS)
        await erase(client, "s", ref["entry_id"])
        (again,) = await add(client, "s", BACKUPS)
    assert again["entry_id"] != ref["entry_id"]
    assert again["version"] == 1


async def test_erase_false_forgets() -> None:
    """?erase=false is the forget DELETE: 204, the version stays readable."""
    async with serving() as (client, _):
        (ref,) = await add(client, "s", BACKUPS)
        path = memory_path("s", ref["entry_id"])
        forgot = await client.delete(path, params={"version": 1, "erase": "false"})
        still = await client.get(path, params={"version": 1})
    assert forgot.status_code == 204
    assert still.status_code == 200


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("erase=yes", "erase"),
        ("erase=True", "erase"),
        ("erase=1", "erase"),
        ("erase=", "erase"),
        ("erase=true&erase=true", "erase"),
        ("erase=true&version=two", "version"),
        ("erase=true&version=0", "version"),
        ("erase=true&colour=red", "colour"),
        ("erase=false", "version"),  # a forget needs its version
    ],
)
async def test_a_malformed_erase_is_422_naming_the_field(query: str, field: str) -> None:
    """``erase`` is true or false and nothing else; nothing is erased."""
    async with serving() as (client, runtime):
        (ref,) = await add(client, "s", BACKUPS)
        response = await client.delete(f"{memory_path('s', ref['entry_id'])}?{query}")
        counts = await runtime.store.scope_counts()
    assert response.status_code == 422
    assert error_of(response)["field"] == field
    assert counts["s"]["memory"] == 1


async def test_a_get_takes_no_erase() -> None:
    async with serving() as (client, _):
        (ref,) = await add(client, "s", BACKUPS)
        response = await client.get(
            memory_path("s", ref["entry_id"]), params={"version": 1, "erase": "true"}
        )
    assert response.status_code == 422
    assert error_of(response)["field"] == "erase"


# -------------------------------------------------------------------------------- scopes


async def test_a_scope_erase_takes_every_record_of_every_family() -> None:
    """Every memory entry and the profile of the scope (a record counts once whatever its
    versions); another scope keeps its own, and erasing again answers 0."""
    scope = "team/eu:ops"
    async with serving() as (client, runtime):
        (backups,) = await add(client, scope, BACKUPS)
        await add(client, scope, {**BACKUPS, "text": "Backups run hourly now"}, RESTORE)
        await runtime.set_profile(scope, satchel.Profile("A small platform team."))
        await add(client, "other", BACKUPS)
        response = await client.delete(scope_path(scope))
        again = await client.delete(scope_path(scope))
        got = await client.get(memory_path(scope, backups["entry_id"]), params={"version": 1})
        after = await prepare(client, scope, "backups")
        counts = await runtime.store.scope_counts()
    assert response.status_code == 200, response.text
    assert response.json() == {"scope_id": scope, "erased_records": 3}
    assert again.json() == {"scope_id": scope, "erased_records": 0}
    assert "was erased" in error_of(got)["message"]
    assert after.json()["status"] == "empty"
    assert scope not in counts
    assert counts["other"]["memory"] == 1


@pytest.mark.parametrize(
    ("path", "field"),
    [("/v1/scopes/s?erase=true", "erase"), ("/v1/scopes/%20", "scope")],
    ids=["unknown-parameter", "blank-scope"],
)
async def test_a_malformed_scope_erase_is_422(path: str, field: str) -> None:
    async with serving() as (client, runtime):
        await add(client, "s", BACKUPS)
        response = await client.delete(path)
        counts = await runtime.store.scope_counts()
    assert response.status_code == 422
    assert error_of(response)["field"] == field
    assert counts["s"]["memory"] == 1


async def test_a_scope_erase_of_a_raw_slashed_scope() -> None:
    """As for the memory routes, every path segment after /v1/scopes/ is the scope."""
    async with serving() as (client, runtime):
        await add(client, "team/eu", BACKUPS)
        response = await client.delete("/v1/scopes/team/eu")
        counts = await runtime.store.scope_counts()
    assert response.json() == {"scope_id": "team/eu", "erased_records": 1}
    assert counts == {}


async def test_other_methods_on_a_scope_are_405() -> None:
    async with serving() as (client, _):
        response = await client.get(scope_path("s"))
    assert response.status_code == 405
    assert response.headers["allow"] == "DELETE"


# ---------------------------------------------------------------------------------- auth


@pytest.mark.parametrize(
    ("token", "scope"),
    [(READER, "team/a"), (WRITER, "project:a"), (None, "team/a")],
    ids=["read-only", "another-scope", "no-token"],
)
async def test_erasing_needs_the_write_grant_on_the_scope(token: str | None, scope: str) -> None:
    """A token that may only read the scope, or may write others, gets 403 on both
    erase routes (401 without a token); nothing is erased."""
    admin = "admin-token-01234567890"
    tokens = {**TOKENS, admin: TokenGrant(scopes=("*",), write=True)}
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    async with serving(tokens=tokens) as (client, runtime):
        (ref,) = await add(client, scope, BACKUPS, headers={"Authorization": f"Bearer {admin}"})
        entry = await client.delete(
            memory_path(scope, ref["entry_id"]), params={"erase": "true"}, headers=headers
        )
        whole = await client.delete(scope_path(scope), headers=headers)
        counts = await runtime.store.scope_counts()
    expected = 401 if token is None else 403
    assert (entry.status_code, whole.status_code) == (expected, expected)
    if token is not None:
        assert error_of(entry) == error_of(whole)  # one body whichever route was refused
        assert error_of(entry)["type"] == "forbidden"
    assert counts[scope]["memory"] == 1


async def test_a_writer_erases_in_its_scopes() -> None:
    headers = {"Authorization": f"Bearer {WRITER}"}
    async with serving(tokens=TOKENS) as (client, _):
        (ref,) = await add(client, "team/a", BACKUPS, headers=headers)
        entry = await client.delete(
            memory_path("team/a", ref["entry_id"]), params={"erase": "true"}, headers=headers
        )
        whole = await client.delete(scope_path("team/a"), headers=headers)
    assert entry.json()["erased_versions"] == 1
    assert whole.json()["erased_records"] == 0


# ------------------------------------------------------------------------------ openapi


async def test_the_openapi_document_describes_both_erase_routes() -> None:
    """The scope route, the erase parameter and the answers' schemas are documented."""
    async with serving() as (client, _):
        document = (await client.get("/openapi.json")).json()
    paths = document["paths"]
    assert paths["/v1/scopes/{scope}"]["delete"]["operationId"] == "eraseScope"
    delete = paths["/v1/memories/{scope}/{entry_id}"]["delete"]
    params = {param["name"]: param for param in delete["parameters"]}
    assert params["erase"]["schema"]["enum"] == ["true", "false"]
    assert params["version"]["required"] is False
    get = paths["/v1/memories/{scope}/{entry_id}"]["get"]
    assert [param["name"] for param in get["parameters"]] == ["version"]
    assert get["parameters"][0]["required"] is True
    schemas = document["components"]["schemas"]
    assert schemas["ErasedVersions"]["required"] == ["scope_id", "entry_id", "erased_versions"]
    assert schemas["ErasedRecords"]["required"] == ["scope_id", "erased_records"]
