"""The prepare request, its validation, and the prepared context it yields.

Construction never raises: ``prepare_context`` validates, so every bad field surfaces
as one :class:`InvalidRequestError` naming it, whichever way the request was built.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Final, Literal, TypeAlias, cast

import attrs

from ._citations import Citation
from ._errors import InvalidRequestError
from ._families import DEFAULT_FAMILIES, FAMILIES, TIERS, Family, Tier, rules

SCHEMA: Final = "satchel.prepared-context.v2"
#: ``max_bytes`` when a request leaves it out.
DEFAULT_MAX_BYTES: Final = 8000
MIN_MAX_BYTES: Final = 512
MAX_MAX_BYTES: Final = 32768
MAX_QUERY_CHARS: Final = 8192
MAX_SECTION_LIMIT: Final = 8
MAX_REFERENCES: Final = 32
MAX_SCOPE_CHARS: Final = 256
#: The longest idempotency key: a caller's id, not a document.
MAX_KEY_CHARS: Final = 512
#: The largest version a reference may name (the largest integer SQLite stores: a
#: version past it could never be read back).
MAX_VERSION: Final = 2**63 - 1

Status: TypeAlias = Literal["ready", "empty"]
Detail: TypeAlias = str | Mapping[str, str] | None


def _references(value: Iterable[str] | str) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    # A value that is not iterable is kept as given, for validation to name.
    return tuple(value) if isinstance(value, Iterable) else cast("tuple[str, ...]", value)


def _citations(value: Iterable[Citation]) -> tuple[Citation, ...]:
    # A value that is not iterable is kept as given, for validation to name.
    return tuple(value) if isinstance(value, Iterable) else cast("tuple[Citation, ...]", value)


def _sections(value: Iterable[Section]) -> tuple[Section, ...]:
    # A value that is not iterable is kept as given, for validation to name.
    return tuple(value) if isinstance(value, Iterable) else cast("tuple[Section, ...]", value)


@attrs.frozen
class Section:
    """One family of an assembly, with the most items it may deliver."""

    family: str
    limit: int


@attrs.frozen
class Assembly:
    """The caller's choice of families, their order and per-family item limits."""

    sections: tuple[Section, ...] = attrs.field(default=(), converter=_sections)


@attrs.frozen
class PrepareContextRequest:
    """What the host asks for before a turn."""

    scope_id: str
    query: str
    max_bytes: int = DEFAULT_MAX_BYTES
    assembly: Assembly | None = None
    references: tuple[str, ...] = attrs.field(default=(), converter=_references)
    session_id: str | None = None
    detail: Detail = None
    #: Citations the caller already holds: never delivered again; other candidates
    #: take their places within the ceilings.
    exclude: tuple[Citation, ...] = attrs.field(default=(), converter=_citations)


@attrs.frozen(kw_only=True)
class PreparedContext:
    """The rendered pack: exactly these four fields."""

    schema: str = SCHEMA
    status: Status
    content: str | None
    content_bytes: int

    @classmethod
    def empty(cls) -> PreparedContext:
        return cls(status="empty", content=None, content_bytes=0)


@attrs.frozen
class ResolvedRequest:
    """A validated request: what one prepare searches, reads and fits."""

    scope_id: str
    scopes: tuple[str, ...]
    query: str
    max_bytes: int
    families: tuple[Family, ...]
    sections: tuple[Section, ...] | None
    detail: Mapping[Family, Tier]
    session_id: str | None
    #: The citations the caller already holds (validated): never delivered again.
    exclude: tuple[Citation, ...] = ()


def validate_request(request: object) -> ResolvedRequest:
    """Check every field of a request and resolve it into a :class:`ResolvedRequest`.

    Raises:
        InvalidRequestError: naming the first bad field.
    """
    if not isinstance(request, PrepareContextRequest):
        raise InvalidRequestError("request must be a satchel.PrepareContextRequest")
    scope_id = validate_scope(request.scope_id, "scope_id")
    sections = _validate_assembly(request.assembly)
    families = DEFAULT_FAMILIES if sections is None else tuple(s.family for s in sections)
    return ResolvedRequest(
        scope_id=scope_id,
        scopes=(scope_id, *_validate_references(request.references, scope_id)),
        query=_validate_query(request.query),
        max_bytes=_validate_max_bytes(request.max_bytes),
        families=cast("tuple[Family, ...]", families),
        sections=sections,
        detail=_validate_detail(request.detail),
        session_id=_validate_session(request.session_id),
        exclude=_validate_exclude(request.exclude),
    )


def validate_scope(value: object, field: str) -> str:
    """A scope id is a non-empty string of printable characters."""
    if not isinstance(value, str) or not value.strip():
        raise InvalidRequestError(f"{field} must be a non-empty string")
    if len(value) > MAX_SCOPE_CHARS:
        raise InvalidRequestError(f"{field} must be at most {MAX_SCOPE_CHARS} characters")
    if not value.isprintable():
        raise InvalidRequestError(f"{field} must not contain control characters")
    return value


def _validate_query(value: object) -> str:
    if not isinstance(value, str):
        raise InvalidRequestError("query must be a string")
    if not 1 <= len(value) <= MAX_QUERY_CHARS:
        raise InvalidRequestError(f"query must be 1..{MAX_QUERY_CHARS} characters")
    if not value.strip():
        raise InvalidRequestError("query must contain non-whitespace characters")
    require_unicode(value, "query")
    return value


