"""The store contract as a suite of checks, for anyone writing a backend.

Every store satchel ships passes it, and so must any other :class:`satchel.Store`: run
it from your own tests on a factory of open, empty stores of yours::

    from satchel.stores.testing import check_store

    async def test_my_store_keeps_the_contract() -> None:
        await check_store(MyStore.open_empty)

:func:`check_store` runs every check of :data:`CHECKS` on a store of its own (closed
after it) and raises ``AssertionError`` naming the first check that fails. Each check is
also a plain async function taking an open, empty store, so a test suite can run them
one by one (satchel's own parametrizes over :data:`CHECKS`: see
``tests/stores/test_contract.py``) and skip the ones a store is known to break.

The checks need no test framework: they assert, and run on asyncio or trio alike. They
write through the store's own methods (every family through ``Store.write``: the helpers
:func:`remember`, :func:`memories`, :func:`records` and :func:`set_profile` check the
references it returns), with vectors from a
:class:`~satchel.embedders.HashingEmbedder` of 64 dimensions, and read back exactly.
Keys are compared only within one family and scope: a store may reuse a key number in
another scope, so the checks tell records apart by their evidence.
"""

from __future__ import annotations

import math
import re
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta, timezone
from typing import TYPE_CHECKING, Final, TypeAlias, cast

import attrs
import numpy as np

from ..embedders import HashingEmbedder
from ..vocabulary._analysis import analyse, analyse_query
from ..vocabulary._errors import NotFoundError, StoreError
from ..vocabulary._evidence import Evidence, ThreadNeighbours
from ..vocabulary._families import FAMILIES
from ..vocabulary._records import (
    Experience,
    MemoryEntry,
    MemoryRef,
    Profile,
    RecordRef,
    Resource,
    TopicMemory,
    experience_text,
    topic_text,
)
from ..vocabulary._retrieval import PoolRequest
from ._protocol import EmptyFamilies

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Collection, Iterator, Mapping, Sequence

    import numpy.typing as npt

    from ..vocabulary._evidence import Pool
    from ..vocabulary._families import Family
    from ..vocabulary._listing import ListedRecord
    from ..vocabulary._records import Record
    from ._protocol import Store

    Vectors = npt.NDArray[np.float32]

#: One check of the contract: an async function of an open, empty store.
Check: TypeAlias = "Callable[[Store], Awaitable[None]]"

EMBEDDER: Final = HashingEmbedder(64)
MAY_8: Final = datetime(2023, 5, 8, 13, 0, tzinfo=UTC)


@contextmanager
def raises(kind: type[BaseException], match: str | None = None) -> Iterator[None]:
    """The block must raise ``kind`` (its message matching ``match``, a regular
    expression, when given)."""
    try:
        yield
    except kind as error:
        if match is not None and not re.search(match, str(error)):
            raise AssertionError(f"{kind.__name__} said {error!s}, not /{match}/") from error
        return
    raise AssertionError(f"{kind.__name__} was not raised")


# -- helpers ----------------------------------------------------------------------------


def turn(text: str, minutes: float, thread: str | None = "t1") -> MemoryEntry:
    """A conversation turn said ``minutes`` after 8 May 2023, 13:00 UTC."""
    return MemoryEntry(text=text, created_at=MAY_8 + timedelta(minutes=minutes), thread=thread)


async def remember(
    store: Store, scope: str, entries: Sequence[MemoryEntry | str]
) -> list[MemoryRef]:
    """Write memory entries (a string: an entry of that text), embedded by
    :data:`EMBEDDER`; their references."""
    written = [MemoryEntry(text=e) if isinstance(e, str) else e for e in entries]
    vectors = await EMBEDDER.embed([entry.text for entry in written])
    return await memories(store, scope, written, vectors)


async def memories(
    store: Store, scope: str, entries: Sequence[MemoryEntry], vectors: Vectors
) -> list[MemoryRef]:
    """Write memory entries with ``vectors``: one :class:`MemoryRef` each."""
    refs = await store.write("memory", scope, entries, vectors)
    assert all(isinstance(ref, MemoryRef) for ref in refs), f"memory refs, not {refs}"
    return cast("list[MemoryRef]", refs)


async def records(
    store: Store,
    family: Family,
    scope: str,
    written: Sequence[Record],
    vectors: Vectors | None = None,
) -> list[RecordRef]:
    """Write records of a family other than memory: one :class:`RecordRef` each, of
    that family and scope."""
    refs = await store.write(family, scope, written, vectors)
    assert all(
        isinstance(ref, RecordRef) and (ref.family, ref.scope_id) == (family, scope) for ref in refs
    ), f"{family} refs in scope {scope!r}, not {refs}"
    return cast("list[RecordRef]", refs)


async def set_profile(store: Store, scope: str, profile: Profile) -> None:
    """Replace the scope's profile (a write that returns no reference)."""
    refs = await store.write("profile", scope, [profile])
    assert refs == [], f"a profile write returns no reference, not {refs}"


async def search(
    store: Store,
    query: str,
    *,
    scope: str = "s",
    family: Family = "memory",
    size: int = 16,
    vector: bool = True,
    now: datetime | None = None,
) -> Pool:
    """The pool of ``query``; ``now`` is the prepare's wall time (None: no clock)."""
    embedded = (await EMBEDDER.embed([query]))[0] if vector else None
    at = None if now is None else now.timestamp()
    request = PoolRequest(analyse_query(query), embedded, size, at)
    return await store.retrieve(family, scope, request)


async def texts(
    store: Store, keys: Sequence[int], *, scope: str = "s", family: Family = "memory"
) -> list[str | None]:
    """The text of each key's evidence, in order (a key without evidence: KeyError)."""
    found = await store.evidence(family, scope, list(keys))
    return [found[key].text for key in keys]


def keys_of(values: npt.NDArray[np.int64]) -> list[int]:
    return [int(key) for key in values]


async def every_key(store: Store, scope: str = "s", family: Family = "memory") -> list[int]:
    """Every searchable key of the family in the scope: the vector channel of a big pool."""
    vector = np.ones(EMBEDDER.dimension, dtype=np.float32)
    pool = await store.retrieve(family, scope, PoolRequest(analyse_query(""), vector, 1000))
    return keys_of(pool.vector_keys)


def unit(*values: float) -> npt.NDArray[np.float32]:
    vector = np.asarray(values, dtype=np.float32)
    return vector / np.linalg.norm(vector)


# -- writes and exact reads -------------------------------------------------------------


async def check_add_memories_gives_new_entries_read_back_exactly(store: Store) -> None:
    """One reference per entry in input order, each a new entry at version 1, whose
    record holds every field as written."""
    first = MemoryEntry(
        text="moved to Lisbon", kind="dialog", tags=("move", "city"),
        created_at=MAY_8, thread="chat/1", key="c1/1",
    )  # fmt: skip
    refs = await remember(store, "s", [first, "second entry"])
    assert [(ref.scope_id, ref.version) for ref in refs] == [("s", 1), ("s", 1)]
    assert refs[0].entry_id != refs[1].entry_id
    record = await store.get_memory(refs[0])
    assert record.ref == refs[0]
    assert (record.text, record.kind, record.tags, record.created_at, record.thread) == (
        "moved to Lisbon", "dialog", ("move", "city"), MAY_8, "chat/1",
    )  # fmt: skip
    assert record.key == "c1/1"
    assert (await store.get_memory(refs[1])).text == "second entry"


async def check_a_write_refuses_what_its_family_does_not_take(store: Store) -> None:
    """A write holding another family's record, lacking the vectors its family
    embeds, bringing vectors to a family without any, with too few vectors, or of two
    profiles raises StoreError and writes nothing."""
    vectors = await EMBEDDER.embed(["x"])
    lesson, entry = Experience("a", "b", "c", "d"), MemoryEntry(text="x")
    refused: list[Callable[[], Awaitable[object]]] = [
        lambda: store.write("memory", "s", [lesson], vectors),
        lambda: store.write("memory", "s", [entry]),
        lambda: store.write("experience", "s", [lesson], vectors),
        lambda: store.write("memory", "s", [entry, MemoryEntry(text="y")], vectors),
        lambda: store.write("profile", "s", [Profile("p"), Profile("q")]),
    ]
    for write in refused:
        with raises(StoreError):
            await write()
    assert store.scope_version("s") == 0
    assert await store.scope_counts() == {}


async def check_update_writes_the_next_version_and_keeps_the_cited_one(store: Store) -> None:
    """get_memory of version 1 after two updates is still version 1; only the newest
    version is searched; the entry keeps its idempotency key."""
    (v1,) = await remember(store, "s", [MemoryEntry(text="kestrel lives in Lisbon", key="k")])
    (old_key,) = keys_of((await search(store, "kestrel")).lexical_keys)
    v2 = await store.update_memory(
        v1, MemoryEntry(text="kestrel lives in Porto"), await EMBEDDER.embed(["kestrel Porto"])
    )
    v3 = await store.update_memory(
        v1, MemoryEntry(text="kestrel lives in Faro"), await EMBEDDER.embed(["kestrel Faro"])
    )
    assert (v2.entry_id, v2.version, v3.entry_id, v3.version) == (v1.entry_id, 2, v1.entry_id, 3)
    assert (await store.get_memory(v1)).text == "kestrel lives in Lisbon"
    assert (await store.get_memory(v2)).text == "kestrel lives in Porto"
    newest = await store.get_memory(v3)
    assert (newest.text, newest.key) == ("kestrel lives in Faro", "k")
    pool = await search(store, "kestrel lisbon porto faro")
    assert await texts(store, keys_of(pool.lexical_keys)) == ["kestrel lives in Faro"]
    assert await texts(store, keys_of(pool.vector_keys)) == ["kestrel lives in Faro"]
    assert pool.scope_rows == 1
    assert await store.evidence("memory", "s", [old_key]) == {}
    (key,) = keys_of(pool.lexical_keys)
    assert (await store.evidence("memory", "s", [key]))[key].citation == {
        "family": "memory", "scope": "s", "entry_id": v1.entry_id, "version": 3,
    }  # fmt: skip


