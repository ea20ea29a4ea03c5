"""``satchel mcp`` on the command line, driven in-process: its help, and the usage errors
it refuses before serving anything."""

from __future__ import annotations

import importlib.util
import json
from typing import TYPE_CHECKING

import pytest

from satchel.cli import main

if TYPE_CHECKING:
    from pathlib import Path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_help_explains_the_tools_and_how_to_register(capsys: pytest.CaptureFixture[str]) -> None:
    """'satchel mcp --help' names the tools, the transports, examples and host registration."""
    code, out, _ = run(capsys, "mcp", "--help")
    assert code == 0
    for needle in (
        "prepare_context",
        "add_memories",
        "get_memory",
        "forget_memory",
        "--db",
        "--store",
        "--embedder",
        "--gate",
        "--dedup-turns",
        "--http",
        "--port",
        "examples:",
        "satchel mcp --db",
        "claude mcp add satchel -- satchel mcp --db",
        ".mcp.json",
        "claude mcp add --transport http satchel http://127.0.0.1:8766/mcp",
    ):
        assert needle in out, needle


def test_the_mcp_json_snippet_in_the_help_is_valid_json(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The .mcp.json example parses and launches 'satchel mcp --db PATH'."""
    _, out, _ = run(capsys, "mcp", "--help")
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip().startswith('{"mcpServers"'))
    snippet = json.loads(" ".join(lines[start : start + 2]))
    server = snippet["mcpServers"]["satchel"]
    assert server["command"] == "satchel"
    assert server["args"][:2] == ["mcp", "--db"]
    assert server["args"][-1] == "--create"  # a first launch makes the database


def test_the_top_level_help_lists_mcp(capsys: pytest.CaptureFixture[str]) -> None:
    """'satchel --help' lists the mcp command."""
    code, out, _ = run(capsys, "--help")
    assert code == 0
    assert "mcp" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("--port", "9000"), "--port needs --http"),
        (("--http", "--backend", "trio"), "--http runs on asyncio only"),
        (("--http", "--port", "0"), "must be in 1..65535"),
        (("--http", "--port", "http"), "is not a port number"),
        (("--dedup-turns", "-1"), "must be at least 0"),
    ],
)
def test_usage_errors_exit_2(
    argv: tuple[str, ...], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A bad option combination exits 2 with a message, before any database is created."""
    database = tmp_path / "agent.db"
    code, out, err = run(capsys, "mcp", "--db", str(database), *argv)
    assert code == 2
    assert message in err
    assert out == ""
    assert not database.exists()


def test_a_database_is_required(capsys: pytest.CaptureFixture[str]) -> None:
    """Exactly one of --db and --store names what to serve."""
    code, _, err = run(capsys, "mcp")
    assert code == 2
    assert "--db" in err


def test_without_the_sdk_it_says_what_to_install(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without the MCP SDK, 'satchel mcp' exits 2 naming the extra to install."""
    find_spec = importlib.util.find_spec

    def without_mcp(name: str, package: str | None = None) -> object:
        return None if name == "mcp" else find_spec(name, package)

    monkeypatch.setattr(importlib.util, "find_spec", without_mcp)
    code, _, err = run(capsys, "mcp", "--db", str(tmp_path / "agent.db"))
    assert code == 2
    assert "pip install 'satchel[mcp]'" in err