def require_unicode(value: str, field: str) -> None:
    """Text that UTF-8 can store: a lone surrogate (half of a pair) is refused by name."""
    if not value.isascii():
        try:
            value.encode()
        except UnicodeEncodeError:
            raise InvalidRequestError(
                f"{field} must be valid Unicode text (it holds a lone surrogate)"
            ) from None


def _validate_max_bytes(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidRequestError("max_bytes must be an integer")
    if not MIN_MAX_BYTES <= value <= MAX_MAX_BYTES:
        raise InvalidRequestError(f"max_bytes must be in {MIN_MAX_BYTES}..{MAX_MAX_BYTES}")
    return value


def _validate_references(value: object, scope_id: str) -> tuple[str, ...]:
    if not isinstance(value, tuple):
        raise InvalidRequestError("references must be a sequence of scope ids")
    if len(value) > MAX_REFERENCES:
        raise InvalidRequestError(f"references must name at most {MAX_REFERENCES} scopes")
    seen = {scope_id}
    kept: list[str] = []
    for index, reference in enumerate(value):
        scope = validate_scope(reference, f"references[{index}]")
        if scope not in seen:  # a repeated scope is searched once
            seen.add(scope)
            kept.append(scope)
    return tuple(kept)


def _validate_assembly(value: object) -> tuple[Section, ...] | None:
    if value is None:
        return None
    if not isinstance(value, Assembly):
        raise InvalidRequestError("assembly must be a satchel.Assembly or None")
    if not isinstance(value.sections, tuple):
        raise InvalidRequestError("assembly.sections must be a sequence of satchel.Section")
    seen: set[str] = set()
    total = 0
    for index, section in enumerate(value.sections):
        field = f"assembly.sections[{index}]"
        if not isinstance(section, Section):
            raise InvalidRequestError(f"{field} must be a satchel.Section")
        if section.family not in FAMILIES:
            raise InvalidRequestError(f"{field}.family must be one of {', '.join(FAMILIES)}")
        if section.family in seen:
            raise InvalidRequestError(f"{field}.family {section.family!r} appears twice")
        seen.add(section.family)
        total += _validate_section_limit(section, field)
    if total > MAX_SECTION_LIMIT:
        raise InvalidRequestError(
            f"assembly.sections limits must sum to at most {MAX_SECTION_LIMIT}, not {total}"
        )
    return value.sections


def _validate_section_limit(section: Section, field: str) -> int:
    ceiling = rules(cast("Family", section.family)).max_section_limit
    limit = section.limit
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= ceiling:
        raise InvalidRequestError(f"{field}.limit must be an integer in 1..{ceiling}")
    return limit


def _validate_detail(value: object) -> Mapping[Family, Tier]:
    if value is None:
        return {}
    if isinstance(value, str):
        return dict.fromkeys(FAMILIES, _tier(value, "detail"))
    if not isinstance(value, Mapping):
        raise InvalidRequestError("detail must be a tier name, a {family: tier} mapping or None")
    pins: dict[Family, Tier] = {}
    for family, tier in value.items():
        if family not in FAMILIES:
            raise InvalidRequestError(f"detail key {family!r} must be one of {', '.join(FAMILIES)}")
        pins[family] = _tier(tier, f"detail[{family!r}]")
    return pins


def _tier(value: object, field: str) -> Tier:
    if value not in TIERS:
        raise InvalidRequestError(f"{field} must be one of {', '.join(TIERS)}")
    return value


def _validate_exclude(value: object) -> tuple[Citation, ...]:
    if not isinstance(value, tuple):
        raise InvalidRequestError("exclude must be a sequence of satchel.Citation")
    for index, citation in enumerate(value):
        if not isinstance(citation, Citation):
            raise InvalidRequestError(f"exclude[{index}] must be a satchel.Citation")
        _validate_citation(citation, f"exclude[{index}]")
    return value


def _validate_citation(citation: Citation, field: str) -> None:
    """A caller-built citation's parts: a known family, a scope and an id of text UTF-8
    can store, a version that is an int (not a bool, not a numeral)."""
    if citation.family not in FAMILIES:
        raise InvalidRequestError(f"{field}.family must be one of {', '.join(FAMILIES)}")
    if not isinstance(citation.scope, str):
        raise InvalidRequestError(f"{field}.scope must be a string")
    require_unicode(citation.scope, f"{field}.scope")
    if citation.id is not None:
        if not isinstance(citation.id, str):
            raise InvalidRequestError(f"{field}.id must be a string or None")
        require_unicode(citation.id, f"{field}.id")
    version = citation.version
    if version is not None and (isinstance(version, bool) or not isinstance(version, int)):
        raise InvalidRequestError(f"{field}.version must be an int or None")


def _validate_session(value: object, field: str = "session_id") -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise InvalidRequestError(f"{field} must be a non-empty string or None")
    require_unicode(value, field)
    return value


def validate_session_owner(value: object) -> str | None:
    """The caller a prepare's session belongs to: a non-empty string, or None (the
    host itself)."""
    return _validate_session(value, "session_owner")
