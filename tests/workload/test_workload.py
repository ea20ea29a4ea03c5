"""Workload folders: reading entries and queries, ingesting them, mapping citations back."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from importlib import resources
from typing import TYPE_CHECKING, Any

import attrs
import pytest
from bench._citations import citation_key, delivered_citations

import satchel
from satchel._workload import (
    CitationKey,
    IngestError,
    MalformedLine,
    WorkloadEntry,
    WorkloadQuery,
    ingest,
    iter_entries,
    read_entries,
    read_queries,
)

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

S = "project:demo"


def jsonl(path: Path, *lines: object) -> Path:
    """Write ``lines`` to ``path``: dicts as JSON, strings verbatim."""
    text = "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines)
    path.write_text(text, encoding="utf-8")
    return path


def memory(entry_id: str, text: str = "a fact", **fields: object) -> dict[str, object]:
    return {"id": entry_id, "scope": S, "text": text, **fields}


# ------------------------------------------------------------------------------ reading


def test_every_family_becomes_its_record(tmp_path: Path) -> None:
    """Each family's line is read into the matching satchel record, with id and scope."""
    path = jsonl(
        tmp_path / "entries.jsonl",
        memory("m1", "Alice moved to Lisbon.", kind="dialog", tags=["move"], thread="t1"),
        {
            "id": "x1",
            "scope": S,
            "family": "experience",
            "situation": "s",
            "action": "a",
            "outcome": "o",
            "lesson": "l",
        },
        {"id": "t1", "scope": S, "family": "topic-memory", "title": "Moves", "text": "notes"},
        {
            "id": "r1",
            "scope": S,
            "family": "resource",
            "uri": "docs/a.md",
            "body": "b",
            "abstract": "about a",
            "overview": None,
        },
        {"id": "p1", "scope": S, "family": "profile", "text": "a team"},
    )
    entries, errors = read_entries(path)
    assert errors == []
    assert [(e.id, e.scope, e.family) for e in entries] == [
        ("m1", S, "memory"),
        ("x1", S, "experience"),
        ("t1", S, "topic-memory"),
        ("r1", S, "resource"),
        ("p1", S, "profile"),
    ]
    assert [e.record for e in entries] == [
        satchel.MemoryEntry("Alice moved to Lisbon.", kind="dialog", tags=("move",), thread="t1"),
        satchel.Experience("s", "a", "o", "l"),
        satchel.TopicMemory("Moves", "notes"),
        satchel.Resource("docs/a.md", "b", abstract="about a", overview=None),
        satchel.Profile("a team"),
    ]


def test_defaults_and_unknown_fields(tmp_path: Path) -> None:
    """family defaults to memory, kind to fact; unknown fields are ignored."""
    path = jsonl(tmp_path / "entries.jsonl", {"id": "m1", "scope": S, "text": "t", "speaker": "Al"})
    (entry,), errors = read_entries(path)
    assert errors == []
    assert entry == WorkloadEntry("m1", S, "memory", satchel.MemoryEntry("t"))


@pytest.mark.parametrize(
    ("created_at", "expected"),
    [
        ("2023-05-08T13:56:00Z", datetime(2023, 5, 8, 13, 56, tzinfo=UTC)),
        ("2023-05-08T13:56:00", datetime(2023, 5, 8, 13, 56, tzinfo=UTC)),
        ("2023-05-08 13:56", datetime(2023, 5, 8, 13, 56, tzinfo=UTC)),
        (
            "2023-05-08T13:56:00+02:00",
            datetime(2023, 5, 8, 13, 56, tzinfo=timezone(timedelta(hours=2))),
        ),
    ],
)
def test_created_at_is_aware_and_naive_means_utc(
    tmp_path: Path, created_at: str, expected: datetime
) -> None:
    """created_at accepts ISO-8601 with Z, an offset, or none (read as UTC)."""
    path = jsonl(tmp_path / "entries.jsonl", memory("m1", created_at=created_at))
    (entry,), _ = read_entries(path)
    assert isinstance(entry.record, satchel.MemoryEntry)
    assert entry.record.created_at == expected
    assert entry.record.created_at.utcoffset() == expected.utcoffset()


