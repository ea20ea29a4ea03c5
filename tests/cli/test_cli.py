"""The ``satchel`` command line, driven in-process through ``satchel.cli.main``."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from bench._citations import citation_key, delivered_citations, read_id_map

import satchel
from satchel.cli._progress import ProgressBar
from satchel.vocabulary._refs import compact_id

from ._driver import run, write_workload

S = "project:demo"
BACKENDS = pytest.mark.parametrize("backend", ["asyncio", "trio"])
ENTRIES = [
    {"id": "m1", "scope": S, "text": "The deploy pipeline runs on Kestrel CI.", "kind": "fact"},
    {
        "id": "m2",
        "scope": S,
        "text": "Alice moved to Lisbon last May.",
        "session": 1,
        "created_at": "2023-05-08T13:56:00Z",
    },
    {"id": "m-bad", "scope": S},
    {"id": "m3", "scope": S, "text": "The Kestrel cluster has 12 nodes."},
    {"id": "p1", "scope": S, "family": "profile", "text": "A small platform team."},
]


@pytest.fixture
def workload(tmp_path: Path) -> Path:
    """A workload folder: four good entries and one malformed line (line 3)."""
    return write_workload(tmp_path / "workload", ENTRIES)


@pytest.fixture
def database(tmp_path: Path, workload: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """A database holding the workload's entries."""
    path = str(tmp_path / "team.db")
    assert run(capsys, "ingest", str(workload), "--db", path, "--allow-skips")[0] == 0
    return path


# --------------------------------------------------------------------------------- help


def test_top_level_help_lists_commands(capsys: pytest.CaptureFixture[str]) -> None:
    """'satchel --help' names every command and shows examples."""
    code, out, _ = run(capsys, "--help")
    assert code == 0
    for text in ("demo", "ingest", "prepare", "examples:", "satchel demo"):
        assert text in out


@pytest.mark.parametrize(
    ("command", "explains"),
    [("demo", "throwaway store"), ("ingest", ".ids.jsonl"), ("prepare", "512..32768")],
)
def test_command_help_explains_with_examples(
    capsys: pytest.CaptureFixture[str], command: str, explains: str
) -> None:
    """Each command's --help has a description and an examples epilog."""
    code, out, _ = run(capsys, command, "--help")
    assert code == 0
    assert explains in out
    assert f"examples:\n  satchel {command}" in out


def test_no_command_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    """'satchel' alone exits 2 with a usage message instead of raising SystemExit."""
    code, _, err = run(capsys)
    assert code == 2
    assert "required: COMMAND" in err


