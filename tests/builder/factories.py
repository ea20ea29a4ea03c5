"""Plain evidence values and pack readers for the Builder's tests."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from satchel.builder import BuildResult, build_context
from satchel.vocabulary._evidence import Evidence
from satchel.vocabulary._families import Family, Tier
from satchel.vocabulary._limits import Limits
from tests import _envelope as envelope

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from datetime import datetime

    from satchel.vocabulary._requests import Section

SCOPE = "project:demo"
BEGIN = envelope.BEGIN
END = envelope.END
Candidates = dict[Family, list[Evidence]]


def memory(
    entry: str, text: str = "a remembered fact", *, created_at: datetime | None = None
) -> Evidence:
    citation: dict[str, str | int] = {
        "family": "memory",
        "scope": SCOPE,
        "entry_id": entry,
        "version": 1,
    }
    return Evidence(
        family="memory",
        scope_id=SCOPE,
        identity=f"{entry}:1",
        citation=citation,
        text=text,
        created_at=created_at,
    )


def experience(ident: str, text: str = "a lesson learned") -> Evidence:
    citation: dict[str, str | int] = {
        "family": "experience",
        "scope": SCOPE,
        "id": ident,
        "revision": 2,
    }
    return Evidence("experience", SCOPE, f"{ident}:2", citation, text)


def topic(ident: str, text: str = "a topic summary") -> Evidence:
    citation: dict[str, str | int] = {
        "family": "topic-memory",
        "scope": SCOPE,
        "id": ident,
        "revision": 3,
    }
    return Evidence("topic-memory", SCOPE, f"{ident}:3", citation, text)


def profile(text: str = "prefers short answers") -> Evidence:
    citation = {"family": "profile", "scope": SCOPE}
    return Evidence("profile", SCOPE, SCOPE, citation, text)


def resource(
    name: str,
    *,
    abstract: str | None = "a short summary",
    overview: str | None = None,
    body: str | None = None,
) -> Evidence:
    uri = f"file:///docs/{name}.md"
    citation = {"family": "resource", "scope": SCOPE, "uri": uri}
    return Evidence(
        "resource", SCOPE, uri, citation, text=body, abstract=abstract, overview=overview
    )


def build(
    candidates: Mapping[Family, Sequence[Evidence]],
    *,
    max_bytes: int = 8000,
    sections: Sequence[Section] | None = None,
    detail: Mapping[Family, Tier] | None = None,
    limits: Limits | None = None,
) -> BuildResult:
    """``build_context`` with the defaults a request without options would get."""
    return build_context(
        candidates,
        max_bytes=max_bytes,
        sections=sections,
        detail={} if detail is None else detail,
        limits=Limits() if limits is None else limits,
    )


def body_lines(result: BuildResult) -> list[str]:
    """The lines strictly between the markers of a rendered pack."""
    content = result.render().content
    assert content is not None
    lines = content.split("\n")
    return lines[lines.index(BEGIN) + 1 : lines.index(END)]


def items(result: BuildResult) -> list[dict[str, Any]]:
    """The items of a pack, in render order, as ``satchel.parse_context`` reads them."""
    return envelope.items(result.render().content)


def contents(result: BuildResult) -> list[str]:
    """The content strings of a pack's items that carry content."""
    return [item["content"] for item in items(result) if "content" in item]


def entry_ids(result: BuildResult) -> list[str]:
    """Each delivered item's identity, in render order."""
    return [item.evidence.identity for item in result.delivered]
