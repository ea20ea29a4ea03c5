"""Fitting: places the selected items into the byte budget, one pass plus deepening.

Pure: no I/O, no clock. Sizes are tracked arithmetically from :mod:`._render`'s pieces;
nothing is rendered here. The Builder runs :func:`fitting` and the budget probe reads
its result, so the probe's counts are the Builder's counts by construction.

Per item, in selection order, against what is left of the budget: serve the deepest
rung of its tier ladder that fits whole, else the next rung down, else the lowest rung
truncated, else (a resource only: its citation points somewhere) a bare ``uri``
citation; drop it when none of these fits. The first item of a family and scope also
pays for its group line. Afterwards, leftover budget deepens the best items back up
towards their ceilings, and the items are grouped for rendering.

A fit of 64 candidates from a large scope is 1.5-2 ms of Python, longer than a host's
loop should wait. :func:`fitting` is the same fit in stretches: a generator that
pauses after every :data:`FIT_STRETCH` candidates it places, so its caller can let the
loop run between them (the orchestration takes one loop turn per stretch);
:func:`run_through` runs it at once.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any, Final, TypeVar

import attrs

from ..vocabulary._errors import InvariantError
from ..vocabulary._evidence import Evidence
from ..vocabulary._families import FAMILY_RULES, TIERS, rules
from ._render import (
    MAX_ITEM_FLOOR,
    WRAPPER_BYTES,
    Group,
    ItemHead,
    group_line,
    head_of,
    item_floor_bytes,
    json_string,
)
from ._selection import distinct, forget_keys, select
from ._tiers import Rung, tier_ceiling, tier_ladder
from ._utf8 import utf8_len, utf8_prefix

if TYPE_CHECKING:
    from collections.abc import Generator, Mapping, Sequence

    from ..vocabulary._families import Family, Tier
    from ..vocabulary._limits import Limits
    from ..vocabulary._requests import Section


T = TypeVar("T")

#: Candidates a fit places between two pauses: about 0.4 ms of a large scope's fit.
FIT_STRETCH: Final = 16


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


@attrs.define
class Candidate(ItemHead):
    """A selected item: the head of its line, its evidence and tier ceiling, and its
    content encoded once.

    One object for the garbage collector, where a separate head, ladder, rung, literals
    dict of tuples and placement made nine: besides its evidence it holds strings and
    numbers, its literals in a dict of strings (never tracked), and its tier ladder is
    rebuilt (about a microsecond) only for an item that does not fit whole at its
    ceiling. The fit memo keeps not candidates but their plain values (:meth:`kept`),
    and a hit rebuilds one (:meth:`restore`).
    """

    evidence: Evidence
    ceiling: Tier
    limits: Limits = attrs.field(eq=False, repr=False)
    #: Each rung's content as a JSON literal, by rung (encoded when first needed).
    _literals: dict[int, str] = attrs.field(factory=dict, eq=False, repr=False)
    #: The whole ceiling rung's line: its size (None until known, 0 for an empty
    #: ladder), its tier and whether the item cap cut its content.
    _top_size: int | None = attrs.field(default=None, eq=False, repr=False)
    _top_tier: Tier = attrs.field(default="uri", eq=False, repr=False)
    _top_capped: bool = attrs.field(default=False, eq=False, repr=False)

    @classmethod
    def from_evidence(cls, evidence: Evidence, ceiling: Tier, limits: Limits) -> Candidate:
        return cls(*head_of(evidence), evidence=evidence, ceiling=ceiling, limits=limits)

    def kept(self) -> dict[str, Any]:
        """The encoding and what it was made from, as a dict of plain values (the top
        measured first), for :meth:`restore`."""
        size = self._measure_top() if self._top_size is None else self._top_size
        evidence = self.evidence
        return {
            "text": evidence.text,
            "abstract": evidence.abstract,
            "overview": evidence.overview,
            "created_at": evidence.created_at,
            "at": self.at,
            "ref": self.ref,
            "default_tier": self.default_tier,
            "fixed_bytes": self.fixed_bytes,
            "literal": self._literals.get(0) if size else None,
            "size": size,
            "tier": self._top_tier,
            "capped": self._top_capped,
        }

    @classmethod
    def restore(
        cls, kept: dict[str, Any], evidence: Evidence, ceiling: Tier, limits: Limits
    ) -> Candidate:
        """The candidate :meth:`kept` described, for ``evidence`` of the same content."""
        literal = kept["literal"]
        return cls(
            evidence.family,
            evidence.scope_id,
            kept["at"],
            kept["ref"],
            kept["default_tier"],
            kept["fixed_bytes"],
            evidence,
            ceiling,
            limits,
            {} if literal is None else {0: literal},
            kept["size"],
            kept["tier"],
            kept["capped"],
        )

    def ladder(self) -> tuple[Rung, ...]:
        """The item's tier ladder, deepest first (built on each call)."""
        return tier_ladder(self.evidence, self.ceiling, self.limits)

    def top(self, room: int) -> Placement | None:
        """The item served whole at its ceiling rung, if that fits in ``room`` bytes."""
        size = self._top_size
        if size is None:
            size = self._measure_top()
        if size == 0 or size > room:
            return None
        return Placement(self._top_tier, 0, self._literals[0], size, self._top_capped)

    def literal(self, rung: int, step: Rung) -> str:
        """The JSON literal of rung ``rung``'s content ``step`` (encoded once)."""
        literal = self._literals.get(rung)
        if literal is None:
            literal = self._literals[rung] = json_string(step.text)
        return literal

    def _measure_top(self) -> int:
        ladder = self.ladder()
        if not ladder:
            self._top_size = 0
            return 0
        step = ladder[0]
        literal_bytes = utf8_len(self.literal(0, step))
        self._top_size = self.size(step.tier, literal_bytes, truncated=step.capped)
        self._top_tier = step.tier
        self._top_capped = step.capped
        return self._top_size


