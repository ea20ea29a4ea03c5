"""Fitting: places the selected items into the byte budget, one pass plus deepening.

Pure: no I/O, no clock. Sizes are tracked arithmetically from :mod:`._render`'s pieces;
nothing is rendered here. The Builder and the budget probe both run :func:`fit_pack`,
so the probe's counts are the Builder's counts by construction.

Per item, in selection order, against what is left of the budget: serve the deepest
rung of its tier ladder that fits whole, else the next rung down, else the lowest rung
truncated, else (a resource only: its citation points somewhere) a bare ``uri``
citation; drop it when none of these fits. The first item of a family and scope also
pays for its group line. Afterwards, leftover budget deepens the best items back up
towards their ceilings, and the items are grouped for rendering.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Final

import attrs

from ..vocabulary._errors import InvariantError
from ..vocabulary._families import FAMILY_RULES, rules
from ._render import WRAPPER_BYTES, Group, ItemHead, group_line, item_floor_bytes, json_string
from ._selection import select
from ._tiers import Rung, tier_ceiling, tier_ladder
from ._utf8 import utf8_len, utf8_prefix

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from ..vocabulary._evidence import Evidence
    from ..vocabulary._families import Family, Tier
    from ..vocabulary._limits import Limits
    from ..vocabulary._requests import Section


@attrs.frozen
class OmissionCounts:
    """What the budget cost a pack: cut items, and dropped items split by cause."""

    truncated_items: int
    dropped_items: int
    dropped_below_min_bytes: int
    dropped_no_fitting_truncation: int


@attrs.frozen
class Placement:
    """How one item is served: its tier, content literal, byte size and truncation.

    ``rung`` indexes the item's tier ladder (``len(ladder)`` for a bare citation), and
    ``cut`` says the budget cut that rung's content, so the item can still deepen.
    """

    tier: Tier
    rung: int
    literal: str | None
    size: int
    truncated: bool
    cut: bool = False


_UNSET: Final = object()


@attrs.define
class Candidate:
    """A selected item with its invariant JSON head, its tier ladder and cached literals."""

    evidence: Evidence
    head: ItemHead
    ladder: tuple[Rung, ...]
    _literals: dict[int, tuple[str, int]] = attrs.field(factory=dict)
    _top: Placement | object | None = attrs.field(default=_UNSET, eq=False, repr=False)

    @classmethod
    def from_evidence(cls, evidence: Evidence, ceiling: Tier, limits: Limits) -> Candidate:
        head = ItemHead.from_evidence(evidence)
        return cls(evidence=evidence, head=head, ladder=tier_ladder(evidence, ceiling, limits))

    def top(self) -> Placement | None:
        """The item served whole at its ceiling rung, whatever the room (computed once)."""
        if self._top is _UNSET:
            self._top = _whole(self, 0, sys.maxsize) if self.ladder else None
        return self._top  # type: ignore[return-value]

    def literal(self, rung: int) -> tuple[str, int]:
        """A rung's whole content as a JSON literal, with its byte length (computed once)."""
        cached = self._literals.get(rung)
        if cached is None:
            literal = json_string(self.ladder[rung].text)
            cached = self._literals[rung] = (literal, utf8_len(literal))
        return cached


@attrs.frozen
class Fitted:
    """One delivered item and how it is served."""

    candidate: Candidate
    placement: Placement


@attrs.frozen
class FittedPack:
    """The outcome of fitting: delivered items in render order, their total size, omissions."""

    items: tuple[Fitted, ...]
    content_bytes: int
    omissions: OmissionCounts


def fit_pack(
    candidates: Mapping[Family, Sequence[Evidence]],
    *,
    max_bytes: int,
    sections: Sequence[Section] | None,
    detail: Mapping[Family, Tier],
    limits: Limits,
    memo: FitMemo | None = None,
) -> FittedPack:
    """Select, fit and deepen; the single fitting pass shared by the Builder and the probe.

    ``memo`` keeps each evidence's encoded head and literals between fits, so a refit
    encodes only new candidates. The result is the same with or without it.

    Raises:
        ValueError: ``memo`` was made for other limits.
    """
    if memo is None:
        memo = FitMemo(limits)
    elif memo.limits != limits:
        raise ValueError("the fit memo was made for other limits")
    offered = select(candidates, sections, limits)
    fit = _Placer(detail, limits, memo)
    placed, used, below_min, no_fit = _first_pass(offered, max_bytes, fit)
    unused = _deepen(placed, max_bytes - used, limits)
    omissions = OmissionCounts(
        truncated_items=sum(item.placement.truncated for item in placed),
        dropped_items=below_min + no_fit,
        dropped_below_min_bytes=below_min,
        dropped_no_fitting_truncation=no_fit,
    )
    content_bytes = max_bytes - unused if placed else 0
    return FittedPack(grouped(placed), content_bytes, omissions)


