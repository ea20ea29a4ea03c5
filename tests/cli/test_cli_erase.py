"""``satchel erase``: the real command in a subprocess (stdin no terminal), and in-process
through ``satchel.cli.main`` with a terminal stood in for stdin."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest

from satchel.vocabulary._refs import compact_id, full_id

from ._driver import run, write_workload

if TYPE_CHECKING:
    from pathlib import Path

BACKENDS = pytest.mark.parametrize("backend", ["asyncio", "trio"])
STAGING = "The staging cluster freezes on Mondays."
ENTRIES = [
    {"id": "m1", "scope": "ops", "text": STAGING},
    {"id": "m2", "scope": "ops", "text": "Lunch is at noon."},
    {"id": "p1", "scope": "ops", "family": "profile", "text": "A small platform team."},
    {"id": "t1", "scope": "ops", "family": "topic-memory", "title": "Mondays",
     "text": "Nothing ships on Mondays."},
    {"id": "m3", "scope": "chat-1", "text": "Alice moved to Lisbon."},
]  # fmt: skip


class _Terminal(io.StringIO):
    """stdin as a terminal, holding what the user types."""

    def isatty(self) -> bool:
        return True


@pytest.fixture
def database(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    path = str(tmp_path / "team.db")
    workload = write_workload(tmp_path / "workload", ENTRIES)
    code, _, err = run(capsys, "ingest", str(workload), "--db", path, "--embedder", "hashing")
    assert code == 0, err
    return path


def entry_id(database: str, workload_id: str) -> str:
    """The full entry id of the memory ingested as ``workload_id`` (from the id map)."""
    with open(database + ".ids.jsonl", encoding="utf-8") as lines:
        for line in lines:
            mapped = json.loads(line)
            if mapped["id"] == workload_id:
                return full_id(mapped["key"][2])  # the map spells it as a pack does
    raise AssertionError(f"{workload_id} is not in the id map")


def satchel(*argv: str) -> subprocess.CompletedProcess[str]:
    """The real command, its stdin no terminal (``/dev/null``)."""
    return subprocess.run(
        [sys.executable, "-m", "satchel", *argv],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
    )


def packed(capsys: pytest.CaptureFixture[str], database: str, query: str) -> str:
    ask = ["prepare", "--db", database, "--scope", "ops", "--embedder", "hashing", query]
    code, out, err = run(capsys, *ask)
    assert code == 0, err
    return out


# ------------------------------------------------------------------- the real command


def test_erase_by_id_with_yes_then_get_says_erased(
    capsys: pytest.CaptureFixture[str], database: str
) -> None:
    """`satchel erase --id ... --yes` erases the entry without asking, says what it
    erased on stderr, and `satchel get` of its version then fails saying it was erased."""
    full = entry_id(database, "m1")
    assert STAGING in packed(capsys, database, "staging cluster")
    done = satchel("erase", "--db", database, "--scope", "ops", "--id", full, "--yes")
    assert (done.returncode, done.stdout) == (0, ""), done.stderr
    assert done.stderr == (
        f"satchel erase: erased 1 version of memory entry {compact_id(full)!r} in scope 'ops';"
        " nothing of them stays readable\n"
    )
    got = satchel("get", "--db", database, "--scope", "ops", "--id", full, "--version", "1")
    assert (got.returncode, got.stdout) == (1, "")
    assert got.stderr.startswith("satchel get: error: ")
    assert "was erased" in got.stderr
    assert STAGING not in packed(capsys, database, "staging cluster")


def test_without_yes_and_no_terminal_it_refuses(
    capsys: pytest.CaptureFixture[str], database: str
) -> None:
    """stdin is no terminal and no --yes: exit 2 saying to pass --yes; nothing erased."""
    full = entry_id(database, "m1")
    for what in (["--id", full], ["--all"]):
        done = satchel("erase", "--db", database, "--scope", "ops", *what)
        assert (done.returncode, done.stdout) == (2, "")
        assert done.stderr.startswith("satchel erase: error: will not erase ")
        assert "stdin is not a terminal; pass --yes" in done.stderr
    assert STAGING in packed(capsys, database, "staging cluster")


# ------------------------------------------------------------------------- in process


@BACKENDS
def test_erase_all_takes_every_record_of_the_scope(
    capsys: pytest.CaptureFixture[str], database: str, backend: str
) -> None:
    """--all --yes erases every record of every family in the scope, the profile too
    (4 records); another scope keeps its own, and a second run has nothing to erase."""
    where = ["--db", database, "--backend", backend]
    code, out, err = run(capsys, "erase", *where, "--scope", "ops", "--all", "--yes")
    assert (code, out) == (0, "")
    assert err == (
        "satchel erase: erased 4 records of every family in scope 'ops';"
        " nothing of them stays readable\n"
    )
    code, out, _ = run(capsys, "scopes", *where, "--json")
    assert [row["scope"] for row in json.loads(out)] == ["chat-1"]
    code, out, err = run(capsys, "erase", *where, "--scope", "ops", "--all", "--yes")
    assert (code, out) == (1, "")
    assert err == "satchel erase: error: nothing erased: scope 'ops' holds no record\n"


def mapped_ids(database: str) -> list[str]:
    """The workload ids the id map beside ``database`` holds, in file order."""
    with open(database + ".ids.jsonl", encoding="utf-8") as lines:
        return [json.loads(line)["id"] for line in lines if line.strip()]


def test_erase_purges_the_ingest_id_map(capsys: pytest.CaptureFixture[str], database: str) -> None:
    """Erase leaves no erased key or citation in ``DB.ids.jsonl``: --id drops that
    entry's line, --all every line of the scope; other lines stay as they were."""
    full = entry_id(database, "m1")
    where = ["--db", database, "--scope", "ops", "--yes"]
    code, _, err = run(capsys, "erase", *where, "--id", full)
    assert code == 0, err
    assert sorted(mapped_ids(database)) == ["m2", "m3", "p1", "t1"]
    with open(database + ".ids.jsonl", encoding="utf-8") as lines:
        assert full not in lines.read()
    code, _, err = run(capsys, "erase", *where, "--all")
    assert code == 0, err
    assert mapped_ids(database) == ["m3"]


