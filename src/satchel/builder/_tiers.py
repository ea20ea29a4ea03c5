"""Tiers: how deep each family may be served, and what each tier of an item contains.

Pure: no I/O. The tier ladder of an item lists, from its ceiling down, the tiers that
give different content it actually has; a bare ``uri`` citation is the floor under every
ladder and is not listed. A resource's body appears on its ladder only when the request
pins resources at ``full``: the runtime reads a body only when :func:`needs_body` says
so, and the Builder never serves a body it was not asked for (the tier-ceiling contract).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

import attrs

from ..vocabulary._families import FAMILY_RULES, TIERS, Family, Tier, rules
from ._utf8 import utf8_len, utf8_prefix

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ..vocabulary._evidence import Evidence
    from ..vocabulary._limits import Limits


#: Each family's default tier, read off the family table once (fitting asks per item).
_DEFAULT_TIERS: Final[Mapping[Family, Tier]] = {
    family: family_rules.default_tier for family, family_rules in FAMILY_RULES.items()
}


@attrs.frozen
class Rung:
    """One tier of an item with the content served at it.

    ``capped`` says the content was cut to the per-item byte cap, so serving this rung
    marks the item truncated.
    """

    tier: Tier
    text: str
    capped: bool
    raw_bytes: int


def tier_ceiling(family: Family, detail: Mapping[Family, Tier]) -> Tier:
    """The deepest tier a family is served at; it is also the tier fitting starts from.

    A pin in ``detail`` sets both the start and the ceiling of its family.
    """
    pinned = detail.get(family)
    return _DEFAULT_TIERS[family] if pinned is None else pinned


def needs_body(evidence: Evidence, detail: Mapping[Family, Tier]) -> bool:
    """Whether the runtime must read this evidence's body before building.

    True only for a family whose body is read on demand (a resource) at ceiling
    ``full``. Every other family carries its whole text already, and a resource capped at
    ``abstract`` or ``overview`` never needs its body, even when it has no usable
    abstract and falls to a bare citation.
    """
    family = evidence.family
    return rules(family).body_on_demand and tier_ceiling(family, detail) == "full"


def tier_ladder(evidence: Evidence, ceiling: Tier, limits: Limits) -> tuple[Rung, ...]:
    """The rungs an item can be served at, deepest first, each capped to the item limit.

    An empty ladder means the item can only be a bare ``uri`` citation.
    """
    if ceiling == "uri":
        return ()
    if not rules(evidence.family).body_on_demand:
        # abstract, overview and full are all the whole text: one rung, labelled as served.
        rung = _rung(ceiling, evidence.text, limits)
        return () if rung is None else (rung,)
    return _resource_ladder(evidence, ceiling, limits)


def _resource_ladder(evidence: Evidence, ceiling: Tier, limits: Limits) -> tuple[Rung, ...]:
    rungs: list[Rung] = []
    for tier in reversed(TIERS[1 : TIERS.index(ceiling) + 1]):
        rung = _rung(tier, _resource_content(evidence, tier, limits), limits)
        # A tier whose content repeats the one above would be a step that changes nothing.
        if rung is not None and (not rungs or rung.text != rungs[-1].text):
            rungs.append(rung)
    return tuple(rungs)


def _resource_content(evidence: Evidence, tier: Tier, limits: Limits) -> str | None:
    if tier == "full":
        return evidence.text
    if tier == "overview":
        return evidence.overview
    abstract = evidence.abstract
    # An abstract over the item cap is no summary: the resource falls to a bare
    # citation rather than to a cut abstract or, worse, to its body.
    if abstract is not None and utf8_len(abstract) > limits.item_bytes:
        return None
    return abstract


def _rung(tier: Tier, text: str | None, limits: Limits) -> Rung | None:
    if not text:
        return None
    raw_bytes = utf8_len(text)
    if raw_bytes <= limits.item_bytes:
        return Rung(tier=tier, text=text, capped=False, raw_bytes=raw_bytes)
    capped = utf8_prefix(text, limits.item_bytes)
    capped_bytes = utf8_len(capped)
    if capped_bytes < limits.min_truncated_bytes:
        return None  # the cap cut is a truncation too, and is refused below the floor
    return Rung(tier=tier, text=capped, capped=True, raw_bytes=capped_bytes)