async def check_forget_leaves_every_channel_and_keeps_versions_readable(store: Store) -> None:
    """A forgotten entry is in no pool channel, no evidence and no neighbours; every
    version of it stays readable; forgetting it again changes nothing, and says so."""
    refs = await remember(
        store,
        "s",
        [turn("kestrel before", 0), turn("kestrel yesterday I went sailing", 1), turn("after", 2)],
    )
    v2 = await store.update_memory(
        refs[1], turn("kestrel yesterday I went rowing", 1), await EMBEDDER.embed(["rowing"])
    )
    query = "kestrel rowing on 7 May 2023"
    before = await search(store, query)
    lexical = keys_of(before.lexical_keys)
    found = dict(zip(await texts(store, lexical), lexical, strict=True))
    rowing = found["kestrel yesterday I went rowing"]
    assert rowing in keys_of(before.vector_keys)
    assert rowing in keys_of(before.time_keys)
    assert await store.forget_memory(refs[1]) is True
    after = await search(store, query)
    for channel in (after.lexical_keys, after.vector_keys, after.time_keys):
        assert rowing not in keys_of(channel)
    assert after.scope_rows == 2
    assert await store.evidence("memory", "s", [rowing]) == {}
    neighbours = await store.neighbours("memory", "s", [*every_key_of(after), rowing])
    assert rowing not in neighbours
    assert all(rowing not in near.within(2) for near in neighbours.values())
    assert (await store.get_memory(refs[1])).text == "kestrel yesterday I went sailing"
    assert (await store.get_memory(v2)).text == "kestrel yesterday I went rowing"
    assert await store.forget_memory(v2) is False  # already forgotten: nothing changes
    assert (await search(store, query)).scope_rows == 2


def every_key_of(pool: Pool) -> list[int]:
    return sorted({*keys_of(pool.lexical_keys), *keys_of(pool.vector_keys)})


async def check_unknown_references_raise_not_found(store: Store) -> None:
    """An unknown scope, entry or version raises NotFoundError on read, update and
    forget; a forgotten entry cannot be updated."""
    (ref,) = await remember(store, "s", ["kestrel"])
    vector = await EMBEDDER.embed(["x"])
    unknown = [
        MemoryRef("nowhere", ref.entry_id, 1),
        MemoryRef("s", "no-such-entry", 1),
        MemoryRef("s", ref.entry_id, 2),
        MemoryRef("s", ref.entry_id, 0),
    ]
    for bad in unknown:
        with raises(NotFoundError):
            await store.get_memory(bad)
        with raises(NotFoundError):
            await store.update_memory(bad, MemoryEntry(text="x"), vector)
        with raises(NotFoundError):
            await store.forget_memory(bad)
    await store.forget_memory(ref)
    with raises(NotFoundError):
        await store.update_memory(ref, MemoryEntry(text="x"), vector)
    assert (await store.get_memory(ref)).text == "kestrel"


async def check_memory_idempotency_keys(store: Store) -> None:
    """The same key and content returns the existing reference and writes nothing; new
    content is the entry's next version; the same key in another scope is another entry."""
    (first,) = await remember(store, "s", [MemoryEntry(text="Alice moved to Lisbon", key="k")])
    version = store.scope_version("s")
    (again,) = await remember(store, "s", [MemoryEntry(text="Alice moved to Lisbon", key="k")])
    assert again == first
    assert store.scope_version("s") != version  # a write, even one that changed nothing
    assert (await search(store, "Alice")).scope_rows == 1
    (second,) = await remember(store, "s", [MemoryEntry(text="Alice moved to Porto", key="k")])
    assert (second.entry_id, second.version) == (first.entry_id, 2)
    assert (await store.get_memory(first)).text == "Alice moved to Lisbon"
    pool = await search(store, "Alice moved")
    assert await texts(store, keys_of(pool.lexical_keys)) == ["Alice moved to Porto"]
    (elsewhere,) = await remember(store, "t", [MemoryEntry(text="Alice moved to Porto", key="k")])
    assert (elsewhere.scope_id, elsewhere.version) == ("t", 1)
    assert (await store.get_memory(second)).text == "Alice moved to Porto"


async def check_a_forgotten_key_replayed_with_its_content_stays_forgotten(store: Store) -> None:
    """Forget is forever: the same key and content after a forget returns the forgotten ref."""
    entry = MemoryEntry(text="kestrel moved to Lisbon", key="k")
    first, _ = await remember(store, "s", [entry, "heron stays in Faro"])
    await store.forget_memory(first)
    (again,) = await remember(store, "s", [entry])
    assert again == first
    pool = await search(store, "kestrel Lisbon")
    assert await texts(store, every_key_of(pool)) == ["heron stays in Faro"]
    assert pool.scope_rows == 1
    assert (await store.get_memory(again)).text == "kestrel moved to Lisbon"
    with raises(NotFoundError):  # still forgotten: no next version by update
        await store.update_memory(again, MemoryEntry(text="x"), await EMBEDDER.embed(["x"]))


async def check_new_content_under_a_forgotten_key_is_its_next_live_version(store: Store) -> None:
    """New content under a forgotten key is the same entry's next version, live again."""
    (first,) = await remember(store, "s", [MemoryEntry(text="kestrel moved to Lisbon", key="k")])
    await store.forget_memory(first)
    await remember(store, "s", [MemoryEntry(text="kestrel moved to Lisbon", key="k")])
    (second,) = await remember(store, "s", [MemoryEntry(text="kestrel moved to Porto", key="k")])
    assert (second.entry_id, second.version) == (first.entry_id, 2)
    pool = await search(store, "kestrel moved")
    assert await texts(store, every_key_of(pool)) == ["kestrel moved to Porto"]
    assert pool.scope_rows == 1
    (again,) = await remember(store, "s", [MemoryEntry(text="kestrel moved to Porto", key="k")])
    assert again == second
    assert (await store.get_memory(first)).text == "kestrel moved to Lisbon"


async def check_every_version_a_forgotten_key_wrote_stays_forgotten(store: Store) -> None:
    """Forget is forever for all the key ever held: replaying an older version's content
    (its time with another UTC offset too) writes nothing and serves nothing, returning
    that version's reference; only content never written under the key is live again."""
    tuesday = MemoryEntry(text="kestrel deploy window is Tuesday", key="k", created_at=MAY_8)
    (first,) = await remember(store, "s", [tuesday])
    thursday = MemoryEntry(text="kestrel deploy window is Thursday", key="k")
    (second,) = await remember(store, "s", [thursday])
    await remember(store, "s", [MemoryEntry(text="heron window", key="h")])
    await store.forget_memory(second)
    version = store.scope_version("s")
    eastern = MAY_8.astimezone(timezone(timedelta(hours=-4)))
    for replay in (tuesday, thursday, attrs.evolve(tuesday, created_at=eastern)):
        (again,) = await remember(store, "s", [replay])
        assert again == (first if replay.text == tuesday.text else second)
    assert store.scope_version("s") != version  # writes, each of which changed nothing
    assert await texts(store, every_key_of(await search(store, "window"))) == ["heron window"]
    for ref in (first, second):
        assert (await store.get_memory(ref)).text == (tuesday if ref is first else thursday).text
    (third,) = await remember(store, "s", [attrs.evolve(tuesday, text="kestrel window is Friday")])
    assert (third.entry_id, third.version) == (first.entry_id, 3)
    assert sorted(map(str, await texts(store, every_key_of(await search(store, "window"))))) == [
        "heron window", "kestrel window is Friday",
    ]  # fmt: skip


async def check_a_batch_of_unchanged_and_new_records_searches_each_by_its_vector(
    store: Store,
) -> None:
    """A write mixing unchanged and new records gives each new one its own vector."""
    kestrel = MemoryEntry(text="kestrel moved to Lisbon", key="k")
    await remember(store, "s", [kestrel])
    await search(store, "kestrel")  # a store may hold the scope's vectors from here on
    await remember(store, "s", [kestrel, MemoryEntry(text="heron stays in Faro", key="h")])
    for text in ("kestrel moved to Lisbon", "heron stays in Faro"):
        pool = await search(store, text)
        assert (await texts(store, keys_of(pool.vector_keys)))[0] == text


async def check_experiences_are_keyed_and_searched_by_text_only(store: Store) -> None:
    """An experience is searched on its whole text, never by vector; its evidence holds
    that text; its key works like a memory's."""
    lesson = Experience("deploy failed", "rolled back", "service recovered", "pin kestrel")
    (ref,) = await records(store, "experience", "s", [Experience(*attrs_of(lesson), key="e")])
    (again,) = await records(store, "experience", "s", [Experience(*attrs_of(lesson), key="e")])
    assert (ref.family, ref.scope_id, ref.revision) == ("experience", "s", 1)
    assert again == ref
    pool = await search(store, "kestrel rollback", family="experience")
    assert len(pool.vector_keys) == 0
    (key,) = keys_of(pool.lexical_keys)
    assert (await store.evidence("experience", "s", [key]))[key] == Evidence.from_record(
        "experience", "s", ref.id, 1, text=experience_text(lesson)
    )
    changed = Experience("deploy failed", "rolled back", "it recovered", "pin", key="e")
    (next_ref,) = await records(store, "experience", "s", [changed])
    assert (next_ref.id, next_ref.revision) == (ref.id, 2)
    pool = await search(store, "deploy", family="experience")
    assert await texts(store, keys_of(pool.lexical_keys), family="experience") == [
        experience_text(changed)
    ]


def attrs_of(experience: Experience) -> tuple[str, str, str, str]:
    return (experience.situation, experience.action, experience.outcome, experience.lesson)


async def check_topic_memories_are_revised_by_title_or_key(store: Store) -> None:
    """A title written again is the note's next revision; a known key with new content
    too, and with the same content writes nothing. Searched on title and text."""
    topic = TopicMemory(title="kestrel", text="a small falcon")
    vectors = await EMBEDDER.embed([topic_text(topic)])
    (first,) = await records(store, "topic-memory", "s", [topic], vectors)
    (second,) = await records(
        store,
        "topic-memory",
        "s",
        [TopicMemory(title="kestrel", text="hovers over fields")],
        vectors,
    )
    assert (first.family, first.revision, second.id, second.revision) == (
        "topic-memory", 1, first.id, 2,
    )  # fmt: skip
    pool = await search(store, "kestrel falcon hovers", family="topic-memory")
    assert await texts(store, keys_of(pool.lexical_keys), family="topic-memory") == [
        "kestrel\n\nhovers over fields"
    ]
    assert len(pool.vector_keys) == 1
    keyed = TopicMemory(title="harbour", text="boats", key="h")
    (a,) = await records(store, "topic-memory", "s", [keyed], vectors)
    (b,) = await records(store, "topic-memory", "s", [keyed], vectors)
    (c,) = await records(
        store, "topic-memory", "s", [TopicMemory(title="harbour", text="ships", key="h")], vectors
    )
    assert b == a
    assert (c.id, c.revision) == (a.id, 2)
    assert (await search(store, "harbour", family="topic-memory")).scope_rows == 2