@attrs.frozen
class Fitted:
    """One delivered item and how it is served."""

    candidate: Candidate
    placement: Placement


@attrs.frozen
class FittedPack:
    """The outcome of fitting: delivered items in render order, their total size,
    omissions, and the candidates left out as duplicates of an offered one."""

    items: tuple[Fitted, ...]
    content_bytes: int
    omissions: OmissionCounts
    duplicates: tuple[Evidence, ...] = ()


def fitting(
    candidates: Mapping[Family, Sequence[Evidence]],
    *,
    max_bytes: int,
    sections: Sequence[Section] | None,
    detail: Mapping[Family, Tier],
    limits: Limits,
    memo: FitMemo | None = None,
) -> Generator[None, None, FittedPack]:
    """Select, fit and deepen, pausing after every :data:`FIT_STRETCH` placed candidates.

    Candidates repeating an earlier one's text are left out first (``distinct``), so
    their room goes to the next candidates. ``memo`` keeps each evidence's encoded head
    and literals between fits, so a refit encodes only new candidates. The result is
    the same with or without it, and however the pauses are spent: other fits may use
    ``memo`` meanwhile, since a cache's hits and misses never change a fit.

    Raises:
        ValueError: ``memo`` was made for other limits (at the first step).
    """
    if memo is None:
        memo = FitMemo(limits)
    elif not memo.serves(limits):
        raise ValueError("the fit memo was made for other limits")
    candidates, duplicates = distinct(candidates, sections)
    offered = select(candidates, sections, limits)
    fit = _Placer(detail, limits, memo)
    placed, used, below_min, no_fit, groups = yield from _first_pass(offered, max_bytes, fit)
    unused = _deepen(placed, max_bytes - used, limits)
    omissions = OmissionCounts(
        truncated_items=sum(item.placement.truncated for item in placed),
        dropped_items=below_min + no_fit,
        dropped_below_min_bytes=below_min,
        dropped_no_fitting_truncation=no_fit,
    )
    content_bytes = max_bytes - unused if placed else 0
    # One group (the common case) is in render order already.
    items = grouped(placed) if groups > 1 else tuple(placed)
    return FittedPack(items, content_bytes, omissions, duplicates)


def run_through(stretches: Generator[None, None, T]) -> T:
    """What a fit in stretches returns, its pauses not spent."""
    while True:
        try:
            next(stretches)
        except StopIteration as done:
            result: T = done.value
            return result


