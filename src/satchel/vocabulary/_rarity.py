"""How rare in its scope a record's words are: what tells a turn that says something
from one that only keeps a chat going. Pure: no I/O.

A chat's turns of courtesy ("Thanks, John! Talk to you soon!", "Wow, that's awesome!")
are made of the words the chat says most, its people's names among them; a turn that
tells a fact holds words the chat says rarely ("coconut", "divorce", "Lisbon"). The
rarity of a turn (:func:`rarity`) is the mean, over the distinct terms of its analysed
text past its speaker's name (:func:`content_terms`; a text that is no turn has none), of
``ln(N / df) / ln(N + 200)``: ``N`` the searchable records of its family in its scope,
``df`` those holding the term; 0 when every record holds every term it says, near 1 in
a large scope when no other record holds any. On the scale of its scope's size, so
turns of chats of any size compare, and a scope of a few dozen records, where most
words are said once, rates its turns lower (``FEW_ROWS``). A store rates the evidence
it reads (:func:`rated`) with the scope's counts as of the read, so the same store state
rates alike in every process, whatever else it read before.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Final

from ._analysis import analyse
from ._evidence import Evidence
from ._memo import remembered, text_memo
from ._speakers import MAX_SPEAKER_CHARS, said_past_speaker, speaker_terms

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

#: Texts whose terms are remembered (``_memo``; a prepare reads the same turns again
#: and again): the analysis of a turn costs 10-170 us, a lookup well under one. Tuples
#: of strings, which the garbage collector stops walking once it has seen them.
TERMS_KEPT: Final = 16_384
_SEEN: dict[str, tuple[str, ...]] = text_memo()


def content_terms(text: str | None) -> tuple[str, ...]:
    """The distinct analysed terms of a conversation turn past its speaker's name
    (``"Maya: we got a kitten"``: get, kitten; the name weighs on every turn of hers
    alike), in text order; a name said later in the turn is kept. None for a text that
    opens with no speaker: a note has no courtesies to tell from its facts, and in a
    small scope of notes a note of words no other holds would outrank the ones that
    answer."""
    if not text:
        return ()
    terms = _SEEN.get(text)  # the common case, without a call
    return remembered(_SEEN, text, _said_terms, TERMS_KEPT) if terms is None else terms


def known_terms(text: str | None) -> tuple[str, ...] | None:
    """:func:`content_terms` of ``text`` if that is a lookup (remembered, or no text),
    else None: an analysis to run."""
    return () if not text else _SEEN.get(text)


def content_terms_indexed(text: str, terms: str) -> tuple[str, ...]:
    """:func:`content_terms` of ``text`` from ``terms``, the analysed terms of the whole
    text in order, joined by spaces (a store's full-text row of it), without analysing
    it again: those past the terms of its speaker's name. The same terms, since the
    analysis reads word by word and no word spans the colon after a name."""
    if not speaker_terms(text):
        return ()
    name = text[: text.find(":", 0, MAX_SPEAKER_CHARS + 1)]
    skip = _NAME_TERMS.get(name)
    if skip is None:  # kept without evicting: a store's read thread asks too
        skip = len(analyse(name))
        if len(_NAME_TERMS) < NAMES_KEPT:
            _NAME_TERMS[name] = skip
    return tuple(dict.fromkeys(terms.split()[skip:]))


def remember_terms(text: str, terms: tuple[str, ...]) -> None:
    """Keep ``terms`` as :func:`content_terms` of ``text``: what a store read off the
    text's full-text row (:func:`content_terms_indexed`), so no rating of it, now or
    after the scope's next write, analyses the text. Called on the loop that rates."""
    remembered(_SEEN, text, lambda _: terms, TERMS_KEPT)


#: How many terms each speaker's name analyses to (a chat has a handful of names);
#: cleared by an erase as every text memo is (``_memo.forget_texts``).
_NAME_TERMS: dict[str, int] = text_memo()
NAMES_KEPT: Final = 4096


def _said_terms(text: str) -> tuple[str, ...]:
    if not speaker_terms(text):
        return ()
    return tuple(dict.fromkeys(analyse(said_past_speaker(text))))


def rarity(terms: Iterable[str], frequencies: Mapping[str, int], rows: int) -> float | None:
    """The mean of ``ln(rows / df) / ln(rows + FEW_ROWS)`` over ``terms`` (``df`` from
    ``frequencies``, within 1 and ``rows``): how rare in its scope what a turn says
    is, from 0 to below 1. None without terms, or in a scope of one record."""
    if rows <= 1:
        return None
    whole = math.log(rows)
    total = 0.0
    count = 0
    for term in terms:
        held = frequencies.get(term, 0)
        total += whole - math.log(held) if 1 < held < rows else (0.0 if held >= rows else whole)
        count += 1
    return total / (count * math.log(rows + FEW_ROWS)) if count else None


#: Records a scope's counts are taken to hold beyond its own in the scale of a rating
#: (``ln(N + FEW_ROWS)``): in a scope of a few dozen records most words are said once,
#: which tells little, and its turns would all rate as rare as a chat's rarest.
FEW_ROWS: Final = 200


def rarity_terms(evidence: Iterable[Evidence]) -> set[str]:
    """Every term :func:`rated` needs the scope's count of for ``evidence``."""
    needed: set[str] = set()
    for item in evidence:
        needed.update(content_terms(item.text))
    return needed


def rated(
    evidence: Mapping[int, Evidence], frequencies: Mapping[str, int], rows: int
) -> dict[int, Evidence]:
    """``evidence`` with each item's :attr:`~._evidence.Evidence.rarity` set from the
    scope's counts: ``frequencies`` holds ``df`` for :func:`rarity_terms` of it, ``rows``
    is ``N``."""
    return {
        key: with_rarity(item, rarity(content_terms(item.text), frequencies, rows))
        for key, item in evidence.items()
    }


def with_rarity(item: Evidence, value: float | None) -> Evidence:
    """``item`` rated ``value`` (a new value: evidence is frozen; faster than
    ``attrs.evolve``, which a read of a hundred items felt)."""
    return Evidence(
        item.family, item.scope_id, item.identity, item.citation, item.text,
        item.abstract, item.overview, item.created_at, item.thread, value,
    )  # fmt: skip