def test_the_id_a_pack_prints_erases_the_entry(
    capsys: pytest.CaptureFixture[str], database: str
) -> None:
    """The 22-character id of a pack's item line names the same entry as its full id."""
    line = next(
        line for line in packed(capsys, database, "staging").splitlines() if STAGING in line
    )
    short = json.loads(line)[2]
    assert len(short) == 22
    full = entry_id(database, "m1")  # read first: the erase purges the id map
    where = ["--db", database, "--scope", "ops"]
    code, _, err = run(capsys, "erase", *where, "--id", short, "--yes")
    assert code == 0, err
    assert repr(short) in err  # the id as the pack spelled it
    assert compact_id(full) == short
    code, _, err = run(capsys, "get", *where, "--id", full, "--version", "1")
    assert code == 1
    assert "was erased" in err


def test_nothing_to_erase_exits_1(capsys: pytest.CaptureFixture[str], database: str) -> None:
    """An unknown entry or scope, or an entry erased already, is exit 1 naming it."""
    full = entry_id(database, "m1")
    assert run(capsys, "erase", "--db", database, "--scope", "ops", "--id", full, "--yes")[0] == 0
    for scope, entry in (("ops", full), ("ops", "0" * 32), ("nowhere", full)):
        argv = ["erase", "--db", database, "--scope", scope, "--id", entry, "--yes"]
        code, out, err = run(capsys, *argv)
        assert (code, out) == (1, "")
        assert err.startswith("satchel erase: error: nothing erased: no memory entry ")
        assert repr(compact_id(entry)) in err
        assert repr(scope) in err


@pytest.mark.parametrize(
    ("answer", "erased"),
    [("y\n", True), ("yes\n", True), ("\n", False), ("n\n", False), ("", False)],
)
def test_on_a_terminal_it_asks_first(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    database: str,
    answer: str,
    erased: bool,
) -> None:
    """Without --yes, the question goes to stderr and only y or yes erases; anything
    else (Enter, n, end of input) is exit 1 with nothing erased."""
    monkeypatch.setattr(sys, "stdin", _Terminal(answer))
    full = entry_id(database, "m1")
    code, out, err = run(capsys, "erase", "--db", database, "--scope", "ops", "--id", full)
    assert out == ""
    assert err.startswith(
        f"satchel erase: erase every version of memory entry {compact_id(full)!r} in scope"
        " 'ops' in"
        f" {database}? It cannot be undone. [y/N] "
    )
    assert code == (0 if erased else 1)
    assert ("erased 1 version" in err) is erased
    assert ("nothing erased: not confirmed" in err) is not erased
    assert (STAGING in packed(capsys, database, "staging cluster")) is not erased


@pytest.mark.parametrize(
    "bad",
    [
        ["--scope", "ops"],
        ["--scope", "ops", "--id", "x", "--all"],
        ["--scope", " ", "--all"],
        ["--scope", "ops", "--id", ""],
        ["--scope", "ops", "--id", "x\n"],
        ["--id", "x"],
    ],
    ids=["neither", "both", "blank-scope", "empty-id", "unprintable-id", "no-scope"],
)
def test_bad_input_exits_2(
    capsys: pytest.CaptureFixture[str], database: str, bad: list[str]
) -> None:
    """Exactly one of --id and --all, a printable scope and id: else a usage error."""
    code, out, err = run(capsys, "erase", "--db", database, *bad, "--yes")
    assert (code, out) == (2, "")
    assert "usage: satchel erase" in err


def test_erase_never_creates_a_database(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """No file at --db is bad input, said before any question; none is created."""
    path = tmp_path / "missing.db"
    code, _, err = run(capsys, "erase", "--db", str(path), "--scope", "s", "--all")
    assert code == 2
    assert "no database at" in err
    assert not path.exists()


def test_help_says_what_erase_guarantees_and_what_not(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "erase", "--help")
    assert code == 0
    text = " ".join(out.split())
    assert "nothing stays readable" in text
    assert "backups and copies of the database" in text
    assert "docs/stores.md" in text
    assert "examples:\n  satchel erase --db team.db" in out
    code, out, _ = run(capsys, "--help")
    assert "erase" in out
