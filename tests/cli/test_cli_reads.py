"""The commands that read (``prepare``, ``get``, ``scopes``, ``forget``, ``erase``) as a
user runs them, each in a process of its own: they take the ids a pack prints, never
make a store out of a mistyped path, and tell a missing scope from an empty answer."""

from __future__ import annotations

from typing import TYPE_CHECKING

import anyio
import pytest

import satchel
from satchel.vocabulary._refs import compact_id

from ._driver import run, satchels
from ._driver import satchel as run_satchel

if TYPE_CHECKING:
    from pathlib import Path

S = "web"
HASHING = ("--embedder", "hashing")


@pytest.fixture
def database(tmp_path: Path) -> tuple[str, satchel.MemoryRef]:
    """A database holding two memories in scope ``web``; the first one's ref."""

    async def write() -> satchel.MemoryRef:
        path = str(tmp_path / "team.db")
        async with satchel.open_runtime(path, embedder=satchel.HashingEmbedder()) as runtime:
            refs = await runtime.add_memories(
                S,
                [
                    satchel.MemoryEntry(text="The deploy pipeline runs on Kestrel CI."),
                    satchel.MemoryEntry(text="Backups run nightly at 02:00 UTC."),
                ],
            )
        return refs[0]

    ref = anyio.run(write)
    return str(tmp_path / "team.db"), ref


def test_get_and_forget_take_the_id_a_pack_prints(
    database: tuple[str, satchel.MemoryRef],
) -> None:
    """--id takes the 22 characters a pack prints as well as the full id: get reads the
    version, forget forgets it, and a second forget says it was forgotten already."""
    db, ref = database
    short = compact_id(ref.entry_id)
    assert len(short) == 22
    cited = ("--db", db, "--scope", S, "--id", short, "--version", "1")
    got = run_satchel("get", *cited)
    assert got.returncode == 0, got.stderr
    assert '"text": "The deploy pipeline runs on Kestrel CI."' in got.stdout
    first = run_satchel("forget", *cited)
    assert first.returncode == 0, first.stderr
    assert f"forgot memory entry {short!r} in scope {S!r}" in first.stderr
    again = run_satchel("forget", "--db", db, "--scope", S, "--id", ref.entry_id, "--version", "1")
    assert again.returncode == 0, again.stderr
    assert "was forgotten already; nothing changed" in again.stderr


def test_an_id_a_pack_prints_with_a_leading_dash_is_taken(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """One printed id in 64 begins with "-" (URL-safe base64): ``--id -...`` is still the
    id, not an unknown option, for get, forget and erase."""
    from satchel.stores import _rules

    monkeypatch.setattr(_rules, "new_record_id", lambda: "f8" + "0" * 30)
    path = str(tmp_path / "team.db")

    async def write() -> satchel.MemoryRef:
        async with satchel.open_runtime(path, embedder=satchel.HashingEmbedder()) as runtime:
            (ref,) = await runtime.add_memories(S, [satchel.MemoryEntry(text="leading dash")])
            return ref

    short = compact_id(anyio.run(write).entry_id)
    assert short.startswith("-")
    cited = ("--db", path, "--scope", S, "--id", short, "--version", "1")
    code, out, err = run(capsys, "get", *cited)
    assert (code, err) == (0, "")
    assert '"text": "leading dash"' in out
    assert run(capsys, "forget", *cited)[0] == 0
    code, _, err = run(capsys, "erase", "--db", path, "--scope", S, "--id", short, "--yes")
    assert code == 0, err
    code, _, err = run(capsys, "get", "--db", path, "--scope", S, "--id", "--version", "1")
    assert code == 2
    assert "argument --id: expected one argument" in err  # an option is still no id


def test_after_a_bare_double_dash_id_is_left_as_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--id`` and an id after ``--`` are two positional arguments, not an option and
    its value: a prepare given them beside its query has one argument too many."""
    path = str(tmp_path / "team.db")
    printed = "-" + "A" * 21
    code, _, err = run(capsys, "prepare", "--db", path, "--scope", S, "--", "--id", printed)
    assert code == 2
    assert f"unrecognized arguments: {printed}" in err


def test_reading_commands_never_create_a_store_at_a_mistyped_path(tmp_path: Path) -> None:
    """prepare, get, scopes, forget and erase refuse a --store URL naming no SQLite file
    or seekdb directory (bad input, exit 2) and leave nothing behind."""
    missing = f"sqlite://{tmp_path}/nope.db"
    cited = ("--scope", S, "--id", "x", "--version", "1")
    done = satchels(
        ("prepare", "--store", missing, "--scope", S, *HASHING, "kestrel"),
        ("get", "--store", missing, *cited),
        ("scopes", "--store", missing),
        ("forget", "--store", missing, *cited),
        ("erase", "--store", missing, "--scope", S, "--all", "--yes"),
        ("scopes", "--store", f"seekdb://{tmp_path}/typo"),
    )
    for result in done:
        assert result.returncode == 2, (result.args, result.stderr)
        assert "--store: url names no store: there is no " in result.stderr, result.stderr
        assert "Traceback" not in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_file_that_is_no_database_is_bad_input(tmp_path: Path) -> None:
    """--db or --store naming a file that is not SQLite exits 2, as --help says of bad
    input, and the file is left as it was."""
    notes = tmp_path / "entries.jsonl"
    notes.write_text('{"id": "m1"}\n', encoding="utf-8")
    db, store = satchels(
        ("prepare", "--db", str(notes), "--scope", S, *HASHING, "kestrel"),
        ("scopes", "--store", f"sqlite://{notes}"),
    )
    assert db.returncode == 2, db.stderr
    assert f"{notes} is not a satchel database (not an SQLite file)" in db.stderr
    assert store.returncode == 2, store.stderr
    assert "is not an SQLite database" in store.stderr
    assert notes.read_text(encoding="utf-8") == '{"id": "m1"}\n'


def test_seekdb_refuses_a_directory_that_is_not_its_own(tmp_path: Path) -> None:
    """A seekdb URL naming a folder of other files (a checkout) is refused before the
    engine writes its folders into it."""
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / "README.md").write_text("a project\n", encoding="utf-8")
    workload = tmp_path / "w"
    workload.mkdir()
    (workload / "entries.jsonl").write_text('{"id": "m", "scope": "s", "text": "t"}\n')
    done = run_satchel("ingest", str(workload), "--store", f"seekdb://{checkout}", *HASHING)
    assert done.returncode == 2, done.stderr
    assert "is not a seekdb engine's" in done.stderr
    assert "README.md" in done.stderr
    assert sorted(path.name for path in checkout.iterdir()) == ["README.md"]


def test_an_empty_pack_says_when_the_scope_holds_nothing(
    database: tuple[str, satchel.MemoryRef],
) -> None:
    """A misspelt scope is not just an empty answer: the note names the scope that holds
    no record at all (still exit 0, as --help says)."""
    db, _ = database
    done = run_satchel("prepare", "--db", db, "--scope", "wbe", *HASHING, "kestrel")
    assert (done.returncode, done.stdout) == (0, ""), done.stderr
    assert done.stderr == (
        "satchel prepare: nothing relevant in wbe (status empty); scope 'wbe' holds no"
        " record at all (misspelt? 'satchel scopes' lists them)\n"
    )
