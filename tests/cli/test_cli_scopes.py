"""``satchel scopes`` and ``satchel forget``, driven in-process through ``satchel.cli.main``."""

from __future__ import annotations

import json
import uuid
from typing import TYPE_CHECKING

import anyio
import pytest

import satchel

from ._driver import run, write_workload

if TYPE_CHECKING:
    from pathlib import Path

BACKENDS = pytest.mark.parametrize("backend", ["asyncio", "trio"])
ENTRIES = [
    {"id": "m1", "scope": "ops", "text": "The staging cluster freezes on Mondays."},
    {"id": "m2", "scope": "ops", "text": "Lunch is at noon."},
    {"id": "e1", "scope": "ops", "family": "experience", "situation": "a deploy failed",
     "action": "rolled back", "outcome": "recovered", "lesson": "pin versions"},
    {"id": "p1", "scope": "ops", "family": "profile", "text": "A small platform team."},
    {"id": "t1", "scope": "chat-1", "family": "topic-memory", "title": "Lisbon",
     "text": "Alice moved there."},
    {"id": "r1", "scope": "chat-1", "family": "resource", "uri": "docs/a.md", "body": "A",
     "abstract": "alpha"},
    {"id": "m3", "scope": "chat-1", "text": "Alice moved to Lisbon."},
]  # fmt: skip
#: What ``satchel scopes --json`` prints for ``ENTRIES``.
LISTED = [
    {
        "scope": "chat-1",
        "records": {"memory": 1, "experience": 0, "topic-memory": 1, "resource": 1},
        "profile": False,
    },
    {
        "scope": "ops",
        "records": {"memory": 2, "experience": 1, "topic-memory": 0, "resource": 0},
        "profile": True,
    },
]


def ingest(capsys: pytest.CaptureFixture[str], workload: Path, *where: str) -> None:
    code, _, err = run(capsys, "ingest", str(workload), *where, "--embedder", "hashing")
    assert code == 0, err


@pytest.fixture
def workload(tmp_path: Path) -> Path:
    return write_workload(tmp_path / "workload", ENTRIES)


@pytest.fixture
def database(tmp_path: Path, workload: Path, capsys: pytest.CaptureFixture[str]) -> str:
    path = str(tmp_path / "team.db")
    ingest(capsys, workload, "--db", path)
    return path


def cited(database: str, workload_id: str) -> list[str]:
    """The ``--scope``, ``--id`` and ``--version`` of the entry ingested as ``workload_id``
    (from the id map ingest wrote beside the database)."""
    with open(database + ".ids.jsonl", encoding="utf-8") as lines:
        for line in lines:
            mapped = json.loads(line)
            if mapped["id"] == workload_id:
                _, scope, entry_id, version = mapped["key"]
                return ["--scope", scope, "--id", entry_id, "--version", str(version)]
    raise AssertionError(f"{workload_id} is not in the id map")


# --------------------------------------------------------------------------------- help


@pytest.mark.parametrize(
    ("command", "explains"),
    [("scopes", "searchable records"), ("forget", "stays readable with 'satchel get'")],
)
def test_help_explains_with_examples(
    capsys: pytest.CaptureFixture[str], command: str, explains: str
) -> None:
    """Each command's --help has a description and an examples epilog."""
    code, out, _ = run(capsys, command, "--help")
    assert code == 0
    assert explains in " ".join(out.split())
    assert f"examples:\n  satchel {command} --db team.db" in out


