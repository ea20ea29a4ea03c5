"""satchel's wire contract is defined once (``satchel._contract``): the committed OpenAPI
document and MCP tool schemas are what the code generates, and every bound they state is
the one satchel's validation applies (one past it is refused)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

import satchel
from satchel import _contract
from satchel.http._openapi import OPENAPI
from satchel.mcp._server import tool_schemas
from satchel.vocabulary import validate_request

if TYPE_CHECKING:
    from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("contract", ROOT / "scripts" / "contract.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_documents_are_what_the_code_generates() -> None:
    """Regenerated now, both documents equal their committed copies byte for byte (run
    ``python scripts/contract.py`` after changing a bound, a shape or a route)."""
    for path, text in _script().documents().items():
        assert path.read_text(encoding="utf-8") == text, f"{path.name} is out of date"


def test_the_check_names_a_document_that_drifted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    script = _script()
    monkeypatch.setattr(script, "DOCS", tmp_path)
    assert script.main([]) == 0
    assert script.main(["--check"]) == 0
    stale = tmp_path / "openapi.json"
    stale.write_text(stale.read_text().replace(str(_contract.MAX_QUERY_CHARS), "9999"))
    assert script.main(["--check"]) == 1
    assert "openapi.json" in capsys.readouterr().err


def _prepare_schema() -> dict[str, Any]:
    body = OPENAPI["paths"]["/v1/context/prepare"]["post"]["requestBody"]
    name = body["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[-1]
    properties: dict[str, Any] = OPENAPI["components"]["schemas"][name]["properties"]
    return properties


def _request(**fields: Any) -> satchel.PrepareContextRequest:
    return satchel.PrepareContextRequest(**{"scope_id": "s", "query": "q", **fields})


def test_the_documents_bounds_are_the_validations() -> None:
    """At each bound the document states a request is accepted; one past it is refused,
    for the HTTP body and the MCP tool alike."""
    http = _prepare_schema()
    mcp = tool_schemas()["prepare_context"]["inputSchema"]["properties"]
    query = http["query"]["maxLength"]
    assert query == mcp["query"]["maxLength"]
    validate_request(_request(query="q" * query))
    with pytest.raises(satchel.InvalidRequestError, match="query"):
        validate_request(_request(query="q" * (query + 1)))
    low, high = http["max_bytes"]["minimum"], http["max_bytes"]["maximum"]
    assert (low, high) == (mcp["max_bytes"]["minimum"], mcp["max_bytes"]["maximum"])
    for good in (low, high):
        validate_request(_request(max_bytes=good))
    for bad in (low - 1, high + 1):
        with pytest.raises(satchel.InvalidRequestError, match="max_bytes"):
            validate_request(_request(max_bytes=bad))
    references = http["references"]["maxItems"]
    validate_request(_request(references=tuple(f"r{n}" for n in range(references))))
    with pytest.raises(satchel.InvalidRequestError, match="references"):
        validate_request(_request(references=tuple(f"r{n}" for n in range(references + 1))))
    scope = mcp["scope_id"]["maxLength"]
    validate_request(_request(scope_id="s" * scope))
    with pytest.raises(satchel.InvalidRequestError, match="scope_id"):
        validate_request(_request(scope_id="s" * (scope + 1)))


def test_the_documents_names_are_satchels() -> None:
    """Families, tiers, channels and omission causes, as the vocabulary spells them."""
    assert tuple(_contract.FAMILIES) == tuple(satchel.stores.FAMILY_RULES)
    mcp = tool_schemas()["prepare_context"]["inputSchema"]["properties"]
    section = mcp["sections"]["anyOf"][0]["items"]["properties"]
    assert section["family"]["enum"] == list(_contract.FAMILIES)
    assert section["limit"]["maximum"] == _contract.MAX_SECTION_LIMIT
    with pytest.raises(satchel.InvalidRequestError):
        validate_request(_request(assembly=satchel.Assembly((satchel.Section("memory", 9),))))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__]))