def test_session_number_becomes_a_thread(tmp_path: Path) -> None:
    """An integer session groups turns as thread '{scope}/session-{n}'; thread wins over it."""
    path = jsonl(
        tmp_path / "entries.jsonl",
        memory("m1", session=3),
        memory("m2", session=3, thread="own"),
        memory("m3"),
    )
    entries, _ = read_entries(path)
    threads = [e.record.thread for e in entries if isinstance(e.record, satchel.MemoryEntry)]
    assert threads == [f"{S}/session-3", "own", None]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"id": "m", "scope": "s", "text": "t"', "invalid JSON: Expecting ',' delimiter"),
        ('["m", "s"]', "expected a JSON object, not list"),
        ({"id": "m", "scope": S}, "missing field 'text'"),
        ({"scope": S, "text": "t"}, "missing field 'id'"),
        ({"id": "m", "text": "t"}, "missing field 'scope'"),
        ({"id": "m", "scope": S, "text": 7}, "field 'text' must be a string, not a number"),
        ({"id": "m", "scope": S, "text": "  "}, "field 'text' must not be empty"),
        ({"id": "m", "scope": S, "text": "t", "family": "note"}, "unknown family 'note'"),
        ({"id": "m", "scope": S, "text": "t", "created_at": "yesterday"}, "field 'created_at'"),
        ({"id": "m", "scope": S, "text": "t", "session": "3"}, "field 'session' must be an int"),
        ({"id": "m", "scope": S, "text": "t", "tags": ["a", 1]}, "field 'tags'[1]"),
        ({"id": "m", "scope": "a\tb", "text": "t"}, "field 'scope' must not contain control"),
        (
            {
                "id": "x",
                "scope": S,
                "family": "experience",
                "situation": "s",
                "action": "a",
                "outcome": "o",
            },
            "missing field 'lesson'",
        ),
        ({"id": "r", "scope": S, "family": "resource", "uri": "u"}, "missing field 'body'"),
    ],
)
def test_malformed_line_is_reported_with_its_number_and_skipped(
    tmp_path: Path, line: object, message: str
) -> None:
    """A malformed line becomes a MalformedLine naming line and field; its neighbours are read."""
    path = jsonl(tmp_path / "entries.jsonl", memory("before"), line, memory("after"))
    entries, errors = read_entries(path)
    assert [e.id for e in entries] == ["before", "after"]
    assert len(errors) == 1
    assert (errors[0].path, errors[0].line_number) == (path, 2)
    assert errors[0].message.startswith(message)


def test_error_prints_as_file_line_message(tmp_path: Path) -> None:
    """A MalformedLine reads 'entries.jsonl:17: missing field ...', file name only."""
    error = MalformedLine(tmp_path / "entries.jsonl", 17, "missing field 'text'")
    assert str(error) == "entries.jsonl:17: missing field 'text'"


def test_blank_lines_are_skipped_but_counted(tmp_path: Path) -> None:
    """Blank lines are not errors, and later line numbers still match the file."""
    path = jsonl(tmp_path / "entries.jsonl", memory("m1"), "", "   ", {"id": "m2"})
    entries, errors = read_entries(path)
    assert [e.id for e in entries] == ["m1"]
    assert [(e.line_number, e.message) for e in errors] == [(4, "missing field 'scope'")]


def test_duplicate_id_is_an_error_on_the_later_line(tmp_path: Path) -> None:
    """A repeated id cannot be mapped back, so the later line is reported and skipped."""
    path = jsonl(tmp_path / "entries.jsonl", memory("m1", "first"), memory("m1", "second"))
    entries, errors = read_entries(path)
    assert [e.record for e in entries] == [satchel.MemoryEntry("first")]
    assert [str(e) for e in errors] == ["entries.jsonl:2: duplicate id 'm1' (first on line 1)"]


def test_byte_order_mark_and_bad_utf8(tmp_path: Path) -> None:
    """A UTF-8 BOM before line 1 is accepted; a line that is not UTF-8 is reported."""
    path = tmp_path / "entries.jsonl"
    good = json.dumps(memory("m1", "日本語のメモ"), ensure_ascii=False).encode()
    path.write_bytes(b"\xef\xbb\xbf" + good + b"\n" + b'{"id": "\xff"}\n')
    entries, errors = read_entries(path)
    assert [e.record for e in entries] == [satchel.MemoryEntry("日本語のメモ")]
    assert [(e.line_number, e.message) for e in errors] == [
        (2, "not valid UTF-8 at byte 9 of the line")
    ]


