"""The commands that write (``ingest``, ``add``) as a user runs them, each in a process of
its own: what a write did is reported as it is, the id map keeps one line per id, and
one memory goes in from the shell or stdin."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from ._driver import run, satchel, write_workload

if TYPE_CHECKING:
    from pathlib import Path

S = "project:demo"
HASHING = ("--embedder", "hashing")
ENTRIES = [
    {"id": "m1", "scope": S, "text": "The deploy pipeline runs on Kestrel CI."},
    {"id": "m2", "scope": S, "text": "Alice moved to Lisbon last May."},
    {"id": "p1", "scope": S, "family": "profile", "text": "A small platform team."},
]


def id_map(db: Path) -> list[dict[str, object]]:
    lines = db.with_name(db.name + ".ids.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


# ------------------------------------------------------------------------------- ingest


@pytest.mark.slow
def test_ingesting_again_reports_what_it_wrote(tmp_path: Path) -> None:
    """A second identical ingest reports every entry unchanged and leaves the id map at
    one line per id; a changed line is reported as a new version and its id's line then
    names the new version's citation (still one line per id)."""
    workload = write_workload(tmp_path / "w", ENTRIES)
    db = tmp_path / "team.db"
    first = satchel("ingest", str(workload), "--db", str(db), *HASHING)
    assert first.returncode == 0, first.stderr
    assert f"ingested 3 entries into {db}: 3 new, 0 new versions, 0 unchanged" in first.stdout
    mapped = id_map(db)
    again = satchel("ingest", str(workload), "--db", str(db), *HASHING)
    assert again.returncode == 0, again.stderr
    assert "ingested 3 entries" in again.stdout
    assert ": 0 new, 0 new versions, 3 unchanged" in again.stdout
    assert id_map(db) == mapped
    changed = write_workload(tmp_path / "w2", [{**ENTRIES[0], "text": "Kestrel CI is gone."}])
    revised = satchel("ingest", str(changed), "--db", str(db), *HASHING)
    assert revised.returncode == 0, revised.stderr
    assert ": 0 new, 1 new version, 0 unchanged" in revised.stdout
    lines = id_map(db)
    assert [line["id"] for line in lines] == ["m1", "m2", "p1"]
    assert lines[0]["key"] == [*mapped[0]["key"][:3], 2]  # type: ignore[index]


@pytest.mark.slow
def test_an_older_workload_ingested_after_a_forget_serves_nothing_forgotten(
    tmp_path: Path,
) -> None:
    """Ingest, ingest a newer text of m1, forget m1: ingesting the older file (or the
    newer) again writes nothing for m1, and no pack serves either text."""
    older = write_workload(tmp_path / "w", ENTRIES)
    newer = write_workload(tmp_path / "w2", [{**ENTRIES[0], "text": "Kestrel CI is gone."}])
    db = tmp_path / "team.db"
    for workload in (older, newer):
        done = satchel("ingest", str(workload), "--db", str(db), *HASHING)
        assert done.returncode == 0, done.stderr
    key: list[str | int] = id_map(db)[0]["key"]  # type: ignore[assignment]
    _, scope, entry_id, version = map(str, key)
    cited = ("--db", str(db), "--scope", scope, "--id", entry_id, "--version", version)
    forgot = satchel("forget", *cited)
    assert forgot.returncode == 0, forgot.stderr
    for workload in (older, newer):
        again = satchel("ingest", str(workload), "--db", str(db), *HASHING)
        assert again.returncode == 0, again.stderr
        assert ": 0 new, 0 new versions," in again.stdout
    query = "Kestrel CI deploy pipeline, Alice in Lisbon"
    pack = satchel("prepare", "--db", str(db), "--scope", S, query, *HASHING)
    assert pack.returncode == 0, pack.stderr
    assert "Alice moved to Lisbon" in pack.stdout
    assert "Kestrel" not in pack.stdout.replace(query, "")


def test_ingest_takes_the_entries_file_itself(tmp_path: Path) -> None:
    """WORKLOAD may be the entries.jsonl file as well as its folder."""
    workload = write_workload(tmp_path / "w", ENTRIES)
    db = tmp_path / "team.db"
    done = satchel("ingest", str(workload / "entries.jsonl"), "--db", str(db), *HASHING)
    assert done.returncode == 0, done.stderr
    assert "ingested 3 entries" in done.stdout


# ---------------------------------------------------------------------------------- add


@pytest.mark.slow
def test_add_writes_one_memory_and_prints_the_ref_a_pack_cites(tmp_path: Path) -> None:
    """`satchel add` writes TEXT (or stdin's, for -) into a new database and prints the
    ref with the id as a pack prints it; get reads it back; a key makes it idempotent."""
    db = str(tmp_path / "notes.db")
    added = satchel("add", "--db", db, "--scope", S, *HASHING, "Backups run nightly at 02:00")
    assert added.returncode == 0, added.stderr
    ref = json.loads(added.stdout)
    assert (ref["scope"], ref["version"], len(ref["id"])) == (S, 1, 22)
    keyed = (
        "add", "--db", db, "--scope", S, "--key", "chat-1/7", "--kind", "dialog",
        "--thread", "chat-1", "--at", "2024-03-04T09:00", "--tag", "ops", *HASHING, "-",
    )  # fmt: skip
    first = satchel(*keyed, stdin="Alice: the restore took 20 minutes\n")
    again = satchel(*keyed, stdin="Alice: the restore took 20 minutes\n")
    assert first.returncode == 0, first.stderr
    assert first.stdout == again.stdout
    cited = json.loads(first.stdout)
    got = satchel("get", "--db", db, "--scope", S, "--id", cited["id"], "--version", "1")
    assert got.returncode == 0, got.stderr
    record = json.loads(got.stdout)
    assert record["text"] == "Alice: the restore took 20 minutes"
    assert (record["key"], record["kind"], record["thread"]) == ("chat-1/7", "dialog", "chat-1")
    assert (record["created_at"], record["tags"]) == ("2024-03-04T09:00:00+00:00", ["ops"])


def test_add_refuses_bad_input_with_exit_2(tmp_path: Path) -> None:
    """Blank text or a malformed --at is bad input (exit 2) naming it."""
    db = tmp_path / "notes.db"
    blank = satchel("add", "--db", str(db), "--scope", S, *HASHING, "   ")
    assert blank.returncode == 2
    assert "satchel add: error: text must be a non-empty string" in blank.stderr
    when = satchel("add", "--db", str(db), "--scope", S, "--at", "soon", "Backups at 02:00")
    assert when.returncode == 2
    assert "expected an ISO 8601 date-time" in when.stderr


def test_add_into_a_directory_is_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``add --db DIRECTORY`` exits 2 (bad input, as --help says), naming the directory."""
    code, _, err = run(capsys, "add", "--db", str(tmp_path), "--scope", "s", "hello")
    assert code == 2
    assert f"--db {tmp_path} is a directory, not a database file" in err
