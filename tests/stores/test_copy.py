"""``satchel.stores.copy_store``: a store copied into another keeps every version, key,
date, body, forgotten and erased state, so that every citation made before the copy
resolves after it and the same requests give byte-identical packs; a copy stopped
anywhere finishes on a rerun without duplicates; vectors travel exactly, or are
embedded again when the embedders differ."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import anyio
import attrs
import numpy as np
import pytest

import satchel
from satchel.stores import (
    CopyReport,
    MemoryStore,
    SqliteStore,
    Store,
    StoredVersion,
    copy_store,
)
from satchel.stores import _copy as copying
from satchel.stores._copy_protocol import VERSIONED

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable
    from pathlib import Path

    from satchel.stores import CopySource, Family, OceanBaseStore

pytestmark = pytest.mark.anyio

EMBEDDER = satchel.HashingEmbedder(64)
AT = datetime(2024, 3, 1, 9, 0, tzinfo=UTC)
DEMO = "project:demo"
#: A scope whose every entry was forgotten: absent from ``scope_counts``, yet copied.
GONE = "project:gone"

#: A fixed set of prepares over every family, references, dates and detail pins.
REQUESTS = (
    satchel.PrepareContextRequest(scope_id=DEMO, query="why was the kestrel deploy slow"),
    satchel.PrepareContextRequest(
        scope_id=DEMO,
        query="kestrel runbook and deploys",
        assembly=satchel.Assembly(
            (
                satchel.Section("memory", 3),
                satchel.Section("experience", 1),
                satchel.Section("topic-memory", 2),
                satchel.Section("profile", 1),
                satchel.Section("resource", 1),
            )
        ),
        detail={"resource": "full"},
    ),
    satchel.PrepareContextRequest(scope_id=DEMO, query="what happened on 1 March", max_bytes=1200),
    satchel.PrepareContextRequest(
        scope_id="chat:2", query="where does Alice live", references=(DEMO,)
    ),
)


@attrs.frozen
class Written:
    """What :func:`fill` wrote that the tests look up again."""

    memories: list[satchel.MemoryRef]
    forgotten: satchel.MemoryRef
    erased: satchel.MemoryRef


async def fill(rt: satchel.Runtime) -> Written:
    """Every family, several versions, keys, threads, dates, tags, a forgotten entry, an
    erased one, an erased scope and a scope whose only entry was forgotten."""
    refs = await rt.add_memories(
        DEMO,
        [
            satchel.MemoryEntry(
                text=f"deploy note {n}: the kestrel pipeline was slow on day {n}",
                kind="fact" if n % 2 else "event",
                tags=("ops", f"t{n}"),
                created_at=AT + timedelta(hours=n),
                thread="deploys" if n < 5 else None,
                key=f"note-{n}" if n % 3 == 0 else None,
            )
            for n in range(12)
        ],
    )
    second = await rt.update_memory(refs[1], satchel.MemoryEntry(text="note 1 revised: kestrel"))
    await rt.update_memory(
        second, satchel.MemoryEntry(text="note 1, third: kestrel", created_at=AT)
    )
    await rt.forget_memory(refs[2])
    await rt.erase(refs[4])
    for outcome in ("found a lock", "found two locks"):
        lesson = satchel.Experience("slow kestrel deploy", "profiled", outcome, "profile", key="x")
        await rt.add_experiences(DEMO, [lesson])
    for text in ("kestrel deploys run nightly", "kestrel deploys run hourly"):
        await rt.add_topic_memories(DEMO, [satchel.TopicMemory(title="Deploys", text=text)])
    await rt.add_resources(
        DEMO,
        [satchel.Resource("doc://runbook", "BODY one", "kestrel runbook", "how to deploy")],
    )
    await rt.add_resources(DEMO, [satchel.Resource("doc://runbook", "BODY two", "runbook v2")])
    await rt.set_profile(DEMO, satchel.Profile(text="The team runs kestrel."))
    await rt.add_memories(
        "chat:2",
        [
            satchel.MemoryEntry(text=text, created_at=AT + timedelta(minutes=n), thread="c")
            for n, text in enumerate(["Alice: I moved to Lisbon.", "Bob: nice, since when?"])
        ],
    )
    (gone,) = await rt.add_memories(GONE, [satchel.MemoryEntry(text="a forgotten kestrel")])
    await rt.forget_memory(gone)
    await rt.add_memories("erased", [satchel.MemoryEntry(text="erased with its scope")])
    await rt.erase_scope("erased")
    return Written(refs, refs[2], refs[4])


async def filled_sqlite(path: Path) -> Written:
    async with satchel.open_runtime(str(path), embedder=EMBEDDER) as rt:
        return await fill(rt)


async def packs_of(store: Store) -> list[str | None]:
    """The packs of :data:`REQUESTS` (the runtime closes ``store``)."""
    async with satchel.open_runtime(store=store, embedder=EMBEDDER) as rt:
        return [(await rt.prepare_context(request)).content for request in REQUESTS]


async def memories_of(store: Store, refs: list[satchel.MemoryRef]) -> list[object]:
    """What ``get_memory`` says of each ref: the record, or the error's message."""
    said: list[object] = []
    for ref in refs:
        try:
            said.append(await store.get_memory(ref))
        except satchel.NotFoundError as exc:
            said.append(str(exc))
    return said


