"""Store faults are StoreErrors that say what happened and what to do; nothing is written
into a file that is not satchel's, and nothing is acknowledged that would be lost."""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import sqlite3
from typing import TYPE_CHECKING

import pytest

import satchel

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.anyio


def entries(count: int = 3) -> list[satchel.MemoryEntry]:
    return [satchel.MemoryEntry(text=f"kestrel note {n} " + "padding " * 40) for n in range(count)]


async def test_another_applications_file_is_refused_and_left_alone(tmp_path: Path) -> None:
    """A SQLite file with another application's tables is refused by name, unchanged."""
    path = tmp_path / "app.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)")
    with pytest.raises(satchel.StoreError, match="another application"):
        async with satchel.open_runtime(str(path), embedder=satchel.HashingEmbedder()):
            pass
    with sqlite3.connect(path) as conn:
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
    assert tables == {"users"}


async def test_a_file_that_is_no_database_is_a_store_error(tmp_path: Path) -> None:
    """Opening garbage raises StoreError, saying what to check, never a raw sqlite error."""
    path = tmp_path / "junk.db"
    path.write_bytes(b"this is not a database at all " * 400)
    with pytest.raises(satchel.StoreError, match=r"cannot open database .*restore it"):
        async with satchel.open_runtime(str(path), embedder=satchel.HashingEmbedder()):
            pass


async def test_damaged_pages_are_noticed_and_raise_store_errors_only(tmp_path: Path) -> None:
    """A file damaged after its first page fails at open or on a read with a StoreError
    that says to restore it: never a raw sqlite3 error, and never unnoticed (a record
    read back as missing may pass, but the prepare must not). The damage is the same
    on every run."""
    path = tmp_path / "g.db"
    async with satchel.open_runtime(str(path), embedder=satchel.HashingEmbedder()) as rt:
        refs = await rt.add_memories("s", entries(200))
    data = bytearray(path.read_bytes())
    page = 4096
    noise = random.Random(7)
    for start in range(2 * page, len(data) - page, 3 * page):
        data[start + 100 : start + page - 100] = noise.randbytes(page - 200)
    path.write_bytes(bytes(data))

    async def open_read_and_prepare() -> None:
        async with satchel.open_runtime(str(path), embedder=satchel.HashingEmbedder()) as rt:
            for ref in refs[::20]:
                with contextlib.suppress(satchel.NotFoundError):
                    await rt.get_memory(ref)
            await rt.prepare_context(satchel.PrepareContextRequest(scope_id="s", query="kestrel"))

    with pytest.raises(satchel.StoreError, match="restore it from a backup"):
        await open_read_and_prepare()


@pytest.mark.parametrize("remove", ["file", "folder"])
async def test_a_write_after_the_file_was_removed_fails_and_says_so(
    tmp_path: Path, remove: str
) -> None:
    """Once the database file (or its folder) is removed while open, add, update and
    forget raise StoreError instead of writing to a file that will vanish at close."""
    folder = tmp_path / "data"
    folder.mkdir()
    path = folder / "g.db"
    async with satchel.open_runtime(str(path), embedder=satchel.HashingEmbedder()) as rt:
        (ref,) = await rt.add_memories("s", entries(1))
        if remove == "file":
            for name in ("g.db", "g.db-wal", "g.db-shm"):
                (folder / name).unlink(missing_ok=True)
        else:
            shutil.rmtree(folder)
        with pytest.raises(satchel.StoreError, match="removed or replaced"):
            await rt.add_memories("s", entries(1))
        with pytest.raises(satchel.StoreError, match="removed or replaced"):
            await rt.update_memory(ref, satchel.MemoryEntry(text="changed"))
        with pytest.raises(satchel.StoreError, match="removed or replaced"):
            await rt.forget_memory(ref)


async def test_a_replaced_file_is_not_written_either(tmp_path: Path) -> None:
    """A file swapped for another under the same path is refused the same way."""
    path = tmp_path / "g.db"
    async with satchel.open_runtime(str(path), embedder=satchel.HashingEmbedder()) as rt:
        await rt.add_memories("s", entries(1))
        os.replace(path, tmp_path / "moved.db")
        path.write_bytes(b"")
        with pytest.raises(satchel.StoreError, match="removed or replaced"):
            await rt.add_memories("s", entries(1))


async def test_reads_of_a_removed_or_replaced_file_fail_until_it_returns(tmp_path: Path) -> None:
    """Reads refuse a file removed or swapped under the path too (they served the old
    file's pages before, a swapped file's original text by id); putting the same file
    back serves again."""
    path = tmp_path / "g.db"
    request = satchel.PrepareContextRequest(scope_id="s", query="kestrel note")
    async with satchel.open_runtime(str(path), embedder=satchel.HashingEmbedder()) as rt:
        (ref,) = await rt.add_memories("s", entries(1))
        served = await rt.prepare_context(request)
        assert served.status == "ready"
        os.replace(path, tmp_path / "moved.db")
        for swapped in (False, True):
            if swapped:
                path.write_bytes(b"")
            with pytest.raises(satchel.StoreError, match="nothing was read from it"):
                await rt.get_memory(ref)
            with pytest.raises(satchel.SatchelError) as raised:
                await rt.prepare_context(request)
            assert "removed or replaced" in repr(raised.value) + repr(raised.value.__cause__)
        os.replace(tmp_path / "moved.db", path)
        assert (await rt.get_memory(ref)).text.startswith("kestrel note 0")
        assert await rt.prepare_context(request) == served


async def test_a_read_after_close_is_a_store_error(tmp_path: Path) -> None:
    """A store used after it closed says so instead of raising a raw sqlite error."""
    store = await satchel.SqliteStore.open(str(tmp_path / "g.db"))
    await store.aclose()
    with pytest.raises(satchel.StoreError, match="closed"):
        await store.get_memory(satchel.MemoryRef("s", "e", 1))


async def test_unusable_side_files_are_a_store_error(tmp_path: Path) -> None:
    """A -wal or -shm file that cannot be used (here: a folder in its place, since the
    tests run with permissions that ignore read-only modes) fails the open with a
    StoreError saying what to check, not a raw sqlite error."""
    path = tmp_path / "g.db"
    async with satchel.open_runtime(str(path), embedder=satchel.HashingEmbedder()) as rt:
        await rt.add_memories("s", entries(1))
    for side in ("g.db-wal", "g.db-shm"):
        (tmp_path / side).unlink(missing_ok=True)
    (tmp_path / "g.db-shm").mkdir()
    with pytest.raises(satchel.StoreError, match="-wal and -shm files"):
        async with satchel.open_runtime(str(path), embedder=satchel.HashingEmbedder()):
            pass
