"""Reading a generated workload back as plain JSON rows, for the generator tests."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

Row = dict[str, Any]


def read_rows(path: Path) -> list[Row]:
    with path.open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines]
