"""A search of a family its scope holds nothing of is settled without a task.

A store that tells which families a scope holds nothing of (``stores.EmptyFamilies``)
spares the round a task, a guard and a retrieve for each; the pack, the spans and the
effort are what running every search gives. A family a write is landing in is searched
as before: its search waits for the write and finds what it wrote.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import anyio
import pytest

import satchel
from satchel.orchestration import _search
from satchel.stores import MemoryStore, SqliteStore

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.anyio

SCOPES = ("own", "ref")


def counting(base: type) -> type:
    """``base`` counting its retrieves by family, and saying that its own answer to
    ``holds_nothing`` still holds (it defines both)."""

    class Counting(base):  # type: ignore[misc]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.retrieved: list[str] = []

        async def retrieve(self, family: Any, scope_id: str, request: Any) -> Any:
            self.retrieved.append(family)
            return await super().retrieve(family, scope_id, request)

        def holds_nothing(self, family: Any, scope_id: str) -> bool:
            answer: bool = super().holds_nothing(family, scope_id)
            return answer

    return Counting


def every_search_runs(base: type) -> type:
    """``base`` counting its retrieves, its ``holds_nothing`` not its own: every search
    runs its task."""

    class Counted(counting(base)):  # type: ignore[misc]
        async def retrieve(self, family: Any, scope_id: str, request: Any) -> Any:
            return await super().retrieve(family, scope_id, request)

    return Counted


async def _store(kind: str, tmp_path: Path, make: Any) -> Any:
    if kind == "memory":
        return make(MemoryStore)()
    return await make(SqliteStore).open(str(tmp_path / f"{make.__name__}.db"))


async def _prepared(store: Any, provider: Any) -> satchel.PreparedContext:
    """Memories only in both scopes, then one prepare of ``own`` with ``ref`` beside it."""
    async with satchel.open_runtime(
        store=store, embedder=satchel.HashingEmbedder(), tracer_provider=provider
    ) as rt:
        for scope in SCOPES:
            entries = [
                satchel.MemoryEntry(text=f"Maya: the kestrel {scope} note {n} about rotation")
                for n in range(6)
            ]
            await rt.add_memories(scope, entries)
        request = satchel.PrepareContextRequest(
            scope_id="own", query="kestrel rotation", references=("ref",), max_bytes=4000
        )
        return await rt.prepare_context(request)


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
async def test_a_prepare_retrieves_only_the_families_its_scopes_hold(
    anyio_backend: object, kind: str, tmp_path: Path, spans: tuple[Any, Any]
) -> None:
    provider, exporter = spans
    settled: Any = await _store(kind, tmp_path, counting)
    assert _search._told_empty(settled) is not None  # an EmptyFamilies, trusted
    context = await _prepared(settled, provider)
    searched = [span for span in exporter.get_finished_spans() if span.name == "search_memory"]
    exporter.clear()
    every = await _store(kind, tmp_path, every_search_runs)
    assert _search._told_empty(every) is None
    everything = await _prepared(every, provider)
    searched_every = [
        span for span in exporter.get_finished_spans() if span.name == "search_memory"
    ]

    assert set(settled.retrieved) == {"memory"}
    assert set(every.retrieved) > {"memory"}
    # The same pack (entry ids apart: each store made its own) and the same searches
    # reported, one span each.
    assert context.content is not None
    assert everything.content is not None
    texts = [item.text for item in satchel.parse_context(context.content)]
    assert texts == [item.text for item in satchel.parse_context(everything.content)]
    assert context.status == everything.status
    assert context.content_bytes == everything.content_bytes
    assert "kestrel" in context.content
    families = sorted(str(span.attributes["satchel.memory.family"]) for span in searched)
    assert families == sorted(
        str(span.attributes["satchel.memory.family"]) for span in searched_every
    )
    assert len(families) > 2  # the empty families' searches kept their spans


def held_write(base: type) -> type:
    """``counting(base)`` whose topic-memory write waits for ``release`` before it
    lands (``writing`` is set once it waits)."""

    class HeldWrite(counting(base)):  # type: ignore[misc]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.writing = anyio.Event()
            self.release = anyio.Event()

        async def write(self, family: Any, scope_id: str, *args: Any, **kwargs: Any) -> Any:
            if family == "topic-memory":
                self.writing.set()
                await self.release.wait()
            return await super().write(family, scope_id, *args, **kwargs)

    return HeldWrite


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
async def test_a_family_a_write_is_landing_in_is_searched_after_the_write(
    anyio_backend: object, kind: str, tmp_path: Path
) -> None:
    store = await _store(kind, tmp_path, held_write)
    async with satchel.open_runtime(store=store, embedder=satchel.HashingEmbedder()) as rt:
        await rt.add_memories("own", [satchel.MemoryEntry(text="lunch at noon")])
        topic = satchel.TopicMemory(title="kestrel rotation", text="the kestrel rotation plan")
        request = satchel.PrepareContextRequest(
            scope_id="own", query="kestrel rotation plan", max_bytes=4000
        )
        got: list[satchel.PreparedContext] = []

        async def prepare() -> None:
            got.append(await rt.prepare_context(request))

        with anyio.fail_after(5):
            async with anyio.create_task_group() as group:
                group.start_soon(rt.add_topic_memories, "own", [topic])
                await store.writing.wait()  # the write holds the scope; nothing landed
                assert store.holds_nothing("topic-memory", "own")
                assert _search._told_empty(store) is not None
                group.start_soon(prepare)
                await anyio.wait_all_tasks_blocked()
                assert not got  # the topic search waits for the write
                store.release.set()
    (context,) = got
    assert "the kestrel rotation plan" in (context.content or "")


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
async def test_a_round_of_settled_searches_only_starts_no_task_group(
    anyio_backend: object, kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A prepare of a scope holding nothing (another scope holds the memories) settles
    every search of its round, and opens no task group for them."""
    groups: list[str] = []

    class Counted:
        def __getattr__(self, name: str) -> Any:
            return getattr(anyio, name)

        def create_task_group(self) -> Any:
            groups.append("group")
            return anyio.create_task_group()

    monkeypatch.setattr(_search, "anyio", Counted())
    store = await _store(kind, tmp_path, counting)
    async with satchel.open_runtime(store=store, embedder=satchel.HashingEmbedder()) as rt:
        await rt.add_memories("other", [satchel.MemoryEntry(text="the kestrel rotation")])
        empty = await rt.prepare_context(
            satchel.PrepareContextRequest(scope_id="own", query="kestrel", max_bytes=2000)
        )
        assert groups == []
        assert store.retrieved == []
        held = await rt.prepare_context(
            satchel.PrepareContextRequest(scope_id="other", query="kestrel", max_bytes=2000)
        )
    assert groups  # a scope holding memories runs its memory search
    assert empty.status == "empty"
    assert "kestrel" in (held.content or "")
