"""Stores written with an older text analysis are re-analysed when opened: SQLite
schema 5 -> 6, 7 -> 8 and 10 -> 11, OceanBase schema 1 -> 2, 7 -> 8 and 8 -> 9 re-derive
every term, term statistic and named day from the records' text, as a store written now
would hold them."""

from __future__ import annotations

import re
import sqlite3
import uuid
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import anyio
import numpy as np
import pytest
import Stemmer

import satchel
from satchel.stores import OceanBaseStore, PoolRequest, SqliteStore
from satchel.stores.oceanbase import _rows as oceanbase_rows
from satchel.stores.oceanbase._schema import SCHEMA_VERSION
from satchel.stores.sqlite._schema import SCHEMA_VERSION as SQLITE_SCHEMA
from satchel.stores.testing import memories, records
from satchel.vocabulary import _analysis
from satchel.vocabulary._analysis import analyse_query
from satchel.vocabulary._memo import forget_texts

from .test_oceanbase import admin

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

pytestmark = pytest.mark.anyio

MAY_8 = datetime(2023, 5, 8, 13, 0, tzinfo=UTC)
QUESTION = "What to buy?"  # one term: "buy"
_SNOWBALL = Stemmer.Stemmer("english")


def snowball_term(word: str) -> str:
    """``_term`` as it was before the lemmatiser: Snowball alone."""
    if 2 < len(word) < 64 and "a" <= word[-1] <= "z":
        stem: str = _SNOWBALL.stemWord(word)
        return stem
    return word


def vectors(count: int) -> Any:
    return np.repeat(np.eye(4, dtype=np.float32)[:1], count, axis=0)


def dated(text: str, hours: int, thread: str | None = None) -> satchel.MemoryEntry:
    return satchel.MemoryEntry(text=text, created_at=MAY_8 + timedelta(hours=hours), thread=thread)


async def write_scenario(store: Any) -> None:
    """Every family in two scopes, a retired memory version, and texts whose irregular
    forms ("bought", "went", "children", "mice", "taught") the two analyses treat
    apart."""
    await store.bind_embedder("test", 4)
    entries = [
        dated("Caroline bought a guitar on May 7, 2023", 0, thread="t"),
        dated("Melanie went camping with the children", 1, thread="t"),
        dated("they ate at the new place", 2),
        satchel.MemoryEntry(text="undated: the mice ran off"),
    ]
    refs = await memories(store, "c", entries, vectors(len(entries)))
    await store.update_memory(refs[2], dated("they ate pizza; the geese flew by", 3), vectors(1))
    await memories(store, "d", [dated("Bob taught the children chess", 0)], vectors(1))
    experience = satchel.Experience(
        situation="the build broke", action="we rebuilt it", outcome="it ran", lesson="pin"
    )
    await records(store, "experience", "c", [experience])
    topic = satchel.TopicMemory(title="Shopping", text="Caroline bought strings and picks")
    await records(store, "topic-memory", "c", [topic], vectors(1))
    resource = satchel.Resource(
        uri="file://notes", body="body", abstract="What we bought", overview="Mice, children"
    )
    await records(store, "resource", "c", [resource], vectors(1))


async def found_by_question(store: Any, question: str = QUESTION) -> list[str]:
    """The texts the lexical channel finds in scope "c" for ``question``."""
    pool = await store.retrieve("memory", "c", PoolRequest(analyse_query(question), None, 16))
    evidence = await store.evidence("memory", "c", pool.lexical_keys.tolist())
    return [evidence[key].text for key in pool.lexical_keys.tolist()]


# -- SQLite ---------------------------------------------------------------------------


