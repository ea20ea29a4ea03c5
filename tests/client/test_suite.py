"""The public API, one test function each, run against ``open_runtime`` and against
``satchel.Client`` over a real ``satchel serve`` (on asyncio and trio): the same calls
give the same values and raise the same errors, and every pack the Client receives is
byte for byte the pack a Runtime over the same store prepares for the same request."""

from __future__ import annotations

import inspect
import uuid
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import attrs
import pytest

import satchel
from satchel._wire import compact_id

from ._serving import PREPARE_TIMEOUT, TOKEN, Server, running_server, twin_runtime

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterator

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

API = satchel.Runtime | satchel.Client


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with running_server(tmp_path_factory.mktemp("client-suite")) as running:
        yield running


@attrs.frozen
class Sides:
    """The API under test, and the Runtime over the same store its packs must equal."""

    api: API
    twin: satchel.Runtime

    async def prepare(self, request: satchel.PrepareContextRequest) -> satchel.PreparedContext:
        """``api``'s pack for ``request``, checked byte for byte against the twin's."""
        context = await self.api.prepare_context(request)
        expected = await self.twin.prepare_context(request)
        assert context == expected
        assert context.content == expected.content
        return context


@pytest.fixture(params=["runtime", "client"])
async def sides(request: pytest.FixtureRequest, server: Server) -> AsyncIterator[Sides]:
    async with twin_runtime(server) as twin:
        if request.param == "runtime":
            yield Sides(twin, twin)
            return
        async with satchel.Client(server.url, token=TOKEN) as client:
            yield Sides(client, twin)


def scope() -> str:
    """A scope of the test's own, holding ':' and '/' as scopes may."""
    return f"suite:{uuid.uuid4().hex[:8]}/notes"


AT = datetime(2024, 3, 4, 9, 30, 15, 123456, tzinfo=UTC)
ENTRIES = [
    satchel.MemoryEntry(
        text="The nightly backup runs at 02:00 UTC on the east cluster",
        kind="decision",
        tags=("ops", "backup"),
        created_at=AT,
        thread="t-1",
        key="backup",
    ),
    satchel.MemoryEntry(text="Restores of the east cluster take twenty minutes"),
    satchel.MemoryEntry(text="Ana prefers tea to coffee in the morning", kind="preference"),
]


def request_for(scope_id: str, query: str, **fields: object) -> satchel.PrepareContextRequest:
    return satchel.PrepareContextRequest(scope_id=scope_id, query=query, **fields)  # type: ignore[arg-type]


async def test_add_then_prepare_delivers_the_same_pack(sides: Sides) -> None:
    """Written entries come back cited in a pack identical to the Runtime's."""
    scope_id = scope()
    refs = await sides.api.add_memories(scope_id, ENTRIES)
    assert [ref.version for ref in refs] == [1, 1, 1]
    assert all(ref.scope_id == scope_id for ref in refs)
    context = await sides.prepare(request_for(scope_id, "when does the backup run?"))
    assert context.status == "ready"
    assert context.content is not None
    assert "02:00 UTC" in context.content
    cited = {item.citation.id for item in satchel.parse_context(context.content)}
    assert refs[0].entry_id in cited


async def test_every_request_field_reaches_the_service(sides: Sides) -> None:
    """Assembly, references, detail, exclude and max_bytes shape the pack alike."""
    scope_id, other = scope(), scope()
    refs = await sides.api.add_memories(scope_id, ENTRIES)
    await sides.api.add_memories(
        other, [satchel.MemoryEntry(text="The west cluster backs up at 03:00")]
    )
    cited = satchel.Citation("memory", scope_id, refs[0].entry_id, 1)
    request = request_for(
        scope_id,
        "cluster backup",
        max_bytes=1024,
        assembly=satchel.Assembly((satchel.Section("memory", 3),)),
        references=(other,),
        detail={"memory": "full"},
        exclude=(cited,),
    )
    context = await sides.prepare(request)
    assert context.content is not None
    assert context.content_bytes <= 1024
    assert "03:00" in context.content
    assert "02:00 UTC" not in context.content


async def test_explain_matches_prepare(sides: Sides) -> None:
    """explain_context's pack is prepare_context's, its receipts the Runtime's."""
    scope_id = scope()
    await sides.api.add_memories(scope_id, ENTRIES)
    request = request_for(scope_id, "east cluster backup")
    explained = await sides.api.explain_context(request)
    expected = await sides.twin.explain_context(request)
    assert explained == expected
    assert explained.context == await sides.prepare(request)
    assert explained.receipts
    assert all(isinstance(receipt, satchel.Receipt) for receipt in explained.receipts)


