"""The coordinator runs a round's searches concurrently and fails a round as a whole."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

import satchel
from satchel.stores import SqliteStore
from satchel.stores.testing import memories, records
from tests._envelope import citations

pytestmark = pytest.mark.anyio


class GatedStore:
    """Wraps a store: every retrieve waits until ``expected`` retrieves have started."""

    def __init__(self, inner: SqliteStore, expected: int) -> None:
        self.inner = inner
        self.expected = expected
        self.started: list[tuple[str, str]] = []
        self.all_started = anyio.Event()

    async def retrieve(self, family: Any, scope_id: str, *args: Any) -> Any:
        self.started.append((family, scope_id))
        if len(self.started) == self.expected:
            self.all_started.set()
        await self.all_started.wait()
        return await self.inner.retrieve(family, scope_id, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class FailingStore(GatedStore):
    """Fails the retrieve of one (family, scope) once every search has started."""

    def __init__(self, inner: SqliteStore, expected: int, fail: tuple[str, str]) -> None:
        super().__init__(inner, expected)
        self.fail = fail

    async def retrieve(self, family: Any, scope_id: str, *args: Any) -> Any:
        pool = await super().retrieve(family, scope_id, *args)
        if (family, scope_id) == self.fail:
            raise OSError("backend went away")
        return pool


async def seeded_store() -> SqliteStore:
    store = await SqliteStore.open()
    embedder = satchel.HashingEmbedder()
    for scope in ("a", "b", "c"):
        texts = [f"kestrel rotation in {scope}"]
        await memories(
            store, scope, [satchel.MemoryEntry(text=texts[0])], await embedder.embed(texts)
        )
        await records(
            store, "experience", scope, [satchel.Experience("kestrel", "rotate", "ok", "sign")]
        )
        topic = satchel.TopicMemory(title=f"kestrel {scope}", text="rotation")
        await records(store, "topic-memory", scope, [topic], await embedder.embed([topic.title]))
    return store


async def test_searches_of_a_round_overlap() -> None:
    """Every (family, scope) search starts before any finishes: one task group per round."""
    # memory and experience in three scopes, topic memory in the request's scope only
    store = GatedStore(await seeded_store(), expected=7)
    async with satchel.open_runtime(store=store) as rt:
        with anyio.fail_after(10):
            result = await rt.prepare_context(
                satchel.PrepareContextRequest(
                    scope_id="a", query="kestrel rotation", references=("b", "c")
                )
            )
    assert sorted(store.started) == sorted(
        [(f, s) for f in ("memory", "experience") for s in "abc"] + [("topic-memory", "a")]
    )
    assert {c["scope"] for c in citations(result.content)} == {"a", "b", "c"}


async def test_round_zero_failure_is_one_domain_error() -> None:
    """A failing search fails prepare with PrepareFailedError raised from the exception group."""
    store = FailingStore(await seeded_store(), expected=7, fail=("memory", "b"))
    async with satchel.open_runtime(store=store) as rt:
        request = satchel.PrepareContextRequest(
            scope_id="a", query="kestrel", references=("b", "c")
        )
        with pytest.raises(satchel.PrepareFailedError) as caught:
            await rt.prepare_context(request)
    cause = caught.value.__cause__
    assert isinstance(cause, ExceptionGroup)
    assert cause.subgroup(OSError) is not None


class BlockingStore(GatedStore):
    """Every retrieve blocks forever; ``blocked`` is set once ``expected`` are waiting."""

    def __init__(self, inner: SqliteStore, expected: int) -> None:
        super().__init__(inner, expected)
        self.blocked = anyio.Event()

    async def retrieve(self, family: Any, scope_id: str, *args: Any) -> Any:
        self.started.append((family, scope_id))
        if len(self.started) == self.expected:
            self.blocked.set()
        await anyio.sleep_forever()


async def test_caller_cancellation_propagates() -> None:
    """Cancelling the caller cancels the round's searches; the prepare does not finish."""
    store = BlockingStore(await seeded_store(), expected=3)
    finished = False
    async with satchel.open_runtime(store=store) as rt:

        async def run() -> None:
            nonlocal finished
            await rt.prepare_context(satchel.PrepareContextRequest(scope_id="a", query="kestrel"))
            finished = True

        async with anyio.create_task_group() as group:
            group.start_soon(run)
            await store.blocked.wait()
            group.cancel_scope.cancel()
    assert not finished
    assert len(store.started) == 3


class RecordingStore(GatedStore):
    """Records the pool size every retrieve asks for."""

    def __init__(self, inner: SqliteStore) -> None:
        super().__init__(inner, expected=0)
        self.pool_sizes: dict[str, set[int]] = {}

    async def retrieve(self, family: Any, scope_id: str, *args: Any) -> Any:
        self.pool_sizes.setdefault(family, set()).add(args[-1].size)
        return await self.inner.retrieve(family, scope_id, *args)


class CountingEmbedder(satchel.HashingEmbedder):
    """Counts embed calls and texts."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[int] = []

    async def embed(self, texts: Any) -> Any:
        self.calls.append(len(texts))
        return await super().embed(texts)


@pytest.mark.parametrize(
    ("limits", "expected"),
    [
        (satchel.Limits.classic(), {"memory": 64, "experience": 32, "topic-memory": 32}),
        (satchel.Limits(), {"memory": 256, "experience": 32, "topic-memory": 64}),
    ],
)
async def test_pool_is_four_times_the_ceiling(
    limits: satchel.Limits, expected: dict[str, int]
) -> None:
    """Each search retrieves max(4 * ceiling, 32) candidates of its family."""
    store = RecordingStore(await seeded_store())
    async with satchel.open_runtime(store=store, limits=limits) as rt:
        await rt.prepare_context(
            satchel.PrepareContextRequest(scope_id="a", query="kestrel", references=("b",))
        )
    assert store.pool_sizes == {family: {size} for family, size in expected.items()}


async def test_query_is_embedded_once_per_prepare() -> None:
    """One prepare over three scopes and three families embeds the query exactly once."""
    embedder = CountingEmbedder()
    async with satchel.open_runtime(store=await seeded_store(), embedder=embedder) as rt:
        await rt.prepare_context(
            satchel.PrepareContextRequest(scope_id="a", query="kestrel", references=("b", "c"))
        )
    assert embedder.calls == [1]


async def test_experience_only_request_embeds_nothing() -> None:
    """A request whose families have no vector channel pays no embedding."""
    embedder = CountingEmbedder()
    async with satchel.open_runtime(store=await seeded_store(), embedder=embedder) as rt:
        sections = satchel.Assembly((satchel.Section("experience", 2),))
        result = await rt.prepare_context(
            satchel.PrepareContextRequest(scope_id="a", query="kestrel", assembly=sections)
        )
    assert embedder.calls == []
    assert [c["family"] for c in citations(result.content)] == ["experience"]