def sqlite_state(path: Path) -> dict[str, Any]:
    """Everything derived from text, keyed by scope, record text (a resource: its URI)
    and revision rather than row, so two files written alike compare equal. Document
    frequencies of 0 are history (a term whose records were all retired), not content:
    they are left out."""
    with sqlite3.connect(path) as conn:
        stats = conn.execute(
            "SELECT t.family, s.scope, t.term, t.df FROM term_stats t"
            " JOIN scopes s USING (scope_key) WHERE t.df > 0 ORDER BY 1, 2, 3"
        ).fetchall()
        terms = {
            table: conn.execute(
                f"SELECT s.scope, coalesce(r.text, r.rid), r.revision, f.terms FROM {table} f"
                " JOIN records r ON r.row = f.rowid JOIN scopes s USING (scope_key)"
                " ORDER BY 1, 2, 3"
            ).fetchall()
            for table in ("fts_memory", "fts_experience", "fts_topic", "fts_resource")
        }
        days = conn.execute(
            "SELECT s.scope, r.text, r.revision, d.start_ts, d.end_ts FROM mentioned_days d"
            " JOIN records r USING (row) JOIN scopes s ON s.scope_key = r.scope_key"
            " ORDER BY 1, 2, 3, 4"
        ).fetchall()
        schema = conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()[0]
    return {"stats": stats, "terms": terms, "days": days, "schema": schema}


def make_version_5(path: Path) -> None:
    """Mark a file written with Snowball-only analysis as schema 5, and spoil its named
    days, which the migration must derive again too."""
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE meta SET value = '5' WHERE key = 'schema'")
        conn.execute("DELETE FROM mentioned_days WHERE start_ts > 0")
        conn.execute("INSERT INTO mentioned_days VALUES (1, 'memory', 1, 0, 86400)")