async def check_resources_are_replaced_by_uri_and_searched_on_their_summaries(
    store: Store,
) -> None:
    """A URI written again replaces the resource; only the abstract and overview are
    searched; the body is read on demand, the current one, for known URIs only."""
    vectors = await EMBEDDER.embed(["kestrel setup guide"])
    (first,) = await records(
        store,
        "resource",
        "s",
        [Resource("docs/setup.md", body="TOKEN=old", abstract="kestrel setup guide")],
        vectors,
    )
    replaced = Resource(
        "docs/setup.md", body="TOKEN=new", abstract="kestrel install guide", overview="steps"
    )
    (second,) = await records(store, "resource", "s", [replaced], vectors)
    assert (first.id, first.revision, second.id, second.revision) == (
        "docs/setup.md", 1, "docs/setup.md", 2,
    )  # fmt: skip
    pool = await search(store, "kestrel setup install", family="resource")
    (key,) = keys_of(pool.lexical_keys)
    assert pool.scope_rows == 1
    assert (await store.evidence("resource", "s", [key]))[key] == Evidence.from_record(
        "resource", "s", "docs/setup.md", 2, abstract="kestrel install guide", overview="steps"
    )
    assert len((await search(store, "token", family="resource")).lexical_keys) == 0
    bodies = await store.read_resource_bodies("s", ["docs/setup.md", "docs/none.md"])
    assert bodies == {"docs/setup.md": "TOKEN=new"}
    assert await store.read_resource_bodies("elsewhere", ["docs/setup.md"]) == {}
    keyed = Resource("docs/a.md", body="A", abstract="alpha", key="r")
    (a,) = await records(store, "resource", "s", [keyed], vectors)
    (again,) = await records(store, "resource", "s", [keyed], vectors)
    assert again == a


async def check_a_uri_that_comes_back_takes_its_next_revision(store: Store) -> None:
    """Key r moves a resource from URI a to URI b (a leaves search); a written again
    without the key continues a's revisions instead of clashing with revision 1."""
    vectors = await EMBEDDER.embed(["alpha"])
    (a1,) = await records(store, "resource", "s", [Resource("a", "A", "alpha", key="r")], vectors)
    (b1,) = await records(store, "resource", "s", [Resource("b", "B", "beta", key="r")], vectors)
    (a2,) = await records(store, "resource", "s", [Resource("a", "A2", "alpha two")], vectors)
    assert (a1.id, a1.revision, b1.id, a2.id, a2.revision) == ("a", 1, "b", "a", 2)
    assert await store.read_resource_bodies("s", ["a", "b"]) == {"a": "A2", "b": "B"}


async def check_the_latest_profile_wins(store: Store) -> None:
    """A scope's profile is the last one set; a scope without one has none."""
    assert await store.get_profile("s") is None
    await set_profile(store, "s", Profile(text="first"))
    await set_profile(store, "s", Profile(text="prefers short answers"))
    assert await store.get_profile("s") == Evidence.from_record(
        "profile", "s", text="prefers short answers"
    )
    assert await store.get_profile("t") is None


async def check_evidence_of_each_family_cites_its_version(store: Store) -> None:
    """Memory evidence holds the text, time and thread, cited by entry and version."""
    (ref,) = await remember(store, "s", [turn("kestrel on the wire", 0, thread="chat/1")])
    (key,) = keys_of((await search(store, "kestrel")).lexical_keys)
    assert (await store.evidence("memory", "s", [key])) == {
        key: Evidence.from_record(
            "memory", "s", ref.entry_id, 1,
            text="kestrel on the wire", created_at=MAY_8, thread="chat/1",
        )
    }  # fmt: skip


async def check_scope_counts_name_each_scope_with_its_searchable_records(store: Store) -> None:
    """Every scope holding a searchable record or a profile, with its searchable records
    per family: a new version or a replacement counts once, a forgotten entry not at
    all, a family with none is absent, a profile counts 1, and a scope whose every
    record left search (with no profile) is absent."""
    assert await store.scope_counts() == {}
    vectors = await EMBEDDER.embed(["x"])
    first, second, _ = await remember(store, "a", ["kestrel one", "kestrel two", "three"])
    await store.update_memory(first, MemoryEntry(text="kestrel one, revised"), vectors)
    await store.forget_memory(second)
    await records(store, "experience", "a", [Experience("a", "b", "c", "d")])
    for text in ("first", "second"):  # the same title: one note, two revisions
        await records(store, "topic-memory", "a", [TopicMemory("kestrel", text)], vectors)
    for body in ("old", "new"):  # the same URI: one resource
        await records(store, "resource", "b", [Resource("docs/a.md", body, "alpha")], vectors)
    await set_profile(store, "b", Profile("first"))
    await set_profile(store, "b", Profile("second"))
    (gone,) = await remember(store, "c", ["forgotten"])
    await store.forget_memory(gone)
    await set_profile(store, "d", Profile("only a profile"))
    counts = await store.scope_counts()
    assert {scope: dict(families) for scope, families in counts.items()} == {
        "a": {"memory": 2, "experience": 1, "topic-memory": 1},
        "b": {"resource": 1, "profile": 1},
        "d": {"profile": 1},
    }


# -- isolation --------------------------------------------------------------------------


async def check_scopes_never_see_each_other(store: Store) -> None:
    """Another scope's records are in no pool, no evidence and no neighbours, though
    they share terms, vectors, threads and times."""
    await remember(store, "a", [turn(f"kestrel note {n} in a", n) for n in range(3)])
    await remember(store, "b", [turn(f"kestrel note {n} in b", n + 0.5) for n in range(5)])
    pool = await search(store, "kestrel note on May 8, 2023", scope="a")
    assert pool.scope_rows == 3
    for channel in (pool.lexical_keys, pool.vector_keys, pool.time_keys):
        found = await texts(store, keys_of(channel), scope="a")
        assert sorted(map(str, found)) == [f"kestrel note {n} in a" for n in range(3)]
    around = await store.neighbours("memory", "a", keys_of(pool.lexical_keys))
    held = {key for near in around.values() for key in near.within(1)}
    assert held <= set(keys_of(pool.lexical_keys))
    assert len(held) == 3
    assert await store.get_profile("a") is None
    empty = await search(store, "kestrel", scope="c")
    assert (empty.retrieved, empty.scope_rows) == (0, 0)
    assert empty.version == store.scope_version("c")


async def check_evidence_never_crosses_scope_or_family(store: Store) -> None:
    """Evidence asked of one scope and family never returns another's record, even for
    a key that names one there."""
    await remember(store, "a", ["kestrel in a"])
    await remember(store, "b", ["kestrel in b"])
    await records(store, "experience", "a", [Experience("kestrel", "a", "b", "c")])
    in_a = await every_key(store, "a")
    foreign = [key for key in await every_key(store, "b") if key not in in_a]
    assert await store.evidence("memory", "a", foreign) == {}
    experiences = keys_of(
        (await search(store, "kestrel", scope="a", family="experience")).lexical_keys
    )
    strangers = [key for key in in_a if key not in experiences]
    assert await store.evidence("experience", "a", strangers) == {}


async def check_evidence_is_rated_by_how_rare_its_words_are_in_its_scope(
    store: Store,
) -> None:
    """A store that rates evidence (``Evidence.rarity``; None everywhere is a store that
    does not) rates each item by its scope's counts as of the read: the mean of
    ``ln(N / df) / ln(N + 200)`` over its words past a speaker's name, ``N`` the family's
    searchable records in the scope. A write or a forget changes the next read's
    rating; another scope's records count for nothing; a scope of one record rates
    nothing."""
    await remember(store, "other", ["kestrel kestrel", "kestrel nest", "kestrel egg"])
    said = [
        "Ana: thanks so much, kestrel",
        "Ben: thanks!",
        "Ana: thanks, see you soon",
        "Ben: the kestrel nested in the chimney",
    ]
    refs = await remember(store, "s", said)
    live = list(said)

    async def rated() -> dict[str, float | None]:
        found = await store.evidence("memory", "s", await every_key(store))
        return {item.text: item.rarity for item in found.values() if item.text is not None}

    def expected() -> dict[str, float]:
        held = [set(analyse(text)) for text in live]
        rows = len(live)
        out = {}
        for text in live:
            words = set(analyse(text.split(":", 1)[1]))
            found = sum(math.log(rows / sum(word in terms for terms in held)) for word in words)
            out[text] = found / (len(words) * math.log(rows + 200))
        return out

    first = await rated()
    if all(value is None for value in first.values()):
        return  # a store that does not rate
    assert_near(first, expected())
    assert first["Ben: the kestrel nested in the chimney"] > first["Ben: thanks!"]  # type: ignore[operator]
    await remember(store, "s", ["Ana: thanks for the chimney tip"])
    live.append("Ana: thanks for the chimney tip")
    assert_near(await rated(), expected())
    await store.forget_memory(refs[0])
    live.remove(said[0])
    assert_near(await rated(), expected())
    await remember(store, "one", ["Ana: a kestrel"])
    found = await store.evidence("memory", "one", await every_key(store, "one"))
    assert [item.rarity for item in found.values()] == [None]


def assert_near(found: Mapping[str, float | None], wanted: Mapping[str, float]) -> None:
    """The same texts, each rated within 1e-9 of what ``wanted`` says (a store may sum
    the same logarithms in another order)."""
    assert found.keys() == wanted.keys()
    for text, value in wanted.items():
        rating = found[text]
        assert rating is not None, text
        assert math.isclose(rating, value, rel_tol=1e-9), text


#: Names that differ from ``"pad"`` (and from each other) only in ways an engine may
#: ignore: trailing and leading spaces, case, Unicode normalisation form, a NUL.
LOOK_ALIKES: Final = ("pad", "pad ", "pad  ", " pad", "Pad", "caf\u00e9", "cafe\u0301")


async def check_scopes_that_look_alike_are_each_their_own(store: Store) -> None:
    """Scope names compare as exact strings: each look-alike holds its own records and
    profile, and erasing one leaves the others whole."""
    for name in LOOK_ALIKES:
        await remember(store, name, [f"kestrel note of {name!r}"])
        await set_profile(store, name, Profile(f"profile of {name!r}"))
    counts = await store.scope_counts()
    assert sorted(counts) == sorted(LOOK_ALIKES)
    for name in LOOK_ALIKES:
        pool = await search(store, "kestrel note", scope=name)
        assert await texts(store, keys_of(pool.lexical_keys), scope=name) == [
            f"kestrel note of {name!r}"
        ]
        profile = await store.get_profile(name)
        assert profile is not None
        assert profile.text == f"profile of {name!r}"
    assert await store.erase_scope("pad ") == 2
    assert sorted(await store.scope_counts()) == sorted(set(LOOK_ALIKES) - {"pad "})
    assert await store.get_profile("pad ") is None
    assert await store.get_profile("pad") is not None
    assert len(await every_key(store, "pad")) == 1


