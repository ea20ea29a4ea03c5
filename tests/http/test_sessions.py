"""A session belongs to the token that made it: the same ``session_id`` from another
token is another session, and one token's sessions never push out another's."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

import attrs
import pytest

import satchel
from satchel.http import TokenGrant
from satchel.http._auth import Tokens
from satchel.orchestration._ledger import DedupLedger

from ._service import add, prepare, serving

if TYPE_CHECKING:
    import httpx

pytestmark = pytest.mark.anyio

TOKEN_A: Final = "tenant-a-token-0123456789"
TOKEN_B: Final = "tenant-b-token-0123456789"
#: Each token reads and writes only its own scope.
TOKENS: Final = {
    TOKEN_A: TokenGrant(scopes=("a",), write=True, name="tenant-a"),
    TOKEN_B: TokenGrant(scopes=("b",), write=True, name="tenant-b"),
}
X: Final = "Kestrel migration runbook lives in the ops wiki"
SESSION: Final = "chat-1"


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def served(client: httpx.AsyncClient, token: str, scope: str, session: str) -> str:
    """The content of a prepare of ``kestrel`` in ``scope`` by ``token`` in ``session``
    ("" for an empty pack)."""
    response = await prepare(client, scope, "kestrel", bearer(token), session_id=session)
    assert response.status_code == 200, response.text
    content: str | None = response.json()["content"]
    return content or ""


async def seed(client: httpx.AsyncClient) -> None:
    """X in token B's scope ``b``, and a note of token A's own in its scope ``a``."""
    await add(client, "b", {"text": X}, headers=bearer(TOKEN_B))
    await add(client, "a", {"text": "Kestrel alerts page the on-call"}, headers=bearer(TOKEN_A))


def small_ledger(runtime: satchel.Runtime, **caps: Any) -> None:
    """Give ``runtime`` a ledger of ``dedup_turns=3`` with the given (small) caps."""
    preparer = runtime._preparer
    runtime._preparer = attrs.evolve(preparer, ledger=DedupLedger(3, **caps))


async def test_another_tokens_turns_do_not_age_a_session() -> None:
    """Token B is served X in session S; token A's three prepares in a session S of its
    own do not count as B's turns, so X stays held back at B's next turn."""
    async with serving(tokens=TOKENS, dedup_turns=3) as (client, _):
        await seed(client)
        assert X in await served(client, TOKEN_B, "b", SESSION)
        for _ in range(3):
            await served(client, TOKEN_A, "a", SESSION)
        assert X not in await served(client, TOKEN_B, "b", SESSION)


async def test_another_tokens_session_holds_nothing_back() -> None:
    """What token B's session S was served is not held back from token A's session S:
    a token reading the same scope gets it at its first turn."""
    tokens = {
        TOKEN_A: TokenGrant(scopes=("b",), name="tenant-a"),
        TOKEN_B: TokenGrant(scopes=("b",), write=True, name="tenant-b"),
    }
    async with serving(tokens=tokens, dedup_turns=3) as (client, _):
        await add(client, "b", {"text": X}, headers=bearer(TOKEN_B))
        assert X in await served(client, TOKEN_B, "b", SESSION)
        assert X in await served(client, TOKEN_A, "b", SESSION)
        assert X not in await served(client, TOKEN_B, "b", SESSION)


async def test_unnamed_tokens_are_callers_of_their_own() -> None:
    """Two tokens without a name keep their sessions apart as named ones do."""
    tokens = {TOKEN_A: TokenGrant(scopes=("a",), write=True), TOKEN_B: TokenGrant(scopes=("b",))}
    async with serving(tokens=tokens, dedup_turns=3) as (client, runtime):
        await runtime.add_memories("b", [satchel.MemoryEntry(text=X)])
        await add(client, "a", {"text": "Kestrel alerts page the on-call"}, headers=bearer(TOKEN_A))
        assert X in await served(client, TOKEN_B, "b", SESSION)
        for _ in range(3):
            await served(client, TOKEN_A, "a", SESSION)
        assert X not in await served(client, TOKEN_B, "b", SESSION)


def test_an_unnamed_token_is_labelled_apart_from_every_name() -> None:
    """An unnamed token is named by its place, set apart from a configured name that
    says the same, so no two tokens of different names end up as one caller."""
    tokens = Tokens(
        {
            TOKEN_A: TokenGrant(scopes=("a",)),
            TOKEN_B: TokenGrant(scopes=("b",), name="unnamed token 1"),
            "tenant-c-token-0123456789": TokenGrant(scopes=("c",)),
        }
    )
    names = [
        grant.name
        for token in (TOKEN_A, TOKEN_B, "tenant-c-token-0123456789")
        if (grant := tokens.grant_for(b"Bearer " + token.encode())) is not None
    ]
    assert names == ["unnamed token 1'", "unnamed token 1", "unnamed token 3"]


async def test_tokens_sharing_a_name_share_their_sessions() -> None:
    """A name is one caller: a session S continued with another token of the same name
    (a rotated token) holds back what the first token was served in it."""
    rotated = "tenant-b-rotated-0123456789"
    tokens = {**TOKENS, rotated: TokenGrant(scopes=("b",), name="tenant-b")}
    async with serving(tokens=tokens, dedup_turns=3) as (client, _):
        await add(client, "b", {"text": X}, headers=bearer(TOKEN_B))
        assert X in await served(client, TOKEN_B, "b", SESSION)
        assert X not in await served(client, rotated, "b", SESSION)


async def test_a_token_past_its_share_does_not_evict_another_tokens_session() -> None:
    """Token A opening more fresh sessions than a token's share forgets only its own
    oldest ones: token B's session S still holds X back."""
    async with serving(tokens=TOKENS, dedup_turns=3) as (client, runtime):
        small_ledger(runtime, max_sessions_per_owner=3, max_owners=4)
        await seed(client)
        assert X in await served(client, TOKEN_B, "b", SESSION)
        for fresh in range(5):
            await served(client, TOKEN_A, "a", f"fresh-{fresh}")
        assert X not in await served(client, TOKEN_B, "b", SESSION)
