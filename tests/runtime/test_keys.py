"""Idempotent writes: a caller's key names an entry per scope and family; the same key
with the same content writes nothing (even after a forget: forget is forever), with new
content a new version of that entry."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import attrs
import pytest

import satchel

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.anyio

AT = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)


def rows(path: Path) -> int:
    with sqlite3.connect(path) as conn:
        return int(conn.execute("SELECT count(*) FROM records").fetchone()[0])


def entry(text: str = "Alice moved to Lisbon", **fields: object) -> satchel.MemoryEntry:
    return satchel.MemoryEntry(text=text, kind="dialog", created_at=AT, key="c1/D1:3", **fields)  # type: ignore[arg-type]


async def test_the_same_key_and_content_writes_nothing(tmp_path: Path) -> None:
    """Adding an entry again under its key returns the same reference and writes no row."""
    path = tmp_path / "g.db"
    async with satchel.open_runtime(str(path), embedder=satchel.HashingEmbedder()) as rt:
        (first,) = await rt.add_memories("chat", [entry()])
        written = rows(path)
        (again,) = await rt.add_memories("chat", [entry()])
        record = await rt.get_memory(again)
    assert again == first
    assert rows(path) == written
    assert record.key == "c1/D1:3"


async def test_the_same_key_with_new_content_is_a_new_version(tmp_path: Path) -> None:
    """New content under a known key is the entry's next version: the old one stays
    readable, only the new one is searched."""
    async with satchel.open_runtime(embedder=satchel.HashingEmbedder()) as rt:
        (first,) = await rt.add_memories("chat", [entry()])
        (second,) = await rt.add_memories("chat", [entry("Alice moved to Porto")])
        found = satchel.parse_context(
            (
                await rt.prepare_context(
                    satchel.PrepareContextRequest(scope_id="chat", query="Alice moved")
                )
            ).content
        )
        old = await rt.get_memory(first)
    assert (second.entry_id, second.version) == (first.entry_id, 2)
    assert old.text == "Alice moved to Lisbon"
    assert [item.citation.version for item in found] == [2]


async def test_keys_are_per_scope_and_per_family() -> None:
    """One key in two scopes, or in two families, names two different records."""
    async with satchel.open_runtime(embedder=satchel.HashingEmbedder()) as rt:
        (a,) = await rt.add_memories("chat", [entry()])
        (b,) = await rt.add_memories("other", [entry()])
        (x,) = await rt.add_experiences(
            "chat",
            [satchel.Experience(situation="s", action="a", outcome="o", lesson="l", key="c1/D1:3")],
        )
    assert a.entry_id != b.entry_id
    assert x.id not in (a.entry_id, b.entry_id)


@pytest.mark.parametrize("family", ["experience", "topic-memory", "resource"])
async def test_every_keyed_family_is_idempotent(family: str) -> None:
    """Experiences, topic memories and resources: the same content under a key returns
    the same reference; new content makes the next revision of the same record."""
    async with satchel.open_runtime(embedder=satchel.HashingEmbedder()) as rt:
        if family == "experience":

            async def write(text: str) -> satchel.RecordRef:
                made = satchel.Experience(
                    situation=text, action="a", outcome="o", lesson="l", key="k"
                )
                return (await rt.add_experiences("s", [made]))[0]

        elif family == "topic-memory":

            async def write(text: str) -> satchel.RecordRef:
                made = satchel.TopicMemory(title="Backups", text=text, key="k")
                return (await rt.add_topic_memories("s", [made]))[0]

        else:

            async def write(text: str) -> satchel.RecordRef:
                made = satchel.Resource(uri="docs/b.md", body=text, abstract="backups", key="k")
                return (await rt.add_resources("s", [made]))[0]

        first = await write("nightly")
        same = await write("nightly")
        changed = await write("hourly")
    assert same == first
    assert (changed.id, changed.revision) == (first.id, first.revision + 1)


async def test_a_key_twice_in_one_batch_is_refused_by_name() -> None:
    """One batch cannot both keep and change an entry: a repeated key is named."""
    async with satchel.open_runtime(embedder=satchel.HashingEmbedder()) as rt:
        with pytest.raises(satchel.InvalidRequestError, match=r"^entries\[1\]\.key 'c1/D1:3'"):
            await rt.add_memories("chat", [entry(), entry("other text")])


@pytest.mark.parametrize("key", ["", "   ", 5, "x" * 513])
async def test_a_malformed_key_is_refused_by_name(key: object) -> None:
    """A key is None or a non-empty string of at most 512 characters."""
    async with satchel.open_runtime(embedder=satchel.HashingEmbedder()) as rt:
        with pytest.raises(satchel.InvalidRequestError, match=r"^entries\[0\]\.key"):
            await rt.add_memories("chat", [satchel.MemoryEntry(text="t", key=key)])  # type: ignore[arg-type]


async def test_an_update_keeps_the_key_and_a_forget_keeps_it_forgotten() -> None:
    """update_memory's new version keeps the entry's key; once forgotten, the key's
    content replayed returns the forgotten version and writes nothing."""
    async with satchel.open_runtime(embedder=satchel.HashingEmbedder()) as rt:
        (ref,) = await rt.add_memories("chat", [entry()])
        porto = satchel.MemoryEntry(text="Alice moved to Porto")
        updated = await rt.update_memory(ref, porto)
        assert (await rt.get_memory(updated)).key == "c1/D1:3"
        await rt.forget_memory(updated)
        (again,) = await rt.add_memories("chat", [attrs.evolve(porto, key="c1/D1:3")])
    assert again == updated


async def test_a_prepare_after_a_forgotten_key_is_replayed_serves_nothing_of_it(
    tmp_path: Path,
) -> None:
    """Forget is forever: a replay of a forgotten key's content is neither written nor served."""
    path = tmp_path / "g.db"
    request = satchel.PrepareContextRequest(scope_id="chat", query="Alice moved")
    async with satchel.open_runtime(str(path), embedder=satchel.HashingEmbedder()) as rt:
        (ref,) = await rt.add_memories("chat", [entry()])
        await rt.forget_memory(ref)
        written = rows(path)
        (again,) = await rt.add_memories("chat", [entry()])
        served = satchel.parse_context((await rt.prepare_context(request)).content)
        assert again == ref
        assert rows(path) == written
        assert served == ()
        (changed,) = await rt.add_memories("chat", [entry("Alice moved to Porto")])
        served = satchel.parse_context((await rt.prepare_context(request)).content)
    assert (changed.entry_id, changed.version) == (ref.entry_id, 2)
    assert [(item.citation.id, item.citation.version) for item in served] == [(ref.entry_id, 2)]