async def check_keys_titles_and_uris_that_look_alike_are_each_their_own(store: Store) -> None:
    """Idempotency keys, topic titles and resource URIs compare as exact strings: each
    look-alike (and one ending in a NUL) is a record of its own at its first version."""
    names = (*LOOK_ALIKES, "pad\x00")
    refs = await remember(store, "s", [MemoryEntry(text=f"kestrel {n!r}", key=n) for n in names])
    assert [ref.version for ref in refs] == [1] * len(names)
    assert len({ref.entry_id for ref in refs}) == len(names)
    for name, ref in zip(names, refs, strict=True):
        assert (await store.get_memory(ref)).text == f"kestrel {name!r}"
    vectors = await EMBEDDER.embed(["x"] * len(names))
    topics = await records(
        store,
        "topic-memory",
        "s",
        [TopicMemory(title=n, text=f"note {n!r}") for n in names],
        vectors,
    )
    assert [(t.revision, t.id) for t in topics] == [(1, t.id) for t in topics]
    assert len({t.id for t in topics}) == len(names)
    resources = await records(
        store, "resource", "s", [Resource(n, f"body {n!r}", "alpha") for n in names], vectors
    )
    assert [(r.id, r.revision) for r in resources] == [(n, 1) for n in names]
    assert await store.read_resource_bodies("s", ["pad", "Pad"]) == {
        "pad": "body 'pad'", "Pad": "body 'Pad'",
    }  # fmt: skip
    assert await store.erase("memory", "s", refs[1].entry_id) == 1  # "pad "
    for ref in (refs[0], *refs[2:]):
        assert (await store.get_memory(ref)).text.startswith("kestrel")


# -- the channels -----------------------------------------------------------------------


async def check_lexical_channel_ranks_by_bm25_and_counts_analysed_terms(store: Store) -> None:
    """Holders of any query term, best (lowest) score first, each with how many
    distinct query terms its analysed text holds (stemmed: "runs" holds "running")."""
    await remember(
        store,
        "s",
        [
            "kestrel runs",
            "kestrel seen today",
            "the kestrels running",
            *[f"nothing related {n}" for n in range(6)],
        ],
    )
    pool = await search(store, "running kestrel", vector=False)
    found = await texts(store, keys_of(pool.lexical_keys))
    assert set(found[:2]) == {"kestrel runs", "the kestrels running"}
    assert found[2:] == ["kestrel seen today"]
    assert pool.lexical_matches.tolist() == [2, 2, 1]
    scores = pool.lexical_scores.tolist()
    assert scores == sorted(scores)
    assert scores[2] > scores[1]
    assert all(score < 0 for score in scores)
    assert len(pool.vector_keys) == 0  # no query vector: no vector channel
    assert pool.scope_rows == 9


async def check_lexical_channel_searches_the_plans_terms_only(store: Store) -> None:
    """A term whose postings pass the budget is left out of the search
    (``select_terms``), yet a candidate's matched terms still count it: held by under
    half the scope, it is not common there."""
    entries = [
        MemoryEntry(text="rare budget"),
        *[MemoryEntry(text=f"budget {n}") for n in range(2100)],
        *[MemoryEntry(text=f"filler {n}") for n in range(2150)],
    ]
    vectors = np.zeros((len(entries), EMBEDDER.dimension), dtype=np.float32)
    await memories(store, "s", entries, vectors)
    pool = await search(store, "rare budget", vector=False)
    assert await texts(store, keys_of(pool.lexical_keys)) == ["rare budget"]
    assert pool.lexical_matches.tolist() == [2]
    assert pool.common_terms == 0


async def check_a_term_held_by_most_of_the_scope_neither_ranks_nor_counts(store: Store) -> None:
    """A term held by more than half of a scope (a speaker's name in every turn) is left
    out while another query term is held: only the other term's holders are candidates
    and their matched terms do not count it. When nothing else is held, it is searched."""
    texts_ = [f"Ana: note {n} about lunch" for n in range(17)]
    texts_ += ["Ana: the kestrel rotation is due", "Bo: rotation of kestrel keys"]
    texts_ += ["Bo: weather", "Bo: more weather"]
    await remember(store, "s", texts_)
    pool = await search(store, "what did ana say about the kestrel rotation", vector=False)
    found = await texts(store, keys_of(pool.lexical_keys))
    assert set(found) == {"Ana: the kestrel rotation is due", "Bo: rotation of kestrel keys"}
    assert pool.lexical_matches.tolist() == [2, 2]  # kestrel and rotation; not ana
    assert pool.common_terms == 1
    query = analyse_query("what did ana say about the kestrel rotation")
    assert query.terms == ("ana", "say", "kestrel", "rotat")
    assert pool.counted_terms(len(query.terms)) == 3  # say still counts: it is held by none
    alone = await search(store, "ana", vector=False)
    held = await texts(store, keys_of(alone.lexical_keys))
    assert held
    assert all(str(text).startswith("Ana:") for text in held)  # by the common term alone
    assert alone.common_terms == 0


async def check_a_pool_counts_the_query_terms_the_scope_holds(store: Store) -> None:
    """``held_terms``: how many of the query's counted terms some record of the scope
    holds, whether or not a candidate ranked for it; a common term is not counted while
    another is held, and is when nothing else is."""
    texts_ = [f"Ana: note {n} about lunch" for n in range(17)] + ["Bo: kestrel keys"]
    await remember(store, "s", texts_)
    pool = await search(store, "did ana rotate the kestrel keys at noon", vector=False)
    assert (pool.common_terms, pool.held_terms) == (1, 2)  # kestrel, keys; not rotate, noon
    alone = await search(store, "ana and the gallium", vector=False)
    assert (alone.common_terms, alone.held_terms) == (0, 1)
    none = await search(store, "gallium melting point", vector=False)
    assert (none.held_terms, len(none.lexical_keys)) == (0, 0)


async def check_a_pool_counts_the_names_the_scope_never_holds(store: Store) -> None:
    """``unheld_names``: the proper names the query says that no record of the
    scope holds, with or without a vector; names the scope holds count nothing."""
    await remember(store, "s", [f"Ana: note {n} about Lisbon" for n in range(3)])
    for vector in (True, False):
        asked = await search(store, "According to Ana, where is Mongolia?", vector=vector)
        assert asked.unheld_names == ("mongolia",)
        held = await search(store, "What did Ana say about Lisbon?", vector=vector)
        assert held.unheld_names == ()
    assert (await search(store, "where is the lunch note")).unheld_names == ()


async def check_a_name_spelled_otherwise_is_searched_as_the_scope_spells_it(
    store: Store,
) -> None:
    """A proper name no record holds, that the scope holds in another form held by
    enough of its records (the same start: "Nate", "Nathan"; the same sound: "Geena",
    "Gina"), is searched and counted as the scope spells it (``spelled_names``); a word
    that starts the same held by one record ("melt" for "Mel"), or a name the scope never
    says, is not."""
    texts_ = [f"Nathan: note {n} about lunch" for n in range(20)]
    texts_ += [f"Gina: the pottery class {n}" for n in range(20)] + ["Bo: ice will melt"]
    await remember(store, "s", texts_)
    for vector in (True, False):
        nate = await search(store, "What did Nate say about lunch?", vector=vector)
        assert (nate.unheld_names, nate.spelled_names) == ((), ("nathan",))
        found = await texts(store, keys_of(nate.lexical_keys))
        assert found
        assert all(str(text).startswith("Nathan:") for text in found)
        # lunch: nathan, a participant's name, is common (held by more than a tenth)
        assert (nate.common_terms, nate.lexical_matches.tolist()) == (1, [1] * len(found))
    geena = await search(store, "Does Geena enjoy pottery?")
    assert (geena.unheld_names, geena.spelled_names) == ((), ("gina",))
    mel = await search(store, "What did Mel say?")
    assert (mel.unheld_names, mel.spelled_names) == (("mel",), ())
    away = await search(store, "According to Nathan, where is Mongolia?")
    assert (away.unheld_names, away.spelled_names) == (("mongolia",), ())


async def check_a_word_typed_with_a_slip_is_searched_as_the_scope_holds_it(
    store: Store,
) -> None:
    """A query's word the scope holds only as typed with one slip (``adopt`` as "adpot",
    a question's "torunament" for "tournament") is searched and counted as the scope
    holds it (``PoolRequest.respelled``); a dictionary word's slip that is another
    dictionary word ("plant" for "planet") is not taken."""
    await _amid_lunch_notes(
        store, "Bo: we will adpot a puppy", "Bo: we won the tournament", "Bo: a plant"
    )
    for vector in (True, False):
        adopt = await search(store, "When will Bo adopt a puppy?", vector=vector)
        found = await texts(store, keys_of(adopt.lexical_keys[:1]))
        # bo, puppi and, as the scope holds "adopt", adpot
        assert (found, adopt.lexical_matches.tolist()[:1]) == (["Bo: we will adpot a puppy"], [3])
        won = await search(store, "Who won the torunament?", vector=vector)
        assert await texts(store, keys_of(won.lexical_keys[:1])) == ["Bo: we won the tournament"]
        planet = await search(store, "Which planet?", vector=vector)
        assert (planet.held_terms, len(planet.lexical_keys)) == (0, 0)


async def check_a_word_spelled_the_other_english_way_is_searched_as_the_scope_spells_it(
    store: Store,
) -> None:
    """A question written in British English finds the turns a chat wrote in American
    English, and back ("favourite colour" and "favorite color")."""
    await _amid_lunch_notes(store, "Bo: my favorite color is teal", "Cy: the theatre was full")
    for vector in (True, False):
        british = await search(store, "What is Bo's favourite colour?", vector=vector)
        found = await texts(store, keys_of(british.lexical_keys[:1]))
        assert (found, british.lexical_matches.tolist()[:1]) == (
            ["Bo: my favorite color is teal"],
            [3],  # bo, favorit, color
        )
        american = await search(store, "Was the theater full?", vector=vector)
        assert await texts(store, keys_of(american.lexical_keys[:1])) == [
            "Cy: the theatre was full"
        ]