async def test_a_sqlite_store_of_the_older_analysis_is_reanalysed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A schema 5 file, analysed by Snowball alone, is opened by this code: a question
    in the base form ("buy") finds the entry that says "bought", and every term, term
    statistic and named day equals what a store written now holds. Opening it again,
    or migrating it twice, changes nothing."""
    old, fresh = tmp_path / "old.db", tmp_path / "fresh.db"
    with monkeypatch.context() as patch:
        patch.setattr(_analysis, "_term", snowball_term)
        store = await SqliteStore.open(str(old))
        await write_scenario(store)
        assert await found_by_question(store) == []  # "bought" is not "buy" for Snowball
        await store.aclose()
    make_version_5(old)
    before = sqlite_state(old)

    store = await SqliteStore.open(str(old))
    assert await found_by_question(store) == ["Caroline bought a guitar on May 7, 2023"]
    await store.aclose()
    store = await SqliteStore.open(str(fresh))
    await write_scenario(store)
    await store.aclose()

    migrated, expected = sqlite_state(old), sqlite_state(fresh)
    assert migrated == expected
    assert migrated["schema"] == SQLITE_SCHEMA
    assert migrated["terms"] != before["terms"]
    assert migrated["stats"] != before["stats"]
    assert migrated["days"] != before["days"]
    assert [text for _, text, *_ in migrated["days"]] == ["Caroline bought a guitar on May 7, 2023"]
    with sqlite3.connect(old) as conn:  # no statistic left at 0 by the old history
        assert conn.execute("SELECT count(*) FROM term_stats WHERE df <= 0").fetchone() == (0,)

    store = await SqliteStore.open(str(old))  # the newest schema now: nothing to do
    await store.aclose()
    assert sqlite_state(old) == expected
    with sqlite3.connect(old) as conn:
        conn.execute("UPDATE meta SET value = '5' WHERE key = 'schema'")
    store = await SqliteStore.open(str(old))  # the migration again, on its own output
    assert await found_by_question(store) == ["Caroline bought a guitar on May 7, 2023"]
    await store.aclose()
    assert sqlite_state(old) == expected


def without_chat_spellings(patch: pytest.MonkeyPatch) -> None:
    """The analysis as it was before schema 8: chat spellings are words of their own
    (the terms kept by word forgotten as the patch starts, and again by the caller
    as it ends)."""
    _analysis._term.cache_clear()
    patch.setattr(_analysis, "_CHAT_SPELLINGS", {})
    patch.setattr(_analysis, "_STRETCHED", re.compile("(?!)"))


def forget_old_terms() -> None:
    _analysis._term.cache_clear()
    forget_texts()


def with_diacritics(patch: pytest.MonkeyPatch) -> None:
    """The analysis as it was before SQLite schema 11 and OceanBase schema 9: a Latin
    letter keeps its diacritic ("café" a word of its own)."""
    forget_old_terms()
    patch.setattr(_analysis, "_latin_bases", dict)


#: Each older analysis a store is re-analysed from: how it analysed (a patch), the
#: SQLite and OceanBase schemas of it, a question and a turn it kept apart.
OLDER = {
    "chat spellings": (
        without_chat_spellings,
        "7",
        7,
        "Whose birthday was it?",
        "Ana: my bday party was sooo fun",
    ),
    "diacritics": (with_diacritics, "10", 8, "Where is the cafe?", "Zoë: the café by José's place"),
}


async def write_turn(store: Any, said: str) -> None:
    await store.bind_embedder("test", 4)
    await memories(store, "c", [dated(said, 0, thread="t")], vectors(1))


@pytest.mark.parametrize("older", list(OLDER))
async def test_a_sqlite_store_of_an_older_analysis_reads_as_one_written_now(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, older: str
) -> None:
    """A schema 7 file, whose turns were analysed with "bday" a word of its own, or a
    schema 10 one, with "café" one, is re-analysed when opened: the question's
    "birthday" or "cafe" finds the turn, and what the file derives from text equals a
    store written now."""
    analysed, version, _, question, said = OLDER[older]
    old, fresh = tmp_path / "old.db", tmp_path / "fresh.db"
    with monkeypatch.context() as patch:
        analysed(patch)
        store = await SqliteStore.open(str(old))
        await write_turn(store, said)
        assert await found_by_question(store, question) == []
        await store.aclose()
    forget_old_terms()
    with sqlite3.connect(old) as conn:
        conn.execute("UPDATE meta SET value = ? WHERE key = 'schema'", (version,))
    before = sqlite_state(old)

    store = await SqliteStore.open(str(old))
    assert await found_by_question(store, question) == [said]
    await store.aclose()
    store = await SqliteStore.open(str(fresh))
    await write_turn(store, said)
    await store.aclose()
    migrated = sqlite_state(old)
    assert migrated == sqlite_state(fresh)
    assert migrated["schema"] == SQLITE_SCHEMA == "11"
    assert migrated["terms"] != before["terms"]


# -- OceanBase --------------------------------------------------------------------------


async def oceanbase_state(socket: str, database: str) -> dict[str, Any]:
    """Everything the OceanBase store derives from text (term frequencies of 0 left
    out, as for SQLite), and the schema version."""
    queries = {
        "terms": "SELECT scope, family, k, live, terms FROM {db}.satchel_records ORDER BY 1, 2, 3",
        "stats": "SELECT scope, family, term, df FROM {db}.satchel_terms WHERE df > 0"
        " ORDER BY 1, 2, 3",
        "totals": "SELECT scope, family, live_rows, threaded, term_total FROM {db}.satchel_counts"
        " ORDER BY 1, 2",
        "days": "SELECT scope, family, k, low, high FROM {db}.satchel_mentions ORDER BY 1, 2, 3, 4",
        "schema": "SELECT value FROM {db}.satchel_meta WHERE name = 'schema'",
    }
    return {name: await admin(socket, query.format(db=database)) for name, query in queries.items()}


@pytest.mark.slow
async def test_an_oceanbase_store_of_the_older_analysis_is_reanalysed(
    oceanbase: Callable[..., OceanBaseStore], seekdb: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same on OceanBase (schema 1 -> 2): the analysed column, term statistics,
    term totals and named days equal a database written now; running the step again
    changes nothing, even when two stores (two processes, say) open it at once."""
    with monkeypatch.context() as patch:
        patch.setattr(_analysis, "_term", snowball_term)
        store = oceanbase()
        await write_scenario(store)
        assert await found_by_question(store) == []
        await store.aclose()
    database = store._database
    await admin(seekdb, f"UPDATE {database}.satchel_meta SET value = '1' WHERE name = 'schema'")
    await admin(seekdb, f"DELETE FROM {database}.satchel_mentions")  # spoilt, to derive again
    await admin(seekdb, f"UPDATE {database}.satchel_counts SET term_total = term_total + 99")
    before = await oceanbase_state(seekdb, database)
    versions = await admin(seekdb, f"SELECT scope, version FROM {database}.satchel_scopes")

    store = oceanbase()
    assert await found_by_question(store) == ["Caroline bought a guitar on May 7, 2023"]
    await store.aclose()
    other = f"t_{uuid.uuid4().hex[:12]}"
    fresh = OceanBaseStore(unix_socket=seekdb, database=other)
    await write_scenario(fresh)
    await fresh.aclose()

    migrated, expected = (
        await oceanbase_state(seekdb, database),
        await oceanbase_state(seekdb, other),
    )
    assert migrated == expected
    assert migrated["schema"] == [(str(SCHEMA_VERSION),)]
    assert migrated["terms"] != before["terms"]
    assert migrated["stats"] != before["stats"]
    assert migrated["days"]
    assert not before["days"]
    assert migrated["totals"] != before["totals"]
    moved = await admin(seekdb, f"SELECT scope, version FROM {database}.satchel_scopes")
    steps = len([version for version in oceanbase_rows.STEPS if version > 1])  # one move each
    assert {scope: version + steps for scope, version in versions} == dict(moved)

    await admin(seekdb, f"UPDATE {database}.satchel_meta SET value = '1' WHERE name = 'schema'")
    stores = [oceanbase(), oceanbase()]  # the step again, on its own output, by two at once
    async with anyio.create_task_group() as group:
        for store in stores:
            group.start_soon(store.bind_embedder, "test", 4)
    for store in stores:
        await store.aclose()
    assert await oceanbase_state(seekdb, database) == expected
    await admin(seekdb, f"DROP DATABASE {other}")


