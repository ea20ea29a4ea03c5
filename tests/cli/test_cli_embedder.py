"""``--embedder`` and ``satchel reembed``: a database keeps the embedder that built it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._driver import run, write_workload

if TYPE_CHECKING:
    from pathlib import Path

    import pytest

TEXTS = ["Backups run nightly at 02:00 UTC", "The deploy pipeline pages Bob when it fails"]


def test_reembed_switches_a_database_to_another_embedder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A hashing-built database refuses the static embedder (the default) until reembed
    rebuilds it; then it refuses hashing."""
    entries = [{"id": f"e{i}", "scope": "s", "text": t} for i, t in enumerate(TEXTS)]
    workload = write_workload(tmp_path / "w", entries)
    db = str(tmp_path / "g.db")
    assert run(capsys, "ingest", str(workload), "--db", db, "--embedder", "hashing")[0] == 0
    query = ["prepare", "--db", db, "--scope", "s", "--embedder", "static", "when are backups"]
    code, out, err = run(capsys, *query)
    assert code == 1
    assert out == ""
    assert "built by hashing-v1/256" in err
    assert "satchel reembed" in err
    code, _, err = run(capsys, "reembed", "--db", db, "--embedder", "static")
    assert code == 0
    assert "re-embedded 2 records" in err
    code, out, _ = run(capsys, *query)
    assert code == 0
    assert "Backups run nightly at 02:00 UTC" in out
    query[-3:-1] = ["--embedder", "hashing"]
    code, _, err = run(capsys, *query)
    assert code == 1
    assert "built by static:minilm-static-256/" in err


def test_reembed_needs_an_existing_database(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """reembed never creates a database; a missing one exits 2 with a clear message."""
    code, _, err = run(capsys, "reembed", "--db", str(tmp_path / "nope.db"), "--embedder", "static")
    assert code == 2
    assert "nope.db" in err
    assert not (tmp_path / "nope.db").exists()