async def check_two_words_a_chat_typed_as_one_are_searched_as_the_scope_holds_them(
    store: Store,
) -> None:
    """Two words a question says side by side that a chat typed as one ("road trip" as
    "roadtrip") are searched as the scope holds them; a name beside a word is never
    run together with it."""
    await _amid_lunch_notes(
        store, "Bo: the roadtrip was long", "Bo: a trip by the road", "Cy: danatrip"
    )
    for vector in (True, False):
        # A turn holding both words ranks first; the one that ran them together is
        # found beside it, where it holds neither word.
        assert await _found(store, "How was the road trip?", vector=vector) == [
            "Bo: a trip by the road",
            "Bo: the roadtrip was long",
        ]
        assert "Cy: danatrip" not in await _found(store, "Did Dana trip?", vector=vector)


async def check_a_word_is_found_with_or_without_its_accents(store: Store) -> None:
    """A Latin letter's diacritic does not part two spellings of a word or a name: a
    question typed without accents finds the turn written with them, and the other way
    round ("José" and "Jose", "Pokémon" and "pokemon")."""
    await _amid_lunch_notes(
        store, "José: we met at the café", "Zoe: my pokemon cards", "Ana: a cafeteria"
    )
    for vector in (True, False):
        plain = await _found(store, "Which cafe did Jose go to?", vector=vector)
        assert plain[:1] == ["José: we met at the café"]
        accented = await _found(store, "Which Pokémon cards does Zoë have?", vector=vector)
        assert accented[:1] == ["Zoe: my pokemon cards"]


async def _amid_lunch_notes(store: Store, *said: str) -> None:
    """Scope "s" holding twelve turns about lunch, then ``said``."""
    await remember(store, "s", [*(f"Ana: note {n} about lunch" for n in range(12)), *said])


async def _found(store: Store, question: str, *, vector: bool) -> list[str | None]:
    """The texts of the full-text candidates of ``question`` in scope "s", in order."""
    pool = await search(store, question, vector=vector)
    return await texts(store, keys_of(pool.lexical_keys))


async def check_bm25_uses_the_scopes_own_term_statistics(store: Store) -> None:
    """A term common in another, larger scope still counts as rare in this one."""
    await remember(store, "big", [f"lantern festival note {n}" for n in range(100)])
    await remember(
        store,
        "small",
        [
            "harbour harbour walk with friends",
            "lantern by the door",
            *[f"harbour visit number {n}" for n in range(30)],
        ],
    )
    pool = await search(store, "lantern harbour", scope="small", vector=False)
    first = await texts(store, keys_of(pool.lexical_keys[:1]), scope="small")
    assert first == ["lantern by the door"]


async def check_lexical_plan_rescues_every_holder_of_a_rare_term(store: Store) -> None:
    """When BM25 ranks long records holding the rarest term past the pool, they are
    appended after the ranked ones, scored by that term alone."""
    filler = " ".join(f"word{n}" for n in range(150))
    await remember(
        store,
        "s",
        [
            *[f"common common common {n}" for n in range(12)],
            *[f"rare {filler} {n}" for n in range(3)],
            *[f"unrelated {n}" for n in range(60)],
        ],
    )
    pool = await search(store, "common rare", size=4, vector=False)
    found = await texts(store, keys_of(pool.lexical_keys))
    assert len(found) == 7
    assert all(str(text).startswith("common") for text in found[:4])
    assert sorted(str(text)[-1] for text in found[4:]) == ["0", "1", "2"]
    assert all(str(text).startswith("rare") for text in found[4:])
    assert pool.lexical_matches.tolist() == [1] * 7
    rescued = pool.lexical_scores.tolist()[4:]
    assert rescued == sorted(rescued)


async def check_vector_channel_is_the_most_similar_first(store: Store) -> None:
    """The request.size most similar to the query apart from the scope's common
    direction (``vocabulary.apart_from_common`` over the scope's searchable vectors),
    best first, each with its plain cosine to the query; only families with a vector
    channel, only with a query vector.

    Most of these records lie along one direction, as a chat's turns share its
    people's names: the greetings are the nearest by the plain cosine, and the record
    that says what the query says beyond that ("pottery") is the nearest apart from it.
    """
    entries = [MemoryEntry(text=text) for text in _COMMON_TEXTS]
    vectors = np.stack([unit(*values) for values in _COMMON_VECTORS])
    await memories(store, "s", entries, vectors)
    asked = unit(*_COMMON_QUERY)
    query = PoolRequest(analyse_query("compass"), asked, 3)
    pool = await store.retrieve("memory", "s", query)
    assert await texts(store, keys_of(pool.vector_keys)) == ["pottery", "hello", "hi"]
    cosines = [float(vectors[n] @ asked) for n in (3, 0, 1)]
    similarities = pool.vector_similarities.tolist()
    assert np.allclose(similarities, cosines, atol=1e-6), (similarities, cosines)
    assert cosines[0] < cosines[1]  # by the plain cosine "hello" is the nearer
    assert len(pool.lexical_keys) == 0
    none = await store.retrieve("memory", "s", PoolRequest(analyse_query("hello"), None, 3))
    assert len(none.vector_keys) == 0
    assert len(none.lexical_keys) == 1
    await records(store, "experience", "s", [Experience("east", "east", "east", "east")])
    experience = await store.retrieve("experience", "s", query)
    assert len(experience.vector_keys) == 0


#: Five records most of which lie along one direction, and a query mostly along it too:
#: by the plain cosine the greetings are nearest, apart from the common direction the
#: record that says what the query says beyond it ("pottery").
_COMMON_TEXTS: Final = ("hello", "hi", "thanks", "pottery", "hiking")
_COMMON_VECTORS: Final = (
    (1, 0.1, 0, 0, 0),
    (1, 0, 0.3, 0, 0),
    (1, 0, 0, 0, 0.2),
    (0.5, 0, 0, 1, 0),
    (0.5, 0, 0, 0, 1),
)
_COMMON_QUERY: Final = (1, 0, 0, 0.35, 0)


async def check_time_channel_ranks_a_days_records_as_the_vector_channel_does(
    store: Store,
) -> None:
    """The records said on the day a question names are ranked by their similarity to
    the query apart from the scope's common direction (``apart_from_common``), as the
    vector channel ranks them, not by the plain cosine."""
    entries = [turn(f"Ana: {text}", minute) for minute, text in enumerate(_COMMON_TEXTS)]
    vectors = np.stack([unit(*values) for values in _COMMON_VECTORS])
    await memories(store, "s", entries, vectors)
    asked = PoolRequest(analyse_query("What on 8 May 2023?"), unit(*_COMMON_QUERY), 20)
    pool = await store.retrieve("memory", "s", asked)
    found = await texts(store, keys_of(pool.time_keys))
    assert found == [f"Ana: {text}" for text in ("pottery", "hello", "hi", "thanks", "hiking")]


async def check_time_channel_finds_what_was_said_on_a_named_day(store: Store) -> None:
    """ "on 7 May 2023" finds what was said on 8 May (a day's margin), not a week later
    nor an undated remark; ``time_matched`` counts the window's records."""
    await remember(
        store,
        "s",
        [
            turn("Alice: I went to a pottery class", 0),
            turn("Alice: the weather is nice", 60 * 24 * 7, thread="t2"),
            MemoryEntry(text="Alice: undated remark"),
        ],
    )
    pool = await search(store, "What did Alice do on 7 May 2023?")
    assert await texts(store, keys_of(pool.time_keys)) == ["Alice: I went to a pottery class"]
    assert pool.time_matched == 1
    plain = await search(store, "pottery class")
    assert (len(plain.time_keys), plain.time_matched) == (0, 0)


async def check_yesterday_is_the_day_before_today_in_a_live_scope(store: Store) -> None:
    await _yesterday(store, vector=True)


async def check_yesterday_is_the_day_before_today_without_a_vector(store: Store) -> None:
    await _yesterday(store, vector=False)


async def _yesterday(store: Store, *, vector: bool) -> None:
    """In a live scope (its newest record said within a month of now) a relative date
    is seen from today; a record whose own text names that day comes first; at most
    ``size // 4``."""
    await remember(
        store,
        "s",
        [
            turn("Bob: started reading a novel", 0),  # 8 May: outside the window
            turn("Bob: went hiking", 60 * 24 * 3, thread="t2"),  # 11 May
            turn("Bob: I baked bread yesterday", 60 * 24 * 4 - 60 * 4, thread="t3"),  # names 11 May
            turn("Bob: quiet day", 60 * 24 * 4, thread="t4"),  # 12 May, the newest
        ],
    )
    now = MAY_8 + timedelta(days=4, hours=8)  # 12 May, 21:00: the scope is live
    pool = await search(store, "What did Bob do yesterday?", vector=vector, now=now)
    found = await texts(store, keys_of(pool.time_keys))
    assert found[0] == "Bob: I baked bread yesterday"
    assert sorted(map(str, found[1:])) == ["Bob: quiet day", "Bob: went hiking"]
    assert pool.time_matched == 3
    if not vector:  # without a vector: nearest the middle of the window (11 May noon) first
        assert found[1:] == ["Bob: went hiking", "Bob: quiet day"]
    small = await search(store, "What did Bob do yesterday?", size=4, vector=vector, now=now)
    assert await texts(store, keys_of(small.time_keys)) == ["Bob: I baked bread yesterday"]
    assert small.time_matched == 3


async def check_relative_dates_select_nothing_in_a_scope_that_is_not_live(store: Store) -> None:
    """A scope last written more than a month before now (or a request with no clock)
    gives a relative date no window; an absolute date still selects its day."""
    await remember(
        store,
        "s",
        [
            turn("Bob: went hiking", 60 * 24 * 3, thread="t2"),  # 11 May
            turn("Bob: quiet day", 60 * 24 * 4, thread="t4"),  # 12 May, the newest
        ],
    )
    later = MAY_8 + timedelta(days=4 + 31, hours=1)
    for now in (later, None):
        stale = await search(store, "What did Bob do yesterday?", now=now)
        assert len(stale.time_keys) == 0
        assert stale.time_matched == 0
    absolute = await search(store, "What did Bob do on 11 May 2023?", now=later)
    found = await texts(store, keys_of(absolute.time_keys))  # 11 May, a day's margin
    assert sorted(map(str, found)) == ["Bob: quiet day", "Bob: went hiking"]
    live = await search(store, "What did Bob do yesterday?", now=later - timedelta(days=2))
    assert len(live.time_keys) == 0  # "yesterday" of 10 June: nothing said then


