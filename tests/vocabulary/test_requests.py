"""Every validation error of a request names its field, and nothing is written."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

import satchel

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

pytestmark = pytest.mark.anyio


@pytest.fixture
async def runtime() -> AsyncIterator[satchel.Runtime]:
    async with satchel.open_runtime() as rt:
        await rt.add_memories("s", [satchel.MemoryEntry(text="the backup runs nightly")])
        yield rt


def request(**overrides: Any) -> satchel.PrepareContextRequest:
    fields: dict[str, Any] = {"scope_id": "s", "query": "backup", "max_bytes": 8000}
    fields.update(overrides)
    return satchel.PrepareContextRequest(**fields)


BAD_REQUESTS = [
    pytest.param({"query": ""}, "query", id="empty-query"),
    pytest.param({"query": "   \n\t"}, "query", id="whitespace-query"),
    pytest.param({"query": "x" * 8193}, "query", id="long-query"),
    pytest.param({"query": 42}, "query", id="query-type"),
    pytest.param({"max_bytes": 511}, "max_bytes", id="max-bytes-low"),
    pytest.param({"max_bytes": 32769}, "max_bytes", id="max-bytes-high"),
    pytest.param({"max_bytes": 1000.0}, "max_bytes", id="max-bytes-float"),
    pytest.param({"max_bytes": True}, "max_bytes", id="max-bytes-bool"),
    pytest.param({"scope_id": ""}, "scope_id", id="empty-scope"),
    pytest.param({"scope_id": None}, "scope_id", id="none-scope"),
    pytest.param({"references": ["ok", ""]}, "references[1]", id="empty-reference"),
    pytest.param({"assembly": "memory"}, "assembly", id="assembly-type"),
    pytest.param(
        {"assembly": satchel.Assembly(sections=(satchel.Section("diary", 1),))},
        "assembly.sections[0].family",
        id="unknown-family",
    ),
    pytest.param(
        {
            "assembly": satchel.Assembly(
                sections=(satchel.Section("memory", 1), satchel.Section("memory", 2))
            )
        },
        "assembly.sections[1].family",
        id="family-twice",
    ),
    pytest.param(
        {"assembly": satchel.Assembly(sections=(satchel.Section("memory", 0),))},
        "assembly.sections[0].limit",
        id="limit-zero",
    ),
    pytest.param(
        {"assembly": satchel.Assembly(sections=(satchel.Section("memory", 9),))},
        "assembly.sections[0].limit",
        id="limit-nine",
    ),
    pytest.param(
        {"assembly": satchel.Assembly(sections=(satchel.Section("experience", 3),))},
        "assembly.sections[0].limit",
        id="experience-limit",
    ),
    pytest.param(
        {
            "assembly": satchel.Assembly(
                sections=(satchel.Section("memory", 5), satchel.Section("topic-memory", 4))
            )
        },
        "assembly.sections",
        id="limits-sum",
    ),
    pytest.param({"detail": "summary"}, "detail", id="detail-tier"),
    pytest.param({"detail": {"diary": "full"}}, "detail", id="detail-family"),
    pytest.param({"detail": {"resource": "body"}}, "detail['resource']", id="detail-map-tier"),
    pytest.param({"session_id": ""}, "session_id", id="empty-session"),
    pytest.param(
        {"exclude": (satchel.Citation("memory", "s", "e", "1"),)},  # type: ignore[arg-type]
        "exclude[0].version",
        id="exclude-version-numeral",
    ),
    pytest.param(
        {"exclude": (satchel.Citation("memory", 5, "e", 1),)},  # type: ignore[arg-type]
        "exclude[0].scope",
        id="exclude-scope-int",
    ),
    pytest.param(
        {"exclude": (satchel.Citation("memory", "s", 7, 1),)},  # type: ignore[arg-type]
        "exclude[0].id",
        id="exclude-id-int",
    ),
    pytest.param(
        {"exclude": (satchel.Citation("memory", "s\ud800", "e", 1),)},
        "exclude[0].scope",
        id="exclude-scope-surrogate",
    ),
    pytest.param(
        {"exclude": (satchel.Citation("memory", "s", "e", True),)},
        "exclude[0].version",
        id="exclude-version-bool",
    ),
]


@pytest.mark.parametrize(("overrides", "field"), BAD_REQUESTS)
async def test_invalid_request_names_field(
    runtime: satchel.Runtime, overrides: dict[str, Any], field: str
) -> None:
    """A malformed field raises InvalidRequestError (a ValueError) naming that field."""
    with pytest.raises(satchel.InvalidRequestError, match=f"^{__import__('re').escape(field)}"):
        await runtime.prepare_context(request(**overrides))
    assert issubclass(satchel.InvalidRequestError, ValueError)


async def test_not_a_request_is_refused(runtime: satchel.Runtime) -> None:
    """Passing something other than a PrepareContextRequest is an InvalidRequestError."""
    with pytest.raises(satchel.InvalidRequestError, match="request"):
        await runtime.prepare_context({"scope_id": "s", "query": "q"})


async def test_boundaries_are_accepted(runtime: satchel.Runtime) -> None:
    """max_bytes 512 and 32768, an 8192-character query and limits summing to 8 are valid."""
    sections = (satchel.Section("memory", 6), satchel.Section("experience", 2))
    for overrides in (
        {"max_bytes": 512},
        {"max_bytes": 32768},
        {"query": "backup " + "x" * 8185},
        {"assembly": satchel.Assembly(sections=sections)},
    ):
        result = await runtime.prepare_context(request(**overrides))
        assert result.status == "ready"


async def test_empty_sections_is_normal_empty_result(runtime: satchel.Runtime) -> None:
    """sections=() is a valid request whose result is the normal empty result."""
    result = await runtime.prepare_context(request(assembly=satchel.Assembly(sections=())))
    assert (result.status, result.content, result.content_bytes) == ("empty", None, 0)


@pytest.mark.parametrize("value", [5, None, 2.5])
async def test_sections_that_are_not_a_sequence_name_assembly_sections(
    runtime: satchel.Runtime, value: object
) -> None:
    """Assembly(sections=X) constructs for any X; prepare_context names assembly.sections."""
    assembly = satchel.Assembly(sections=value)  # type: ignore[arg-type]
    with pytest.raises(
        satchel.InvalidRequestError, match=r"^assembly\.sections must be a sequence"
    ):
        await runtime.prepare_context(request(assembly=assembly))


@pytest.mark.parametrize("value", [5, None, 2.5])
async def test_references_that_are_not_a_sequence_name_references(
    runtime: satchel.Runtime, value: object
) -> None:
    """PrepareContextRequest(references=X) constructs for any X; the prepare names references."""
    built = request(references=value)
    with pytest.raises(satchel.InvalidRequestError, match=r"^references must be a sequence"):
        await runtime.prepare_context(built)


def test_iterable_sections_and_references_become_tuples() -> None:
    """The converters still turn a list or a generator into a tuple, and one string into one id."""
    sections = [satchel.Section("memory", 2)]
    assert satchel.Assembly(sections=sections).sections == (satchel.Section("memory", 2),)
    assert satchel.Assembly(sections=iter(sections)).sections == (satchel.Section("memory", 2),)
    assert request(references=["a", "b"]).references == ("a", "b")
    assert request(references="a").references == ("a",)
