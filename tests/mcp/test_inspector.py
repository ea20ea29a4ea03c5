"""The MCP Inspector's own command line (``mcp-inspector --cli``) against ``satchel mcp``
over stdio, as a host developer checks a server: it lists the tools, and their schemas
hold nothing its schema-portability check warns about.

The Inspector comes from ``$SATCHEL_MCP_INSPECTOR`` (its ``mcp-inspector`` program, which
CI installs: ``.ci/run``) or else through ``npx``, which fetches the pinned version once
into its cache; without Node.js the test is skipped.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from typing import TYPE_CHECKING, Final

import pytest

from ._client import TOOLS, listed_types

if TYPE_CHECKING:
    from pathlib import Path

#: The last Inspector release whose package runs on Node 20 (later ones require 22).
INSPECTOR: Final = "@modelcontextprotocol/inspector@0.15.0"
INSTALLED: Final = "SATCHEL_MCP_INSPECTOR"


def inspector() -> list[str]:
    """The command that runs the Inspector's command line."""
    installed = os.environ.get(INSTALLED)
    if installed:
        return [installed, "--cli"]
    npx = shutil.which("npx")
    if npx is None:
        pytest.skip("npx is not installed (Node.js): the MCP Inspector cannot run")
    return [npx, "--yes", INSPECTOR, "--cli"]


@pytest.mark.slow
def test_the_inspector_lists_the_tools_with_portable_schemas(tmp_path: Path) -> None:
    """tools/list through the Inspector names the five tools, and no input or output
    schema spells a union as a list of types."""
    server = [
        sys.executable,
        "-m",
        "satchel",
        "mcp",
        "--create",
        "--db",
        str(tmp_path / "agent.db"),
    ]
    command = [*inspector(), *server, "--embedder", "hashing", "--method", "tools/list"]
    done = subprocess.run(
        command, capture_output=True, text=True, cwd=tmp_path, timeout=900, check=False
    )
    assert done.returncode == 0, done.stderr
    tools = json.loads(done.stdout)["tools"]
    assert tuple(tool["name"] for tool in tools) == TOOLS
    unions = {
        f"{tool['name']} {part}": listed_types(tool[part])
        for tool in tools
        for part in ("inputSchema", "outputSchema")
    }
    assert {name: where for name, where in unions.items() if where} == {}