async def test_a_receipts_citation_is_the_packs(sides: Sides) -> None:
    """Each receipt cites exactly what the pack's item cites, id included, and that id
    is the one the pack's line writes."""
    scope_id = scope()
    await sides.api.add_memories(scope_id, ENTRIES)
    explained = await sides.api.explain_context(request_for(scope_id, "east cluster backup"))
    assert explained.context.content is not None
    items = satchel.parse_context(explained.context.content)
    assert [receipt.citation for receipt in explained.receipts] == [i.citation for i in items]
    for item in items:
        assert f'"{compact_id(str(item.citation.id))}"' in explained.context.content


async def test_an_id_as_a_pack_prints_it_names_the_same_entry(sides: Sides) -> None:
    """A ref or citation holding the 22-character id a pack prints reads, forgets and
    erases the entry its full id names; what comes back holds the full id, and a
    not-found message spells the id as the pack does."""
    scope_id = scope()
    [ref, other] = await sides.api.add_memories(scope_id, ENTRIES[:2])
    short = attrs.evolve(ref, entry_id=compact_id(ref.entry_id))
    assert len(short.entry_id) == 22
    assert (await sides.api.get_memory(short)).ref == ref
    await sides.api.forget_memory(short)
    cited = satchel.Citation("memory", scope_id, compact_id(other.entry_id), 1)
    assert await sides.api.erase(cited) == 1
    assert await sides.api.erase(short) == 1
    with pytest.raises(satchel.NotFoundError, match=repr(short.entry_id)):
        await sides.api.get_memory(ref)


async def test_an_empty_scope_is_the_empty_pack(sides: Sides) -> None:
    """A scope that holds nothing gives the normal empty result."""
    context = await sides.prepare(request_for(scope(), "anything at all"))
    assert context == satchel.PreparedContext.empty()


async def test_get_memory_reads_the_exact_version(sides: Sides) -> None:
    """get_memory returns the record with every field, dates to the microsecond."""
    scope_id = scope()
    refs = await sides.api.add_memories(scope_id, ENTRIES)
    record = await sides.api.get_memory(refs[0])
    assert record == await sides.twin.get_memory(refs[0])
    assert record.ref == refs[0]
    assert (record.text, record.kind, record.tags) == (
        ENTRIES[0].text,
        "decision",
        ("ops", "backup"),
    )
    assert record.created_at == AT
    assert (record.thread, record.key) == ("t-1", "backup")


async def test_a_keyed_write_is_idempotent(sides: Sides) -> None:
    """The same key and content returns the same ref; new content is a new version."""
    scope_id = scope()
    entry = satchel.MemoryEntry(text="Deploys freeze on Fridays", key="freeze")
    first = await sides.api.add_memories(scope_id, [entry])
    assert await sides.api.add_memories(scope_id, [entry]) == first
    changed = await sides.api.add_memories(
        scope_id, [satchel.MemoryEntry(text="Deploys freeze on Thursdays", key="freeze")]
    )
    assert changed[0].entry_id == first[0].entry_id
    assert changed[0].version == 2


async def test_forget_keeps_versions_readable_but_unserved(sides: Sides) -> None:
    """A forgotten entry is served no more and stays readable by its ref."""
    scope_id = scope()
    refs = await sides.api.add_memories(scope_id, ENTRIES[:1])
    await sides.api.forget_memory(refs[0])
    context = await sides.prepare(request_for(scope_id, "when does the backup run?"))
    assert context.status == "empty"
    assert (await sides.api.get_memory(refs[0])).text == ENTRIES[0].text


async def test_erase_removes_every_version(sides: Sides) -> None:
    """erase counts the versions it removed; afterwards the entry is not found."""
    scope_id = scope()
    refs = await sides.api.add_memories(scope_id, ENTRIES[:1])
    await sides.api.add_memories(
        scope_id, [attrs.evolve(ENTRIES[0], text="The backup moved to 04:00")]
    )
    assert await sides.api.erase(refs[0]) == 2
    with pytest.raises(satchel.NotFoundError, match="erased"):
        await sides.api.get_memory(refs[0])
    assert await sides.api.erase(refs[0]) == 0


async def test_erase_by_citation(sides: Sides) -> None:
    """A memory citation read off a pack erases its entry."""
    scope_id = scope()
    await sides.api.add_memories(scope_id, ENTRIES[:1])
    context = await sides.prepare(request_for(scope_id, "backup"))
    assert context.content is not None
    [item] = satchel.parse_context(context.content)
    assert await sides.api.erase(item.citation) == 1
    assert (await sides.prepare(request_for(scope_id, "backup"))).status == "empty"


async def test_erase_scope_counts_records(sides: Sides) -> None:
    """erase_scope removes every record of the scope and counts them."""
    scope_id = scope()
    await sides.api.add_memories(scope_id, ENTRIES)
    assert await sides.api.erase_scope(scope_id) == 3
    assert (await sides.prepare(request_for(scope_id, "backup"))).status == "empty"
    assert await sides.api.erase_scope(scope_id) == 0