def grouped(items: Sequence[Fitted]) -> tuple[Fitted, ...]:
    """``items`` in render order: by family and scope, each group where its first item
    ranks (with an assembly, sections in the caller's order), items in rank order."""
    groups: dict[Group, list[Fitted]] = {}
    for item in items:
        groups.setdefault(item.candidate.group, []).append(item)
    if len(groups) == 1:
        return tuple(items)
    return tuple(item for members in groups.values() for item in members)


def _first_pass(
    offered: Sequence[Evidence], max_bytes: int, place: _Placer
) -> Generator[None, None, tuple[list[Fitted], int, int, int, int]]:
    """The first placement of each of ``offered``; the bytes used, the items dropped
    below the minimum and those that fitted nowhere, and how many groups were placed."""
    placed: list[Fitted] = []
    groups: set[Group] = set()
    used = WRAPPER_BYTES
    below_min = no_fit = 0
    for n, evidence in enumerate(offered):
        if n and not n % FIT_STRETCH:
            yield
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
    return placed, used, below_min, no_fit, len(groups)


#: Encodings a fit memo keeps: as many as the store's evidence cache keeps rows, ten
#: 600-turn conversations and more (at 4,096 a quarter of the fits over such ten
#: missed, and a prepare ran about 5% slower). An entry is a small dict and the
#: item's literal (at most ``Limits.item_bytes`` of text, escaped).
MEMO_CAPACITY = 8192


