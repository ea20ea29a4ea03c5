"""The session dedup ledger: served items are held back for dedup_turns turns."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

import satchel
from satchel.builder import DeliveredItem
from satchel.orchestration._ledger import DedupLedger
from tests._envelope import citations, contents
from tests.recall._factory import evidence

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

pytestmark = pytest.mark.anyio


@pytest.fixture
async def rt() -> AsyncIterator[satchel.Runtime]:
    async with satchel.open_runtime(dedup_turns=2) as runtime:
        await runtime.add_memories("s", [satchel.MemoryEntry(text="kestrel alpha")])
        yield runtime


async def served(rt: satchel.Runtime, session: str | None = "chat", **fields: Any) -> list[str]:
    request = satchel.PrepareContextRequest(
        scope_id="s", query="kestrel", session_id=session, **fields
    )
    return contents((await rt.prepare_context(request)).content)


async def test_served_item_is_held_back_for_dedup_turns(rt: satchel.Runtime) -> None:
    """Served in turn 1, held back in turns 2 and 3, served again in turn 4."""
    assert [await served(rt) for _ in range(4)] == [["kestrel alpha"], [], [], ["kestrel alpha"]]


async def test_no_session_or_no_turns_means_no_dedup(rt: satchel.Runtime) -> None:
    """Without a session_id nothing is held back; dedup_turns=0 turns the ledger off."""
    assert [await served(rt, None) for _ in range(2)] == [["kestrel alpha"]] * 2
    async with satchel.open_runtime() as plain:
        await plain.add_memories("s", [satchel.MemoryEntry(text="kestrel alpha")])
        assert [await served(plain) for _ in range(2)] == [["kestrel alpha"]] * 2


async def test_sessions_are_independent(rt: satchel.Runtime) -> None:
    """One session's turns hold nothing back from another session."""
    assert await served(rt, "a") == ["kestrel alpha"]
    assert await served(rt, "b") == ["kestrel alpha"]
    assert await served(rt, "a") == []


async def test_a_session_is_its_owners(rt: satchel.Runtime) -> None:
    """A server's caller (``session_owner``) and the runtime's own host (prepare_context)
    using one session id have two sessions."""
    request = satchel.PrepareContextRequest(scope_id="s", query="kestrel", session_id="chat")
    assert await served(rt) == ["kestrel alpha"]
    owned = await rt.prepare_context(request, session_owner="tenant")
    assert contents(owned.content) == ["kestrel alpha"]
    assert await served(rt) == []


async def test_an_explained_turn_belongs_to_its_owner(rt: satchel.Runtime) -> None:
    """``explain_context`` takes the same owner: its turn holds back what it delivered in
    that owner's session only."""
    request = satchel.PrepareContextRequest(scope_id="s", query="kestrel", session_id="chat")
    explained = await rt.explain_context(request, session_owner="tenant")
    assert contents(explained.context.content) == ["kestrel alpha"]
    again = await rt.prepare_context(request, session_owner="tenant")
    assert again.content is None or contents(again.content) == []
    assert await served(rt) == ["kestrel alpha"]


@pytest.mark.parametrize("owner", ["", "  ", 7, "bad\ud800"])
async def test_a_malformed_session_owner_is_refused(rt: satchel.Runtime, owner: object) -> None:
    request = satchel.PrepareContextRequest(scope_id="s", query="kestrel", session_id="chat")
    with pytest.raises(satchel.InvalidRequestError, match="session_owner"):
        await rt.prepare_context(request, session_owner=owner)  # type: ignore[arg-type]
    with pytest.raises(satchel.InvalidRequestError, match="session_owner"):
        await rt.explain_context(request, session_owner=owner)  # type: ignore[arg-type]


async def test_bare_uri_items_are_never_held_back() -> None:
    """A resource served only as a bare uri citation comes back the next turn."""
    async with satchel.open_runtime(dedup_turns=3) as rt:
        await rt.add_resources(
            "s", [satchel.Resource(uri="docs/k.md", body="b", overview="kestrel")]
        )
        sections = satchel.Assembly((satchel.Section("resource", 1),))
        for _ in range(2):
            request = satchel.PrepareContextRequest(
                scope_id="s", query="kestrel", session_id="chat", assembly=sections
            )
            (item,) = citations((await rt.prepare_context(request)).content)
            assert item["uri"] == "docs/k.md"


