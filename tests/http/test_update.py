"""Updating over HTTP: ``PUT /v1/memories/{scope}/{entry_id}?version=N`` with
``{"entry": {...}}`` writes a new version, with the token's write grant."""

from __future__ import annotations

from typing import Final

import pytest

from satchel.http import TokenGrant

from ._service import add, error_of, memory_path, prepare, serving

pytestmark = pytest.mark.anyio

READER: Final = "reader-token-0123456789"
WRITER: Final = "writer-token-0123456789"
TOKENS: Final = {
    READER: TokenGrant(scopes=("*",), name="reader"),
    WRITER: TokenGrant(scopes=("team/*",), write=True, name="writer"),
}
BACKUPS: Final = {"text": "Backups run nightly at 02:00 UTC"}


async def test_put_writes_a_new_version_and_the_old_stays_readable() -> None:
    """The answer is the new ref; the old version reads as it was; prepare serves
    the new text only."""
    async with serving() as (client, _):
        [ref] = await add(client, "team/ops", BACKUPS)
        path = memory_path("team/ops", ref["entry_id"])
        entry = {"text": "Backups run nightly at 04:00 UTC", "tags": ["ops"]}
        response = await client.put(path, params={"version": 1}, json={"entry": entry})
        assert response.status_code == 200, response.text
        assert response.json() == {**ref, "version": 2}
        old = await client.get(path, params={"version": 1})
        assert old.json()["text"] == BACKUPS["text"]
        new = await client.get(path, params={"version": 2})
        assert (new.json()["text"], new.json()["tags"]) == (entry["text"], ["ops"])
        content = (await prepare(client, "team/ops", "when do backups run")).json()["content"]
        assert "04:00" in content
        assert "02:00" not in content


@pytest.mark.parametrize(
    ("body", "params", "field"),
    [
        ({"entry": {"text": ""}}, {"version": 1}, "entry.text"),
        ({"entry": {"text": "x", "colour": "red"}}, {"version": 1}, None),
        ({"entry": {"text": "x"}, "colour": "red"}, {"version": 1}, "colour"),
        ({}, {"version": 1}, "entry"),
        ({"entry": {"text": "x"}}, {}, "version"),
    ],
)
async def test_a_bad_update_is_refused_naming_the_field(
    body: dict[str, object], params: dict[str, int], field: str | None
) -> None:
    """A malformed body or URL is a 422 naming the field, and writes nothing."""
    async with serving() as (client, _):
        [ref] = await add(client, "team/ops", BACKUPS)
        path = memory_path("team/ops", ref["entry_id"])
        response = await client.put(path, params=params, json=body)
        assert response.status_code == 422, response.text
        error = error_of(response)
        if field is not None:
            assert error["field"] == field
        else:
            assert "entry.colour" in error["message"]
        missing = await client.get(path, params={"version": 2})
        assert missing.status_code == 404


async def test_updating_an_unknown_version_is_not_found() -> None:
    """A version that does not exist cannot be replaced: 404."""
    async with serving() as (client, _):
        [ref] = await add(client, "team/ops", BACKUPS)
        path = memory_path("team/ops", ref["entry_id"])
        response = await client.put(path, params={"version": 5}, json={"entry": BACKUPS})
        assert response.status_code == 404, response.text
        assert error_of(response)["type"] == "not_found"


async def test_an_update_needs_the_write_grant() -> None:
    """A token that may only read the scope is refused with 403, and nothing is written."""
    async with serving(tokens=TOKENS) as (client, _):
        writer = {"Authorization": f"Bearer {WRITER}"}
        [ref] = await add(client, "team/ops", BACKUPS, headers=writer)
        path = memory_path("team/ops", ref["entry_id"])
        response = await client.put(
            path,
            params={"version": 1},
            json={"entry": {"text": "changed"}},
            headers={"Authorization": f"Bearer {READER}"},
        )
        assert response.status_code == 403
        after = await client.get(path, params={"version": 2}, headers=writer)
        assert after.status_code == 404