async def check_a_month_a_memory_names_belongs_to_that_month_not_to_its_days(
    store: Store,
) -> None:
    """ "We moved last month" said on 8 May names April: a question about April finds
    it ahead of what was said in April; a question about 12 April does not."""
    await remember(
        store,
        "s",
        [
            turn("Ann: we moved house last month", 0),  # 8 May: names April
            turn("Ann: lovely weather", -60 * 24 * 20, thread="t2"),  # 18 April
        ],
    )
    month = await search(store, "What did Ann do in April 2023?", vector=False)
    assert await texts(store, keys_of(month.time_keys)) == [
        "Ann: we moved house last month",
        "Ann: lovely weather",
    ]
    day = await search(store, "What did Ann do on 12 April 2023?", vector=False)
    assert await texts(store, keys_of(day.time_keys)) == []


async def check_a_record_naming_the_day_is_found_days_later(store: Store) -> None:
    """ "I donated blood last Saturday" said on Friday 12 May names 6 May: "on 6 May"
    finds it, ahead of what was said that day."""
    await remember(
        store,
        "s",
        [
            turn("Alice: chatting about lunch", 60 * 24 * -2),  # said on 6 May
            turn("Alice: I donated blood last Saturday", 60 * 24 * 4),  # said on 12 May
            turn("Alice: the weather is nice", 60 * 24 * 3),  # 11 May: neither
        ],
    )
    pool = await search(store, "What did Alice do on 6 May 2023?")
    assert await texts(store, keys_of(pool.time_keys)) == [
        "Alice: I donated blood last Saturday",
        "Alice: chatting about lunch",
    ]


async def check_neighbours_stay_in_their_thread(store: Store) -> None:
    """A record's neighbours are the records just before and after it in its own
    thread (up to ``reach`` on each side, nearest first), by created_at then
    insertion; other threads, families and forgotten records never appear; a record
    without a thread has none."""
    refs = await remember(
        store,
        "s",
        [
            turn("first", 0),
            turn("other thread", 1, thread="t2"),
            turn("third", 2),  # written before "second" but said later
            turn("second", 1),
            turn("no thread", 1, thread=None),
            turn("fourth", 3),
            MemoryEntry(text="undated", thread="t3"),
            MemoryEntry(text="undated too", thread="t3"),
        ],
    )
    written = await every_key(store)
    key = dict(zip(await texts(store, written), written, strict=True))
    around = await store.neighbours(
        "memory", "s", [key["second"], key["first"], key["no thread"], key["fourth"]]
    )
    assert around == {
        key["second"]: ThreadNeighbours((key["first"],), (key["third"],)),
        key["first"]: ThreadNeighbours((), (key["second"],)),
        key["fourth"]: ThreadNeighbours((key["third"],), ()),
    }
    assert (await store.neighbours("memory", "s", [key["undated"]]))[
        key["undated"]
    ] == ThreadNeighbours((), (key["undated too"],))
    # Two places each way, nearest first; a thread's edge gives fewer.
    around = await store.neighbours("memory", "s", [key["second"], key["fourth"]], reach=2)
    assert around == {
        key["second"]: ThreadNeighbours((key["first"],), (key["third"], key["fourth"])),
        key["fourth"]: ThreadNeighbours((key["third"], key["second"]), ()),
    }
    await store.forget_memory(refs[2])  # "third"
    around = await store.neighbours("memory", "s", [key["second"], key["third"]])
    assert around == {key["second"]: ThreadNeighbours((key["first"],), (key["fourth"],))}
    around = await store.neighbours("memory", "s", [key["first"]], reach=3)
    assert around == {key["first"]: ThreadNeighbours((), (key["second"], key["fourth"]))}
    assert await store.neighbours("experience", "s", [key["second"]]) == {}


async def check_turns_without_a_thread_are_the_scopes_conversation(store: Store) -> None:
    """A conversation turn written without a thread ("Name: text", at most three words
    and no digit before the colon, a phone number: "+44 7700 900123: text", a user
    name: "kate_92: text", or a placeholder and a number: "User 2: text") has the
    scope's other turns without a thread said within a day of it as its neighbours, by
    created_at then insertion; threaded records, records that are no turn (a date
    before the colon), turns said days apart, other scopes and forgotten turns never
    appear, and a record that is no turn has none."""
    refs = await remember(
        store,
        "s",
        [
            turn("Ana: first", 0, thread=None),
            turn("Bo: threaded", 1, thread="t1"),
            turn("a note without a speaker", 1.5, thread=None),
            turn("Dr Ana Lima: third", 3, thread=None),  # written before the second
            turn("Bo: second", 2, thread=None),
            turn("At 10: not a turn", 2.5, thread=None),
            turn("Ana: fourth", 4, thread=None),
            turn("2023-05-07: a dated note", 4.5, thread=None),
            turn("+44 7700 900123: fifth", 5, thread=None),
            turn("kate_92: sixth", 5.5, thread=None),
            turn("User 2: seventh", 5.6, thread=None),
            turn("Q3: a code, no speaker", 5.7, thread=None),
            turn("Step 2: a step, no speaker", 5.8, thread=None),
            turn("Bo: two days later", 60 * 24 * 2, thread=None),
        ],
    )
    await remember(store, "other", [turn("Ana: elsewhere", 2.2, thread=None)])
    written = await every_key(store)
    key = dict(zip(await texts(store, written), written, strict=True))
    asked = ["Bo: second", "Ana: first", "a note without a speaker", "At 10: not a turn"]
    around = await store.neighbours("memory", "s", [key[text] for text in asked], reach=2)
    assert around == {
        key["Bo: second"]: ThreadNeighbours(
            (key["Ana: first"],), (key["Dr Ana Lima: third"], key["Ana: fourth"])
        ),
        key["Ana: first"]: ThreadNeighbours((), (key["Bo: second"], key["Dr Ana Lima: third"])),
    }
    later = await store.neighbours("memory", "s", [key["Bo: two days later"]], reach=2)
    assert later == {key["Bo: two days later"]: ThreadNeighbours((), ())}
    fourth, phone = key["Ana: fourth"], key["+44 7700 900123: fifth"]
    last = await store.neighbours("memory", "s", [fourth, phone, key["2023-05-07: a dated note"]])
    handle, user = key["kate_92: sixth"], key["User 2: seventh"]
    code, step = key["Q3: a code, no speaker"], key["Step 2: a step, no speaker"]
    assert last == {
        fourth: ThreadNeighbours((key["Dr Ana Lima: third"],), (phone,)),
        phone: ThreadNeighbours((fourth,), (handle,)),
    }
    assert await store.neighbours("memory", "s", [handle, user, code, step]) == {
        handle: ThreadNeighbours((phone,), (user,)),
        user: ThreadNeighbours((handle,), ()),
    }
    assert (await store.neighbours("memory", "s", [key["Bo: threaded"]])) == {
        key["Bo: threaded"]: ThreadNeighbours((), ())
    }
    await store.forget_memory(refs[4])  # "Bo: second"
    around = await store.neighbours("memory", "s", [key["Ana: first"]])
    assert around == {key["Ana: first"]: ThreadNeighbours((), (key["Dr Ana Lima: third"],))}


async def check_neighbours_pass_over_turns_that_say_nothing(store: Store) -> None:
    """A read of neighbours passes over the records whose text says nothing
    (``vocabulary.passed_over``: "Bo: lol", "Bo: <Media omitted>", "Ana: hahahah", a
    link shared alone or an app's reaction quoting a message, however long), in a thread
    and in the scope's turns without one alike: the nearest turns that say something are
    the neighbours, and a turn that says nothing has them too."""
    link = "Bo: https://open.spotify.com/track/4cOdK2wGLETKBW3PvgPWqT?si=" + "a1b2c3d4" * 8
    loved = "Ana: Loved \u201c" + "what a lovely little cat you have there " * 3 + "\u201d"
    said = [
        "Ana: we adopted a cat", "Bo: lol", "Bo: <Media omitted>", link,
        "Bo: what is its name?", "Ana: haha", "Ana: hahahah", loved,
        "Ana: Miso, after the soup", "Bo: ok",
    ]  # fmt: skip
    await remember(store, "s", [turn(text, n) for n, text in enumerate(said)])
    await remember(store, "u", [turn(text, n, thread=None) for n, text in enumerate(said)])
    for scope in ("s", "u"):
        written = await every_key(store, scope)
        key = dict(zip(await texts(store, written, scope=scope), written, strict=True))
        cat, name, miso = key[said[0]], key[said[4]], key[said[8]]
        asked = [cat, key["Bo: lol"], name, miso]
        around = await store.neighbours("memory", scope, asked)
        assert around == {
            cat: ThreadNeighbours((), (name,)),
            key["Bo: lol"]: ThreadNeighbours((cat,), (name,)),
            name: ThreadNeighbours((cat,), (miso,)),
            miso: ThreadNeighbours((name,), ()),
        }, scope
        around = await store.neighbours("memory", scope, [cat, miso], reach=2)
        assert around == {
            cat: ThreadNeighbours((), (name, miso)),
            miso: ThreadNeighbours((name, cat), ()),
        }, scope


# -- erasing ----------------------------------------------------------------------------


async def check_erase_removes_every_version_of_an_entry(store: Store) -> None:
    """Erasing an entry removes every version: none is readable (the message says it was
    erased), none is in any channel, evidence, neighbours or the counts, and the other
    records of the scope stay as they were."""
    kept = turn("Bob: the kestrel harbour trip", 0)
    (ref, other) = await remember(store, "s", [turn("Alice: kestrel lantern on 9 May", 1), kept])
    old_key = keys_of((await search(store, "lantern")).lexical_keys)
    v2 = await store.update_memory(
        ref, turn("Alice: kestrel lantern again", 2), await EMBEDDER.embed(["lantern again"])
    )
    keys = every_key_of(await search(store, "kestrel lantern"))
    assert await store.erase("memory", "s", ref.entry_id) == 2
    for version in (ref, v2):
        with raises(NotFoundError, match="erased"):
            await store.get_memory(version)
    pool = await search(store, "kestrel lantern on 8 May", now=MAY_8)
    found = sorted({*every_key_of(pool), *keys_of(pool.time_keys)})
    assert await texts(store, found) == [kept.text]
    assert pool.scope_rows == 1
    assert set(await store.evidence("memory", "s", [*keys, *old_key])) <= set(every_key_of(pool))
    assert await store.neighbours("memory", "s", keys) == {
        key: ThreadNeighbours() for key in keys if key in every_key_of(pool)
    }
    assert (await store.get_memory(other)).text == kept.text
    assert await store.scope_counts() == {"s": {"memory": 1}}