def grouped(items: Sequence[Fitted]) -> tuple[Fitted, ...]:
    """``items`` in render order: by family and scope, each group where its first item
    ranks (with an assembly, sections in the caller's order), items in rank order."""
    groups: dict[Group, list[Fitted]] = {}
    for item in items:
        groups.setdefault(item.candidate.head.group, []).append(item)
    if len(groups) == 1:
        return tuple(items)
    return tuple(item for members in groups.values() for item in members)


def _first_pass(
    offered: Sequence[Evidence], max_bytes: int, place: _Placer
) -> tuple[list[Fitted], int, int, int]:
    placed: list[Fitted] = []
    groups: set[Group] = set()
    used = WRAPPER_BYTES
    below_min = no_fit = 0
    for evidence in offered:
        group = (evidence.family, evidence.scope_id)
        overhead = 0 if group in groups else group_line(group)[1]
        room = max_bytes - used - overhead
        fitted = place(evidence, room)
        if fitted is None:
            # A drop means no rendering fit: an item with content to cut had less than
            # the minimum left for it (or was too short to cut): below-min. An item
            # with nothing to cut (a bare citation at best) did not fit at all.
            if place.has_content(evidence):
                below_min += 1
            else:
                no_fit += 1
            continue
        placed.append(fitted)
        groups.add(group)
        used += overhead + fitted.placement.size
    return placed, used, below_min, no_fit


#: Candidates a fit memo keeps: the items of a hundred or so full packs, ten
#: conversations' worth. Each is about six objects that outlive young garbage
#: collections, which then walk them: at half this size (and half the evidence cache)
#: the longest young collection beside four prepares on a 100k scope took 2.6-2.8 ms
#: instead of 5.8-7.1 ms, but a prepare over ten 600-turn conversations 2.52 ms
#: instead of 2.20 (``python -m bench peer``): the hot path wins.
MEMO_CAPACITY = 4096


class FitMemo:
    """Encoded candidates kept across fits, so an evidence is encoded once, not per fit.

    A runtime keeps one for every prepare: a refit after an expansion round encodes only
    the new candidates, and evidence the store serves again from its cache on a later
    turn is not encoded again. Entries are keyed by the evidence object and its tier
    ceiling; an entry keeps its evidence alive, so the object's ``id`` cannot be reused
    while it is cached, and evidence is immutable, so an entry never goes stale. Past
    ``capacity`` the oldest entries go first; an entry adds its item's encoded head and
    content (at most ``Limits.item_bytes`` of text) to the evidence the store's cache
    holds anyway. Used from one event loop thread (fits never await), so it takes no
    lock.
    """

    def __init__(self, limits: Limits, capacity: int = MEMO_CAPACITY) -> None:
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self.limits = limits
        self._capacity = capacity
        self._items: dict[tuple[int, Tier], Candidate] = {}

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, evidence: object) -> bool:
        return any(candidate.evidence is evidence for candidate in self._items.values())

    def cached(self, evidence: Evidence, ceiling: Tier) -> Candidate | None:
        """The encoded candidate of ``evidence`` served up to ``ceiling``, if kept."""
        return self._items.get((id(evidence), ceiling))

    def candidate(self, evidence: Evidence, ceiling: Tier) -> Candidate:
        """The encoded candidate of ``evidence`` served up to ``ceiling``; encoded now if
        not kept. A resource served up to ``full`` carries a body read for this prepare
        alone (a new evidence each time, of any size): it is encoded but never kept."""
        key = (id(evidence), ceiling)
        found = self._items.get(key)
        if found is None:
            found = Candidate.from_evidence(evidence, ceiling, self.limits)
            if rules(evidence.family).body_on_demand and ceiling == "full":
                return found
            self._items[key] = found
            if len(self._items) > self._capacity:
                del self._items[next(iter(self._items))]
        return found


@attrs.frozen
class _Placer:
    """Places one evidence in the room left, reusing memoised candidates."""

    detail: Mapping[Family, Tier]
    limits: Limits
    memo: FitMemo

    def __call__(self, evidence: Evidence, room: int) -> Fitted | None:
        ceiling = tier_ceiling(evidence.family, self.detail)
        candidate = self.memo.cached(evidence, ceiling)
        if candidate is None:
            if room < item_floor_bytes(evidence):
                return None  # a spent budget drops the rest without encoding them
            candidate = self.memo.candidate(evidence, ceiling)
        # A new Fitted each time: one kept on the candidate would point back at it, and a
        # cycle outlives the memo's eviction until a full garbage collection.
        top = candidate.top()
        if top is not None and top.size <= room:
            return Fitted(candidate, top)
        placement = fit_item(candidate, room, self.limits)
        return None if placement is None else Fitted(candidate, placement)

    def has_content(self, evidence: Evidence) -> bool:
        """Whether the item has any content to serve or cut (a non-empty tier ladder).

        Asked of dropped items only; the ladder is built without encoding the item, so
        a spent budget still drops the rest for the cost of their ladders.
        """
        family = evidence.family
        if not FAMILY_RULES[family].body_on_demand and family not in self.detail:
            # One rung: the whole text, cut to the item cap (which, unless the limits set
            # it below the truncation floor, always leaves content).
            if not evidence.text:
                return False
            if self.limits.item_bytes >= self.limits.min_truncated_bytes + 3:
                return True
        return bool(tier_ladder(evidence, tier_ceiling(family, self.detail), self.limits))