@pytest.mark.slow
@pytest.mark.parametrize("older", list(OLDER))
async def test_an_oceanbase_store_of_an_older_analysis_reads_as_one_written_now(
    oceanbase: Callable[..., OceanBaseStore],
    seekdb: str,
    monkeypatch: pytest.MonkeyPatch,
    older: str,
) -> None:
    """The same on OceanBase (schema 7 -> 8, 8 -> 9): the question's "birthday" or
    "cafe" finds the turn that says "bday" or "café", and the derived columns equal a
    database written now."""
    analysed, _, version, question, said = OLDER[older]
    with monkeypatch.context() as patch:
        analysed(patch)
        store = oceanbase()
        await write_turn(store, said)
        assert await found_by_question(store, question) == []
        await store.aclose()
    forget_old_terms()
    database = store._database
    await admin(
        seekdb, f"UPDATE {database}.satchel_meta SET value = '{version}' WHERE name = 'schema'"
    )
    before = await oceanbase_state(seekdb, database)

    store = oceanbase()
    assert await found_by_question(store, question) == [said]
    await store.aclose()
    other = f"t_{uuid.uuid4().hex[:12]}"
    fresh = OceanBaseStore(unix_socket=seekdb, database=other)
    await write_turn(fresh, said)
    await fresh.aclose()
    migrated = await oceanbase_state(seekdb, database)
    assert migrated == await oceanbase_state(seekdb, other)
    assert migrated["schema"] == [(str(SCHEMA_VERSION),)] == [("9",)]
    assert migrated["terms"] != before["terms"]
    await admin(seekdb, f"DROP DATABASE {other}")