async def test_items_dropped_by_the_budget_are_not_held_back() -> None:
    """Only what fit is held back; what the budget dropped is served the next turn."""
    async with satchel.open_runtime(dedup_turns=5) as rt:
        await rt.add_memories(
            "s", [satchel.MemoryEntry(text=f"kestrel {n} " + "x" * 300) for n in range(4)]
        )
        first = await served(rt, max_bytes=600)
        second = await served(rt, max_bytes=600)
        assert len(first) == 1
        assert second
        assert set(first).isdisjoint(second)


ITEM = DeliveredItem(evidence=evidence("a"), tier="full", truncated=False)
SEEN = frozenset({evidence("a").identity})


async def serve(ledger: DedupLedger, session: str, owner: str | None = None) -> None:
    """One turn of ``owner``'s ``session`` that served ITEM."""
    turn, _ = await ledger.next_turn(session, owner=owner)
    await ledger.record(session, turn, [ITEM], owner=owner)


async def test_ledger_forgets_least_recently_used_sessions() -> None:
    """The ledger is bounded: past its share an owner's least recently used session is
    gone (the in-process host's sessions are owner None's)."""
    ledger = DedupLedger(3, max_sessions_per_owner=2)
    for session in ("one", "two"):
        await serve(ledger, session)
    await ledger.next_turn("one")  # "one" is now the most recently used
    await ledger.next_turn("three")  # evicts "two"
    assert (await ledger.next_turn("one"))[1] == SEEN
    assert (await ledger.next_turn("two"))[1] == frozenset()


async def test_the_same_session_id_under_two_owners_is_two_sessions() -> None:
    """One owner's turns neither hold back nor age what another owner's session of the
    same id was served."""
    ledger = DedupLedger(2)
    await serve(ledger, "chat", owner="b")
    assert await ledger.next_turn("chat", owner="a") == (1, frozenset())
    assert await ledger.next_turn("chat") == (1, frozenset())
    for _ in range(3):
        await serve(ledger, "chat", owner="a")
    assert await ledger.next_turn("chat", owner="b") == (2, SEEN)


async def test_an_owner_past_its_share_forgets_only_its_own_sessions() -> None:
    """Fresh sessions past an owner's share push out that owner's least recently used
    session, never another owner's, however many more it opens."""
    ledger = DedupLedger(3, max_sessions_per_owner=2, max_owners=4)
    await serve(ledger, "kept", owner="b")
    await serve(ledger, "first", owner="a")
    for fresh in range(10):
        await serve(ledger, f"fresh-{fresh}", owner="a")
    assert (await ledger.next_turn("kept", owner="b"))[1] == SEEN
    assert (await ledger.next_turn("first", owner="a"))[1] == frozenset()
    assert (await ledger.next_turn("fresh-9", owner="a"))[1] == SEEN


async def test_owners_past_the_bound_forget_the_least_recently_active_one() -> None:
    """Past ``max_owners`` the owner least recently active is forgotten with all its
    sessions; the others keep theirs."""
    ledger = DedupLedger(3, max_owners=2)
    await serve(ledger, "chat", owner="a")
    await serve(ledger, "chat", owner="b")
    await ledger.next_turn("other", owner="a")  # "a" is now the most recently active
    await serve(ledger, "chat", owner="c")  # forgets "b"
    assert (await ledger.next_turn("chat", owner="a"))[1] == SEEN
    assert (await ledger.next_turn("chat", owner="c"))[1] == SEEN
    assert (await ledger.next_turn("chat", owner="b"))[1] == frozenset()


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"dedup_turns": -1}, "dedup_turns"),
        ({"dedup_turns": 10**30}, "dedup_turns must be an integer from 0 to 1000000"),
        ({"round_timeout": 0}, "round_timeout"),
        ({"prepare_timeout": "soon"}, "prepare_timeout"),
        ({"readers": 0}, "readers"),
        ({"blas_threads": 1.5}, "blas_threads"),
    ],
)
async def test_bad_runtime_options_name_the_option(options: dict[str, Any], field: str) -> None:
    """A malformed runtime option raises InvalidRequestError naming it."""
    with pytest.raises(satchel.InvalidRequestError, match=field):
        async with satchel.open_runtime(**options):
            pass
