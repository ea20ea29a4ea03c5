"""Selection: which ranked candidates a pack offers to fitting, and in what order.

Pure: no I/O. Selection happens before any byte is counted, so the order it fixes is the
order in which items compete for the budget and in which they are rendered. Candidates
whose text is the same once case, whitespace and punctuation are set aside are offered
once (:func:`distinct`), so a thing said nine times costs the budget one item.
"""

from __future__ import annotations

import itertools
import re
from typing import TYPE_CHECKING, Final, cast

from ..vocabulary._families import INTERLEAVE_ORDER, Family
from ..vocabulary._memo import remembered, text_memo

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping, Sequence

    from ..vocabulary._evidence import Evidence
    from ..vocabulary._limits import Limits
    from ..vocabulary._requests import Section


def select(
    candidates: Mapping[Family, Sequence[Evidence]],
    sections: Sequence[Section] | None,
    limits: Limits,
) -> tuple[Evidence, ...]:
    """The items offered to fitting, in rank order.

    Without sections the families interleave by rank; with sections each section takes
    its family's best items in the caller's order. Either way at most
    ``limits.max_items`` items are offered.
    """
    if sections is None:
        return interleave(candidates, limits)
    return assemble(candidates, sections, limits)


def interleave(
    candidates: Mapping[Family, Sequence[Evidence]], limits: Limits
) -> tuple[Evidence, ...]:
    """Rank 0 of every family in interleave order, then rank 1, and so on.

    Each family stops at its item limit and the whole selection at ``max_items``.
    """
    columns = [
        column
        for family in INTERLEAVE_ORDER
        if (column := candidates.get(family, ())[: limits.item_limit(family)])
    ]
    if len(columns) == 1:  # one family: its own order (the common case, no interleave)
        return tuple(columns[0][: limits.max_items])
    selected: list[Evidence] = []
    for rank in range(max((len(column) for column in columns), default=0)):
        selected.extend(column[rank] for column in columns if rank < len(column))
        if len(selected) >= limits.max_items:
            break
    return tuple(selected[: limits.max_items])


def assemble(
    candidates: Mapping[Family, Sequence[Evidence]],
    sections: Sequence[Section],
    limits: Limits,
) -> tuple[Evidence, ...]:
    """Each section's best ``limit`` items, sections in the caller's order.

    Families without a section are not offered at all.
    """
    selected: list[Evidence] = []
    for section in sections:
        family = cast("Family", section.family)
        selected.extend(candidates.get(family, ())[: section.limit])
    return tuple(selected[: limits.max_items])


#: Runs of anything but letters and digits: what normalising a text sets aside.
_NOT_WORD: Final = re.compile(r"[\W_]+")
#: An ASCII text's bytes, letters lowered and everything but letters and digits made a
#: space: what ``_NOT_WORD`` and casefolding do to ASCII, ~8x faster than the pattern.
_ASCII_FOLD: Final = bytes(
    (ord(chr(code).lower()) if chr(code).isascii() and chr(code).isalnum() else 32)
    for code in range(256)
)
#: Characters of a text normalised for its key; a longer text is compared whole only
#: when its key meets another's (normalising a megabyte for every fit would cost ms).
KEY_CHARS: Final = 4096
#: Keys kept by text (:func:`_key_of`): the evidence of many conversations' prepares.
#: A full memo drops its oldest eighth at once, as the store's evidence cache does.
KEYS_KEPT: Final = 8192
_keys: dict[str, str] = text_memo()


def normalised(text: str) -> str:
    """``text`` casefolded, its punctuation and whitespace runs made single spaces; a
    text with no letter or digit (an emoji, "?!") keeps its characters, spaces aside.
    Every candidate of every fit is normalised, so an ASCII text (most chat turns)
    takes a byte table instead of the pattern, to the same result."""
    if text.isascii():
        folded = " ".join(text.encode("ascii").translate(_ASCII_FOLD).decode("ascii").split())
    else:
        folded = _NOT_WORD.sub(" ", text.casefold()).strip()
    return folded or "".join(text.split())


