"""Erase through the public API: a record named by a citation read from a real pack or by
a ``MemoryRef`` is erased whole, in every family; afterwards no pack serves it,
``get_memory`` says it was erased, and its key is free (unlike a forget)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

import pytest

import satchel

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

pytestmark = pytest.mark.anyio

AT = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
EVERY_FAMILY = satchel.Assembly(
    (
        satchel.Section("profile", 1),
        satchel.Section("memory", 3),
        satchel.Section("experience", 1),
        satchel.Section("topic-memory", 1),
        satchel.Section("resource", 1),
    )
)


@pytest.fixture
async def rt() -> AsyncIterator[satchel.Runtime]:
    async with satchel.open_runtime(embedder=satchel.HashingEmbedder()) as runtime:
        yield runtime


async def pack(
    rt: satchel.Runtime, query: str = "kestrel lantern", scope: str = "chat"
) -> tuple[satchel.ContextItem, ...]:
    """The items of the pack every family may fill, as a host reads them."""
    request = satchel.PrepareContextRequest(scope_id=scope, query=query, assembly=EVERY_FAMILY)
    context = await rt.prepare_context(request)
    return () if context.content is None else satchel.parse_context(context.content)


async def write_every_family(rt: satchel.Runtime, scope: str = "chat") -> list[satchel.MemoryRef]:
    refs = await rt.add_memories(
        scope,
        [
            satchel.MemoryEntry(text="Alice: the kestrel lantern is blue", created_at=AT, key="a"),
            satchel.MemoryEntry(text="Bob: the kestrel harbour is far", created_at=AT),
        ],
    )
    await rt.add_experiences(
        scope, [satchel.Experience("kestrel lantern broke", "replaced it", "fine", "spares")]
    )
    await rt.add_topic_memories(scope, [satchel.TopicMemory("kestrel", "lantern notes")])
    await rt.add_resources(
        scope, [satchel.Resource("docs/kestrel.md", "body", abstract="kestrel lantern guide")]
    )
    await rt.set_profile(scope, satchel.Profile("Alice keeps the kestrel lantern"))
    return refs


async def test_a_citation_from_a_pack_erases_its_entry(rt: satchel.Runtime) -> None:
    """The memory citation a host reads from a pack erases the entry: the next pack does
    not hold its text, and get_memory says it was erased."""
    (ref,) = await rt.add_memories("chat", [satchel.MemoryEntry(text="zebra kestrel lantern")])
    ref2 = await rt.update_memory(ref, satchel.MemoryEntry(text="zebra kestrel lantern two"))
    (item,) = await pack(rt, "zebra")
    assert item.citation == satchel.Citation("memory", "chat", ref.entry_id, 2)
    assert await rt.erase(item.citation) == 2
    assert await pack(rt, "zebra") == ()
    for version in (ref, ref2):
        with pytest.raises(satchel.NotFoundError, match="erased"):
            await rt.get_memory(version)


async def test_a_memory_ref_erases_its_entry(rt: satchel.Runtime) -> None:
    """A MemoryRef names the entry whatever its version: every version goes."""
    (ref, other) = await rt.add_memories(
        "chat", [satchel.MemoryEntry(text="zebra kestrel"), satchel.MemoryEntry(text="kestrel")]
    )
    await rt.update_memory(ref, satchel.MemoryEntry(text="zebra kestrel again"))
    assert await rt.erase(ref) == 2
    assert [item.text for item in await pack(rt, "zebra kestrel")] == ["kestrel"]
    assert (await rt.get_memory(other)).text == "kestrel"


async def test_every_family_is_erased_by_its_citation(rt: satchel.Runtime) -> None:
    """Each citation of a pack holding every family (the profile's with id None) erases
    its record; the pack is then empty."""
    await write_every_family(rt)
    items = await pack(rt)
    assert {item.citation.family for item in items} == {
        "profile", "memory", "experience", "topic-memory", "resource",
    }  # fmt: skip
    for item in items:
        assert await rt.erase(item.citation) == 1
    assert await pack(rt) == ()
    assert await rt.store.scope_counts() == {}


async def test_erase_scope_erases_every_record(rt: satchel.Runtime) -> None:
    """erase_scope counts each record once (the profile too); the scope's packs are empty
    and another scope is untouched; the scope may be written to again."""
    refs = await write_every_family(rt)
    await rt.update_memory(refs[1], satchel.MemoryEntry(text="Bob: the kestrel harbour moved"))
    await write_every_family(rt, scope="other")
    assert await rt.erase_scope("chat") == 6
    assert await pack(rt) == ()
    assert len(await pack(rt, scope="other")) == 6
    assert await rt.erase_scope("chat") == 0
    await rt.add_memories("chat", [satchel.MemoryEntry(text="kestrel lantern anew")])
    assert [item.text for item in await pack(rt)] == ["kestrel lantern anew"]


async def test_forget_then_erase(rt: satchel.Runtime) -> None:
    """A forgotten entry stays readable until it is erased; then it is not."""
    (ref,) = await rt.add_memories("chat", [satchel.MemoryEntry(text="zebra", key="z")])
    await rt.forget_memory(ref)
    assert (await rt.get_memory(ref)).text == "zebra"
    assert await rt.erase(ref) == 1
    with pytest.raises(satchel.NotFoundError, match="erased"):
        await rt.get_memory(ref)


async def test_after_erase_the_same_key_and_content_is_a_new_entry(rt: satchel.Runtime) -> None:
    """Forget is forever, erase is not: the same key and content written after an erase
    is a fresh entry at version 1, served by the next pack."""
    entry = satchel.MemoryEntry(text="zebra kestrel", key="z")
    (ref,) = await rt.add_memories("chat", [entry])
    await rt.forget_memory(ref)
    assert await rt.add_memories("chat", [entry]) == [ref]  # forgotten: unchanged
    assert await rt.erase(ref) == 1
    (again,) = await rt.add_memories("chat", [entry])
    assert (again.entry_id != ref.entry_id, again.version) == (True, 1)
    (item,) = await pack(rt, "zebra")
    assert item.citation == satchel.Citation("memory", "chat", again.entry_id, 1)


async def test_erasing_what_is_not_there_returns_zero(rt: satchel.Runtime) -> None:
    """An unknown scope or record erases nothing; erasing twice erases once."""
    (ref,) = await rt.add_memories("chat", [satchel.MemoryEntry(text="zebra")])
    assert await rt.erase(satchel.MemoryRef("nowhere", ref.entry_id, 1)) == 0
    assert await rt.erase(satchel.Citation("experience", "chat", "nope", 1)) == 0
    assert await rt.erase(satchel.Citation("profile", "chat")) == 0
    assert await rt.erase_scope("nowhere") == 0
    assert await rt.erase(ref) == 1
    assert await rt.erase(ref) == 0


@pytest.mark.parametrize(
    ("target", "field"),
    [
        ("chat", "target must be"),
        (satchel.Citation("bogus", "chat", "x", 1), "target.family"),
        (satchel.Citation("memory", " ", "x", 1), "target.scope"),
        (satchel.Citation("memory", "chat", None, 1), "target.id"),
        (satchel.Citation("profile", "chat", "x"), "target.id"),
        (satchel.Citation("memory", "chat", "x", "1"), "target.version"),  # type: ignore[arg-type]
        (satchel.MemoryRef("chat", "x", 0), "ref.version"),
    ],
)
async def test_a_malformed_target_is_refused_by_name(
    rt: satchel.Runtime, target: object, field: str
) -> None:
    """A target that is no citation or reference, or a malformed one, raises
    InvalidRequestError naming the field; nothing is erased."""
    (ref,) = await rt.add_memories("chat", [satchel.MemoryEntry(text="zebra")])
    with pytest.raises(satchel.InvalidRequestError, match=field):
        await rt.erase(target)  # type: ignore[arg-type]
    with pytest.raises(satchel.InvalidRequestError, match="scope_id"):
        await rt.erase_scope("")
    assert (await rt.get_memory(ref)).text == "zebra"
