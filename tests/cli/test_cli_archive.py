"""``satchel export`` / ``satchel import``: a store into an archive file and back into
SQLite and seekdb, the packs and citations of the store exported surviving; a rerun
imports nothing twice; an interrupted import resumes; bad input exits 2 naming it."""

from __future__ import annotations

import gzip
import json
import os
import signal
import subprocess
import sys
import uuid
from typing import TYPE_CHECKING

import pytest

import satchel

from .. import _processes
from ._driver import run
from .test_cli_copy import _ingested, _satchel, _workload

if TYPE_CHECKING:
    from pathlib import Path

QUESTION = "when does the ferry to island 3 leave"


def _pack(database: str, scope: str = "chat-0") -> str:
    done = _satchel("prepare", "--store", database, "--scope", scope, "--embedder", "hashing",
                    QUESTION)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_export_then_import_into_sqlite_gives_the_same_packs(tmp_path: Path) -> None:
    """SQLite -> archive -> SQLite: every record written, progress shown, the packs of
    the imported store byte-identical; the same import again writes nothing."""
    source = _ingested(tmp_path)
    archive = tmp_path / "a.satchel"
    out = _satchel("export", "--store", str(source), str(archive))
    assert out.returncode == 0, out.stderr
    assert "exported 64 versions and profiles of 3 scopes" in out.stdout
    assert "exporting: 100% (64/64)" in out.stderr
    target = tmp_path / "b.db"
    done = _satchel("import", "--store", str(target), str(archive))
    assert done.returncode == 0, done.stderr
    assert "imported 64 versions and profiles of 3 scopes" in done.stdout
    assert "importing: 100% (64/64)" in done.stderr
    for scope in ("chat-0", "chat-1", "chat-2"):
        assert _pack(f"sqlite://{target}", scope) == _pack(f"sqlite://{source}", scope)
    again = _satchel("import", "--store", str(target), str(archive))
    assert again.returncode == 0, again.stderr
    assert "(64 were there already)" in again.stdout


@pytest.mark.slow
def test_export_and_import_through_seekdb(tmp_path: Path, seekdb: str) -> None:
    """SQLite -> archive -> seekdb -> archive -> SQLite: the SQLite at the end gives the
    source's packs byte for byte, and every citation resolves in seekdb."""
    source = _ingested(tmp_path)
    url = f"oceanbase://root@localhost/arch_{uuid.uuid4().hex[:8]}?unix_socket={seekdb}"
    steps = [
        ("export", str(source), "one.satchel"), ("import", url, "one.satchel"),
        ("export", url, "two.satchel"), ("import", str(tmp_path / "c.db"), "two.satchel"),
    ]  # fmt: skip
    for command, store, file in steps:
        done = _satchel(command, "--store", store, "--backend", "trio", str(tmp_path / file))
        assert done.returncode == 0, done.stderr
    pack = _pack(f"sqlite://{source}")
    assert _pack(f"sqlite://{tmp_path / 'c.db'}") == pack
    cited = [item.citation for item in satchel.parse_context(pack)]
    memories = [citation for citation in cited if citation.family == "memory"]
    assert memories
    for citation in memories:
        ref = ("--scope", citation.scope, "--id", str(citation.id),
               "--version", str(citation.version or 1))  # fmt: skip
        there = _satchel("get", "--store", url, *ref)
        assert there.returncode == 0, there.stderr
        assert there.stdout == _satchel("get", "--store", f"sqlite://{source}", *ref).stdout


