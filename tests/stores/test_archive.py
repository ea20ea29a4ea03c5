"""``satchel.stores.export_archive`` / ``import_archive``: a store written into one file
and read back into any store keeps every version, key, date, body, forgotten and erased
state, so every citation made before the export resolves after the import and the same
requests give byte-identical packs; an import stopped anywhere finishes on a rerun; a
file that is not a whole archive of a format this satchel reads is refused by name."""

from __future__ import annotations

import gzip
import json
from typing import TYPE_CHECKING, Any

import pytest

import satchel
from satchel.embedders import fingerprint_of
from satchel.stores import CopyReport, MemoryStore, SqliteStore, export_archive, import_archive
from satchel.stores import _archive as archives
from satchel.stores import _copy as copying

from .test_copy import (
    DEMO,
    EMBEDDER,
    GONE,
    TARGETS,
    Interrupted,
    _texts,
    citations,
    contents,
    filled_sqlite,
    held_by,
    memories_of,
    memory_refs,
    packs_of,
)

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from satchel.stores import OceanBaseStore

pytestmark = pytest.mark.anyio


def lines_of(path: Path) -> list[dict[str, Any]]:
    with gzip.open(path, "rt", encoding="utf-8") as file:
        return [json.loads(line) for line in file]


def write_lines(path: Path, lines: list[dict[str, Any]]) -> None:
    with gzip.open(path, "wt", encoding="utf-8") as file:
        file.writelines(json.dumps(line) + "\n" for line in lines)


def archives_in(folder: Path) -> list[str]:
    return sorted(path.name for path in folder.glob("*.satchel*"))


async def exported(tmp_path: Path) -> Path:
    """The filled SQLite store of the copy tests, exported to ``a.satchel``."""
    await filled_sqlite(tmp_path / "a.db")
    source = await SqliteStore.open(str(tmp_path / "a.db"))
    try:
        await export_archive(source, tmp_path / "a.satchel")
    finally:
        await source.aclose()
    return tmp_path / "a.satchel"


async def test_sqlite_to_archive_to_seekdb_and_back_keeps_every_citation_and_pack(
    tmp_path: Path, oceanbase: Callable[..., OceanBaseStore]
) -> None:
    """SQLite -> archive -> seekdb -> archive -> SQLite: every citation of the prepares
    made before resolves on both stores to the same record, erased stays erased, every
    version, vector, key and date arrives exactly, and the SQLite at the end gives
    byte-identical packs."""
    written = await filled_sqlite(tmp_path / "a.db")
    before = await packs_of(await SqliteStore.open(str(tmp_path / "a.db")))
    cited = citations(before)
    refs = [*memory_refs(cited), *written.memories, written.forgotten, written.erased]
    source = await SqliteStore.open(str(tmp_path / "a.db"))
    seekdb, back = oceanbase(), await SqliteStore.open(str(tmp_path / "b.db"))
    try:
        read = await memories_of(source, refs)
        out = await export_archive(source, tmp_path / "one.satchel")
        assert out.scopes == ("chat:2", DEMO, GONE)
        assert (out.tombstones, out.vectors_copied) == (2, 14)
        there = await import_archive(tmp_path / "one.satchel", seekdb)
        assert (there.versions, there.records) == (out.versions, out.records)
        assert (there.vectors_copied, there.vectors_embedded, there.tombstones) == (14, 0, 2)
        await export_archive(seekdb, tmp_path / "two.satchel")
        assert await import_archive(tmp_path / "two.satchel", back) == there
        assert await memories_of(seekdb, refs) == read == await memories_of(back, refs)
        assert "was erased" in str(read[-1])
        assert await contents(seekdb) == await contents(source) == await contents(back)
    finally:
        await source.aclose()
        await seekdb.aclose()
    assert await packs_of(back) == before


async def test_the_archive_holds_no_erased_text_and_states_its_format(tmp_path: Path) -> None:
    """The file is gzip'd JSON lines: a header naming the format, the embedder and the
    scopes, tombstones, versions, profiles, an end line counting the lines; no text of
    an erased entry or an erased scope is in it."""
    path = await exported(tmp_path)
    lines = lines_of(path)
    header = lines[0]
    assert header["satchel_archive"] == archives.FORMAT == 1
    assert header["vectors"] == {"fingerprint": fingerprint_of(EMBEDDER), "dimension": 64}
    assert header["scopes"] == ["chat:2", DEMO, GONE]
    assert header["total"] == sum("version" in line or "profile" in line for line in lines)
    assert lines[-1] == {"end": len(lines) - 1}
    assert sum("tombstone" in line for line in lines) == 2
    text = gzip.decompress(path.read_bytes()).decode()
    assert "deploy note 4" not in text
    assert "erased with its scope" not in text
    assert "deploy note 2" in text  # forgotten, not erased: kept, not searchable
    forgotten = next(line for line in lines if "deploy note 2" in line.get("text", ""))
    assert forgotten["live"] is False
    assert "vector" not in forgotten


