"""Two processes on one SQLite file: each sees the other's commits before it serves."""

from __future__ import annotations

import json
import sqlite3
import sys
from typing import TYPE_CHECKING, Any

import anyio
import pytest

import satchel
from satchel.stores._rounds import searching
from satchel.stores.sqlite import _search

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.anyio

# Run in another process: forget one entry, write a new scope, print the new ref.
OTHER = """
import json, sys, anyio, satchel

async def main(path, scope, entry_id, version):
    async with satchel.open_runtime(path, embedder=satchel.HashingEmbedder()) as rt:
        await rt.forget_memory(satchel.MemoryRef(scope, entry_id, int(version)))
        note = satchel.MemoryEntry(text="kestrel fresh scope note")
        (ref,) = await rt.add_memories("fresh", [note])
        print(json.dumps([ref.scope_id, ref.entry_id, ref.version]))

anyio.run(main, *sys.argv[1:])
"""


async def other_process(path: Path, ref: satchel.MemoryRef) -> satchel.MemoryRef:
    done = await anyio.run_process(
        [sys.executable, "-c", OTHER, str(path), ref.scope_id, ref.entry_id, str(ref.version)]
    )
    scope, entry_id, version = json.loads(done.stdout)
    return satchel.MemoryRef(scope, entry_id, version)


def ids(context: satchel.PreparedContext) -> set[str | None]:
    return {item.citation.id for item in satchel.parse_context(context.content)}


async def test_another_processs_forget_and_new_scope_are_seen(tmp_path: Path) -> None:
    """After another process forgets an entry this runtime has served (and cached), and
    writes a scope this runtime never saw, the next prepare serves neither the forgotten
    entry nor misses the new scope, and get and forget find the new scope's entry."""
    path = tmp_path / "shared.db"
    ask = satchel.PrepareContextRequest(scope_id="team", query="kestrel note")
    async with satchel.open_runtime(str(path), embedder=satchel.HashingEmbedder()) as rt:
        gone, kept = await rt.add_memories(
            "team",
            [
                satchel.MemoryEntry(text="kestrel note to forget"),
                satchel.MemoryEntry(text="kestrel note to keep"),
            ],
        )
        assert ids(await rt.prepare_context(ask)) == {gone.entry_id, kept.entry_id}
        fresh = await other_process(path, gone)
        assert ids(await rt.prepare_context(ask)) == {kept.entry_id}
        assert (await rt.get_memory(gone)).text == "kestrel note to forget"  # still readable
        assert (await rt.get_memory(fresh)).text == "kestrel fresh scope note"
        there = await rt.prepare_context(
            satchel.PrepareContextRequest(scope_id="fresh", query="kestrel")
        )
        assert ids(there) == {fresh.entry_id}
        await rt.forget_memory(fresh)
        after = await rt.prepare_context(
            satchel.PrepareContextRequest(scope_id="fresh", query="kestrel")
        )
        assert after.status == "empty"


async def test_writes_after_another_process_keep_counts_right(tmp_path: Path) -> None:
    """A write that follows another process's writes builds on them: searches still find
    everything both processes wrote."""
    path = tmp_path / "shared.db"
    async with satchel.open_runtime(str(path), embedder=satchel.HashingEmbedder()) as rt:
        (first,) = await rt.add_memories("team", [satchel.MemoryEntry(text="kestrel one")])
        await other_process(path, first)
        await rt.add_memories("fresh", [satchel.MemoryEntry(text="kestrel two")])
        found = await rt.prepare_context(
            satchel.PrepareContextRequest(scope_id="fresh", query="kestrel")
        )
    assert len(satchel.parse_context(found.content)) == 2


async def test_scope_counts_follow_another_processs_writes(tmp_path: Path) -> None:
    """A store open on the file counts what another process forgot and wrote since."""
    path = tmp_path / "shared.db"
    async with satchel.open_runtime(str(path), embedder=satchel.HashingEmbedder()) as rt:
        (ref,) = await rt.add_memories("team", [satchel.MemoryEntry(text="kestrel one")])
    store = await satchel.SqliteStore.open(str(path))
    try:
        assert await store.scope_counts() == {"team": {"memory": 1}}
        await other_process(path, ref)  # forgets the team's entry, writes scope "fresh"
        assert await store.scope_counts() == {"fresh": {"memory": 1}}
    finally:
        await store.aclose()


class CommitsAfterFirstRead:
    """A connection that lets ``other`` commit ``statement`` right after its own first
    statement: another process writing between two reads of one load."""

    def __init__(self, conn: sqlite3.Connection, other: sqlite3.Connection, statement: str):
        self._conn, self._other, self._statement = conn, other, statement
        self.committed = False

    def execute(self, sql: str, *parameters: Any) -> sqlite3.Cursor:
        cursor = self._conn.execute(sql, *parameters)
        if not self.committed and not sql.startswith(("BEGIN", "COMMIT")):
            self._other.execute(self._statement)
            self.committed = True
        return cursor

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)