def test_iter_entries_reads_lazily(tmp_path: Path) -> None:
    """iter_entries reads one line at a time: lines appended after it started are seen."""
    path = jsonl(tmp_path / "entries.jsonl", memory("m1"))
    stream = iter_entries(path)
    assert isinstance(next(stream), WorkloadEntry)
    with path.open("a", encoding="utf-8") as out:
        out.write(json.dumps(memory("m2")) + "\n")
    assert [item.id for item in stream if isinstance(item, WorkloadEntry)] == ["m2"]


def test_reads_queries(tmp_path: Path) -> None:
    """A query line keeps scopes in order, expected ids and category (default 'uncategorized')."""
    path = jsonl(
        tmp_path / "queries.jsonl",
        {"id": "q1", "scopes": ["a", "b"], "query": "Where?", "expected": ["e1"], "category": "c"},
        {"id": "q2", "scopes": ["a"], "query": "When?"},
    )
    queries, errors = read_queries(path)
    assert errors == []
    assert queries == [
        WorkloadQuery("q1", ("a", "b"), "Where?", ("e1",), "c"),
        WorkloadQuery("q2", ("a",), "When?", (), "uncategorized"),
    ]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ({"id": "q", "scopes": [], "query": "q"}, "field 'scopes' must name at least one scope"),
        ({"id": "q", "scopes": "a", "query": "q"}, "field 'scopes' must be a list, not a string"),
        ({"id": "q", "scopes": ["a"]}, "missing field 'query'"),
        ({"id": "q", "scopes": ["a"], "query": "q", "expected": [3]}, "field 'expected'[0]"),
    ],
)
def test_malformed_query_is_reported(tmp_path: Path, line: object, message: str) -> None:
    """A malformed query line is reported with its line number and skipped."""
    path = jsonl(tmp_path / "queries.jsonl", line)
    queries, errors = read_queries(path)
    assert queries == []
    assert [e.line_number for e in errors] == [1]
    assert errors[0].message.startswith(message)


def test_bundled_sample_is_well_formed() -> None:
    """The demo's sample workload reads without a single error, with every family present."""
    sample = resources.files("satchel.cli").joinpath("sample")
    with resources.as_file(sample.joinpath("entries.jsonl")) as path:
        entries, errors = read_entries(path)
    with resources.as_file(sample.joinpath("queries.jsonl")) as path:
        queries, query_errors = read_queries(path)
    assert errors == []
    assert query_errors == []
    families = [e.family for e in entries]
    counts = {family: families.count(family) for family in set(families)}
    assert counts == {"memory": 40, "experience": 4, "topic-memory": 3, "resource": 2, "profile": 1}
    known = {e.id for e in entries}
    assert all(set(q.expected) <= known for q in queries)


# ---------------------------------------------------------------------------- citations


# ------------------------------------------------------------------------ ingest (fake)


@attrs.define
class RecordingWriter:
    """A runtime stand-in that records each write call and can refuse or fail some."""

    calls: list[tuple[str, str, list[Any]]] = attrs.Factory(list)
    refuse_text: str | None = None
    fail_on_call: int | None = None

    def _call(self, method: str, scope: str, records: list[Any]) -> None:
        if self.fail_on_call is not None and len(self.calls) + 1 == self.fail_on_call:
            raise satchel.StoreError("disk full")
        for index, record in enumerate(records):
            if getattr(record, "text", None) == self.refuse_text:
                raise satchel.InvalidRequestError(f"entries[{index}].text is refused")
        self.calls.append((method, scope, records))

    async def add_memories(
        self, scope: str, entries: list[satchel.MemoryEntry]
    ) -> list[satchel.MemoryRef]:
        self._call("add_memories", scope, entries)
        start = sum(len(c[2]) for c in self.calls[:-1] if c[0] == "add_memories")
        return [satchel.MemoryRef(scope, f"e{start + n}", 1) for n in range(len(entries))]

    async def add_experiences(
        self, scope: str, items: list[satchel.Experience]
    ) -> list[satchel.RecordRef]:
        self._call("add_experiences", scope, items)
        return [satchel.RecordRef("experience", scope, f"x{n}", 1) for n in range(len(items))]

    async def add_topic_memories(
        self, scope: str, items: list[satchel.TopicMemory]
    ) -> list[satchel.RecordRef]:
        self._call("add_topic_memories", scope, items)
        return [satchel.RecordRef("topic-memory", scope, f"t{n}", 1) for n in range(len(items))]

    async def add_resources(
        self, scope: str, items: list[satchel.Resource]
    ) -> list[satchel.RecordRef]:
        self._call("add_resources", scope, items)
        return [satchel.RecordRef("resource", scope, f"r{n}", 1) for n in range(len(items))]

    async def set_profile(self, scope: str, profile: satchel.Profile) -> None:
        self._call("set_profile", scope, [profile])