async def contents(store: Any) -> dict[str, Any]:
    """Everything a store holds, read through the copy protocol: per scope its counts,
    every version (in order, with its vector) and profile; and its tombstones."""
    held: dict[str, Any] = {"tombstones": list(await store.read_tombstones())}
    for scope in await store.copy_scopes():
        versions: list[StoredVersion] = []
        for family in VERSIONED:
            versions += await store.read_versions(scope, family, after=0, limit=10_000)
        profile = await store.get_profile(scope)
        held[scope] = (
            dict(await store.count_versions(scope)),
            [(v, None if v.vector is None else v.vector.tolist()) for v in versions],
            None if profile is None else profile.text,
        )
    return held


def citations(packs: list[str | None]) -> list[satchel.Citation]:
    return [item.citation for pack in packs for item in satchel.parse_context(pack)]


def memory_refs(cited: list[satchel.Citation]) -> list[satchel.MemoryRef]:
    """The memory versions among ``cited``."""
    return [
        satchel.MemoryRef(c.scope, str(c.id), int(c.version or 0))
        for c in cited
        if c.family == "memory"
    ]


async def test_a_copy_into_seekdb_and_back_keeps_every_citation_and_pack(
    tmp_path: Path, oceanbase: Callable[..., OceanBaseStore]
) -> None:
    """SQLite -> seekdb -> SQLite: every memory citation of the prepares made before
    resolves on both copies to the same record, erased stays erased, every version,
    vector, key and date arrives exactly, and the SQLite copy gives byte-identical
    packs."""
    written = await filled_sqlite(tmp_path / "a.db")
    before = await packs_of(await SqliteStore.open(str(tmp_path / "a.db")))
    cited = citations(before)
    assert {citation.family for citation in cited} == {
        "memory", "experience", "topic-memory", "profile", "resource",
    }  # fmt: skip
    refs = [*memory_refs(cited), *written.memories, written.forgotten, written.erased]
    source = await SqliteStore.open(str(tmp_path / "a.db"))
    seekdb, back = oceanbase(), await SqliteStore.open(str(tmp_path / "b.db"))
    try:
        read = await memories_of(source, refs)
        there = await copy_store(source, seekdb)
        assert there.scopes == ("chat:2", DEMO, GONE)
        assert there.tombstones == 2  # the erased entry, and the erased scope's one
        assert (there.vectors_copied, there.vectors_embedded) == (14, 0)
        returned = await copy_store(seekdb, back)
        assert returned == there
        assert await memories_of(seekdb, refs) == read == await memories_of(back, refs)
        assert "was erased" in str(read[-1])
        assert await contents(seekdb) == await contents(source) == await contents(back)
        for citation in cited:  # every citation's version is held by the copy
            if citation.id is not None and citation.family != "resource":
                family: Any = citation.family
                held = await seekdb.held_versions(citation.scope, family, [citation.id])
                assert held[(citation.id, int(citation.version or 0))]
    finally:
        await source.aclose()
        await seekdb.aclose()
    assert await packs_of(back) == before


