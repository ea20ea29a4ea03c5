"""POST /v1/context/explain: the pack a prepare of the same body returns, with its
receipts and omissions, behind the same token, grant and session handling."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

import pytest

import satchel
from satchel.http import OPENAPI, TokenGrant
from satchel.vocabulary import MAX_OMISSIONS

from ._service import add, cited, error_of, prepare, serving

if TYPE_CHECKING:
    import httpx

pytestmark = pytest.mark.anyio

SCOPE: Final = "project:a"
READER: Final = "reader-token-0123456789"
TOKENS: Final = {READER: TokenGrant(scopes=(SCOPE,), write=True, name="reader")}
NOTES: Final = [
    {"text": f"Kestrel dispatcher note {n}: restart it on port 74{n:02d}"} for n in range(6)
]
CONTEXT_FIELDS: Final = ("schema", "status", "content", "content_bytes")


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def explain(
    client: httpx.AsyncClient, scope: str, query: str, **fields: Any
) -> httpx.Response:
    return await client.post(
        "/v1/context/explain",
        json={"scope_id": scope, "query": query, **fields},
        headers=bearer(READER),
    )


async def test_explain_answers_the_prepared_pack_with_its_receipts() -> None:
    """The first four fields are the prepare's answer; one receipt per item, in pack
    order, citing as parse_context reads the pack; the omissions, each with its cause."""
    async with serving(tokens=TOKENS) as (client, _):
        await add(client, SCOPE, *NOTES, headers=bearer(READER))
        prepared = await prepare(client, SCOPE, "kestrel dispatcher", bearer(READER), max_bytes=600)
        response = await explain(client, SCOPE, "kestrel dispatcher", max_bytes=600)
    assert response.status_code == 200, response.text
    body = response.json()
    assert list(body) == [*CONTEXT_FIELDS, "receipts", "omitted"]
    assert {name: body[name] for name in CONTEXT_FIELDS} == prepared.json()
    receipts = body["receipts"]
    assert [satchel.Citation(**receipt["citation"]) for receipt in receipts] == cited(body)
    for receipt in receipts:
        assert set(receipt) == {"citation", "channels", "score", "round", "tier", "truncated"}
        assert receipt["channels"]
        assert receipt["round"] == 0
    assert 0 < len(body["omitted"]) <= MAX_OMISSIONS
    assert {omission["cause"] for omission in body["omitted"]} == {"budget"}


async def test_explain_is_a_turn_of_the_tokens_session() -> None:
    """An explained prepare in a session is a turn of that token's session: the items it
    delivered are held back at the next prepare, and omitted as held back when explained."""
    async with serving(tokens=TOKENS, dedup_turns=2) as (client, _):
        await add(client, SCOPE, NOTES[0], headers=bearer(READER))
        first = (await explain(client, SCOPE, "kestrel", session_id="chat")).json()
        second = (await explain(client, SCOPE, "kestrel", session_id="chat")).json()
    assert len(first["receipts"]) == 1
    assert second["content"] is None
    assert second["receipts"] == []
    [held] = second["omitted"]
    assert (held["cause"], held["citation"]) == ("held-back", first["receipts"][0]["citation"])


async def test_explain_is_refused_as_prepare_is() -> None:
    """No token is 401, a scope the token may not read is 403, a bad field is 422."""
    async with serving(tokens=TOKENS) as (client, _):
        anonymous = await client.post("/v1/context/explain", json={"scope_id": SCOPE, "query": "q"})
        forbidden = await explain(client, "chat-1", "q")
        referenced = await explain(client, SCOPE, "q", references=["chat-1"])
        invalid = await explain(client, SCOPE, "q", max_bytes=10)
    assert anonymous.status_code == 401
    assert forbidden.status_code == referenced.status_code == 403
    assert invalid.status_code == 422
    assert error_of(invalid)["field"] == "max_bytes"


def test_the_openapi_document_describes_the_explanation() -> None:
    """The route answers an ExplainedContext whose omissions are bounded as satchel's."""
    post = OPENAPI["paths"]["/v1/context/explain"]["post"]
    assert post["requestBody"] == OPENAPI["paths"]["/v1/context/prepare"]["post"]["requestBody"]
    schemas = OPENAPI["components"]["schemas"]
    answer = schemas["ExplainedContext"]
    assert answer["required"] == [*CONTEXT_FIELDS, "receipts", "omitted"]
    assert answer["properties"]["omitted"]["maxItems"] == MAX_OMISSIONS
    assert schemas["Omission"]["properties"]["cause"]["enum"] == list(
        satchel.vocabulary._receipts.OMISSION_CAUSES
    )
