"""``satchel prepare --explain``: the pack as ``prepare`` prints it, then a table of its
receipts and the candidates left out; with ``--json``, one object holding all three."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import attrs
import pytest

import satchel
from satchel.vocabulary._refs import compact_id, full_id

from ._driver import run, write_workload

if TYPE_CHECKING:
    from pathlib import Path

S = "project:demo"
BACKENDS = pytest.mark.parametrize("backend", ["asyncio", "trio"])
ENTRIES = [
    {
        "id": f"n{n}",
        "scope": S,
        "text": f"Kestrel dispatcher note {n}: restart it on port 74{n:02d}",
    }
    for n in range(6)
]
QUERY = "kestrel dispatcher"


@pytest.fixture
def database(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """A database holding six notes on the kestrel dispatcher."""
    workload = write_workload(tmp_path / "workload", ENTRIES)
    path = str(tmp_path / "notes.db")
    assert run(capsys, "ingest", str(workload), "--db", path, "--embedder", "hashing")[0] == 0
    return path


def prepare(capsys: pytest.CaptureFixture[str], database: str, *options: str) -> str:
    argv = ("prepare", "--db", database, "--scope", S, "--embedder", "hashing", *options, QUERY)
    code, out, err = run(capsys, *argv)
    assert (code, err) == (0, "")
    return out


@BACKENDS
def test_the_table_follows_the_unchanged_pack(
    capsys: pytest.CaptureFixture[str], database: str, backend: str
) -> None:
    """stdout is the pack prepare prints, byte for byte, then a blank line, a row per
    item in pack order (citation, channel ranks, score, round, tier, truncated), a blank
    line and the candidates left out with their cause."""
    options = ("--max-bytes", "600", "--backend", backend)
    plain = prepare(capsys, database, *options)
    explained = prepare(capsys, database, *options, "--explain")
    assert explained.startswith(plain)
    receipts, omitted = explained.removeprefix(plain).removeprefix("\n").split("\n\n")
    header, *rows = receipts.splitlines()
    assert header.split() == [
        "item", "citation", "channels:ranks", "score", "round", "tier", "truncated",
    ]  # fmt: skip
    items = satchel.parse_context(plain)
    assert len(rows) == len(items)
    for number, (row, item) in enumerate(zip(rows, items, strict=True), 1):
        cells = row.split()
        short = compact_id(str(item.citation.id))  # the id as the pack's line spells it
        assert cells[:5] == [str(number), "memory", S, short, "v1"]
        assert f'"{short}"' in plain
        assert cells[5].startswith("lexical:")
        assert cells[-3:] == ["0", "full", "no"]
    header, *left_out = omitted.splitlines()
    assert header.split() == ["best", "citation", "cause", "channels:ranks", "score"]
    assert left_out
    assert all(row.split()[5] == "budget" for row in left_out)


def test_json_holds_the_pack_its_receipts_and_omissions(
    capsys: pytest.CaptureFixture[str], database: str
) -> None:
    """--json --explain prints the four fields --json prints, then receipts and omitted."""
    plain = json.loads(prepare(capsys, database, "--json"))
    explained = json.loads(prepare(capsys, database, "--json", "--explain"))
    assert list(explained) == [*plain, "receipts", "omitted"]
    assert {name: explained[name] for name in plain} == plain
    cited = [satchel.Citation(**receipt["citation"]) for receipt in explained["receipts"]]
    items = satchel.parse_context(plain["content"])
    assert [attrs.evolve(c, id=full_id(str(c.id))) for c in cited] == [i.citation for i in items]
    for receipt in cited:  # each receipt's id is found verbatim in the pack
        assert len(str(receipt.id)) == 22
        assert f'"{receipt.id}"' in plain["content"]


def test_an_empty_pack_is_explained_on_stdout_too(
    capsys: pytest.CaptureFixture[str], database: str
) -> None:
    """Nothing relevant: stderr notes it as prepare does, stdout says no item was
    delivered and none left out."""
    argv = ("prepare", "--db", database, "--scope", "elsewhere", "--embedder", "hashing")
    code, out, err = run(capsys, *argv, "--explain", QUERY)
    assert code == 0
    assert "nothing relevant in elsewhere (status empty)" in err
    assert out == "\nno item delivered\n\nno candidate left out\n"