async def test_deadline_for_is_the_services(sides: Sides) -> None:
    """deadline_for is the prepare deadline the options set (awaited on a Client)."""
    seconds = sides.api.deadline_for(request_for(scope(), "q"))
    if inspect.isawaitable(seconds):
        seconds = await seconds
    assert seconds == PREPARE_TIMEOUT


@pytest.mark.parametrize(
    ("fields", "named"),
    [({"max_bytes": 10}, "max_bytes"), ({"query": "   "}, "query"), ({"scope_id": ""}, "scope_id")],
)
async def test_a_bad_request_is_the_same_error(
    sides: Sides, fields: dict[str, object], named: str
) -> None:
    """A malformed prepare raises InvalidRequestError naming the field, on both."""
    request = request_for(**{"scope_id": scope(), "query": "q", **fields})  # type: ignore[arg-type]
    with pytest.raises(satchel.InvalidRequestError, match=f"^{named}"):
        await sides.api.prepare_context(request)
    with pytest.raises(satchel.InvalidRequestError, match=f"^{named}"):
        await sides.api.explain_context(request)
    with pytest.raises(
        satchel.InvalidRequestError, match=r"must be a satchel\.PrepareContextRequest"
    ):
        await sides.api.prepare_context({"scope_id": "s", "query": "q"})


async def test_a_bad_batch_writes_nothing(sides: Sides) -> None:
    """A batch with one bad entry is refused whole, naming the entry."""
    scope_id = scope()
    batch = [ENTRIES[1], satchel.MemoryEntry(text="")]
    with pytest.raises(satchel.InvalidRequestError, match=r"entries\[1\]\.text"):
        await sides.api.add_memories(scope_id, batch)
    assert (await sides.prepare(request_for(scope_id, "restores"))).status == "empty"


async def test_an_unknown_entry_is_not_found(sides: Sides) -> None:
    """get_memory of an entry or version that does not exist raises NotFoundError."""
    scope_id = scope()
    refs = await sides.api.add_memories(scope_id, ENTRIES[:1])
    with pytest.raises(satchel.NotFoundError):
        await sides.api.get_memory(attrs.evolve(refs[0], version=2))
    with pytest.raises(satchel.NotFoundError):
        await sides.api.get_memory(satchel.MemoryRef(scope_id, "0" * 32, 1))
    with pytest.raises(satchel.InvalidRequestError, match=r"must be a satchel\.MemoryRef"):
        await sides.api.get_memory("not a ref")  # type: ignore[arg-type]


async def test_update_memory_makes_a_new_version(sides: Sides) -> None:
    """update_memory keeps the entry id, the old version readable, the new one served."""
    scope_id = scope()
    refs = await sides.api.add_memories(scope_id, ENTRIES[:1])
    changed = satchel.MemoryEntry(text="The nightly backup moved to 04:00 UTC", tags=("ops",))
    new = await sides.api.update_memory(refs[0], changed)
    assert (new.scope_id, new.entry_id, new.version) == (scope_id, refs[0].entry_id, 2)
    assert (await sides.api.get_memory(refs[0])).text == ENTRIES[0].text
    assert (await sides.api.get_memory(new)).tags == ("ops",)
    context = await sides.prepare(request_for(scope_id, "when does the nightly backup run"))
    assert context.content is not None
    assert "04:00" in context.content
    assert "02:00" not in context.content
    with pytest.raises(satchel.InvalidRequestError, match=r"^entry\.text"):
        await sides.api.update_memory(new, satchel.MemoryEntry(text=""))
    with pytest.raises(satchel.NotFoundError):
        await sides.api.update_memory(attrs.evolve(new, version=9), changed)


EXPERIENCE = satchel.Experience(
    situation="The east cluster backup failed at night",
    action="Re-ran the backup by hand",
    outcome="It finished in twenty minutes",
    lesson="Check the backup disk before the nightly run",
    key="backup-failure",
)
TOPIC = satchel.TopicMemory(
    title="Backups", text="East cluster backups run nightly, kept thirty days"
)
RESOURCE = satchel.Resource(
    uri="docs://runbooks/backup",
    body="Step one: stop the writers. Step two: snapshot.",
    abstract="The backup runbook",
    overview="How to take and restore a backup of the east cluster",
)
EVERY_FAMILY = satchel.Assembly(
    tuple(
        satchel.Section(family, limit)
        for family, limit in (
            ("profile", 1),
            ("memory", 2),
            ("experience", 1),
            ("topic-memory", 2),
            ("resource", 2),
        )
    )
)


