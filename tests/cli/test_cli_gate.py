"""``satchel prepare --gate`` and ``--effort``: the recall-sufficiency gate from the CLI."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import attrs
import pytest
from bench._citations import delivered_citations

import satchel

from ._driver import run, write_workload

if TYPE_CHECKING:
    from pathlib import Path

S = "project:demo"
#: The gate's thin case needs a spelling-only embedder: the default semantic model finds
#: the paraphrased entries in round 0.
HASHING = ("--embedder", "hashing")
GATE_POLICY = satchel.RecallSufficiencyPolicy().policy
EFFORT_FIELDS = [field.name for field in attrs.fields(satchel.RecallEffort)]
TEXTS = [
    "The Kestrel deploy pipeline takes ten minutes.",
    "The Kestrel deploy pipeline caches the build images.",
    "The Kestrel deploy pipeline runs the smoke tests last.",
    "The Kestrel deploy pipeline pages Bob when it fails.",
    "Alice moved to Lisbon last May.",
    "The office plants need water on Fridays.",
]
#: Four close matches: round 0 is sufficient, so the gate adds no round.
WELL_SERVED = "How does the Kestrel deploy pipeline work?"
#: Two entries hold two of its five terms and two more hold one: round 0 admits two
#: (thin), the admission round admits the other two.
THIN = "Did the Kestrel smoke tests page Bob?"


@pytest.fixture
def database(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """A database of six memories, four of them about the deploy pipeline."""
    entries = [{"id": f"d{i}", "scope": S, "text": text} for i, text in enumerate(TEXTS)]
    workload = write_workload(tmp_path / "workload", entries)
    path = str(tmp_path / "team.db")
    assert run(capsys, "ingest", str(workload), "--db", path, *HASHING)[0] == 0
    return path


def prepare(
    capsys: pytest.CaptureFixture[str], database: str, *args: str, query: str = WELL_SERVED
) -> tuple[int, str, str]:
    """Run ``satchel prepare`` over ``database``; return its exit code, stdout and stderr."""
    return run(capsys, "prepare", "--db", database, "--scope", S, *HASHING, *args, query)


def effort_of(err: str) -> dict[str, Any]:
    """The effort JSON object, which is the last line of stderr."""
    effort = json.loads(err.splitlines()[-1])
    assert isinstance(effort, dict)
    return effort


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
@pytest.mark.parametrize(("args", "policy"), [([], "disabled"), (["--gate"], GATE_POLICY)])
def test_effort_prints_one_recall_effort_object_on_stderr(
    capsys: pytest.CaptureFixture[str], database: str, backend: str, args: list[str], policy: str
) -> None:
    """--effort writes exactly one line: the RecallEffort's fields, in order, with its policy."""
    code, _, err = prepare(capsys, database, "--effort", "--backend", backend, *args)
    assert code == 0
    assert err.count("\n") == 1
    effort = effort_of(err)
    assert list(effort) == EFFORT_FIELDS
    assert effort["policy"].split(";")[0] == policy
    assert 1 <= effort["rounds"] <= 3
    assert len(effort["candidates_by_round"]) == effort["rounds"]


@pytest.mark.parametrize("args", [[], ["--gate"]])
def test_effort_carries_no_query_text(
    capsys: pytest.CaptureFixture[str], database: str, args: list[str]
) -> None:
    """Neither the query nor any of its distinctive words reaches the effort JSON."""
    code, _, err = prepare(capsys, database, "--effort", *args, query=THIN)
    assert code == 0
    assert effort_of(err)["candidates_by_round"]  # the effort was printed
    assert THIN not in err
    for word in ("kestrel", "smoke", "bob"):
        assert word not in err.lower()


def test_gate_expands_a_thin_round(capsys: pytest.CaptureFixture[str], database: str) -> None:
    """With --gate a thin query runs one named, counted expansion round and delivers more."""
    code, plain, _ = prepare(capsys, database, query=THIN)
    assert code == 0
    code, gated, err = prepare(capsys, database, "--gate", "--effort", query=THIN)
    assert code == 0
    effort = effort_of(err)
    assert effort["rounds"] == 2
    assert effort["expansion_actions"] == ["admission"]
    assert effort["candidates_by_round"] == [2, 4]
    assert len(delivered_citations(gated)) == 4 > len(delivered_citations(plain)) == 2


@pytest.mark.parametrize("args", [[], ["--json"]])
def test_gate_leaves_a_well_served_pack_byte_identical(
    capsys: pytest.CaptureFixture[str], database: str, args: list[str]
) -> None:
    """A query the gate judges sufficient prints exactly the pack it prints without --gate."""
    code, plain, _ = prepare(capsys, database, *args)
    assert code == 0
    code, gated, err = prepare(capsys, database, "--gate", "--effort", *args)
    assert code == 0
    effort = effort_of(err)
    assert (effort["rounds"], effort["expansion_actions"]) == (1, [])
    assert plain
    assert gated.encode() == plain.encode()


@pytest.mark.parametrize("args", [[], ["--json"], ["--gate"], ["--gate", "--json"]])
def test_effort_leaves_stdout_unchanged(
    capsys: pytest.CaptureFixture[str], database: str, args: list[str]
) -> None:
    """--effort only adds its line to stderr; stdout is the same and stderr was empty."""
    code, out, err = prepare(capsys, database, *args, query=THIN)
    assert (code, err) == (0, "")
    code, with_effort, err = prepare(capsys, database, "--effort", *args, query=THIN)
    assert code == 0
    assert with_effort == out
    assert effort_of(err)["rounds"] >= 1


def test_effort_follows_the_empty_note(capsys: pytest.CaptureFixture[str], database: str) -> None:
    """An empty result still reports its effort, on the line after the stderr note."""
    args = ("prepare", "--db", database, "--scope", "elsewhere", *HASHING, "--effort", WELL_SERVED)
    code, out, err = run(capsys, *args)
    assert (code, out) == (0, "")
    note, line = err.splitlines()
    assert note.startswith("satchel prepare: nothing relevant in elsewhere (status empty)")
    assert json.loads(line)["candidates_by_round"] == [0]


def test_prepare_help_documents_gate_and_effort(capsys: pytest.CaptureFixture[str]) -> None:
    """'satchel prepare --help' explains the gate and names every field of the effort JSON."""
    code, out, _ = run(capsys, "prepare", "--help")
    assert code == 0
    for text in ("--gate", "--effort", "recall-sufficiency gate", "stderr", "no query text"):
        assert text in out
    for name in EFFORT_FIELDS:
        assert name in out