def _deepen(placed: list[Fitted], unused: int, limits: Limits) -> int:
    """Spend leftover bytes on the best items first; returns the bytes still unused.

    Refitting with more room never yields a shallower placement: every option tried
    before the current one was too big for less room, and the truncation search is
    monotone in room. So an item only gains, and the total only grows within budget.

    While every family starts at its ceiling, the first pass already gives each item
    the deepest placement its room allowed, and the bytes left at the end are never
    more than that room had spare, so this finds nothing to gain. It stays as the
    fitting contract's second step for the day a family starts below its ceiling.
    """
    for index, item in enumerate(placed):
        if unused <= 0:
            break
        if item.placement.rung == 0 and not item.placement.cut:
            continue  # already at its ceiling, whole
        deeper = fit_item(item.candidate, item.placement.size + unused, limits)
        if deeper is None or deeper.size < item.placement.size:
            raise InvariantError("deepening made an item shallower")
        unused -= deeper.size - item.placement.size
        placed[index] = Fitted(item.candidate, deeper)
    return unused


def fit_item(candidate: Candidate, room: int, limits: Limits) -> Placement | None:
    """The deepest placement of ``candidate`` within ``room`` bytes, or None to drop it."""
    top = candidate.top()
    if top is not None and top.size <= room:
        return top  # the common case: the ceiling rung fits whole
    for rung in range(len(candidate.ladder)):
        placement = _whole(candidate, rung, room)
        if placement is not None:
            return placement
    if candidate.ladder and room >= limits.min_truncated_bytes:
        placement = _truncated(candidate, len(candidate.ladder) - 1, room, limits)
        if placement is not None:
            return placement
    if candidate.ladder and not rules(candidate.evidence.family).bare_citation:
        return None  # its content is the item: a bare citation would carry nothing
    size = candidate.head.size("uri", None, truncated=False)
    if size > room:
        return None
    return Placement(
        tier="uri", rung=len(candidate.ladder), literal=None, size=size, truncated=False
    )


def _whole(candidate: Candidate, rung: int, room: int) -> Placement | None:
    step = candidate.ladder[rung]
    # Escaping never shortens text, so the raw length rejects most misfits unescaped.
    if candidate.head.size(step.tier, step.raw_bytes + 2, truncated=step.capped) > room:
        return None
    literal, literal_bytes = candidate.literal(rung)
    size = candidate.head.size(step.tier, literal_bytes, truncated=step.capped)
    if size > room:
        return None
    return Placement(step.tier, rung, literal, size, truncated=step.capped)


def _truncated(candidate: Candidate, rung: int, room: int, limits: Limits) -> Placement | None:
    step = candidate.ladder[rung]
    literal_room = room - candidate.head.size(step.tier, 0, truncated=True)
    # A literal is its text plus two quotes at least, and a cut must drop something.
    longest = utf8_prefix(step.text, min(literal_room - 2, step.raw_bytes - 1))
    if utf8_len(longest) < limits.min_truncated_bytes:
        return None
    fitted = longest_fitting_prefix(longest, literal_room)
    if fitted is None or utf8_len(fitted[0]) < limits.min_truncated_bytes:
        return None
    _, literal, literal_bytes = fitted
    size = candidate.head.size(step.tier, literal_bytes, truncated=True)
    return Placement(step.tier, rung, literal, size, truncated=True, cut=True)


def longest_fitting_prefix(text: str, room: int) -> tuple[str, str, int] | None:
    """The longest non-empty prefix of ``text`` whose JSON literal fits in ``room`` bytes.

    Returns the prefix, its literal and the literal's byte length. Prefixes are taken in
    code points, so a cut never splits a UTF-8 sequence; escaping can only lengthen a
    prefix, which makes "fits" monotone and a binary search exact.
    """
    literal = json_string(text)
    literal_bytes = utf8_len(literal)
    if literal_bytes <= room:
        return text, literal, literal_bytes
    best: tuple[str, str, int] | None = None
    low, high = 1, len(text) - 1
    while low <= high:
        middle = (low + high) // 2
        prefix = text[:middle]
        literal = json_string(prefix)
        literal_bytes = utf8_len(literal)
        if literal_bytes <= room:
            best = (prefix, literal, literal_bytes)
            low = middle + 1
        else:
            high = middle - 1
    return best