async def test_every_family_is_written_and_served_alike(sides: Sides) -> None:
    """Experiences, topic memories, resources and the profile are written through
    the API and delivered in the same pack as the Runtime's."""
    scope_id = scope()
    [experience] = await sides.api.add_experiences(scope_id, [EXPERIENCE])
    [topic] = await sides.api.add_topic_memories(scope_id, [TOPIC])
    [resource] = await sides.api.add_resources(scope_id, [RESOURCE])
    await sides.api.set_profile(scope_id, satchel.Profile(text="Ana runs the east cluster"))
    assert (experience.family, experience.revision) == ("experience", 1)
    assert (topic.family, resource.family, resource.id) == (
        "topic-memory",
        "resource",
        RESOURCE.uri,
    )
    assert await sides.api.add_experiences(scope_id, [EXPERIENCE]) == [experience]
    assert (await sides.api.add_topic_memories(scope_id, [TOPIC]))[0].revision == 2
    request = request_for(scope_id, "east cluster backup", assembly=EVERY_FAMILY)
    context = await sides.prepare(request)
    assert context.content is not None
    families = {item.citation.family for item in satchel.parse_context(context.content)}
    assert families == {"profile", "experience", "topic-memory", "resource"}
    assert "Ana runs the east cluster" in context.content


async def test_any_record_is_erased_by_its_citation(sides: Sides) -> None:
    """erase takes a citation of any family, the profile's included."""
    scope_id = scope()
    await sides.api.add_experiences(scope_id, [EXPERIENCE])
    await sides.api.set_profile(scope_id, satchel.Profile(text="Ana runs the east cluster"))
    request = request_for(scope_id, "east cluster backup", assembly=EVERY_FAMILY)
    context = await sides.prepare(request)
    assert context.content is not None
    for item in satchel.parse_context(context.content):
        assert await sides.api.erase(item.citation) == 1
    assert (await sides.prepare(request)).status == "empty"
    assert await sides.api.erase(satchel.Citation("profile", scope_id, None, None)) == 0


async def test_bad_records_are_refused_naming_the_field(sides: Sides) -> None:
    """Each family's malformed record is an InvalidRequestError naming its field,
    as the Runtime names it, and nothing is written."""
    scope_id = scope()
    with pytest.raises(satchel.InvalidRequestError, match=r"^experiences\[1\]\.lesson"):
        await sides.api.add_experiences(scope_id, [EXPERIENCE, attrs.evolve(EXPERIENCE, lesson="")])
    with pytest.raises(satchel.InvalidRequestError, match=r"^topics\[0\]\.title"):
        await sides.api.add_topic_memories(scope_id, [attrs.evolve(TOPIC, title=" ")])
    with pytest.raises(satchel.InvalidRequestError, match=r"^resources\[1\]\.uri"):
        await sides.api.add_resources(scope_id, [RESOURCE, RESOURCE])
    with pytest.raises(satchel.InvalidRequestError, match=r"^profile\.text"):
        await sides.api.set_profile(scope_id, satchel.Profile(text=""))
    with pytest.raises(satchel.InvalidRequestError, match=r"^target\.family"):
        await sides.api.erase(satchel.Citation("diary", scope_id, "x", 1))
    request = request_for(scope_id, "east cluster backup", assembly=EVERY_FAMILY)
    assert (await sides.prepare(request)).status == "empty"


async def test_listing_pages_through_a_scope(sides: Sides) -> None:
    """list_scopes counts a scope's records; list_records pages them newest first by
    cursor, forgotten entries only when asked, the same on both."""
    scope_id = scope()
    refs = await sides.api.add_memories(scope_id, ENTRIES)
    await sides.api.add_experiences(scope_id, [EXPERIENCE])
    await sides.api.forget_memory(refs[2])
    [summary] = [s for s in await sides.api.list_scopes() if s.scope_id == scope_id]
    assert dict(summary.records) == {"memory": 2, "experience": 1}
    assert summary in await sides.twin.list_scopes()
    seen: list[satchel.StoredRecord] = []
    cursor = None
    while True:
        page = await sides.api.list_records(scope_id, "memory", cursor=cursor, limit=1)
        assert page == await sides.twin.list_records(scope_id, "memory", cursor=cursor, limit=1)
        seen.extend(page.records)
        if (cursor := page.cursor) is None:
            break
    assert [record.citation.id for record in seen] == [refs[1].entry_id, refs[0].entry_id]
    assert seen[1].key == "backup"
    assert seen[1].created_at == AT
    every = await sides.api.list_records(scope_id, include_forgotten=True)
    assert [record.forgotten for record in every.records if record.citation.family == "memory"] == [
        True,
        False,
        False,
    ]
    with pytest.raises(satchel.InvalidRequestError, match=r"^limit"):
        await sides.api.list_records(scope_id, limit=0)
    with pytest.raises(satchel.InvalidRequestError, match=r"^family"):
        await sides.api.list_records(scope_id, "diary")
    with pytest.raises(satchel.InvalidRequestError, match=r"^cursor"):
        await sides.api.list_records(scope_id, cursor="nope")