class FitMemo:
    """Encoded candidates kept across fits, so an evidence is encoded once, not per fit.

    A runtime keeps one for every prepare: a refit after an expansion round encodes only
    the new candidates, and evidence the store serves again on a later turn is not
    encoded again (about 7 µs an item, mostly the head's id and time spellings).

    An entry is keyed by the tier ceiling and the evidence's family, scope and identity,
    and holds the content it was encoded from: it serves only evidence with that same
    content (a profile, or a version forgotten and written again, may change under one
    identity). Key and entry are a string and a dict of plain values
    (:meth:`Candidate.kept`), which the garbage collector never tracks, and a hit
    rebuilds the candidate (about a microsecond). Past ``capacity`` the oldest eighth
    goes at once, for the collector's sake (see :mod:`satchel.stores.sqlite._evidence_cache`).
    Used from one event loop thread, and a fit pauses only between placements, never
    inside the memo, so it takes no lock.
    """

    def __init__(self, limits: Limits, capacity: int = MEMO_CAPACITY) -> None:
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self.limits = limits
        self._capacity = capacity
        self._items: dict[str, dict[str, Any]] = {}

    def __len__(self) -> int:
        return len(self._items)

    def serves(self, limits: Limits) -> bool:
        """Whether this memo's encodings are those of a fit under ``limits``: an item's
        encoding depends on the per-item byte cap and the truncation floor alone, so a
        memo serves every budget's scaling of the runtime's limits (``Limits.for_bytes``)."""
        mine = self.limits
        return (limits.item_bytes, limits.min_truncated_bytes) == (
            mine.item_bytes,
            mine.min_truncated_bytes,
        )

    def __contains__(self, evidence: object) -> bool:
        if not isinstance(evidence, Evidence):
            return False
        return any(self.cached(evidence, tier) is not None for tier in TIERS)

    def cached(self, evidence: Evidence, ceiling: Tier) -> Candidate | None:
        """The encoded candidate of ``evidence`` served up to ``ceiling``, if kept."""
        # The key (``_key``) and the content check spelled inline: asked of every placed
        # candidate of every fit.
        kept = self._items.get(
            f"{ceiling}\x1f{evidence.family}\x1f{evidence.scope_id}\x1f{evidence.identity}"
        )
        if (
            kept is None
            or kept["text"] != evidence.text
            or kept["abstract"] != evidence.abstract
            or kept["overview"] != evidence.overview
            or kept["created_at"] != evidence.created_at
        ):
            return None
        return Candidate.restore(kept, evidence, ceiling, self.limits)

    def candidate(self, evidence: Evidence, ceiling: Tier) -> Candidate:
        """The encoded candidate of ``evidence`` served up to ``ceiling``; encoded now if
        not kept. A resource served up to ``full`` carries a body read for this prepare
        alone (of any size): it is encoded but never kept."""
        found = self.cached(evidence, ceiling)
        if found is not None:
            return found
        found = Candidate.from_evidence(evidence, ceiling, self.limits)
        if rules(evidence.family).body_on_demand and ceiling == "full":
            return found
        items = self._items
        items[_key(evidence, ceiling)] = found.kept()
        if len(items) > self._capacity:
            for key in list(itertools.islice(items, 1 + self._capacity // 8)):
                del items[key]
        return found

    def discard(self, scope_id: str) -> None:
        """Drop every encoding of the scope's evidence (its records were erased: no
        copy of their text outlives the erase here), and every kept dedup key (kept by
        text, of every scope: they fill again)."""
        for key in [key for key in self._items if key.split("\x1f", 3)[2] == scope_id]:
            del self._items[key]
        forget_keys()


def _key(evidence: Evidence, ceiling: Tier) -> str:
    return f"{ceiling}\x1f{evidence.family}\x1f{evidence.scope_id}\x1f{evidence.identity}"


@attrs.frozen
class _Placer:
    """Places one evidence in the room left, reusing memoised candidates."""

    detail: Mapping[Family, Tier]
    limits: Limits
    memo: FitMemo
    #: Each family's tier ceiling under ``detail``, worked out once per fit.
    _ceilings: dict[Family, Tier] = attrs.field(factory=dict, init=False)

    def __call__(self, evidence: Evidence, room: int) -> Fitted | None:
        if room < MAX_ITEM_FLOOR and room < item_floor_bytes(evidence):
            # A spent budget drops the rest without encoding them, or rebuilding the
            # memo's encodings of them: no line of theirs is shorter than the floor.
            return None
        ceiling = self._ceilings.get(evidence.family)
        if ceiling is None:
            ceiling = self._ceilings[evidence.family] = tier_ceiling(evidence.family, self.detail)
        candidate = self.memo.cached(evidence, ceiling)
        if candidate is None:
            candidate = self.memo.candidate(evidence, ceiling)
        # A new Fitted each time: one kept on the candidate would point back at it, and a
        # cycle outlives the memo's eviction until a full garbage collection.
        top = candidate.top(room)
        if top is not None:
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
    top = candidate.top(room)
    if top is not None:
        return top  # the common case: the ceiling rung fits whole
    ladder = candidate.ladder()
    for rung, step in enumerate(ladder):
        placement = _whole(candidate, rung, step, room)
        if placement is not None:
            return placement
    if ladder and room >= limits.min_truncated_bytes:
        placement = _truncated(candidate, len(ladder) - 1, ladder[-1], room, limits)
        if placement is not None:
            return placement
    if ladder and not rules(candidate.family).bare_citation:
        return None  # its content is the item: a bare citation would carry nothing
    size = candidate.size("uri", None, truncated=False)
    if size > room:
        return None
    return Placement(tier="uri", rung=len(ladder), literal=None, size=size, truncated=False)


def _whole(candidate: Candidate, rung: int, step: Rung, room: int) -> Placement | None:
    # Escaping never shortens text, so the raw length rejects most misfits unescaped.
    if candidate.size(step.tier, step.raw_bytes + 2, truncated=step.capped) > room:
        return None
    literal = candidate.literal(rung, step)
    size = candidate.size(step.tier, utf8_len(literal), truncated=step.capped)
    if size > room:
        return None
    return Placement(step.tier, rung, literal, size, truncated=step.capped)


def _truncated(
    candidate: Candidate, rung: int, step: Rung, room: int, limits: Limits
) -> Placement | None:
    literal_room = room - candidate.size(step.tier, 0, truncated=True)
    # A literal is its text plus two quotes at least, and a cut must drop something.
    longest = utf8_prefix(step.text, min(literal_room - 2, step.raw_bytes - 1))
    if utf8_len(longest) < limits.min_truncated_bytes:
        return None
    fitted = longest_fitting_prefix(longest, literal_room)
    if fitted is None or utf8_len(fitted[0]) < limits.min_truncated_bytes:
        return None
    _, literal, literal_bytes = fitted
    size = candidate.size(step.tier, literal_bytes, truncated=True)
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