@pytest.mark.parametrize("kind", list(TARGETS))
async def test_an_interrupted_import_finishes_on_a_rerun_without_duplicates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest, kind: str
) -> None:
    """An import stopped after its first pages and run again ends with exactly the
    exported store's contents: nothing twice, nothing missing, the rerun skipping what
    the first run wrote."""
    monkeypatch.setattr(copying, "PAGE", 3)
    path = await exported(tmp_path)
    target = await TARGETS[kind](request, tmp_path)
    source = await SqliteStore.open(str(tmp_path / "a.db"))
    try:

        def stop(done: int, total: int) -> None:
            if done >= 7:
                raise Interrupted

        with pytest.raises(Interrupted):
            await import_archive(path, target, progress=stop)
        first, total = await held_by(target), await held_by(source)
        assert 0 < first < total
        report = await import_archive(path, target)
        assert sum(report.skipped.values()) == first
        assert report.written + first == total
        assert _texts(await contents(target)) == _texts(await contents(source))
    finally:
        await source.aclose()
        await target.aclose()


async def test_an_interrupted_export_leaves_no_archive(tmp_path: Path) -> None:
    """An export stopped midway removes what it wrote: no file, no partial file."""
    await filled_sqlite(tmp_path / "a.db")
    source = await SqliteStore.open(str(tmp_path / "a.db"))

    def stop(done: int, total: int) -> None:
        raise Interrupted

    try:
        with pytest.raises(Interrupted):
            await export_archive(source, tmp_path / "a.satchel", progress=stop)
    finally:
        await source.aclose()
    assert archives_in(tmp_path) == []


async def test_an_archive_of_a_newer_format_is_refused(tmp_path: Path) -> None:
    """A newer format's archive is refused before anything is written, saying which
    format it is and which this satchel reads."""
    path = await exported(tmp_path)
    lines = lines_of(path)
    lines[0]["satchel_archive"] = 2
    write_lines(path, lines)
    target = MemoryStore()
    with pytest.raises(satchel.InvalidRequestError, match=r"format 2.*reads formats up to 1"):
        await import_archive(path, target)
    assert await target.copy_scopes() == []


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda lines: lines[:-1], "cut short"),
        (lambda lines: [{"hello": 1}, *lines[1:]], "not a satchel archive"),
        (lambda lines: [*lines[:-1], {"end": 3}], "end line counts 3"),
        (lambda lines: [*lines[:4], {**lines[4], "family": "gossip"}], r"line 5.*malformed"),
    ],
)
async def test_a_damaged_archive_is_refused_by_what_is_wrong(
    tmp_path: Path, damage: Callable[[list[Any]], list[Any]], message: str
) -> None:
    """A file cut short, without a header, with a wrong end line or a malformed line is
    refused, naming the file and what is wrong."""
    path = await exported(tmp_path)
    write_lines(path, damage(lines_of(path)))
    with pytest.raises(satchel.InvalidRequestError, match=message):
        await import_archive(path, MemoryStore())


async def test_a_file_that_is_not_gzip_is_refused(tmp_path: Path) -> None:
    """A file that is not gzip at all, or no file, is refused by name."""
    (tmp_path / "notes.txt").write_text("hello\n")
    with pytest.raises(satchel.InvalidRequestError, match="not a whole gzip file"):
        await import_archive(tmp_path / "notes.txt", MemoryStore())
    with pytest.raises(satchel.InvalidRequestError, match="no such archive"):
        await import_archive(tmp_path / "none.satchel", MemoryStore())


async def test_vectors_are_embedded_again_when_the_target_has_another_embedder(
    tmp_path: Path,
) -> None:
    """Into a store whose vectors another embedder built, an import needs that
    embedder and embeds every searchable version with it; citations still resolve."""
    path = await exported(tmp_path)
    other = satchel.HashingEmbedder(32)
    async with satchel.open_runtime(str(tmp_path / "b.db"), embedder=other) as rt:
        await rt.add_memories("elsewhere", [satchel.MemoryEntry(text="built by another")])
    target = await SqliteStore.open(str(tmp_path / "b.db"))
    try:
        with pytest.raises(satchel.InvalidRequestError, match="the archive's vectors"):
            await import_archive(path, target)
        report = await import_archive(path, target, embedder=other)
        assert (report.vectors_copied, report.vectors_embedded) == (0, 14)
        refs = memory_refs(
            citations(await packs_of(await SqliteStore.open(str(tmp_path / "a.db"))))
        )
        source = await SqliteStore.open(str(tmp_path / "a.db"))
        try:
            assert await memories_of(target, refs) == await memories_of(source, refs)
        finally:
            await source.aclose()
    finally:
        await target.aclose()


async def test_only_the_scopes_asked_for_are_exported(tmp_path: Path) -> None:
    """``scopes`` exports those scopes alone (and every tombstone, which names none)."""
    await filled_sqlite(tmp_path / "a.db")
    source, target = await SqliteStore.open(str(tmp_path / "a.db")), MemoryStore()
    try:
        await export_archive(source, tmp_path / "a.satchel", scopes=["chat:2"])
        report = await import_archive(tmp_path / "a.satchel", target)
        assert report == CopyReport(
            ("chat:2",), {"memory": 2}, {"memory": 2}, {}, vectors_copied=2, tombstones=2
        )
        assert await target.copy_scopes() == ["chat:2"]
        with pytest.raises(satchel.InvalidRequestError, match="no scope 'nowhere'"):
            await export_archive(source, tmp_path / "b.satchel", scopes=["nowhere"])
    finally:
        await source.aclose()
        await target.aclose()
