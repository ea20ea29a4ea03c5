"""``satchel list``, driven in-process through ``satchel.cli.main``: a page of a scope's
records as a table or JSON, its filters, the next page's cursor, and bad input refused."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from ._driver import run, write_workload

if TYPE_CHECKING:
    from pathlib import Path

BACKENDS = pytest.mark.parametrize("backend", ["asyncio", "trio"])
ENTRIES = [
    {"id": "m1", "scope": "ops", "text": "The staging cluster freezes on Mondays."},
    {"id": "m2", "scope": "ops", "text": "Lunch is at noon.", "created_at": "2024-03-04T09:00:00Z"},
    {"id": "e1", "scope": "ops", "family": "experience", "situation": "a deploy failed",
     "action": "rolled back", "outcome": "recovered", "lesson": "pin versions"},
    {"id": "p1", "scope": "ops", "family": "profile", "text": "A small platform team."},
    {"id": "m3", "scope": "other", "text": "Never listed with ops."},
]  # fmt: skip


@pytest.fixture
def database(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    path = str(tmp_path / "team.db")
    workload = write_workload(tmp_path / "workload", ENTRIES)
    code, _, err = run(capsys, "ingest", str(workload), "--db", path, "--embedder", "static")
    assert code == 0, err
    return path


@BACKENDS
def test_list_prints_a_page_newest_first_and_the_next_cursor(
    database: str, capsys: pytest.CaptureFixture[str], backend: str
) -> None:
    """A table of two records, newest first, and the cursor that resumes after them;
    that cursor's page (as JSON) holds the rest, the profile last, and no cursor. The
    store was built by the static embedder and list needs none named."""
    where = ("--db", database, "--scope", "ops", "--backend", backend)
    code, out, err = run(capsys, "list", *where, "--limit", "2")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].split() == ["family", "id", "version", "key", "said", "text"]
    assert [line.split()[0] for line in lines[1:]] == ["experience", "memory"]
    assert lines[2].endswith("Lunch is at noon.")
    assert "2024-03-04T09:00:00+00:00" in lines[2]
    assert err.startswith("more records follow: --cursor ")
    cursor = err.split()[-1]
    code, out, err = run(capsys, "list", *where, "--json", "--cursor", cursor)
    assert code == 0, err
    page = json.loads(out)
    assert page["cursor"] is None
    assert [(r["citation"]["family"], r["text"]) for r in page["records"]] == [
        ("memory", "The staging cluster freezes on Mondays."),
        ("profile", "A small platform team."),
    ]
    assert page["records"][0]["key"] == "m1"


def test_list_filters_by_family_and_shows_forgotten_only_when_asked(
    database: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """--family memory lists entries only; a forgotten entry appears, marked, with
    --forgotten."""
    code, out, err = run(capsys, "list", "--db", database, "--scope", "ops", "--json")
    (forgotten,) = [r for r in json.loads(out)["records"] if r["key"] == "m1"]
    cited = forgotten["citation"]
    code, _, err = run(
        capsys, "forget", "--db", database, "--scope", "ops", "--id", cited["id"],
        "--version", str(cited["version"]),
    )  # fmt: skip
    assert code == 0, err
    where = ("--db", database, "--scope", "ops", "--family", "memory", "--json")
    _, out, _ = run(capsys, "list", *where)
    assert [r["key"] for r in json.loads(out)["records"]] == ["m2"]
    _, out, _ = run(capsys, "list", *where, "--forgotten")
    assert [(r["key"], r["forgotten"]) for r in json.loads(out)["records"]] == [
        ("m2", False), ("m1", True),
    ]  # fmt: skip
    _, out, _ = run(capsys, "list", "--db", database, "--scope", "ops", "--forgotten")
    assert "(forgotten) The staging cluster" in out


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        (["--cursor", "not-a-cursor"], "cursor is malformed"),
        (["--limit", "1001"], "limit must be an integer 1..1000"),
    ],
)
def test_bad_input_exits_2_naming_it(
    database: str, capsys: pytest.CaptureFixture[str], arguments: list[str], said: str
) -> None:
    """A malformed cursor or a limit past the largest page is bad input, named."""
    code, out, err = run(capsys, "list", "--db", database, "--scope", "ops", *arguments)
    assert (code, out) == (2, "")
    assert said in err


def test_an_empty_scope_says_so_and_a_missing_database_is_bad_input(
    database: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A scope holding nothing prints nothing and a note; no database exits 2 and
    creates none."""
    code, out, err = run(capsys, "list", "--db", database, "--scope", "nowhere")
    assert (code, out) == (0, "")
    assert "holds no record" in err
    missing = tmp_path / "missing.db"
    code, _, _ = run(capsys, "list", "--db", str(missing), "--scope", "ops")
    assert code == 2
    assert not missing.exists()
