"""``open_store(url)``: a reader's ``create=False`` opens only a store that exists, and a
seekdb engine never starts in a directory of someone else's files."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

import satchel
from satchel.stores import open_store

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.anyio


def names(folder: Path) -> list[str]:
    return sorted(path.name for path in folder.iterdir())


async def test_without_create_only_an_existing_sqlite_file_opens(tmp_path: Path) -> None:
    """create=False refuses a missing file and a file that is not SQLite, creating
    nothing; an existing database opens."""
    with pytest.raises(satchel.InvalidRequestError, match="url names no store: there is no file"):
        await open_store(f"sqlite://{tmp_path}/nope.db", create=False)
    (tmp_path / "notes.txt").write_text("not a database\n", encoding="utf-8")
    with pytest.raises(satchel.InvalidRequestError, match="is not an SQLite database"):
        await open_store(f"sqlite://{tmp_path}/notes.txt", create=False)
    assert names(tmp_path) == ["notes.txt"]
    async with open_store(f"sqlite://{tmp_path}/team.db"):
        pass
    async with open_store(f"sqlite://{tmp_path}/team.db", create=False) as store:
        assert await store.scope_counts() == {}


async def test_without_create_a_seekdb_directory_must_hold_an_engine(tmp_path: Path) -> None:
    """create=False refuses a missing directory and one the engine has not written."""
    with pytest.raises(satchel.InvalidRequestError, match="there is no directory at"):
        await open_store(f"seekdb://{tmp_path}/typo", create=False)
    (tmp_path / "empty").mkdir()
    with pytest.raises(satchel.InvalidRequestError, match="holds no seekdb engine"):
        await open_store(f"seekdb://{tmp_path}/empty", create=False)
    assert names(tmp_path) == ["empty"]


async def test_seekdb_refuses_a_directory_of_other_files(tmp_path: Path) -> None:
    """A directory holding files that are not the engine's (a checkout) is refused by
    name before the engine writes anything there."""
    (tmp_path / "README.md").write_text("a project\n", encoding="utf-8")
    (tmp_path / "etc").mkdir()
    with pytest.raises(satchel.InvalidRequestError, match="not a seekdb engine's") as refused:
        await open_store(f"seekdb://{tmp_path}")
    assert "README.md" in str(refused.value)
    assert names(tmp_path) == ["README.md", "etc"]