async def check_an_erased_key_is_free_again(store: Store) -> None:
    """Unlike after a forget, the same key and content written after an erase is a new
    entry at version 1, searchable, as if never written."""
    entry = MemoryEntry(text="kestrel password is hunter2", key="k")
    (ref,) = await remember(store, "s", [entry])
    await store.forget_memory(ref)
    assert await store.erase("memory", "s", ref.entry_id) == 1
    (again,) = await remember(store, "s", [entry])
    assert again.entry_id != ref.entry_id
    assert again.version == 1
    assert await texts(store, keys_of((await search(store, "kestrel")).lexical_keys)) == [
        entry.text
    ]
    assert (await store.get_memory(again)).key == "k"
    with raises(NotFoundError, match="erased"):
        await store.get_memory(ref)


async def check_erasing_nothing_returns_zero(store: Store) -> None:
    """An unknown scope or record, or one erased already, erases nothing, returns 0 and
    leaves the scope's version as it was."""
    (ref,) = await remember(store, "s", ["kestrel"])
    assert await store.erase("memory", "nowhere", ref.entry_id) == 0
    assert await store.erase("memory", "s", "no-such-entry") == 0
    assert await store.erase("experience", "s", ref.entry_id) == 0
    assert await store.erase("profile", "s", None) == 0
    assert await store.erase_scope("nowhere") == 0
    assert await store.erase("memory", "s", ref.entry_id) == 1
    version = store.scope_version("s")
    assert await store.erase("memory", "s", ref.entry_id) == 0
    assert store.scope_version("s") == version
    with raises(NotFoundError, match="no version"):
        await store.get_memory(MemoryRef("s", "no-such-entry", 1))


async def check_erase_reaches_every_family(store: Store) -> None:
    """An experience, a topic memory with two revisions, a resource with two (its body
    too) and the profile are each erased whole, with their count of versions."""
    vectors = await EMBEDDER.embed(["x"])
    (exp,) = await records(store, "experience", "s", [Experience("kestrel", "b", "c", "d")])
    for text in ("first", "second"):
        (topic,) = await records(
            store, "topic-memory", "s", [TopicMemory("kestrel", text)], vectors
        )
    for body in ("old", "new"):
        (doc,) = await records(
            store, "resource", "s", [Resource("docs/k.md", body, "kestrel guide")], vectors
        )
    await set_profile(store, "s", Profile("kestrel admin"))
    assert await store.erase("experience", "s", exp.id) == 1
    assert await store.erase("topic-memory", "s", topic.id) == 2
    assert await store.erase("resource", "s", doc.id) == 2
    assert await store.erase("profile", "s", None) == 1
    for family in ("experience", "topic-memory", "resource"):
        assert every_key_of(await search(store, "kestrel guide", family=family)) == []
    assert await store.read_resource_bodies("s", ["docs/k.md"]) == {}
    assert await store.get_profile("s") is None
    assert await store.scope_counts() == {}
    (back,) = await records(store, "resource", "s", [Resource("docs/k.md", "b", "k")], vectors)
    assert back.revision == 1  # the URI starts afresh: its revisions were erased


async def check_erase_keeps_the_scopes_statistics_right(store: Store) -> None:
    """After an erase the scope ranks as if the record had never been written: the same
    BM25 scores, term counts and pool as a scope written without it."""
    texts_kept = ["kestrel harbour", "kestrel lantern festival", "bread and lantern"]
    await remember(store, "s", texts_kept[:2])
    (gone,) = await remember(store, "s", ["kestrel lantern lantern zephyr"])
    await remember(store, "s", texts_kept[2:])
    await remember(store, "t", texts_kept)
    assert await store.erase("memory", "s", gone.entry_id) == 1
    erased = await search(store, "kestrel lantern zephyr", scope="s")
    fresh = await search(store, "kestrel lantern zephyr", scope="t")
    assert np.allclose(erased.lexical_scores, fresh.lexical_scores), "BM25 after an erase"
    assert list(erased.lexical_matches) == list(fresh.lexical_matches)
    assert await texts(store, keys_of(erased.lexical_keys)) == await texts(
        store, keys_of(fresh.lexical_keys), scope="t"
    )
    assert erased.scope_rows == fresh.scope_rows == 3


async def check_erase_scope_removes_every_record_of_every_family(store: Store) -> None:
    """erase_scope removes every record of the scope (a record counts once, the profile
    once), leaves other scopes alone, moves the version, and the scope can be written
    to again."""
    vectors = await EMBEDDER.embed(["x"])
    refs = await remember(store, "s", [turn("kestrel one", 0), turn("kestrel two", 1)])
    await store.update_memory(refs[0], MemoryEntry(text="kestrel one b"), vectors)
    await store.forget_memory(refs[1])
    await records(store, "experience", "s", [Experience("kestrel", "b", "c", "d")])
    await records(store, "topic-memory", "s", [TopicMemory("kestrel", "x")], vectors)
    await records(store, "resource", "s", [Resource("u", "body", "kestrel")], vectors)
    await set_profile(store, "s", Profile("p"))
    (elsewhere,) = await remember(store, "t", ["kestrel elsewhere"])
    version = store.scope_version("s")
    assert await store.erase_scope("s") == 6
    assert store.scope_version("s") != version
    for ref in refs:
        with raises(NotFoundError, match="erased"):
            await store.get_memory(ref)
    for family in ("memory", "experience", "topic-memory", "resource"):
        assert every_key_of(await search(store, "kestrel", family=family)) == []
    assert await store.get_profile("s") is None
    assert await store.read_resource_bodies("s", ["u"]) == {}
    assert await store.scope_counts() == {"t": {"memory": 1}}
    assert (await store.get_memory(elsewhere)).text == "kestrel elsewhere"
    assert await store.erase_scope("s") == 0
    (new,) = await remember(store, "s", ["kestrel again"])
    assert await texts(store, keys_of((await search(store, "kestrel")).lexical_keys)) == [
        "kestrel again"
    ]
    assert (await store.get_memory(new)).text == "kestrel again"


async def check_erased_keys_are_never_given_again(store: Store) -> None:
    """Records written after an erase get keys no erased version had: a pool read before
    the erase can never name a new record."""
    refs = await remember(store, "s", ["kestrel one", "kestrel two"])
    before = every_key_of(await search(store, "kestrel"))
    assert await store.erase("memory", "s", refs[1].entry_id) == 1
    await remember(store, "s", ["kestrel three", "kestrel four"])
    after = every_key_of(await search(store, "kestrel"))
    assert len(after) == 3
    assert (set(after) - set(before)).isdisjoint(before)


# -- write versions, embedders, closing -------------------------------------------------


# -- listing ----------------------------------------------------------------------------


async def listed(
    store: Store,
    scope: str = "s",
    families: Sequence[Family] = FAMILIES,
    *,
    include_forgotten: bool = False,
    before: int | None = None,
    limit: int = 1000,
) -> list[ListedRecord]:
    """One page of ``store.list_records``, checked to be newest first."""
    page = list(
        await store.list_records(
            scope, families, include_forgotten=include_forgotten, before=before, limit=limit
        )
    )
    assert len(page) <= limit, f"{len(page)} records on a page of {limit}"
    places = [record.place for record in page]
    assert places == sorted(places, reverse=True), f"not newest first: {places}"
    assert len(set(places)) == len(places), f"a place twice: {places}"
    return page


def named(page: Sequence[ListedRecord]) -> list[tuple[str, str | None, int | None]]:
    """Each listed record's family, id and version, in page order."""
    return [(record.family, record.record_id, record.version) for record in page]


async def check_a_listing_shows_each_record_once_as_its_newest_version(store: Store) -> None:
    """Every record of every family once, as its newest version, newest record first
    (an update keeps a record's place), the profile last; each family's columns as
    written; a scope holding nothing lists nothing."""
    vectors = await EMBEDDER.embed(["x"])
    said = MAY_8 + timedelta(hours=1)
    first, second = await remember(
        store, "s", [MemoryEntry("kestrel", tags=("bird",), created_at=said, key="k1"), "owl"]
    )
    (lesson,) = await records(store, "experience", "s", [Experience("a", "b", "c", "d")])
    (note,) = await records(store, "topic-memory", "s", [TopicMemory("birds", "one")], vectors)
    await records(store, "topic-memory", "s", [TopicMemory("birds", "two")], vectors)
    await records(store, "resource", "s", [Resource("u", "body", "abstract", "overview")], vectors)
    await records(store, "resource", "s", [Resource("u", "body two", "abstract two")], vectors)
    await set_profile(store, "s", Profile("the profile"))
    newer = await store.update_memory(first, MemoryEntry("kestrel two"), vectors)
    page = await listed(store)
    assert named(page) == [
        ("resource", "u", 2), ("topic-memory", note.id, 2), ("experience", lesson.id, 1),
        ("memory", second.entry_id, 1), ("memory", first.entry_id, newer.version),
        ("profile", None, None),
    ], named(page)  # fmt: skip
    resource, topic, experience, owl, kestrel, profile = page
    assert (resource.columns.uri, resource.columns.abstract) == ("u", "abstract two")
    assert resource.columns.overview is None
    assert topic.columns.text == topic_text(TopicMemory("birds", "two"))
    assert experience.columns.text == experience_text(Experience("a", "b", "c", "d"))
    assert (owl.columns.text, owl.columns.key) == ("owl", None)
    assert (kestrel.columns.text, kestrel.columns.key) == ("kestrel two", "k1")
    assert profile.columns.text == "the profile"
    assert profile.place == 0 < kestrel.place
    assert not any(record.forgotten for record in page)
    (old,) = await listed(store, families=["memory"], before=owl.place)
    assert old.place == kestrel.place
    await remember(store, "t", [MemoryEntry("dated", tags=("x", "y"), created_at=said)])
    (dated,) = await listed(store, "t")
    assert (dated.columns.created_at, dated.columns.tags) == (said, ("x", "y"))
    assert await listed(store, "nowhere") == []


async def check_a_listing_filters_by_family_and_shows_forgotten_only_when_asked(
    store: Store,
) -> None:
    """One family lists only its records; a forgotten entry appears, marked, only with
    include_forgotten; an erased record never appears; neither does another scope's."""
    vectors = await EMBEDDER.embed(["x"])
    kept, gone, erased = await remember(store, "s", ["kept", "forgotten", "erased"])
    await records(store, "topic-memory", "s", [TopicMemory("t", "x")], vectors)
    await remember(store, "other", ["elsewhere"])
    await store.forget_memory(gone)
    await store.erase("memory", "s", erased.entry_id)
    assert named(await listed(store, families=["memory"])) == [("memory", kept.entry_id, 1)]
    with_forgotten = await listed(store, families=["memory"], include_forgotten=True)
    assert named(with_forgotten) == [("memory", gone.entry_id, 1), ("memory", kept.entry_id, 1)]
    assert [record.forgotten for record in with_forgotten] == [True, False]
    assert [record.family for record in await listed(store)] == ["topic-memory", "memory"]
    assert await listed(store, families=["profile"]) == []
    everything = await listed(store, include_forgotten=True)
    assert erased.entry_id not in [record.record_id for record in everything]