@pytest.mark.slow
def test_an_interrupted_import_resumes(tmp_path: Path) -> None:
    """SIGINT stops the import after the page it was writing (exit 130, saying how to
    finish); the same command again completes it without duplicates."""
    source = _ingested(tmp_path, entries=3000)
    archive = tmp_path / "a.satchel"
    assert _satchel("export", "--store", str(source), str(archive)).returncode == 0
    target = tmp_path / "b.db"
    command = [sys.executable, "-m", "satchel", "import", "--store", str(target), str(archive)]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    with subprocess.Popen(command, stderr=subprocess.PIPE, stdout=subprocess.PIPE, env=env) as job:
        _processes.announced(job.stderr, rb"importing: ", "satchel import")
        job.send_signal(signal.SIGINT)
        _, said = job.communicate(timeout=300)
    if job.returncode == 0:
        pytest.skip("the import finished before the signal arrived")
    assert job.returncode == 130, said
    assert b"run the same command again to finish" in said
    done = _satchel("import", "--store", str(target), str(archive))
    assert done.returncode == 0, done.stderr
    assert "were there already" in done.stdout
    assert "(0 were there already)" not in done.stdout
    check = _satchel("copy", str(source), str(target))
    assert "copied 0 versions" in check.stdout  # the target holds every version


def test_help_explains_the_archive(capsys: pytest.CaptureFixture[str]) -> None:
    """``--help`` of both commands says what an archive holds and how to resume."""
    code, out, _ = run(capsys, "export", "--help")
    assert code == 0
    for said in ("Erased records are never in it", "docs/archives.md", "--scope"):
        assert said in out
    code, out, _ = run(capsys, "import", "--help")
    assert code == 0
    for said in ("resumable", "newer format", "--embedder"):
        assert said in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["export", "--store", "{tmp}/none.db", "{tmp}/x.satchel"], "no database at"),
        (["export", "--store", "{tmp}/a.db", "--scope", "nowhere", "{tmp}/x.satchel"],
         "--scope: the source holds no"),
        (["import", "--store", "{tmp}/b.db", "{tmp}/none.satchel"], "no such archive"),
        (["import", "--store", "{tmp}/b.db", "{tmp}/newer.satchel"], "of format 9"),
        (["import", "--store", "memory://", "{tmp}/newer.satchel"], "not an in-memory one"),
    ],
)  # fmt: skip
def test_bad_input_exits_2_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    """A missing store or archive, an unknown scope, an archive of a newer format or
    an in-memory store exit 2 with a message saying so."""
    workload = _workload(tmp_path / "w", entries=3)
    code, _, err = run(capsys, "ingest", str(workload), "--db", f"{tmp_path}/a.db",
                       "--embedder", "hashing")  # fmt: skip
    assert code == 0, err
    with gzip.open(tmp_path / "newer.satchel", "wt") as file:
        file.write(json.dumps({"satchel_archive": 9, "written_by": "satchel 9.0"}) + "\n")
    code, _, err = run(capsys, *(arg.format(tmp=tmp_path) for arg in args))
    assert code == 2, err
    assert message in err


@pytest.mark.parametrize(
    "argv",
    [
        ["copy", "{tmp}/a.db", "seekdb:///{tmp}/s"],
        ["export", "--store", "seekdb:///{tmp}/s", "{tmp}/x.satchel"],
        ["import", "--store", "seekdb:///{tmp}/s", "{tmp}/x.satchel"],
        ["serve", "--create", "--store", "seekdb:///{tmp}/s"],
        ["mcp", "--create", "--store", "seekdb:///{tmp}/s"],
        ["scopes", "--store", "oceanbase://root@localhost/db"],
    ],
)
def test_a_missing_extra_exits_2_naming_it(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    argv: list[str],
) -> None:
    """A store whose packages are not installed exits 2 in every command, naming the
    extra that installs them, as a missing extra of serve and mcp always did."""
    import importlib.util

    (tmp_path / "a.db").write_bytes(b"SQLite format 3\x00")
    find_spec = importlib.util.find_spec

    def without(name: str, package: str | None = None) -> object:
        return None if name in ("asyncmy", "pylibseekdb") else find_spec(name, package)

    monkeypatch.setattr(importlib.util, "find_spec", without)
    code, _, err = run(capsys, *(arg.format(tmp=tmp_path) for arg in argv))
    assert code == 2, err
    assert "pip install 'satchel[seekdb]'" in err or "pip install 'satchel[oceanbase]'" in err