def test_top_level_help_lists_the_commands(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--help")
    assert code == 0
    assert "scopes" in out
    assert "forget" in out


# ------------------------------------------------------------------------------- scopes


@BACKENDS
def test_scopes_lists_each_scope_with_its_records(
    capsys: pytest.CaptureFixture[str], database: str, backend: str
) -> None:
    """One line per scope, sorted, with its searchable records per family and whether it
    has a profile; --json prints the same as a JSON array."""
    code, out, err = run(capsys, "scopes", "--db", database, "--backend", backend)
    assert (code, err) == (0, "")
    assert out == (
        "scope   memory  experience  topic-memory  resource  profile\n"
        "chat-1       1           0             1         1  no\n"
        "ops          2           1             0         0  yes\n"
    )
    code, out, _ = run(capsys, "scopes", "--db", database, "--json", "--backend", backend)
    assert code == 0
    assert json.loads(out) == LISTED


def test_scopes_of_an_empty_database_prints_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A database holding nothing: no table on stdout, a note on stderr, exit 0; with
    --json an empty array."""
    path = str(tmp_path / "empty.db")

    async def create() -> None:
        await (await satchel.SqliteStore.open(path)).aclose()

    anyio.run(create)
    code, out, err = run(capsys, "scopes", "--db", path)
    assert (code, out) == (0, "")
    assert "holds no scope" in err
    assert run(capsys, "scopes", "--db", path, "--json")[:2] == (0, "[]\n")


def test_scopes_never_creates_a_database(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """No file at --db is bad input (exit 2), and none is created."""
    path = tmp_path / "missing.db"
    code, out, err = run(capsys, "scopes", "--db", str(path))
    assert (code, out) == (2, "")
    assert "no database at" in err
    assert not path.exists()


# ------------------------------------------------------------------------------- forget


@BACKENDS
def test_forget_takes_the_entry_out_of_search(
    capsys: pytest.CaptureFixture[str], database: str, backend: str
) -> None:
    """After forget, no pack delivers the entry, the scope counts one memory fewer, and
    get still reads the version; what was done is said on stderr, stdout stays empty."""
    where = ["--db", database, "--backend", backend]
    ask = ["prepare", *where, "--scope", "ops", "--embedder", "hashing", "staging cluster"]
    assert "staging cluster freezes" in run(capsys, *ask)[1]
    citation = cited(database, "m1")
    code, out, err = run(capsys, "forget", *where, *citation)
    assert (code, out) == (0, "")
    assert err.startswith("satchel forget: forgot memory entry")
    assert citation[3] in err
    assert "staging cluster freezes" not in run(capsys, *ask)[1]
    code, out, _ = run(capsys, "get", *where, *citation)
    assert code == 0
    assert json.loads(out)["text"] == "The staging cluster freezes on Mondays."
    code, out, _ = run(capsys, "scopes", *where, "--json")
    assert json.loads(out)[1]["records"]["memory"] == 1
    # Forgetting it again changes nothing and still succeeds.
    assert run(capsys, "forget", *where, *citation)[0] == 0
    assert json.loads(run(capsys, "scopes", *where, "--json")[1]) == json.loads(out)


def test_ingesting_again_after_a_forget_serves_nothing_of_the_forgotten_entry(
    capsys: pytest.CaptureFixture[str], database: str, workload: Path
) -> None:
    """Forget is forever: a second ingest of the workload does not bring a forgotten entry back."""
    where = ["--db", database]
    ask = ["prepare", *where, "--scope", "ops", "--embedder", "hashing", "staging cluster"]
    citation = cited(database, "m1")
    assert run(capsys, "forget", *where, *citation)[0] == 0
    ingest(capsys, workload, *where)
    assert "staging cluster freezes" not in run(capsys, *ask)[1]
    assert cited(database, "m1") == citation
    code, out, _ = run(capsys, "scopes", *where, "--json")
    assert code == 0
    assert json.loads(out)[1]["records"]["memory"] == 1


def test_forget_of_something_that_does_not_exist_fails(
    capsys: pytest.CaptureFixture[str], database: str
) -> None:
    """An unknown scope, entry or version exits 1 naming it; nothing is forgotten."""
    _, scope, _, entry_id, _, _ = cited(database, "m1")
    for bad in (
        ["--scope", "nowhere", "--id", entry_id, "--version", "1"],
        ["--scope", scope, "--id", "no-such-entry", "--version", "1"],
        ["--scope", scope, "--id", entry_id, "--version", "2"],
    ):
        code, out, err = run(capsys, "forget", "--db", database, *bad)
        assert (code, out) == (1, "")
        assert err.startswith("satchel forget: error: ")
        assert bad[1] in err or bad[3] in err
    assert json.loads(run(capsys, "scopes", "--db", database, "--json")[1]) == LISTED


@pytest.mark.parametrize(
    "bad",
    [
        ["--scope", " ", "--id", "x", "--version", "1"],
        ["--scope", "ops", "--id", "", "--version", "1"],
        ["--scope", "ops", "--id", "x\n", "--version", "1"],
        ["--scope", "ops", "--id", "x", "--version", "0"],
        ["--scope", "ops", "--id", "x", "--version", "one"],
        ["--scope", "ops", "--id", "x"],
    ],
)
def test_forget_bad_input_exits_2(
    capsys: pytest.CaptureFixture[str], database: str, bad: list[str]
) -> None:
    """A blank or unprintable scope or id, or a version that is no positive integer, is
    a usage error."""
    code, out, err = run(capsys, "forget", "--db", database, *bad)
    assert (code, out) == (2, "")
    assert "usage: satchel forget" in err


def test_forget_never_creates_a_database(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "missing.db"
    code, _, err = run(
        capsys, "forget", "--db", str(path), "--scope", "s", "--id", "x", "--version", "1"
    )
    assert code == 2
    assert "no database at" in err
    assert not path.exists()


# ------------------------------------------------------------------------- on OceanBase


def test_scopes_and_forget_through_store_on_oceanbase(
    capsys: pytest.CaptureFixture[str], workload: Path, seekdb: str
) -> None:
    """--store reaches an OceanBase database (the session's seekdb engine): scopes lists
    what ingest wrote, forget takes an entry out of search, get still reads it."""
    url = f"oceanbase://root@localhost/cli_{uuid.uuid4().hex[:8]}?unix_socket={seekdb}"
    ingest(capsys, workload, "--store", url)
    code, out, _ = run(capsys, "scopes", "--store", url, "--json")
    assert code == 0
    assert json.loads(out) == LISTED
    ask = ["prepare", "--store", url, "--scope", "ops", "--embedder", "hashing", "staging"]
    code, out, _ = run(capsys, *ask, "--json")
    (item,) = [
        item
        for item in satchel.parse_context(json.loads(out)["content"])
        if item.citation.family == "memory"
    ]
    citation = ["--scope", "ops", "--id", str(item.citation.id), "--version", "1"]
    code, out, err = run(capsys, "forget", "--store", url, *citation)
    assert (code, out) == (0, "")
    assert "forgot memory entry" in err
    code, out, _ = run(capsys, "scopes", "--store", url)
    assert code == 0
    assert out.splitlines()[2].split() == ["ops", "1", "1", "0", "0", "yes"]
    assert run(capsys, *ask)[1] == ""  # nothing relevant is left
    code, out, _ = run(capsys, "get", "--store", url, *citation)
    assert (code, json.loads(out)["text"]) == (0, "The staging cluster freezes on Mondays.")
    code, _, err = run(capsys, "forget", "--store", url, *citation[:-1], "2")
    assert code == 1
    assert "no version 2" in err
