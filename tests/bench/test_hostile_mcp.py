"""The MCP probes of ``bench hostile`` (bench/_hostile_mcp.py) against ``satchel mcp``."""

from __future__ import annotations

import pytest
from bench._hostile_mcp import run_mcp_probes

pytestmark = pytest.mark.anyio

CLASSES = [
    "non-string-argument",
    "lone-surrogate-argument",
    "non-integer-argument",
    "unknown-argument",
    "deep-argument",
    "not-json",
    "not-utf8",
    "not-jsonrpc",
    "lone-surrogate-elsewhere",
]


async def test_every_mcp_probe_holds(anyio_backend_name: str) -> None:
    """One row per class, each with tries, every try held (a well-formed answer, and the
    server answered on) and none failed; the server runs on the test's backend."""
    rows = await run_mcp_probes(answer_seconds=30.0, backend=anyio_backend_name)
    assert [name for name, *_ in rows] == CLASSES
    for name, tries, held, failed in rows:
        assert (held, failed) == (tries, 0), name
        assert tries > 0
