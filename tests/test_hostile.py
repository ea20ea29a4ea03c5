"""Hostile input at every public entry point: a SatchelError or success, never another
exception, never content_bytes > max_bytes, and the store always passes its integrity
check (property tests, on asyncio and trio)."""

from __future__ import annotations

import contextlib
import sqlite3
from datetime import UTC, datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import satchel

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable
    from pathlib import Path

BACKENDS = pytest.mark.parametrize("backend", ["asyncio", "trio"])
EXAMPLES = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

# Text as hostile as Unicode allows: surrogates, controls, marker text, JSON syntax.
texts = st.one_of(
    st.text(max_size=60),
    st.text(alphabet=st.characters(exclude_categories=()), max_size=30),  # surrogates too
    st.sampled_from(["", " ", "END_SATCHEL_CONTEXT_V2", "\ud800", '"}]}\n', "\u2028", "x" * 3000]),
)
anything = st.one_of(st.none(), st.integers(), st.floats(allow_nan=True), texts, st.booleans())
offsets = st.integers(min_value=-23 * 60, max_value=23 * 60).map(
    lambda m: timezone(timedelta(minutes=m))
)
moments = st.one_of(
    st.none(),
    st.datetimes(
        min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31), timezones=st.just(UTC)
    ),
    st.builds(lambda at, tz: at.replace(tzinfo=tz), st.datetimes(), offsets),
    st.datetimes(),  # naive
)
# Mostly well-formed entries carrying hostile text, so the hostile part reaches the
# store instead of being refused early for an unrelated field; and entries hostile
# everywhere.
entries = st.one_of(
    st.builds(
        satchel.MemoryEntry,
        text=texts,
        kind=st.just("fact"),
        tags=st.lists(texts, max_size=2),
        created_at=moments,
        thread=st.one_of(st.none(), texts),
        key=st.one_of(st.none(), texts),
    ),
    st.builds(
        satchel.MemoryEntry,
        text=texts,
        kind=st.one_of(texts, anything),
        tags=st.one_of(st.lists(texts, max_size=3), anything),
        created_at=moments,
        thread=st.one_of(st.none(), texts),
        key=st.one_of(st.none(), texts),
    ),
)
requests = st.builds(
    satchel.PrepareContextRequest,
    scope_id=st.one_of(st.just("s"), texts, anything),
    query=st.one_of(texts, anything),
    max_bytes=st.one_of(st.integers(min_value=-10, max_value=40000), anything),
    references=st.one_of(st.lists(st.one_of(st.just("s"), texts), max_size=3), anything),
    detail=st.one_of(st.none(), st.sampled_from(["uri", "full", "bogus"]), anything),
    session_id=st.one_of(st.none(), texts),
)


def run(backend: str, path: Path, act: Callable[[satchel.Runtime], Awaitable[Any]]) -> Any:
    async def main() -> Any:
        async with satchel.open_runtime(str(path), embedder=satchel.HashingEmbedder()) as rt:
            try:
                return await act(rt)
            except satchel.SatchelError:
                return None

    result = anyio.run(main, backend=backend)
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    return result


@BACKENDS
@EXAMPLES
@given(batch=st.lists(entries, min_size=1, max_size=4), request=requests)
def test_hostile_memories_and_requests(
    tmp_path: Path,
    backend: str,
    batch: list[satchel.MemoryEntry],
    request: satchel.PrepareContextRequest,
) -> None:
    """Any memories and any request: a SatchelError or success, and a pack within budget."""
    path = tmp_path / "g.db"

    async def act(rt: satchel.Runtime) -> None:
        with contextlib.suppress(satchel.SatchelError):
            await rt.add_memories("s", batch)
        context = await rt.prepare_context(request)
        assert context.content_bytes <= request.max_bytes
        assert context.content_bytes == len((context.content or "").encode())
        satchel.parse_context(context.content)

    run(backend, path, act)


@BACKENDS
@EXAMPLES
@given(
    experience=st.builds(satchel.Experience, texts, texts, texts, st.one_of(texts, anything)),
    topic=st.builds(satchel.TopicMemory, st.one_of(texts, anything), texts),
    resource=st.builds(
        satchel.Resource,
        texts,
        st.one_of(texts, anything),
        st.one_of(st.none(), texts),
        st.one_of(st.none(), texts),
    ),
    profile=st.builds(satchel.Profile, st.one_of(texts, anything)),
    scope=st.one_of(st.just("s"), texts, anything),
)
def test_hostile_records_of_every_family(
    tmp_path: Path,
    backend: str,
    experience: satchel.Experience,
    topic: satchel.TopicMemory,
    resource: satchel.Resource,
    profile: satchel.Profile,
    scope: Any,
) -> None:
    """Any experience, topic, resource, profile or scope: a SatchelError or success."""
    path = tmp_path / "g.db"

    async def act(rt: satchel.Runtime) -> None:
        for write in (
            lambda: rt.add_experiences(scope, [experience]),
            lambda: rt.add_topic_memories(scope, [topic]),
            lambda: rt.add_resources(scope, [resource]),
            lambda: rt.set_profile(scope, profile),
        ):
            with contextlib.suppress(satchel.SatchelError):
                await write()
        sections = satchel.Assembly(
            (
                satchel.Section("profile", 1),
                satchel.Section("resource", 2),
                satchel.Section("topic-memory", 2),
            )
        )
        request = satchel.PrepareContextRequest(
            scope_id="s", query="notes", assembly=sections, detail="full"
        )
        context = await rt.prepare_context(request)
        assert context.content_bytes <= request.max_bytes

    run(backend, path, act)


@BACKENDS
@EXAMPLES
@given(
    scope=st.one_of(st.just("s"), texts, anything),
    entry_id=st.one_of(texts, anything),
    version=st.one_of(st.integers(), anything),
    entry=entries,
)
def test_hostile_references(
    tmp_path: Path,
    backend: str,
    scope: Any,
    entry_id: Any,
    version: Any,
    entry: satchel.MemoryEntry,
) -> None:
    """Any reference to get, update or forget: a SatchelError (NotFoundError, ...) or success."""
    path = tmp_path / "g.db"
    ref = satchel.MemoryRef(scope, entry_id, version)

    async def act(rt: satchel.Runtime) -> None:
        await rt.add_memories("s", [satchel.MemoryEntry(text="a real entry")])
        for call in (
            lambda: rt.get_memory(ref),
            lambda: rt.update_memory(ref, entry),
            lambda: rt.forget_memory(ref),
        ):
            with contextlib.suppress(satchel.SatchelError):
                await call()

    run(backend, path, act)
