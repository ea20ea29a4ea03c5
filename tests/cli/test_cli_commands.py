"""How a ``satchel`` command is written: one ``Command`` per command module, listed once in
``_main.COMMANDS``; no command reaches into another's module; one helper opens a store
and a runtime with telemetry; the architecture page lists every command."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path
from typing import Final

import pytest

from satchel.cli._main import COMMANDS, build_parser
from satchel.cli._options import Command

from ._driver import run

ROOT: Final = Path(__file__).resolve().parents[2]
CLI: Final = ROOT / "src" / "satchel" / "cli"
#: Modules of the CLI that hold no command: what the commands share, and the helpers
#: of one command each (prepare's receipts tables, copy's verification, serve's workers).
SHARED: Final = {
    "_running", "_options", "_progress", "_table", "_explain", "_verify", "_workers", "_moving",
}  # fmt: skip
#: Modules that open a runtime without the one helper, and why.
OWN_RUNTIME: Final = {
    "_running": "the helper itself",
    "_demo": "a throwaway store it creates itself; exports nothing",
    "_verify": "surveys both stores afresh after a copy; exports nothing",
    "_list": "over the store on_store opened, naming its embedder: it embeds nothing",
}


def _modules() -> dict[str, ast.Module]:
    return {path.stem: ast.parse(path.read_text("utf-8")) for path in CLI.glob("_*.py")}


def _sibling_imports(tree: ast.Module) -> list[tuple[str, str]]:
    """``(module, name)`` for every name imported from a sibling module of the CLI."""
    found: list[tuple[str, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            for alias in node.names:
                if node.module is None:  # from . import _options
                    found.append((alias.name, ""))
                else:
                    found.append((node.module, alias.name))
    return found


def test_every_command_is_a_command_of_its_own_module_listed_once() -> None:
    """Each command module declares its Command(s), and COMMANDS lists each exactly once,
    in the order of ``satchel --help``."""
    names = [command.name for command in COMMANDS]
    assert len(set(names)) == len(names)
    declared = {
        value.name
        for stem in set(_modules()) - SHARED - {"_main"}
        for value in vars(importlib.import_module(f"satchel.cli.{stem}")).values()
        if isinstance(value, Command)
    }
    assert declared == set(names)
    [subparsers] = [a for a in build_parser()._actions if a.dest == "command"]
    assert list(subparsers.choices) == names  # type: ignore[arg-type]


def test_no_command_imports_another_commands_module() -> None:
    """Only ``_main`` imports a command module, and no module imports a private name of
    a sibling: what commands share lives in a shared module, under a public name."""
    commands = set(_modules()) - SHARED - {"_main"}
    wrong = [
        f"{stem} imports {module}.{name}"
        for stem, tree in _modules().items()
        for module, name in _sibling_imports(tree)
        if (module in commands and stem != "_main") or name.startswith("_")
    ]
    assert not wrong


def test_one_helper_opens_a_store_and_a_runtime() -> None:
    """Every command that opens a runtime over its store does it with
    ``_running.open_command_runtime`` (telemetry included); the exceptions say why."""
    opening = {
        stem
        for stem, tree in _modules().items()
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and node.attr == "open_runtime"
    }
    assert opening == set(OWN_RUNTIME)


def test_the_architecture_page_lists_every_command() -> None:
    """The cli row of docs/architecture.md's layer drawing names every command, in order."""
    lines = (ROOT / "docs" / "architecture.md").read_text("utf-8").splitlines()
    start = next(n for n, line in enumerate(lines) if line.startswith("cli "))
    row = [lines[start].removeprefix("cli")]
    for line in lines[start + 1 :]:
        if not line.startswith("   |"):
            break
        row.append(line.removeprefix("   |"))
    listed = " ".join(" ".join(row).split()).removeprefix("the satchel command: ")
    assert listed.split(", ") == [command.name for command in COMMANDS]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda command: command.name)
def test_each_help_shows_the_commands_own_texts(
    capsys: pytest.CaptureFixture[str], command: Command
) -> None:
    """``satchel NAME --help`` shows the command's description, its examples, ``--backend``
    first, and the top-level help its summary."""
    code, out, _ = run(capsys, command.name, "--help")
    assert code == 0
    assert command.description in out
    assert command.epilog in out
    assert re.search(r"^options:\n  -h, --help .*\n  --backend ", out, re.MULTILINE)
    code, out, _ = run(capsys, "--help")
    assert code == 0
    assert f"{command.name} {command.summary}" in " ".join(out.split())