def entry(entry_id: str, scope: str = S, text: str | None = None) -> WorkloadEntry:
    return WorkloadEntry(entry_id, scope, "memory", satchel.MemoryEntry(text or entry_id))


@pytest.mark.anyio
async def test_ingest_batches_by_scope_and_family_in_order() -> None:
    """Writes are grouped by (scope, family), at most batch_size each, keeping order."""
    writer = RecordingWriter()
    entries = [
        entry("a1", "a"),
        entry("b1", "b"),
        entry("a2", "a"),
        entry("a3", "a"),
        WorkloadEntry("p1", "a", "profile", satchel.Profile("old")),
        entry("b2", "b"),
        WorkloadEntry("p2", "a", "profile", satchel.Profile("new")),
    ]
    report = await ingest(writer, entries, batch_size=2)
    texts = [(method, scope, [r.text for r in records]) for method, scope, records in writer.calls]
    assert texts == [
        ("add_memories", "a", ["a1", "a2"]),
        ("add_memories", "b", ["b1", "b2"]),
        ("set_profile", "a", ["new"]),
        ("add_memories", "a", ["a3"]),
    ]
    assert report.counts == {"memory": 5, "profile": 2}
    assert report.ids["a3"] == ("memory", "a", "e4", 1)
    assert report.ids["p1"] == report.ids["p2"] == ("profile", "a")


@pytest.mark.anyio
async def test_refused_batch_is_retried_entry_by_entry() -> None:
    """One invalid record costs only itself: it is rejected, the rest of its batch written."""
    writer = RecordingWriter(refuse_text="bad")
    report = await ingest(writer, [entry("m1"), entry("m2", text="bad"), entry("m3")])
    assert [(r.id, r.message) for r in report.rejected] == [("m2", "entries[0].text is refused")]
    assert sorted(report.ids) == ["m1", "m3"]
    assert report.counts == {"memory": 2}
    assert [len(records) for _, _, records in writer.calls] == [1, 1]


@pytest.mark.anyio
async def test_failed_ingest_keeps_what_was_written() -> None:
    """A store failure stops ingest with an IngestError whose report holds earlier batches."""
    writer = RecordingWriter(fail_on_call=2)
    done: list[int] = []
    written: list[Mapping[str, CitationKey]] = []
    with pytest.raises(IngestError, match="disk full") as caught:
        await ingest(
            writer,
            [entry(f"m{n}") for n in range(5)],
            batch_size=2,
            progress=done.append,
            on_written=written.append,
        )
    assert written == [{"m0": ("memory", S, "e0", 1), "m1": ("memory", S, "e1", 1)}]
    assert isinstance(caught.value.__cause__, satchel.StoreError)
    assert sorted(caught.value.report.ids) == ["m0", "m1"]
    assert caught.value.report.counts == {"memory": 2}
    assert done == [2]


@pytest.mark.anyio
async def test_on_written_gets_each_batch_without_the_rejected() -> None:
    """on_written receives every batch's written ids once; a rejected entry is not among them."""
    written: list[Mapping[str, CitationKey]] = []
    entries = [entry("m0"), entry("m1", text="bad"), entry("m2"), entry("m3")]
    await ingest(
        RecordingWriter(refuse_text="bad"), entries, batch_size=2, on_written=written.append
    )
    assert [sorted(batch) for batch in written] == [["m0"], ["m2", "m3"]]


