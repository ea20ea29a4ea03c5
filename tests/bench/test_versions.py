"""``python -m bench versions``: two installs' CPU per prepare, alternated."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from bench import versions


def tiny_workload(folder: Path) -> Path:
    folder.mkdir()
    entries = [
        {"id": f"c/{n}", "scope": "chat", "text": text, "session": 1,
         "created_at": f"2024-03-0{n + 1}T10:00:00Z"}
        for n, text in enumerate([
            "Ana: I moved to Porto last spring.",
            "Ben: Porto suits you, how is the new flat?",
            "Ana: The flat is small but it has a view of the river.",
            "Ben: I adopted a cat called Miso.",
        ])
    ]  # fmt: skip
    queries = [
        {"id": "q1", "scopes": ["chat"], "query": "Where did Ana move?", "expected": ["c/0"]},
        {"id": "q2", "scopes": ["chat"], "query": "What is Ben's cat called?", "expected": ["c/3"]},
        {"id": "q3", "scopes": ["chat"], "query": "Anything about dogs?", "expected": []},
    ]
    (folder / "entries.jsonl").write_text("".join(json.dumps(e) + "\n" for e in entries))
    # A blank line between questions, as the workload format allows.
    (folder / "queries.jsonl").write_text("\n".join(json.dumps(q) + "\n" for q in queries))
    return folder


@pytest.mark.slow
def test_one_install_against_itself_gives_the_same_packs(tmp_path: Path) -> None:
    """Both sides ingest and ask through their own interpreter; the same install asks
    the two questions with evidence (not the third) and gives the same packs."""
    workload = tiny_workload(tmp_path / "tiny")
    python = Path(sys.executable)
    result = versions.compare([python, python], {"tiny": workload}, 2, "asyncio", tmp_path)
    found = result["workloads"]["tiny"]
    assert found["packs_same"]
    for side in found["sides"]:
        assert side["prepares"] == 2
        assert side["packs_steady"]
        assert len(side["once_each"]) == len(side["again_each"]) == 2
        assert len(side["after_write_each"]) == 2
        assert side["once"] > 0
        assert side["again"] > 0
        assert side["recall"] == 1.0  # two questions, each answered by its one turn
    assert found["ratio_once"] == found["sides"][1]["once"] / found["sides"][0]["once"]
    assert "| tiny | 2 / 1 |" in versions.report(result)


def test_the_summary_takes_medians_and_tells_packs_apart() -> None:
    def run(once: float, again: float, packs: str) -> dict[str, object]:
        return {"once": once, "again": again, "after_write": again * 2, "once_system": 1.0,
                "prepares": 5, "packs": packs, "recall": 0.5}  # fmt: skip

    base = [run(300, 200, "a"), run(100, 100, "a"), run(200, 150, "a")]
    new = [run(100, 50, "b"), run(120, 60, "c"), run(90, 70, "b")]
    found = versions.summary([base, new])
    assert [side["once"] for side in found["sides"]] == [200, 100]
    assert found["ratio_once"] == 0.5
    assert found["ratio_again"] == 60 / 150
    assert found["ratio_after_write"] == 120 / 300
    assert found["sides"][0]["packs_steady"]
    assert not found["sides"][1]["packs_steady"]
    assert not found["packs_same"]


def test_a_failing_side_names_its_interpreter(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="could not ingest"):
        versions.ingest(Path(sys.executable), tmp_path / "missing", tmp_path / "s.db")