async def test_a_matrix_load_is_one_snapshot_while_another_process_writes(
    tmp_path: Path,
) -> None:
    """A scope's vectors are counted, then streamed: another connection committing four
    more records between the two reads changes neither (both read one snapshot), where
    the stream used to overrun the count and fail the search."""
    path = tmp_path / "team.db"
    async with satchel.open_runtime(str(path), embedder=satchel.HashingEmbedder()) as rt:
        await rt.add_memories("s", [satchel.MemoryEntry(text=f"note {n}") for n in range(20)])
    reader = sqlite3.connect(path, isolation_level=None)
    writer = sqlite3.connect(path, isolation_level=None)
    try:
        ((scope_key, dimension),) = reader.execute(
            "SELECT scope_key, length(embedding) / 4 FROM records LIMIT 1"
        ).fetchall()
        copy = (
            "INSERT INTO records (family, scope_key, rid, revision, live, text, embedding)"
            " SELECT family, scope_key, rid || '-copy', revision, live, text, embedding"
            " FROM records ORDER BY row LIMIT 4"
        )
        racing = CommitsAfterFirstRead(reader, writer, copy)
        matrix = _search.load_matrix(racing, "memory", scope_key, dimension)  # type: ignore[arg-type]
        assert racing.committed
        assert len(matrix) == 20
        assert len(_search.load_matrix(reader, "memory", scope_key, dimension)) == 24
        assert not reader.in_transaction
    finally:
        reader.close()
        writer.close()


# Run in another process: write one more turn to a scope.
ANOTHER_TURN = """
import sys, anyio, satchel

async def main(path):
    async with satchel.open_runtime(path, embedder=satchel.HashingEmbedder()) as rt:
        await rt.add_memories("chat", [satchel.MemoryEntry(text="Ben: thanks, the kestrel left")])

anyio.run(main, sys.argv[1])
"""


async def test_evidence_is_rated_with_another_processs_writes(tmp_path: Path) -> None:
    """A store keeps a scope's counts for rating evidence while the scope is unchanged;
    another process's write to it changes them, and the next read rates as a store
    opened afresh does."""
    path = tmp_path / "shared.db"
    store = await satchel.stores.SqliteStore.open(str(path))
    try:
        async with satchel.open_runtime(store=store, embedder=satchel.HashingEmbedder()) as rt:
            await rt.add_memories(
                "chat",
                [
                    satchel.MemoryEntry(text="Ana: thanks!"),
                    satchel.MemoryEntry(text="Ben: the kestrel nested in the chimney"),
                ],
            )
            ask = satchel.PrepareContextRequest(scope_id="chat", query="kestrel chimney thanks")
            before = ratings(await rt.explain_context(ask))
            await anyio.run_process([sys.executable, "-c", ANOTHER_TURN, str(path)])
            after = ratings(await rt.explain_context(ask))
        fresh = await satchel.stores.SqliteStore.open(str(path))
        async with satchel.open_runtime(store=fresh, embedder=satchel.HashingEmbedder()) as rt:
            again = ratings(await rt.explain_context(ask))
    finally:
        await store.aclose()
    assert after == again
    assert after != before


def ratings(explained: satchel.Explanation) -> dict[str | None, float | None]:
    """Each delivered turn's score, which its rating moves."""
    items = satchel.parse_context(explained.context.content)
    return {
        item.text: receipt.score for item, receipt in zip(items, explained.receipts, strict=True)
    }


async def test_a_round_of_searches_looks_for_other_commits_once(tmp_path: Path) -> None:
    """Reads outside a round each look for other connections' commits; the reads of one
    round look once, at the first: a commit landing during the round is seen by the
    next round (another store on the same file commits as another process does)."""
    path = tmp_path / "shared.db"
    ours = await satchel.stores.SqliteStore.open(str(path))
    theirs = await satchel.stores.SqliteStore.open(str(path))
    note = [satchel.MemoryEntry(text="kestrel note")]
    try:
        async with (
            satchel.open_runtime(store=ours, embedder=satchel.HashingEmbedder()),
            satchel.open_runtime(store=theirs, embedder=satchel.HashingEmbedder()) as other,
        ):
            await ours.evidence("memory", "team", [])
            version = ours.scope_version("team")
            await other.add_memories("team", note)
            await ours.evidence("memory", "team", [])  # outside a round: looks
            assert ours.scope_version("team") == version + 1
            with searching():
                await ours.evidence("memory", "team", [])  # the round's look
                await other.add_memories("team", note)
                await ours.evidence("memory", "team", [])
                await ours.neighbours("memory", "team", [1])
                assert ours.scope_version("team") == version + 1
            with searching():
                await ours.evidence("memory", "team", [])
                assert ours.scope_version("team") == version + 2
    finally:
        await theirs.aclose()
        await ours.aclose()


# Run in another process: write one topic note into a scope.
TOPIC = """
import sys, anyio, satchel

async def main(path, scope):
    async with satchel.open_runtime(path, embedder=satchel.HashingEmbedder()) as rt:
        topic = satchel.TopicMemory(title="kestrel rotation", text="the kestrel rotation plan")
        await rt.add_topic_memories(scope, [topic])

anyio.run(main, *sys.argv[1:])
"""


async def test_a_family_another_process_fills_is_searched_by_the_next_prepare(
    tmp_path: Path,
) -> None:
    """This runtime settles the topic search of a scope holding no topic note (the store
    says the family holds nothing); once another process writes one, the next prepare
    looks for that commit before it settles anything, and finds the note."""
    path = tmp_path / "shared.db"
    ask = satchel.PrepareContextRequest(scope_id="team", query="kestrel rotation plan")
    async with satchel.open_runtime(str(path), embedder=satchel.HashingEmbedder()) as rt:
        await rt.add_memories("team", [satchel.MemoryEntry(text="lunch at noon")])
        before = await rt.prepare_context(ask)
        assert "the kestrel rotation plan" not in (before.content or "")
        await anyio.run_process([sys.executable, "-c", TOPIC, str(path), "team"])
        after = await rt.prepare_context(ask)
    assert "the kestrel rotation plan" in (after.content or "")
