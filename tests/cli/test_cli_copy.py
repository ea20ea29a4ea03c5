"""``satchel copy``: through a real subprocess, a store copied into SQLite and into seekdb
(and back) with ``--verify``; a rerun copies nothing twice; an interrupted copy resumes;
bad input exits 2 naming what is wrong."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import uuid
from typing import TYPE_CHECKING

import pytest

from .. import _processes
from ._driver import run

if TYPE_CHECKING:
    from pathlib import Path


def _satchel(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "satchel", *args], capture_output=True, text=True, timeout=600
    )


def _workload(folder: Path, entries: int = 60) -> Path:
    """Memories in three scopes (threads, dates), and one record of every other family."""
    lines: list[dict[str, object]] = [
        {
            "id": f"m{n}", "scope": f"chat-{n % 3}", "session": n % 4,
            "text": f"Alice, turn {n}: the ferry to island {n % 7} leaves at {n % 12} o'clock",
            "created_at": f"2023-05-{1 + n % 28:02d}T10:{n % 60:02d}:00Z",
        }
        for n in range(entries)
    ]  # fmt: skip
    lines += [
        {"id": "t", "scope": "chat-0", "family": "topic-memory", "title": "Ferries",
         "text": "the island ferries leave hourly"},
        {"id": "p", "scope": "chat-0", "family": "profile", "text": "Alice takes ferries"},
        {"id": "r", "scope": "chat-1", "family": "resource", "uri": "doc://ferry",
         "body": "the whole timetable", "abstract": "ferry timetable"},
        {"id": "e", "scope": "chat-2", "family": "experience", "situation": "a late ferry",
         "action": "waited", "outcome": "missed it", "lesson": "go early"},
    ]  # fmt: skip
    folder.mkdir()
    (folder / "entries.jsonl").write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    return folder


def _ingested(tmp_path: Path, entries: int = 60) -> Path:
    database = tmp_path / "a.db"
    workload = _workload(tmp_path / "w", entries)
    done = _satchel("ingest", str(workload), "--db", str(database), "--embedder", "hashing")
    assert done.returncode == 0, done.stderr
    return database


@pytest.mark.slow
def test_copy_into_sqlite_verifies_byte_for_byte_and_a_rerun_copies_nothing(
    tmp_path: Path,
) -> None:
    """SQLite -> SQLite with --verify: every record copied, the sample of prepares
    byte-identical; the same command again writes nothing and says what it skipped."""
    source = _ingested(tmp_path)
    target = tmp_path / "b.db"
    done = _satchel("copy", str(source), str(target), "--verify")
    assert done.returncode == 0, done.stderr
    assert "copied 64 versions and profiles of 3 scopes" in done.stdout
    assert "prepares, byte for byte" in done.stdout
    assert "copying: 100% (64/64)" in done.stderr
    again = _satchel("copy", str(source), f"sqlite:///{target}")
    assert again.returncode == 0, again.stderr
    assert "copied 0 versions and profiles of 3 scopes" in again.stdout
    assert "(64 were there already)" in again.stdout


@pytest.mark.slow
def test_copy_into_seekdb_and_back_verifies(tmp_path: Path, seekdb: str) -> None:
    """SQLite -> seekdb -> SQLite with --verify: counts, records and citations agree
    across engines, and the SQLite copy's packs are byte-identical to the source's."""
    source = _ingested(tmp_path)
    database = f"copy_{uuid.uuid4().hex[:8]}"
    url = f"oceanbase://root@localhost/{database}?unix_socket={seekdb}"
    there = _satchel("copy", str(source), url, "--verify", "--backend", "trio")
    assert there.returncode == 0, there.stderr
    assert "citations resolve in TARGET" in there.stdout
    back = _satchel("copy", url, str(tmp_path / "c.db"), "--verify")
    assert back.returncode == 0, back.stderr
    assert "citations resolve in TARGET" in back.stdout
    final = _satchel("copy", str(source), str(tmp_path / "c.db"), "--verify")
    assert final.returncode == 0, final.stderr
    assert "copied 0 versions" in final.stdout
    assert "prepares, byte for byte" in final.stdout


@pytest.mark.slow
def test_an_interrupted_copy_resumes(tmp_path: Path) -> None:
    """SIGINT stops the copy after the page it was writing (exit 130, saying how to
    finish); the same command again completes it, and --verify agrees."""
    source = _ingested(tmp_path, entries=3000)
    target = tmp_path / "b.db"
    command = [sys.executable, "-m", "satchel", "copy", str(source), str(target)]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    with subprocess.Popen(command, stderr=subprocess.PIPE, stdout=subprocess.PIPE, env=env) as copy:
        _processes.announced(copy.stderr, rb"copying: ", "satchel copy")
        copy.send_signal(signal.SIGINT)
        _, said = copy.communicate(timeout=300)
    if copy.returncode == 0:
        pytest.skip("the copy finished before the signal arrived")
    assert copy.returncode == 130, said
    assert b"run the same command again to finish" in said
    done = _satchel("copy", str(source), str(target), "--verify")
    assert done.returncode == 0, done.stderr
    assert "were there already" in done.stdout
    assert "(0 were there already)" not in done.stdout
    assert "prepares, byte for byte" in done.stdout


def test_help_explains_the_copy(capsys: pytest.CaptureFixture[str]) -> None:
    """``satchel copy --help`` says what is copied, how to resume and what --verify does."""
    code, out, _ = run(capsys, "copy", "--help")
    assert code == 0
    for said in ("forgotten entry stays forgotten", "resumable", "--verify", "--embedder"):
        assert said in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["{tmp}/none.db", "{tmp}/b.db"], "no database at"),
        (["{tmp}/a.db", "{tmp}/a.db"], "the same store"),
        (["{tmp}/a.db", "memory://"], "not an in-memory one"),
        (["{tmp}/a.db", "{tmp}/b.db", "--scope", "nowhere"], "--scope: the source holds no"),
    ],
)
def test_bad_input_exits_2_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    """A missing source, the same store twice, an in-memory target or an unknown scope
    exit 2 with a message saying so."""
    workload = _workload(tmp_path / "w", entries=3)
    code, _, err = run(capsys, "ingest", str(workload), "--db", f"{tmp_path}/a.db",
                       "--embedder", "hashing")  # fmt: skip
    assert code == 0, err
    code, _, err = run(capsys, "copy", *(arg.format(tmp=tmp_path) for arg in args))
    assert code == 2
    assert message in err


def test_another_embedder_needs_it_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Into a store whose vectors another embedder built, the copy exits 2 asking for
    --embedder; with it, every copied record is embedded again."""
    workload = _workload(tmp_path / "w", entries=3)
    for database, embedder in (("a.db", "hashing"), ("b.db", "static")):
        code, _, err = run(capsys, "ingest", str(workload), "--db", f"{tmp_path}/{database}",
                           "--embedder", embedder)  # fmt: skip
        assert code == 0, err
    code, _, err = run(capsys, "copy", f"{tmp_path}/a.db", f"{tmp_path}/b.db")
    assert code == 2
    assert "--embedder" in err
    code, out, err = run(
        capsys, "copy", f"{tmp_path}/a.db", f"{tmp_path}/b.db", "--embedder", "static"
    )
    assert code == 0, err
    assert "0 copied, 4 embedded again" in out  # the resource: its URI is held already
