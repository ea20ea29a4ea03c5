"""satchel's wire contract is defined once (``satchel._contract``): the committed OpenAPI
document and MCP tool schemas are what the code generates, and every bound they state is
the one satchel's validation applies (one past it is refused)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

import satchel
from satchel import _contract, _wire, vocabulary
from satchel._contract import Shape
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
        assert path.read_text(encoding="utf-8") == text, (
            f"{path.name} is out of date: run python scripts/contract.py"
        )


def test_the_check_names_a_document_that_drifted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--check`` passes on copies just written and fails, naming the file and how to
    regenerate it, on a copy that differs."""
    script = _script()
    monkeypatch.setattr(script, "DOCS", tmp_path)
    assert script.main([]) == 0
    assert script.main(["--check"]) == 0
    stale = tmp_path / "openapi.json"
    stale.write_text(stale.read_text().replace(str(_contract.MAX_QUERY_CHARS), "9999"))
    assert script.main(["--check"]) == 1
    error = capsys.readouterr().err
    assert "openapi.json" in error
    assert "python scripts/contract.py" in error


def _prepare_schema() -> dict[str, Any]:
    body = OPENAPI["paths"]["/v1/context/prepare"]["post"]["requestBody"]
    name = body["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[-1]
    properties: dict[str, Any] = OPENAPI["components"]["schemas"][name]["properties"]
    return properties


def _request(**fields: Any) -> satchel.PrepareContextRequest:
    return satchel.PrepareContextRequest(**{"scope_id": "s", "query": "q", **fields})


def test_the_documents_bounds_are_the_validations() -> None:
    """At each bound the documents state a request is accepted by satchel's validation;
    one past it is refused, for the HTTP body and the MCP tool alike."""
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
    assert http["max_bytes"]["default"] == _request().max_bytes
    references = http["references"]["maxItems"]
    validate_request(_request(references=tuple(f"r{n}" for n in range(references))))
    with pytest.raises(satchel.InvalidRequestError, match="references"):
        validate_request(_request(references=tuple(f"r{n}" for n in range(references + 1))))
    scope = mcp["scope_id"]["maxLength"]
    validate_request(_request(scope_id="s" * scope))
    with pytest.raises(satchel.InvalidRequestError, match="scope_id"):
        validate_request(_request(scope_id="s" * (scope + 1)))


def test_the_sections_bounds_are_the_validations() -> None:
    """Each family's section limit and the limits' sum, as the tool's description and
    maximum state them, are what satchel accepts; one more is refused."""
    schema = tool_schemas()["prepare_context"]["inputSchema"]["properties"]["sections"]
    sections = schema["anyOf"][0]
    limit = sections["items"]["properties"]["limit"]
    for family, most in _contract.SECTION_LIMITS.items():
        assert most == limit["maximum"] or f"{family}: 1..{most}" in limit["description"]
        validate_request(_request(assembly=satchel.Assembly((satchel.Section(family, most),))))
        with pytest.raises(satchel.InvalidRequestError, match="limit"):
            validate_request(
                _request(assembly=satchel.Assembly((satchel.Section(family, most + 1),)))
            )
    total = _contract.MAX_SECTION_LIMIT
    assert f"sum to at most {total}" in sections["description"]
    first, second = _contract.FAMILIES[0], _contract.FAMILIES[2]
    fits = (satchel.Section(first, total - 1), satchel.Section(second, 1))
    validate_request(_request(assembly=satchel.Assembly(fits)))
    over = (satchel.Section(first, total - 1), satchel.Section(second, 2))
    with pytest.raises(satchel.InvalidRequestError, match="sum"):
        validate_request(_request(assembly=satchel.Assembly(over)))


def test_the_documents_names_are_satchels() -> None:
    """Families, tiers, channels, statuses, causes and the schema id, as satchel spells
    them, in both documents."""
    schemas = OPENAPI["components"]["schemas"]
    assert tuple(_contract.FAMILIES) == tuple(satchel.stores.FAMILY_RULES)
    mcp = tool_schemas()["prepare_context"]
    section = mcp["inputSchema"]["properties"]["sections"]["anyOf"][0]["items"]["properties"]
    assert section["family"]["enum"] == list(satchel.stores.FAMILY_RULES)
    assert schemas["Citation"]["properties"]["family"]["enum"] == list(satchel.stores.FAMILY_RULES)
    assert schemas["Receipt"]["properties"]["tier"]["enum"] == list(vocabulary.TIERS)
    for name in ("Receipt", "Omission"):
        channels = schemas[name]["properties"]["channels"]["properties"]
        assert tuple(channels) == vocabulary.CHANNELS
    cause = schemas["Omission"]["properties"]["cause"]["enum"]
    assert tuple(cause) == vocabulary.OMISSION_CAUSES
    empty = satchel.PreparedContext.empty()
    for pack in (schemas["PreparedContext"], mcp["outputSchema"]):
        assert pack["properties"]["schema"]["const"] == empty.schema
        assert empty.status in pack["properties"]["status"]["enum"]


def _shapes() -> list[Shape]:
    return [value for value in vars(_contract).values() if isinstance(value, Shape)]


def test_a_name_names_one_shape() -> None:
    """No two shapes of the contract share a component name (the document would show one
    of them under both)."""
    names = [shape.name for shape in _shapes() if shape.name is not None]
    assert len(names) == len(set(names))
    assert set(names) <= set(OPENAPI["components"]["schemas"])


def test_requests_are_closed_and_answers_open_in_the_openapi_document() -> None:
    """A request component refuses unknown members; an answer component leaves room
    for new ones (a client ignores what it does not know)."""
    schemas = OPENAPI["components"]["schemas"]
    for shape in _shapes():
        if shape.name is not None:
            rendered = schemas[shape.name]
            assert ("additionalProperties" not in rendered) is shape.answer, shape.name
            assert rendered["required"] == shape.required
            assert list(rendered["properties"]) == list(shape.fields)


def _bounds(schema: Any, where: str = "") -> set[tuple[str, str, str]]:
    """Every bound and name list a schema states, by where (a null branch, a reference
    and the spelling of a union left aside)."""
    if isinstance(schema, list):
        return {bound for item in schema for bound in _bounds(item, where)}
    if not isinstance(schema, dict):
        return set()
    if "$ref" in schema:
        return _bounds(OPENAPI["components"]["schemas"][schema["$ref"].rsplit("/", 1)[-1]], where)
    found = {
        (where, keyword, json.dumps(schema[keyword])) for keyword in BOUNDS if keyword in schema
    }
    for keyword, value in schema.items():
        if keyword == "properties":
            found |= {
                bound for name, item in value.items() for bound in _bounds(item, f"{where}.{name}")
            }
        elif keyword in {"items", "anyOf", "oneOf"}:
            found |= _bounds(value, where)
    return found


BOUNDS = ("minLength", "maxLength", "pattern", "minimum", "maximum", "maxItems", "enum", "const")
#: The OpenAPI component and the MCP tool schema each shared shape is, and the members
#: only one of them has (the service's assembly; the tool's sections and explain).
SHARED = [
    ("PrepareContextRequest", ("prepare_context", "inputSchema"), {".assembly", ".sections"}),
    ("PreparedContext", ("prepare_context", "outputSchema"), {".receipts", ".omitted"}),
    ("AddMemoriesRequest", ("add_memories", "inputSchema"), set()),
    ("AddMemoriesResponse", ("add_memories", "outputSchema"), set()),
    ("MemoryRef", ("get_memory", "inputSchema"), set()),
    ("ErasedVersions", ("erase_memory", "outputSchema"), set()),
]


@pytest.mark.parametrize(("component", "tool", "own"), SHARED)
def test_the_service_and_the_tools_state_the_same_bounds(
    component: str, tool: tuple[str, str], own: set[str]
) -> None:
    """Where the service and a tool take or give the same shape, they state the same
    bounds and names for every member they share."""
    http = _bounds({"$ref": f"#/components/schemas/{component}"})
    mcp = _bounds(tool_schemas()[tool[0]][tool[1]])

    def shared(bounds: set[tuple[str, str, str]]) -> set[tuple[str, str, str]]:
        return {bound for bound in bounds if not any(bound[0].startswith(o) for o in own)}

    assert shared(http) == shared(mcp)
    assert len(shared(http)) > 2


def test_the_readers_take_the_contracts_fields() -> None:
    """The JSON reader both servers share (``satchel._wire``) reads exactly the fields
    the contract states for an entry, a section and a citation."""
    assert tuple(_contract.MEMORY_ENTRY.fields) == _wire.ENTRY_FIELDS
    assert tuple(_contract.SECTION.fields) == _wire.SECTION_FIELDS
    assert tuple(_contract.CITATION.fields) == _wire.CITATION_FIELDS


def test_the_error_types_are_every_one_the_document_lists() -> None:
    """The Error component lists the contract's error types, each once."""
    error = OPENAPI["components"]["schemas"]["Error"]["properties"]["error"]
    listed = error["properties"]["type"]["enum"]
    assert listed == list(_contract.ERROR_TYPES)
    assert len(set(listed)) == len(listed)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__]))