async def test_a_sqlite_copy_gives_byte_identical_packs(tmp_path: Path) -> None:
    """SQLite -> SQLite: the same contents, counts, searchable records and packs; the
    forgotten entry stays readable and is delivered by no pack."""
    written = await filled_sqlite(tmp_path / "a.db")
    before = await packs_of(await SqliteStore.open(str(tmp_path / "a.db")))
    source = await SqliteStore.open(str(tmp_path / "a.db"))
    target = await SqliteStore.open(str(tmp_path / "b.db"))
    try:
        report = await copy_store(source, target)
        assert report.versions == {
            "memory": 16, "experience": 2, "topic-memory": 2, "resource": 2, "profile": 1,
        }  # fmt: skip
        assert report.records["memory"] == 14  # 11 in the demo scope, 2 in chat:2, 1 gone
        assert not report.skipped
        assert await contents(target) == await contents(source)
        assert await target.scope_counts() == await source.scope_counts()
        forgotten = await target.get_memory(written.forgotten)
        assert forgotten == await source.get_memory(written.forgotten)
    finally:
        await source.aclose()
        await target.aclose()
    after = await packs_of(await SqliteStore.open(str(tmp_path / "b.db")))
    assert after == before
    assert all(forgotten.text not in (pack or "") for pack in after)


async def test_the_memory_store_copies_both_ways(tmp_path: Path) -> None:
    """SQLite -> MemoryStore -> SQLite holds what the source held (the memory store
    keeps vectors rescaled to unit length, so only their direction travels) and every
    citation of the prepares made before resolves to the same record."""
    await filled_sqlite(tmp_path / "a.db")
    cited = citations(await packs_of(await SqliteStore.open(str(tmp_path / "a.db"))))
    refs = memory_refs(cited)
    source, middle = await SqliteStore.open(str(tmp_path / "a.db")), MemoryStore()
    target = await SqliteStore.open(str(tmp_path / "b.db"))
    try:
        await copy_store(source, middle)
        await copy_store(middle, target)
        assert _texts(await contents(target)) == _texts(await contents(source))
        assert await memories_of(target, refs) == await memories_of(source, refs)
        assert await memories_of(middle, refs) == await memories_of(source, refs)
    finally:
        await source.aclose()
        await target.aclose()


def _texts(contents: dict[str, Any]) -> dict[str, Any]:
    """Contents without vectors (the memory store keeps them rescaled to unit length)."""
    return {
        scope: held if scope == "tombstones" else (held[0], [v for v, _ in held[1]], held[2])
        for scope, held in contents.items()
    }


class Interrupted(Exception):
    """What the test's progress callback raises to stop a copy."""


TARGETS: dict[str, Callable[[pytest.FixtureRequest, Path], Awaitable[Any]]] = {
    "memory": lambda request, path: _ready(MemoryStore()),
    "sqlite": lambda request, path: SqliteStore.open(str(path / "b.db")),
    "oceanbase": lambda request, path: _ready(request.getfixturevalue("oceanbase")()),
}


async def _ready(store: Any) -> Any:
    return store


async def held_by(store: Any) -> int:
    """Every version and profile the store holds."""
    return sum([sum((await store.count_versions(s)).values()) for s in await store.copy_scopes()])


@pytest.mark.parametrize("how", ["raise", "cancel"])
@pytest.mark.parametrize("kind", list(TARGETS))
async def test_an_interrupted_copy_finishes_on_a_rerun_without_duplicates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest,
    kind: str, how: str,
) -> None:  # fmt: skip
    """A copy stopped after its first pages (a progress callback that raises, or a
    cancellation) and run again ends with exactly the source's contents: nothing twice,
    nothing missing, the second run skipping what the first wrote."""
    monkeypatch.setattr(copying, "PAGE", 3)
    await filled_sqlite(tmp_path / "a.db")
    source = await SqliteStore.open(str(tmp_path / "a.db"))
    target = await TARGETS[kind](request, tmp_path)
    seen: list[int] = []
    try:
        with anyio.CancelScope() as scope:

            def stop(done: int, total: int) -> None:
                seen.append(done)
                if done >= 7:
                    if how == "cancel":
                        scope.cancel()
                    else:
                        raise Interrupted

            if how == "raise":
                with pytest.raises(Interrupted):
                    await copy_store(source, target, progress=stop)
            else:
                await copy_store(source, target, progress=stop)
        assert scope.cancelled_caught == (how == "cancel")
        first, total = await held_by(target), await held_by(source)
        assert seen[-1] >= 7
        assert 0 < first < total
        report = await copy_store(source, target)
        assert sum(report.skipped.values()) == first
        assert report.written + first == total
        assert _texts(await contents(target)) == _texts(await contents(source))
    finally:
        await source.aclose()
        await target.aclose()


