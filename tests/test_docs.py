"""The README stays short and every link in it and in docs/ leads somewhere."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
#: A Markdown link to a file of the repository: ``[text](path)`` or ``(path#anchor)``.
LINK = re.compile(r"\]\(([^)\s:#]+)(?:#[^)]*)?\)")


def test_the_readme_is_at_most_300_lines() -> None:
    """The README keeps to 300 lines: detail lives in docs/."""
    lines = (ROOT / "README.md").read_text(encoding="utf-8").count("\n")
    assert lines <= 300, f"README.md has {lines} lines"


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_every_relative_link_names_a_file_that_exists(page: Path) -> None:
    """A link to a file of the repository from the README or a docs page resolves."""
    targets = LINK.findall(page.read_text(encoding="utf-8"))
    missing = [target for target in targets if not (page.parent / target).exists()]
    assert not missing, f"{page.name} links to missing files: {missing}"