def distinct(
    candidates: Mapping[Family, Sequence[Evidence]], sections: Sequence[Section] | None
) -> tuple[Mapping[Family, Sequence[Evidence]], tuple[Evidence, ...]]:
    """The candidates with each normalised text once, and the duplicates left out.

    Candidates are compared in the order they are offered (:func:`_offer_order`): the
    first of a text keeps its place, and it is served as the newest of its family that
    says the same (the latest time it was said; ties keep the better ranked). The rest
    are duplicates, in offer order, and give their places to the next candidates. A
    candidate without text (a resource with no abstract) is never a duplicate.
    """
    seen: dict[str, list[tuple[Family, int]]] = {}
    # Copied at the first duplicate (most fits find none): nothing changed before it.
    kept: dict[Family, list[Evidence | None]] | None = None
    duplicates: list[Evidence] = []
    for family, index in _offer_order(candidates, sections):
        evidence = candidates[family][index]
        text = evidence.text if evidence.text is not None else evidence.abstract
        if text is None:
            continue
        first = _first_saying(seen, candidates, text, (family, index))
        if first is None:
            continue
        if kept is None:
            kept = {f: list(items) for f, items in candidates.items()}
        kept[family][index] = None
        if first[0] == family and _newer(evidence, kept[family][first[1]]):
            duplicates.append(cast("Evidence", kept[family][first[1]]))
            kept[family][first[1]] = evidence
        else:
            duplicates.append(evidence)
    if kept is None:
        return candidates, ()
    deduped = {f: tuple(item for item in items if item is not None) for f, items in kept.items()}
    return deduped, tuple(duplicates)


def _first_saying(
    seen: dict[str, list[tuple[Family, int]]],
    candidates: Mapping[Family, Sequence[Evidence]],
    text: str,
    place: tuple[Family, int],
) -> tuple[Family, int] | None:
    """The place of an earlier candidate saying ``text`` (None: the first; it is noted)."""
    key = _keys.get(text)
    if key is None:
        key = _key_of(text)
    places = seen.get(key)
    if places is None:  # the common case: no list made for a text said once
        seen[key] = [place]
        return None
    for other in places:
        earlier = _text_of(candidates[other[0]][other[1]])
        if max(len(text), len(earlier)) <= KEY_CHARS or normalised(text) == normalised(earlier):
            return other
    places.append(place)
    return None


def _key_of(text: str) -> str:
    """``text``'s first ``KEY_CHARS`` normalised, kept by text (``vocabulary._memo``):
    the same evidence comes back to fit prepare after prepare, and normalising was a
    fifth of a fit."""
    return remembered(_keys, text, _normalised_start, KEYS_KEPT)


def _normalised_start(text: str) -> str:
    return normalised(text[:KEY_CHARS])


def forget_keys() -> None:
    """Drop every kept key, and with them the texts they are kept by (after an erase:
    no copy of an erased text outlives it here)."""
    _keys.clear()


def _text_of(evidence: Evidence) -> str:
    return evidence.text if evidence.text is not None else evidence.abstract or ""


def _newer(evidence: Evidence, than: Evidence | None) -> bool:
    """Whether ``evidence`` was said after ``than`` (an undated one never is)."""
    if than is None or evidence.created_at is None:
        return False
    return than.created_at is None or evidence.created_at > than.created_at


def _offer_order(
    candidates: Mapping[Family, Sequence[Evidence]], sections: Sequence[Section] | None
) -> Iterator[tuple[Family, int]]:
    """Every candidate's place, in the order selection offers them (item limits aside):
    by rank across families in interleave order, or section by section."""
    if sections is not None:
        for section in sections:
            family = cast("Family", section.family)
            yield from ((family, index) for index in range(len(candidates.get(family, ()))))
        return
    families = [family for family in INTERLEAVE_ORDER if candidates.get(family)]
    families += [family for family in candidates if family not in families and candidates[family]]
    if len(families) == 1:  # one family (the common case): its own order
        yield from zip(itertools.repeat(families[0]), range(len(candidates[families[0]])))
        return
    for rank in range(max((len(candidates[family]) for family in families), default=0)):
        yield from ((family, rank) for family in families if rank < len(candidates[family]))