async def test_a_rerun_takes_out_of_search_what_the_source_forgot_since(
    tmp_path: Path,
) -> None:
    """An entry forgotten in the source after a copy leaves search in the target on the
    next run, which writes nothing else."""
    written = await filled_sqlite(tmp_path / "a.db")
    source, target = await SqliteStore.open(str(tmp_path / "a.db")), MemoryStore()
    try:
        await copy_store(source, target)
        await source.forget_memory(written.memories[0])
        report = await copy_store(source, target)
        assert (report.retired, report.written) == (1, 0)
        entry = written.memories[0].entry_id
        assert await target.held_versions(DEMO, "memory", [entry]) == {(entry, 1): False}
        assert _texts(await contents(target)) == _texts(await contents(source))
    finally:
        await source.aclose()
        await target.aclose()


@pytest.mark.parametrize("kind", list(TARGETS))
async def test_an_erase_is_copied_and_never_undone_by_a_copy_back(
    tmp_path: Path, request: pytest.FixtureRequest, kind: str
) -> None:
    """Copy A into B, erase an entry in A, copy again: B erases it too (its tombstone
    came along). A copy of B made before the erase, copied back into A, brings nothing
    of it back: A keeps its tombstone, so that entry's versions are never written."""
    written = await filled_sqlite(tmp_path / "a.db")
    source = await SqliteStore.open(str(tmp_path / "a.db"))
    target = await TARGETS[kind](request, tmp_path)
    backup = MemoryStore()
    gone = written.memories[0]
    try:
        await copy_store(source, target)
        await copy_store(source, backup)
        assert (await target.get_memory(gone)).text == (await source.get_memory(gone)).text
        assert await source.erase("memory", gone.scope_id, gone.entry_id) == 1
        report = await copy_store(source, target)
        assert (report.tombstones, report.written) == (1, 0)
        with pytest.raises(satchel.NotFoundError, match="erased"):
            await target.get_memory(gone)
        assert await target.held_versions(DEMO, "memory", [gone.entry_id]) == {}
        assert _texts(await contents(target)) == _texts(await contents(source))

        back = await copy_store(backup, source)
        assert back.written == 0
        assert back.skipped["memory"] == await _held_memories(backup)  # held, or erased here
        with pytest.raises(satchel.NotFoundError, match="erased"):
            await source.get_memory(gone)
        assert await source.held_versions(DEMO, "memory", [gone.entry_id]) == {}
        assert gone not in memory_refs(citations(await packs_of(source)))
    finally:
        await source.aclose()
        await target.aclose()
        await backup.aclose()


async def _held_memories(store: Any) -> int:
    """Every memory version the store holds."""
    counts = [await store.count_versions(scope) for scope in await store.copy_scopes()]
    return sum(count.get("memory", 0) for count in counts)


async def test_vectors_are_embedded_again_when_the_embedders_differ(tmp_path: Path) -> None:
    """Into a store whose vectors another embedder built, a copy needs that embedder
    and embeds every searchable version with it; citations still resolve."""
    written = await filled_sqlite(tmp_path / "a.db")
    other = satchel.HashingEmbedder(32)
    target = await SqliteStore.open(str(tmp_path / "b.db"))
    async with satchel.open_runtime(store=target, embedder=other) as rt:
        await rt.add_memories("elsewhere", [satchel.MemoryEntry(text="built by another")])
    source = await SqliteStore.open(str(tmp_path / "a.db"))
    target = await SqliteStore.open(str(tmp_path / "b.db"))
    try:
        with pytest.raises(satchel.InvalidRequestError, match="embedder"):
            await copy_store(source, target)
        with pytest.raises(satchel.InvalidRequestError, match="target's vectors"):
            await copy_store(source, target, embedder=EMBEDDER)
        report = await copy_store(source, target, embedder=other)
        assert (report.vectors_copied, report.vectors_embedded) == (0, 14)
        assert (await target.vectors_built_by()).dimension == 32
        records = await memories_of(target, written.memories)
        assert records == await memories_of(source, written.memories)
    finally:
        await source.aclose()
        await target.aclose()
    async with satchel.open_runtime(str(tmp_path / "b.db"), embedder=other) as rt:
        assert (await rt.prepare_context(REQUESTS[0])).status == "ready"


