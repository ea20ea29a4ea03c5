"""The examples the README points to run as written."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).parent.parent / "examples"
QUICKSTART = EXAMPLES / "quickstart.py"
README = EXAMPLES.parent / "README.md"
#: The README's Quickstart: the first Python block after its heading.
README_QUICKSTART = re.compile(r"^## Quickstart\n\n```python\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def test_the_readme_quickstart_is_the_example() -> None:
    """The README's Quickstart block is examples/quickstart.py word for word (after the
    file's docstring), so what a reader copies is what the tests run."""
    found = README_QUICKSTART.search(README.read_text(encoding="utf-8"))
    assert found is not None
    source = QUICKSTART.read_text(encoding="utf-8")
    docstring, _, code = source.partition('"""\n\n')
    assert docstring.startswith('"""')
    assert found.group(1) == code


def run_quickstart(folder: Path, backend: str) -> str:
    """The quickstart's output, run in ``folder`` (where it keeps its database) on
    ``backend`` (its last line runs asyncio; trio is its comment's alternative)."""
    on_backend = (
        "import functools, runpy, sys, anyio;"
        f"anyio.run = functools.partial(anyio.run, backend={backend!r});"
        "runpy.run_path(sys.argv[1], run_name='__main__')"
    )
    done = subprocess.run(
        [sys.executable, "-c", on_backend, str(QUICKSTART)],
        capture_output=True, text=True, check=True, timeout=120, cwd=folder,
    )  # fmt: skip
    return done.stdout


def test_quickstart_runs_again_with_the_same_output(tmp_path: Path) -> None:
    """The quickstart writes every family, prepares a pack, cites the exact version and
    forgets an entry; run again (on trio), its keys write nothing and it prints the same."""
    first = run_quickstart(tmp_path, "asyncio")
    assert first.startswith("ready ")
    assert "cited: Backups run nightly at 02:00 UTC" in first
    assert "forgotten, still readable: Backups ran at 01:00 UTC until March" in first
    assert "01:00" not in first.split("END_SATCHEL_CONTEXT_V2")[0]
    assert [path.name for path in tmp_path.iterdir()] == ["quickstart.db"]
    assert run_quickstart(tmp_path, "trio") == first


def test_gate_example_finds_the_paraphrased_evidence() -> None:
    """Gate off: nothing; gate on: the credentials fact, through one admission round."""
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / "gate.py")],
        capture_output=True, text=True, check=True, timeout=120,
    )  # fmt: skip
    off, on = done.stdout.split("gate on -> ")
    assert off.startswith("gate off -> empty")
    assert on.startswith("ready")
    assert "signed ticket from Priya" in on
    assert '"expansion_actions": ["admission"]' in on
