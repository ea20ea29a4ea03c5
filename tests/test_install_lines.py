"""Every install line a user can copy names this project and an extra it declares."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# what a user reads: the README, the docs, the examples and the messages satchel prints
READ = [
    ROOT / "README.md",
    *sorted((ROOT / "docs").rglob("*.md")),
    *sorted(path for path in (ROOT / "examples").rglob("*") if path.suffix in {".md", ".py"}),
    *sorted((ROOT / "src" / "satchel").rglob("*.py")),
]
# `pip install [-e] "name[extras]"`, the requirement quoted or not
INSTALL = re.compile(r"pip install (?:-e )?([\"']?)([^\s\"'`]+)\1")
REQUIREMENT = re.compile(r"^(?P<name>[\w.-]+?|\.)(?:\[(?P<extras>[\w,-]+)\])?$")


def declared_extras() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["name"] == "satchel"
    return set(project["optional-dependencies"])


def install_lines() -> list[tuple[str, str]]:
    return [
        (str(path.relative_to(ROOT)), match.group(2))
        for path in READ
        for match in INSTALL.finditer(path.read_text(encoding="utf-8"))
    ]


def test_the_readme_docs_and_messages_carry_install_lines() -> None:
    """The scan finds the README's, the service doc's and the CLI's install lines."""
    places = {place for place, _ in install_lines()}
    assert {"README.md", "docs/service.md", "src/satchel/cli/_serve.py"} <= places


@pytest.mark.parametrize(("place", "requirement"), install_lines())
def test_an_install_line_names_satchel_and_a_declared_extra(place: str, requirement: str) -> None:
    """`pip install X` installs this project (a clone's `.` or `satchel`), with extras
    pyproject.toml declares: never another project's name."""
    parsed = REQUIREMENT.match(requirement)
    assert parsed is not None, f"{place}: unreadable requirement {requirement!r}"
    assert parsed["name"] in {"satchel", "."}, f"{place}: installs {parsed['name']!r}"
    extras = set((parsed["extras"] or "").split(",")) - {""}
    assert extras <= declared_extras(), f"{place}: undeclared extras {extras - declared_extras()}"


#: Projects that are, or bring, a model hub's client (tokenizers requires huggingface-hub,
#: which brings hf-xet and an HTTP client): an extra may need one, the core never does.
HUB_CLIENTS = {"huggingface-hub", "hf-xet", "tokenizers", "transformers", "model2vec"}


def test_the_core_install_brings_no_model_hub_client() -> None:
    """`pip install satchel` installs no model hub client: satchel downloads nothing,
    and reads its bundled model with numpy and the standard library."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = {re.split(r"[^\w.-]", spec, maxsplit=1)[0].lower() for spec in project["dependencies"]}
    assert "numpy" in names
    assert not names & HUB_CLIENTS
    assert "tokenizers>=0.15" in project["optional-dependencies"]["model2vec"]