async def test_only_the_scopes_asked_for_are_copied(tmp_path: Path) -> None:
    """``scopes`` copies those scopes alone (and every tombstone, which names none)."""
    await filled_sqlite(tmp_path / "a.db")
    source, target = await SqliteStore.open(str(tmp_path / "a.db")), MemoryStore()
    try:
        report = await copy_store(source, target, scopes=["chat:2"])
        assert report == CopyReport(
            ("chat:2",), {"memory": 2}, {"memory": 2}, {}, vectors_copied=2, tombstones=2
        )
        assert await target.copy_scopes() == ["chat:2"]
    finally:
        await source.aclose()
        await target.aclose()


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda s, t: copy_store(s, t, scopes=["nowhere"]), "no scope 'nowhere'"),
        (lambda s, t: copy_store(s, t, scopes="chat:2"), "scopes must be a list"),
        (lambda s, t: copy_store(s, s), "two stores"),
        (lambda s, t: copy_store(s, t, progress=3), "progress must be"),  # type: ignore[arg-type]
        (lambda s, t: copy_store(s, object()), "target must be a store"),  # type: ignore[arg-type]
        (lambda s, t: copy_store(object(), t), "source must be a store"),  # type: ignore[arg-type]
        (lambda s, t: copy_store(s, t, embedder=object()), "embedder must be"),  # type: ignore[arg-type]
    ],
)
async def test_malformed_arguments_are_refused_by_name(
    call: Callable[[CopySource, Any], Awaitable[CopyReport]], message: str
) -> None:
    """Bad arguments raise InvalidRequestError naming what is wrong; nothing is written."""
    source, target = MemoryStore(), MemoryStore()
    async with satchel.open_runtime(store=source, embedder=EMBEDDER) as rt:
        await rt.add_memories("chat:2", [satchel.MemoryEntry(text="hello")])
        with pytest.raises(satchel.InvalidRequestError, match=message):
            await call(source, target)
    assert await target.copy_scopes() == []


async def test_a_version_travels_verbatim(tmp_path: Path) -> None:
    """``read_versions`` gives each version's every column and, while searchable, its
    vector exactly as written; a retired version carries none."""
    written = await filled_sqlite(tmp_path / "a.db")
    store = await SqliteStore.open(str(tmp_path / "a.db"))
    try:
        versions = await store.read_versions(DEMO, "memory", after=0, limit=100)
        entry = written.memories[1].entry_id
        mine = [version for version in versions if version.record_id == entry]
        assert [(v.version, v.live, v.key) for v in mine] == [
            (1, False, None), (2, False, None), (3, True, None),
        ]  # fmt: skip
        assert mine[2].text == "note 1, third: kestrel"
        assert mine[0].vector is None
        assert mine[2].vector is not None
        expected = await EMBEDDER.embed(["note 1, third: kestrel"])
        assert np.array_equal(mine[2].vector, expected[0])
        positions = [version.position for version in versions]
        assert positions == sorted(positions)
        family: Family = "resource"
        resources = await store.read_versions(DEMO, family, after=0, limit=10)
        assert [(r.version, r.live, r.body) for r in resources] == [
            (1, False, "BODY one"),
            (2, True, "BODY two"),
        ]
    finally:
        await store.aclose()


@pytest.mark.parametrize("kind", list(TARGETS))
async def test_a_page_written_twice_is_written_once(
    tmp_path: Path, request: pytest.FixtureRequest, kind: str
) -> None:
    """``write_versions`` skips the versions a scope holds already (a page whose first
    write committed after its copy gave up), and says how many it wrote."""
    await filled_sqlite(tmp_path / "a.db")
    source = await SqliteStore.open(str(tmp_path / "a.db"))
    target = await TARGETS[kind](request, tmp_path)
    try:
        page = await source.read_versions(DEMO, "memory", after=0, limit=5)
        fingerprint = (await source.vectors_built_by()).fingerprint
        assert await target.write_versions(DEMO, "memory", page, fingerprint=fingerprint) == 5
        again = [
            *page,
            *await source.read_versions(DEMO, "memory", after=page[-1].position, limit=2),
        ]
        assert await target.write_versions(DEMO, "memory", again, fingerprint=fingerprint) == 2
        assert await target.count_versions(DEMO) == {"memory": 7}
        assert await target.read_versions(DEMO, "memory", after=0, limit=10) == again
    finally:
        await source.aclose()
        await target.aclose()