@pytest.mark.anyio
async def test_ingest_reports_progress_per_batch() -> None:
    """progress is called after each batch with the running total of handled entries."""
    done: list[int] = []
    await ingest(
        RecordingWriter(), [entry(f"m{n}") for n in range(5)], batch_size=2, progress=done.append
    )
    assert done == [2, 4, 5]


@pytest.mark.anyio
@pytest.mark.parametrize("batch_size", [0, -1, True, "2", 2.0])
async def test_ingest_refuses_a_bad_batch_size(batch_size: int) -> None:
    """batch_size must be a positive integer: InvalidRequestError (a ValueError) naming it."""
    with pytest.raises(
        satchel.InvalidRequestError, match=r"^batch_size must be a positive integer"
    ):
        await ingest(RecordingWriter(), [entry("m1")], batch_size=batch_size)


# ---------------------------------------------------------------------- ingest (runtime)


def sample_entries() -> list[WorkloadEntry]:
    with resources.as_file(resources.files("satchel.cli") / "sample" / "entries.jsonl") as path:
        return read_entries(path)[0]


@pytest.mark.anyio
async def test_ingest_maps_ids_to_the_citations_prepare_renders() -> None:
    """Every citation a prepare delivers maps back to a workload id through the report."""
    entries = sample_entries()
    async with satchel.open_runtime(embedder=satchel.HashingEmbedder()) as rt:
        report = await ingest(rt, entries, batch_size=7)
        assert report.counts == {
            "memory": 40,
            "experience": 4,
            "topic-memory": 3,
            "resource": 2,
            "profile": 1,
        }
        assert report.rejected == ()
        assert len(report.ids) == len(entries)
        assembly = satchel.Assembly(
            (
                satchel.Section("profile", 1),
                satchel.Section("memory", 4),
                satchel.Section("resource", 1),
            )
        )
        request = satchel.PrepareContextRequest(
            scope_id="project:harbor",
            query="Why was the dispatch API slow on March 11? Check the latency runbook.",
            assembly=assembly,
        )
        context = await rt.prepare_context(request)
    by_key = {key: workload_id for workload_id, key in report.ids.items()}
    delivered = [by_key[citation_key(c)] for c in delivered_citations(context.content)]
    assert "harbor/profile" in delivered
    assert "harbor/r1" in delivered
    assert {"harbor/m07", "harbor/m08"} <= set(delivered)


@pytest.mark.anyio
async def test_ingested_memory_reads_back_exactly() -> None:
    """A mapped memory key is the MemoryRef of the written version, with thread and time."""
    entries = [e for e in sample_entries() if e.id in ("harbor/m05", "harbor/m24")]
    async with satchel.open_runtime() as rt:
        report = await ingest(rt, entries)
        for item in entries:
            family, scope, entry_id, version = report.ids[item.id]
            assert family == "memory"
            assert isinstance(entry_id, str)
            assert isinstance(version, int)
            record = await rt.get_memory(satchel.MemoryRef(str(scope), entry_id, version))
            assert isinstance(item.record, satchel.MemoryEntry)
            assert (record.text, record.created_at, record.thread) == (
                item.record.text,
                item.record.created_at,
                item.record.thread,
            )
    assert report.ids.keys() == {"harbor/m05", "harbor/m24"}


@pytest.mark.anyio
async def test_batch_the_runtime_refuses_is_retried_entry_by_entry() -> None:
    """A refused batch is written entry by entry: bad records rejected, the rest kept."""
    resource = satchel.Resource("docs/a.md", "body", abstract="about a")
    entries = [
        WorkloadEntry("r1", S, "resource", resource),
        WorkloadEntry("r2", S, "resource", attrs.evolve(resource, abstract="about a, again")),
        entry("m1"),
        entry("m2", text=" "),
        entry("m3"),
    ]
    async with satchel.open_runtime() as rt:
        report = await ingest(rt, entries)
    assert [(r.id, r.message) for r in report.rejected] == [
        ("m2", "entries[0].text must be a non-empty string")
    ]
    assert report.counts == {"resource": 2, "memory": 2}
    assert report.ids["r1"] == report.ids["r2"] == ("resource", S, "docs/a.md")
    assert sorted(report.ids) == ["m1", "m3", "r1", "r2"]
