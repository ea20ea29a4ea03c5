"""Aligned tables on stdout, for the commands that print rows (``scopes``, ``prepare
--explain``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable


def print_table(header: list[str], lines: list[list[str]], *, numeric: Iterable[str]) -> None:
    """Print ``lines`` under ``header`` in aligned columns; ``numeric`` columns (by
    header name) are right-aligned."""
    numbers = set(numeric)
    right = {column for column, name in enumerate(header) if name in numbers}
    widths = [max(len(line[column]) for line in [header, *lines]) for column in range(len(header))]
    for line in [header, *lines]:
        cells = [
            cell.rjust(width) if column in right else cell.ljust(width)
            for column, (cell, width) in enumerate(zip(line, widths, strict=True))
        ]
        print("  ".join(cells).rstrip())
