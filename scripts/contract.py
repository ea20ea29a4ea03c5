"""Write (or check) the generated copies of satchel's wire contract.

``python scripts/contract.py`` writes ``docs/openapi.json`` (the service's OpenAPI
document, as ``GET /openapi.json`` serves it) and ``docs/mcp-tools.json`` (every MCP
tool as a host lists it), both rendered from the shapes of ``satchel._contract``;
``python scripts/contract.py --check`` exits 1, naming the file, when a committed copy
differs from what the code generates. ``tests/test_contract.py`` runs the same check.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from satchel._contract import dumped
from satchel.http._openapi import OPENAPI
from satchel.mcp._server import tool_schemas

DOCS = Path(__file__).resolve().parent.parent / "docs"


def documents() -> dict[Path, str]:
    """Each generated document's path and its text, as the code makes it now."""
    return {DOCS / "openapi.json": dumped(OPENAPI), DOCS / "mcp-tools.json": dumped(tool_schemas())}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--check", action="store_true", help="compare the committed copies; write nothing"
    )
    args = parser.parse_args(argv)
    stale = []
    for path, text in documents().items():
        if args.check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(path.name)
        else:
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path}")
    if stale:
        print(f"out of date: {', '.join(stale)}; run python scripts/contract.py", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