async def check_a_cursor_walk_neither_skips_nor_repeats_a_record(store: Store) -> None:
    """Paging by the last place seen while records are written, updated, forgotten and
    erased between pages lists every record that stays exactly once and none written
    after the walk began; pages beyond the last are empty."""
    vectors = await EMBEDDER.embed(["x"])
    refs = await remember(store, "s", [f"entry {n}" for n in range(24)])
    by_id = {ref.entry_id: ref for ref in refs}
    seen: list[str] = []
    erased: set[str] = set()
    written_later: set[str] = set()
    before: int | None = None
    for step in range(100):
        page = await listed(store, include_forgotten=True, before=before, limit=5)
        if not page:
            break
        seen.extend(str(record.record_id) for record in page)
        before = page[-1].place
        unseen = [ref for ref in refs if ref.entry_id not in {*seen, *erased}]
        later = await remember(store, "s", [f"later {step}"])
        written_later.update(ref.entry_id for ref in later)
        if len(unseen) > 3:
            await store.update_memory(unseen[0], MemoryEntry(f"updated {step}"), vectors)
            await store.forget_memory(unseen[1])
            await store.erase("memory", "s", unseen[2].entry_id)
            erased.add(unseen[2].entry_id)
        await store.erase("memory", "s", seen[-1])  # one already listed: no effect
        erased.add(seen[-1])
    assert len(seen) == len(set(seen)), "a record was listed twice"
    assert not written_later & set(seen), "a record written during the walk was listed"
    stayed = [ref.entry_id for ref in refs if ref.entry_id not in erased]
    assert set(stayed) <= set(seen), "a record that stayed was skipped"
    assert set(seen) <= set(by_id)
    assert [by_id[entry_id] for entry_id in seen] == sorted(
        (by_id[entry_id] for entry_id in seen), key=refs.index, reverse=True
    )


async def check_scope_writes_date_every_scope_that_holds_anything(store: Store) -> None:
    """A scope is dated by its last write (UTC, between the write's start and end),
    stays listed when every entry in it is forgotten, and leaves with erase_scope."""
    assert dict(await store.scope_writes()) == {}
    start = datetime.now(UTC)
    (ref,) = await remember(store, "s", ["kestrel"])
    await set_profile(store, "p", Profile("only a profile"))
    written = await store.scope_writes()
    assert set(written) == {"s", "p"}
    when = written["s"]
    assert when is not None
    assert start <= when <= datetime.now(UTC), when
    await store.forget_memory(ref)
    after = (await store.scope_writes())["s"]
    assert after is not None
    assert after >= when
    await store.erase_scope("p")
    assert set(await store.scope_writes()) == {"s"}


async def check_every_write_moves_the_scope_version_and_reads_do_not(store: Store) -> None:
    """Each write method changes its scope's version (and no other scope's); reads and
    searches leave it; a pool carries the version it was read at."""
    seen = [store.scope_version("s")]
    other = store.scope_version("t")
    vectors = await EMBEDDER.embed(["x"])

    async def wrote() -> None:
        version = store.scope_version("s")
        assert version not in seen
        seen.append(version)

    (ref,) = await remember(store, "s", ["kestrel"])
    await wrote()
    ref = await store.update_memory(ref, MemoryEntry(text="kestrel two"), vectors)
    await wrote()
    await records(store, "experience", "s", [Experience("a", "b", "c", "d")])
    await wrote()
    await records(store, "topic-memory", "s", [TopicMemory("t", "x")], vectors)
    await wrote()
    await records(store, "resource", "s", [Resource("u", "body", "abstract")], vectors)
    await wrote()
    await set_profile(store, "s", Profile("p"))
    await wrote()
    await store.forget_memory(ref)
    await wrote()
    await store.erase("resource", "s", "u")
    await wrote()
    await store.erase_scope("gone")  # erasing nothing writes nothing
    assert store.scope_version("gone") == 0
    pool = await search(store, "kestrel", family="topic-memory")
    assert pool.version == seen[-1]
    await store.get_memory(ref)
    await store.get_profile("s")
    await store.read_resource_bodies("s", ["u"])
    await store.evidence("topic-memory", "s", keys_of(pool.vector_keys))
    await store.neighbours("memory", "s", [1, 2])
    await store.scope_counts()
    await store.scope_writes()
    await store.list_records("s", FAMILIES, include_forgotten=True, before=None, limit=10)
    assert store.scope_version("s") == seen[-1]
    assert store.scope_version("t") == other


async def check_holds_nothing_only_where_a_retrieve_finds_nothing(store: Store) -> None:
    """A store that tells which families a scope holds nothing of (``EmptyFamilies``)
    says so of every family of a scope never written, of every family but the one
    written, and of a family again once its last entry is forgotten, each where a
    retrieve finds nothing; never of a family a retrieve finds something in, and never
    once closed. A store without it has nothing to check."""
    if not isinstance(store, EmptyFamilies):
        return
    searchable: tuple[Family, ...] = ("memory", "experience", "topic-memory", "resource")
    assert all(store.holds_nothing(family, "s") for family in searchable)
    (ref,) = await remember(store, "s", ["kestrel rotation"])
    assert not store.holds_nothing("memory", "s")
    assert (await search(store, "kestrel")).retrieved > 0
    for family in searchable[1:]:
        assert store.holds_nothing(family, "s"), family
        assert (await search(store, "kestrel", family=family)).retrieved == 0, family
    assert store.holds_nothing("memory", "elsewhere")
    assert await store.forget_memory(ref) is True
    assert store.holds_nothing("memory", "s")
    assert (await search(store, "kestrel")).retrieved == 0
    await remember(store, "s", ["kestrel again"])
    await store.aclose()
    assert not store.holds_nothing("experience", "s")  # a closed store cannot tell


async def check_bind_embedder_refuses_another_embedder(store: Store) -> None:
    """Until a vector is written any embedder is accepted; then only the one that
    built the vectors (same fingerprint and dimension)."""
    await records(store, "experience", "s", [Experience("a", "b", "c", "d")])  # no vectors
    await store.bind_embedder("other/8", 8)
    await store.bind_embedder("mine/4", 4)
    await memories(store, "s", [MemoryEntry(text="x")], np.stack([unit(1, 0, 0, 0)]))
    await store.bind_embedder("mine/4", 4)
    with raises(StoreError):
        await store.bind_embedder("other/4", 4)
    with raises(StoreError):
        await store.bind_embedder("other/8", 8)


async def check_calls_after_aclose_raise_store_error(store: Store) -> None:
    """aclose is idempotent; every later read and write raises StoreError."""
    ref, _ = await remember(store, "s", [turn("kestrel", 0), turn("next", 1)])
    await records(store, "resource", "s", [Resource("u", "body", "a")], await EMBEDDER.embed(["a"]))
    await set_profile(store, "s", Profile("p"))
    keys = await every_key(store)
    await store.aclose()
    await store.aclose()
    vectors = await EMBEDDER.embed(["x"])
    calls: list[Callable[[], Awaitable[object]]] = [
        lambda: remember(store, "s", ["x"]),
        lambda: store.update_memory(ref, MemoryEntry(text="x"), vectors),
        lambda: store.forget_memory(ref),
        lambda: store.get_memory(ref),
        lambda: records(store, "experience", "s", [Experience("a", "b", "c", "d")]),
        lambda: records(store, "topic-memory", "s", [TopicMemory("t", "x")], vectors),
        lambda: records(store, "resource", "s", [Resource("v", "b")], vectors),
        lambda: set_profile(store, "s", Profile("q")),
        lambda: store.get_profile("s"),
        lambda: store.read_resource_bodies("s", ["u"]),
        lambda: search(store, "kestrel"),
        lambda: store.neighbours("memory", "s", keys),
        lambda: store.evidence("memory", "s", keys),
        lambda: store.bind_embedder("hashing-v1/64", 64),
        lambda: store.scope_counts(),
        lambda: store.scope_writes(),
        lambda: store.list_records("s", FAMILIES, include_forgotten=True, before=None, limit=9),
        lambda: store.erase("memory", "s", ref.entry_id),
        lambda: store.erase_scope("s"),
    ]
    for call in calls:
        with raises(StoreError):
            await call()


async def check_calls_without_io_raise_after_aclose_too(store: Store) -> None:
    """Even a call a store could answer without its backend raises once closed."""
    await remember(store, "s", ["kestrel"])
    keys = await every_key(store)
    await store.evidence("memory", "s", keys)  # may now be cached
    await store.aclose()
    calls: list[Callable[[], Awaitable[object]]] = [
        lambda: search(store, "kestrel", scope="nowhere"),
        lambda: store.get_profile("nowhere"),
        lambda: store.read_resource_bodies("s", []),
        lambda: store.evidence("memory", "s", keys),
    ]
    for call in calls:
        with raises(StoreError):
            await call()
    with raises(StoreError):
        store.scope_version("s")


def _checks() -> dict[str, Check]:
    """Every ``check_`` function of this module, by name without the prefix, in the
    order they are written."""
    return {
        name.removeprefix("check_"): value
        for name, value in globals().items()
        if name.startswith("check_") and callable(value)
    }


#: Every check of the contract, by name, in a reading order (writes, reads, search
#: channels, neighbours, erasure, versions, lifecycle).
CHECKS: Final[dict[str, Check]] = _checks()


async def check_store(
    open_store: Callable[[], Awaitable[Store]], *, skip: Collection[str] = ()
) -> None:
    """Run every check of :data:`CHECKS` but those named in ``skip``, each on a store
    ``open_store`` opens for it (open and empty), closed afterwards.

    Raises:
        AssertionError: the first check that fails, its name first.
        KeyError: ``skip`` names no check.
    """
    unknown = sorted(set(skip) - CHECKS.keys())
    if unknown:  # a misspelt name must not pass silently
        raise KeyError(f"no such check: {', '.join(unknown)}")
    for name, check in CHECKS.items():
        if name in skip:
            continue
        store = await open_store()
        try:
            await check(store)
        except AssertionError as error:
            raise AssertionError(f"{name}: {error}") from error
        finally:
            await store.aclose()
