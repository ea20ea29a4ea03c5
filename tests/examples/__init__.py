"""Tests of the examples in ``examples/``: each runs against a real satchel (a ``satchel
serve`` subprocess, or a runtime in process)."""

from pathlib import Path
from typing import Final

EXAMPLES: Final = Path(__file__).parents[2] / "examples"