def test_python_m_satchel_runs_the_cli() -> None:
    """'python -m satchel' is the same command line."""
    done = subprocess.run(
        [sys.executable, "-m", "satchel", "prepare", "--help"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0
    assert "usage: satchel prepare" in done.stdout


# --------------------------------------------------------------------------------- demo


@BACKENDS
def test_demo_prints_four_packs_and_leaves_nothing_behind(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    backend: str,
) -> None:
    """The demo prints four ready packs whose headers state their true byte sizes."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    code, out, err = run(capsys, "demo", "--backend", backend)
    assert (code, err) == (0, "")
    blocks = [block for block in out.split("\n\n") if block.startswith("=== [")]
    assert len(blocks) == 4
    for block in blocks:
        header, content = block.split("\n", 1)
        assert "| status ready |" in header
        assert f"content_bytes {len(content.encode())} ===" in header
        assert delivered_citations(content)
    # "on Sunday" asked of a rule is not last Sunday: the staging policy is found.
    (staging,) = [block for block in blocks if "load test against staging on Sunday" in block]
    assert "do not run load tests against staging-eu-1" in staging
    assert "assembly: profile, memory, experience, resource" in blocks[2]
    assert "resource" in [citation["family"] for citation in delivered_citations(blocks[2])]
    assert list(tmp_path.iterdir()) == []  # the throwaway store is gone


# ------------------------------------------------------------------------------- ingest


@BACKENDS
def test_ingest_counts_reports_and_maps(
    capsys: pytest.CaptureFixture[str], workload: Path, tmp_path: Path, backend: str
) -> None:
    """ingest writes the good lines, names the bad one by line, and maps ids to citations;
    a skipped line fails the command unless --allow-skips accepts it."""
    db = str(tmp_path / "team.db")
    code, out, err = run(
        capsys, "ingest", str(workload), "--db", db, "--backend", backend, "--allow-skips"
    )
    assert code == 0
    assert "ingested 4 entries" in out
    assert "  memory               3\n  profile              1\n" in out
    assert "skipped 1 malformed lines" in out
    assert "entries.jsonl:3: missing field 'text'\n" in err
    id_map = (tmp_path / "team.db.ids.jsonl").read_text(encoding="utf-8")
    lines = [json.loads(line) for line in id_map.splitlines()]
    assert [line["id"] for line in lines] == ["m1", "m2", "m3", "p1"]
    assert [line["key"][0] for line in lines] == ["memory", "memory", "memory", "profile"]
    assert lines[3]["key"] == ["profile", S]


@pytest.mark.parametrize("allow", [[], ["--allow-skips"]], ids=["strict", "allow-skips"])
def test_ingest_fails_when_most_lines_were_skipped(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, allow: list[str]
) -> None:
    """12 of 13 lines malformed: ingest exits 1 naming the count (the good line stays
    written); --allow-skips accepts the partial ingest."""
    entries = [{"id": "ok", "scope": S, "text": "The one good line."}] + [{"id": "x"}] * 12
    folder = write_workload(tmp_path / "w", entries)
    code, out, err = run(capsys, "ingest", str(folder), "--db", str(tmp_path / "t.db"), *allow)
    assert "ingested 1 entries" in out
    if allow:
        assert code == 0
    else:
        assert code == 1
        assert "12 lines were not ingested" in err
        assert "--allow-skips" in err


def test_ingest_appends_to_the_id_map(
    capsys: pytest.CaptureFixture[str], database: str, tmp_path: Path
) -> None:
    """A second ingest into the same database appends its ids to the same map."""
    more = write_workload(tmp_path / "more", [{"id": "m9", "scope": S, "text": "More text."}])
    assert run(capsys, "ingest", str(more), "--db", database)[0] == 0
    lines = Path(database + ".ids.jsonl").read_text(encoding="utf-8").splitlines()
    ids = [json.loads(line)["id"] for line in lines]
    assert ids == ["m1", "m2", "m3", "p1", "m9"]


def test_ingest_progress_on_a_non_terminal(
    capsys: pytest.CaptureFixture[str], workload: Path, tmp_path: Path
) -> None:
    """Off a terminal, progress is plain lines on stderr ending at 100% of the file's lines."""
    code, _, err = run(
        capsys, "ingest", str(workload), "--db", str(tmp_path / "t.db"), "--allow-skips"
    )
    assert code == 0
    assert "\r" not in err
    assert err.splitlines()[-1] == "ingesting: 100% (5/5)"


def test_ingest_of_only_malformed_lines_fails(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """When every line is malformed, ingest exits 1, says so, and writes no id map."""
    folder = write_workload(tmp_path / "bad", [{"id": "a"}, {"id": "b", "scope": S, "text": 1}])
    db = tmp_path / "t.db"
    code, out, err = run(capsys, "ingest", str(folder), "--db", str(db))
    assert code == 1
    assert "entries.jsonl:1: missing field 'scope'" in err
    assert "entries.jsonl:2: field 'text' must be a string, not a number" in err
    assert "error: nothing ingested: every entry of" in err
    assert "ingested 0 entries" in out
    assert not (tmp_path / "t.db.ids.jsonl").exists()


def test_ingest_shows_the_first_hundred_malformed_lines_and_counts_all(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A flood of malformed lines is cut at 100 on stderr but every one is counted."""
    folder = write_workload(tmp_path / "w", [{"id": "m0", "scope": S, "text": "ok"}] + [{}] * 102)
    code, out, err = run(capsys, "ingest", str(folder), "--db", str(tmp_path / "t.db"))
    assert code == 1
    shown = [line for line in err.splitlines() if line.startswith("entries.jsonl:")]
    assert len(shown) == 100
    assert (shown[0], shown[-1]) == (
        "entries.jsonl:2: missing field 'id'",
        "entries.jsonl:101: missing field 'id'",
    )
    assert "... further malformed lines are counted but not shown" in err
    assert "skipped 102 malformed lines (the first 100 on stderr)" in out


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda root: root / "missing", "no workload folder at"),
        (lambda root: root, "holds no entries.jsonl"),
    ],
)
def test_ingest_without_a_workload_fails(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, make: object, message: str
) -> None:
    """A missing folder or entries.jsonl exits 1 with a clear message."""
    assert callable(make)
    folder = make(tmp_path)
    code, _, err = run(capsys, "ingest", str(folder), "--db", str(tmp_path / "t.db"))
    assert code == 1
    assert message in err


def test_ingest_refuses_an_in_memory_database(
    capsys: pytest.CaptureFixture[str], workload: Path
) -> None:
    """--db :memory: would be lost on exit, so ingest refuses it as bad input."""
    code, _, err = run(capsys, "ingest", str(workload), "--db", ":memory:")
    assert code == 2
    assert "--db must be a file" in err


CHAT = """\
12/05/2023, 13:56 - Messages and calls are end-to-end encrypted.
12/05/2023, 13:56 - Kate: We finally booked the cabin at Lake Tahoe for August
12/05/2023, 13:57 - Elise: Amazing! Which week?
The second one, I hope
13/05/2023, 09:03 - Kate: <Media omitted>
"""


def test_ingest_reads_a_chat_export_into_a_scope(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """--chat SCOPE reads a WhatsApp export: one entry a message, the app's own line
    counted and skipped, a pack cites the message as written; a second import of the
    same chat writes nothing."""
    chat = tmp_path / "WhatsApp Chat with Kate.txt"
    chat.write_text(CHAT, encoding="utf-8")
    db = str(tmp_path / "me.db")
    code, out, err = run(capsys, "ingest", str(chat), "--chat", "chat:kate", "--db", db)
    assert code == 0, err
    assert "ingested 3 entries into" in out
    assert "3 new" in out
    assert "skipped 1 lines the app wrote itself or messages without text" in out
    code, out, _ = run(
        capsys, "prepare", "--db", db, "--scope", "chat:kate", "--max-bytes", "900",
        "Where is the cabin Kate booked?",
    )  # fmt: skip
    assert code == 0
    lines = [json.loads(line) for line in out.splitlines() if line.startswith("[")]
    assert [
        "2023-05-12 13:56", "Kate: We finally booked the cabin at Lake Tahoe for August"
    ] in [line[:2] for line in lines]  # fmt: skip
    code, out, _ = run(capsys, "ingest", str(chat), "--chat", "chat:kate", "--db", db)
    assert (code, "0 new" in out, "3 unchanged" in out) == (0, True, True)


@pytest.mark.parametrize(
    ("text", "extra", "message"),
    [
        ("03/04/2023, 10:00 - Kate: hi\n", [], "pass --date-order dmy or --date-order mdy"),
        ("not a chat\n", [], "holds no chat message"),
        (CHAT, ["--date-order", "dmy", "--chat", ""], "scope"),
    ],
    ids=["ambiguous-dates", "no-message", "empty-scope"],
)
def test_ingest_of_a_chat_says_what_is_wrong(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str, extra: list[str], message: str
) -> None:
    """A chat whose dates read both ways asks for --date-order; a file of no message
    and an empty scope are refused, each saying why; --date-order alone is refused."""
    chat = tmp_path / "chat.txt"
    chat.write_text(text, encoding="utf-8")
    db = str(tmp_path / "me.db")
    code, _, err = run(capsys, "ingest", str(chat), "--chat", "chat:kate", *extra, "--db", db)
    assert code == 1
    assert message in err
    code, _, err = run(capsys, "ingest", str(chat), "--date-order", "mdy", "--db", db)
    assert code == 1
    assert "pass --chat SCOPE too" in err


def break_second_batch(monkeypatch: pytest.MonkeyPatch, error: BaseException) -> None:
    """Make the runtime's second ``add_memories`` call raise ``error``."""
    add_memories = satchel.Runtime.add_memories
    calls: list[int] = []

    async def breaking(
        self: satchel.Runtime, scope_id: str, entries: list[satchel.MemoryEntry]
    ) -> list[satchel.MemoryRef]:
        calls.append(len(entries))
        if len(calls) == 2:
            raise error
        return await add_memories(self, scope_id, entries)

    monkeypatch.setattr(satchel.Runtime, "add_memories", breaking)


def test_failed_ingest_keeps_the_id_map_of_what_it_wrote(
    capsys: pytest.CaptureFixture[str],
    workload: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """When a write fails midway, the batches already written are mapped and ingest exits 1."""
    break_second_batch(monkeypatch, satchel.StoreError("disk full"))
    db = str(tmp_path / "t.db")
    code, out, err = run(capsys, "ingest", str(workload), "--db", db, "--batch-size", "2")
    assert code == 1
    assert "ingest stopped: disk full (2 entries were written first)" in err
    assert "ingested 2 entries" in out
    assert list(read_id_map(db + ".ids.jsonl").values()) == [["m1"], ["m2"]]


def test_interrupted_ingest_keeps_the_id_map_of_what_it_wrote(
    capsys: pytest.CaptureFixture[str],
    workload: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Ctrl-C midway exits 130; the id map already holds every batch written before it."""
    break_second_batch(monkeypatch, KeyboardInterrupt())
    db = str(tmp_path / "t.db")
    code, _, err = run(capsys, "ingest", str(workload), "--db", db, "--batch-size", "2")
    assert code == 130
    assert "satchel ingest: interrupted" in err
    assert list(read_id_map(db + ".ids.jsonl").values()) == [["m1"], ["m2"]]


# ------------------------------------------------------------------------------ prepare


@BACKENDS
def test_prepare_prints_the_cited_pack(
    capsys: pytest.CaptureFixture[str], database: str, backend: str
) -> None:
    """prepare prints the pack; its citations map back to the workload's ids."""
    code, out, err = run(
        capsys,
        "prepare",
        "--db",
        database,
        "--scope",
        S,
        "--backend",
        backend,
        "Where did Alice move?",
    )
    assert (code, err) == (0, "")
    by_key = read_id_map(database + ".ids.jsonl")
    delivered = [by_key[citation_key(c)] for c in delivered_citations(out)]
    assert ["m2"] in delivered
    assert "Alice moved to Lisbon last May." in out


def test_an_id_a_pack_prints_greps_in_the_id_map(
    capsys: pytest.CaptureFixture[str], database: str
) -> None:
    """The id an item line of a pack carries is found verbatim on its workload id's line
    of DB.ids.jsonl (both spell it in 22 characters)."""
    code, out, _ = run(capsys, "prepare", "--db", database, "--scope", S, "Where did Alice move?")
    assert code == 0
    line = next(line for line in out.splitlines() if "Alice moved to Lisbon" in line)
    printed = json.loads(line)[2]
    assert len(printed) == 22
    id_map = Path(database + ".ids.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(found)["id"] for found in id_map if printed in found] == ["m2"]


def test_prepare_json_prints_the_four_fields(
    capsys: pytest.CaptureFixture[str], database: str
) -> None:
    """--json prints schema, status, content and content_bytes, and nothing else."""
    code, out, _ = run(capsys, "prepare", "--db", database, "--scope", S, "--json", "Kestrel")
    assert code == 0
    result = json.loads(out)
    assert sorted(result) == ["content", "content_bytes", "schema", "status"]
    assert (result["schema"], result["status"]) == ("satchel.prepared-context.v2", "ready")
    assert result["content_bytes"] == len(result["content"].encode())


def test_prepare_of_an_empty_scope_prints_nothing(
    capsys: pytest.CaptureFixture[str], database: str
) -> None:
    """An empty result leaves stdout empty, notes it on stderr, and is not a failure."""
    code, out, err = run(capsys, "prepare", "--db", database, "--scope", "elsewhere", "Kestrel")
    assert (code, out) == (0, "")
    assert "nothing relevant in elsewhere (status empty)" in err


def test_prepare_with_sections_renders_an_assembly(
    capsys: pytest.CaptureFixture[str], database: str
) -> None:
    """--section FAMILY=LIMIT asks for an assembly: its families as groups, profile included."""
    code, out, _ = run(
        capsys,
        "prepare",
        "--db",
        database,
        "--scope",
        S,
        "--section",
        "profile=1",
        "--section",
        "memory=2",
        "Kestrel cluster",
    )
    assert code == 0
    assert out.index('{"family":"profile"') < out.index('{"family":"memory"')
    assert {"family": "profile", "scope": S} in delivered_citations(out)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--max-bytes", "100"], "error: max_bytes must be in 512..32768"),
        (["--section", "note=1"], "assembly.sections[0].family must be one of"),
        (["--section", "memory"], "expected FAMILY=LIMIT"),
        (["--max-bytes", "lots"], "invalid int value: 'lots'"),
    ],
)
def test_prepare_bad_input_exits_2(
    capsys: pytest.CaptureFixture[str], database: str, args: list[str], message: str
) -> None:
    """Bad input exits 2 with a message naming the field, printing no pack."""
    code, out, err = run(capsys, "prepare", "--db", database, "--scope", S, *args, "Kestrel")
    assert (code, out) == (2, "")
    assert message in err


def test_prepare_never_creates_a_database(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A missing --db exits 2, says how to create one, and leaves no file behind."""
    db = tmp_path / "none.db"
    code, _, err = run(capsys, "prepare", "--db", str(db), "--scope", S, "Kestrel")
    assert code == 2
    assert f"no database at {db}; create one with: satchel ingest" in err
    assert list(tmp_path.iterdir()) == []


def test_prepare_on_a_file_that_is_no_database_fails(
    capsys: pytest.CaptureFixture[str], workload: Path
) -> None:
    """A --db that is not a satchel database is bad input (exit 2) with a clear message,
    not a traceback."""
    entries = str(workload / "entries.jsonl")
    code, _, err = run(capsys, "prepare", "--db", entries, "--scope", S, "Kestrel")
    assert code == 2
    assert err.startswith("satchel prepare: error: ")
    assert "is not a satchel database (not an SQLite file)" in err


def test_trio_backend_without_trio_is_bad_input(
    capsys: pytest.CaptureFixture[str], database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--backend trio without trio installed says how to install it."""
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "trio" else real(name, *a)
    )
    code, _, err = run(capsys, "prepare", "--db", database, "--scope", S, "--backend", "trio", "x")
    assert code == 2
    assert "pip install 'satchel[trio]'" in err


# ----------------------------------------------------------------------------- progress


class Terminal(io.StringIO):
    """A text stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def test_progress_redraws_in_place_on_a_terminal() -> None:
    """On a terminal the bar is redrawn with \\r only when it changes; notes keep it whole."""
    stream = Terminal()
    bar = ProgressBar(4, stream, label="x")
    bar.update(1)
    bar.update(1)
    bar.note("entries.jsonl:2: bad")
    bar.update(4)
    bar.finish()
    quarter = "x [#######.......................]  25% (1/4)"
    full = "x [##############################] 100% (4/4)"
    assert stream.getvalue() == (f"\r{quarter}\r\x1b[2Kentries.jsonl:2: bad\n{quarter}\r{full}\n")


def test_progress_logs_every_ten_percent_elsewhere() -> None:
    """Off a terminal the bar writes one line per 10% step, and a last line if short of total."""
    stream = io.StringIO()
    bar = ProgressBar(100, stream, label="x")
    for done in range(1, 96):
        bar.update(done)
    bar.finish()
    lines = stream.getvalue().splitlines()
    assert lines[0] == "x:  10% (10/100)"
    assert len(lines) == 10
    assert lines[-2:] == ["x:  90% (90/100)", "x:  95% (95/100)"]


def test_ingesting_a_workload_again_writes_nothing_twice(
    capsys: pytest.CaptureFixture[str], workload: Path, tmp_path: Path
) -> None:
    """Every workload id is its entry's idempotency key: a second ingest of the same
    workload adds no record, and a changed line becomes a new version."""
    import sqlite3

    db = str(tmp_path / "team.db")

    def records() -> list[tuple[str, int, int]]:
        with sqlite3.connect(db) as conn:
            found = conn.execute("SELECT caller_key, revision, live FROM records ORDER BY row")
            return [(key, revision, live) for key, revision, live in found.fetchall()]

    assert run(capsys, "ingest", str(workload), "--db", db, "--allow-skips")[0] == 0
    first = records()
    assert run(capsys, "ingest", str(workload), "--db", db, "--allow-skips")[0] == 0
    assert records() == first
    changed = [{"id": "m1", "scope": S, "text": "Alice now writes runbooks."}]
    assert run(capsys, "ingest", str(write_workload(tmp_path / "w2", changed)), "--db", db)[0] == 0
    assert records()[len(first) :] == [("m1", 2, 1)]
    assert ("m1", 1, 0) in records()


@BACKENDS
def test_get_maps_a_citation_back_to_its_record_and_key(
    capsys: pytest.CaptureFixture[str], database: str, backend: str
) -> None:
    """'satchel get' prints the exact version a citation names, keyed by its workload id."""
    code, out, _ = run(capsys, "prepare", "--db", database, "--scope", S, "--json", "Lisbon")
    assert code == 0
    (item,) = [
        i
        for i in satchel.parse_context(json.loads(out)["content"])
        if i.text and "Lisbon" in i.text
    ]
    cited = item.citation
    args = ["get", "--db", database, "--scope", cited.scope, "--id", str(cited.id)]
    code, out, _ = run(capsys, *args, "--version", str(cited.version), "--backend", backend)
    assert code == 0
    record = json.loads(out)
    assert (record["key"], record["text"], record["version"]) == ("m2", item.text, cited.version)
    assert record["entry_id"] == compact_id(str(cited.id))  # the id as the pack spells it
    assert len(record["entry_id"]) == 22
    code, out, _ = run(capsys, *args)  # a citation naming no version means version 1
    assert code == 0
    assert cited.version == 1
    assert json.loads(out) == record


def test_get_of_a_missing_version_fails_by_name(
    capsys: pytest.CaptureFixture[str], database: str
) -> None:
    """A version that does not exist exits 1 and says which."""
    code, _, err = run(
        capsys, "get", "--db", database, "--scope", S, "--id", "nope", "--version", "1"
    )
    assert code == 1
    assert "no memory entry 'nope'" in err or "no version 1" in err


def test_a_prepare_past_its_timeout_says_so(
    capsys: pytest.CaptureFixture[str], database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A prepare that overruns --timeout exits 1 with a message that names the deadline,
    never an empty "error: " line."""
    import anyio

    async def forever(*args: object, **kwargs: object) -> None:
        await anyio.sleep_forever()

    monkeypatch.setattr(satchel.Runtime, "prepare_context", forever)
    code, _, err = run(
        capsys, "prepare", "--db", database, "--scope", S, "--timeout", "0.001", "Lisbon"
    )
    assert code == 1
    assert "did not finish before its deadline (--timeout 0.001 s)" in err


def test_an_error_without_a_message_is_named() -> None:
    """Every CLI error prints a message: one raised without any is named by its kind."""
    from satchel.cli import _main

    assert _main._said(TimeoutError()) == "Timeout expired."
    assert _main._said(OSError("disk full")) == "disk full"


def test_prepare_takes_a_timeout(capsys: pytest.CaptureFixture[str], database: str) -> None:
    """--timeout bounds the prepare (a generous one changes nothing); a bad one exits 2."""
    code, out, _ = run(
        capsys, "prepare", "--db", database, "--scope", S, "--timeout", "30", "Lisbon"
    )
    assert code == 0
    assert "Lisbon" in out
    code, _, err = run(
        capsys, "prepare", "--db", database, "--scope", S, "--timeout", "0", "Lisbon"
    )
    assert code == 2
    assert "--timeout" in err


def test_the_sections_are_described_as_the_pack_format_is(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``--section`` help and the MCP ``sections`` schema describe the v2 pack (groups of
    JSON lines), not the Markdown sections of an older format."""
    import re

    from satchel._contract import _prepare

    code, out, _ = run(capsys, "prepare", "--help")
    assert code == 0
    said = " ".join(out.split())
    assert "groups of the pack's JSON lines" in said
    assert _prepare._SECTIONS_DOC.startswith("Deliver each family's items as their own groups")
    mcp_doc = (Path(__file__).parents[2] / "docs" / "mcp.md").read_text()
    for text in (said, _prepare._SECTIONS_DOC, mcp_doc):
        assert not re.search(r"Markdown section", text)
