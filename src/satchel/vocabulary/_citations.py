"""``satchel.Citation`` and ``satchel.ContextItem``: what a host reads back out of a pack.

A citation names exactly one record version: its family, its scope, the record's id
(the entry id of a memory, the id of an experience or topic memory, the URI of a
resource, none for a profile) and its version or revision (none for a resource or a
profile). Citations compare by these four values, so a host can hand back the ones it
already holds (``PrepareContextRequest.exclude``). Pure values.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from ._errors import InvalidRequestError
from ._families import FAMILIES, FAMILY_RULES, Tier

if TYPE_CHECKING:
    from collections.abc import Mapping
    from datetime import datetime


@attrs.frozen
class Citation:
    """One record version as a pack cites it.

    Attributes:
        family: the record's family.
        scope: the scope it was read from.
        id: the entry id (memory), record id (experience, topic memory), URI (resource)
            or None (profile).
        version: the version (memory) or revision (experience, topic memory), else None.
    """

    family: str
    scope: str
    id: str | None = None
    version: int | None = None

    @classmethod
    def from_json(cls, cited: Mapping[str, object]) -> Citation:
        """The citation a pack's ``{"family": ..., "scope": ..., ...}`` object spells.

        Raises:
            InvalidRequestError: the object is no citation of a known family.
        """
        family = cited.get("family")
        if not isinstance(family, str) or family not in FAMILY_RULES:
            raise InvalidRequestError(f"citation.family must be one of {', '.join(FAMILIES)}")
        rules = FAMILY_RULES[family]
        scope = cited.get("scope")
        record_id = cited.get(rules.id_field) if rules.id_field else None
        version = cited.get(rules.version_field) if rules.version_field else None
        if not isinstance(scope, str) or (rules.id_field and not isinstance(record_id, str)):
            raise InvalidRequestError(f"a {family} citation names its scope and record")
        if rules.version_field and (isinstance(version, bool) or not isinstance(version, int)):
            raise InvalidRequestError(f"a {family} citation names its {rules.version_field}")
        return cls(family, scope, record_id, version)  # type: ignore[arg-type]

    def identity(self) -> str:
        """The evidence identity this citation names (what dedup and merging compare);
        a version is ignored for a family that has none (a resource is its URI)."""
        rules = FAMILY_RULES.get(self.family)  # type: ignore[call-overload]
        version = self.version if rules is not None and rules.version_field else None
        values = (self.family, self.scope, self.id, version)
        return "\x1f".join(str(value) for value in values if value is not None)


@attrs.frozen
class ContextItem:
    """One item of a prepared pack, as :func:`satchel.parse_context` reads it.

    Attributes:
        citation: the exact record version the item is.
        text: the content served (None for a bare citation).
        at: when the remembered thing was said or observed, if the record says.
        tier: the tier it was served at (``uri``, ``abstract``, ``overview``, ``full``).
        truncated: whether its content was cut to fit.
    """

    citation: Citation
    text: str | None
    at: datetime | None
    tier: Tier
    truncated: bool
