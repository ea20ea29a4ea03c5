"""A query's words as a chat may have typed them: with a slip, or in the other English.

People misspell as they text ("adpot", "shcool", "recieved", "persue"), and people
who write questions about a chat do too ("torunament", "educaton"); and they write
British or American English ("favourite colour", "favorite color"). A word spelled
otherwise analyses to a term of its own, which the word as the query spells it never
meets in a full-text search. So a query carries, beside its terms, the terms its words
would have been typed as with one slip (:func:`typed_otherwise`) or spelled the other
English way (:func:`spelled_otherwise`), and a store that holds one of them searches it
beside the query's own (``PoolRequest.respelled``).

The slips are those spelling and typing make most, each past a word's first letter
(which people rarely get wrong): a letter dropped, a letter doubled, two neighbours
swapped, a vowel for another. Keyboard neighbours typed for one another made as many
candidates again and found no more evidence on LoCoMo (docs/benchmarks.md).

A slip can make another real word ("planet" with a letter dropped is "plant"): a
respelling is taken only where the word or its respelling is not a dictionary word
(``_analysis.dictionary_terms``: the whole words of the bundled embedder's vocabulary,
about 21,000 frequent English words, and their terms). A dictionary word's respellings
are then only words no dictionary holds ("adopt" typed "adpot"), and a word the
dictionary lacks, as a misspelt question's is, may be respelled as any ("torunament"
as "tournament").

Pure: the dictionary is given (``_analysis`` reads it once a process).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Iterable

#: Fewest letters of a word whose slips are looked for: a shorter word's slips are
#: other words, abbreviations or chat spellings as often as they are mistakes.
RESPELL_MIN_LETTERS: Final = 5
#: Fewest letters of a respelling (a five-letter word with a letter dropped).
_SHORTEST: Final = RESPELL_MIN_LETTERS - 1
#: The letters a vowel is mistyped as ("seperate", "definately", "independant").
_VOWELS: Final = "aeiouy"


def typed_otherwise(
    forms: Iterable[str],
    dictionary: frozenset[str],
    *,
    first: Iterable[str] = (),
    leave_out: Iterable[str] = (),
) -> tuple[str, ...]:
    """The terms each of ``forms`` (a query's terms and the lowercase words they were
    analysed from) becomes with one slip, after ``first`` (the query's other
    respellings), in order, without repeats, the forms or ``leave_out``, at most
    ``MOST_RESPELLINGS`` of them. A form shorter
    than ``RESPELL_MIN_LETTERS`` or not all ASCII letters gives none; a form in
    ``dictionary`` gives only respellings that are not."""
    forms = tuple(forms)
    found = dict.fromkeys(first)
    for form in forms:
        if len(found) >= MOST_RESPELLINGS:
            break  # a long query's first words are respelled, not each of its 24 terms
        found.update(dict.fromkeys(_respellings_of(form, dictionary)))
    for term in (*forms, *leave_out):
        found.pop(term, None)
    return tuple(found)[:MOST_RESPELLINGS]


#: The most respellings a query carries: a question's hundred or two, while a query
#: of 24 long terms would carry a thousand, each counted by every search of it.
MOST_RESPELLINGS: Final = 384


#: Words whose respellings are kept (``_respellings_of``): a session's questions say
#: the same words again, and working out a word's took a microsecond a respelling.
RESPELLINGS_KEPT: Final = 8192


@functools.lru_cache(maxsize=RESPELLINGS_KEPT)
def _respellings_of(form: str, dictionary: frozenset[str]) -> tuple[str, ...]:
    if len(form) < RESPELL_MIN_LETTERS or not (form.isascii() and form.isalpha()):
        return ()
    known = form in dictionary
    return tuple(
        dict.fromkeys(
            slip
            for slip in _slips(form)
            if len(slip) >= _SHORTEST and not (known and slip in dictionary)
        )
    )


#: How British and American English spell a word apart, each way: where a word ends
#: in the one spelling, with one of the endings that take it, what the other writes
#: ("colour" / "color", "favourite" / "favorite", "organise" / "organize", "analyse" /
#: "analyze", "centre" / "center", "travelled" / "traveled", "catalogue" / "catalog",
#: "defence" / "defense", "programme" / "program", "fulfilment" / "fulfillment"), and
#: the fewest letters before it. A pattern holds only where such a spelling does
#: ("hour", "journey" and "morning" keep theirs; "water" gives "watre", which no scope
#: holds). Of the 1,706 pairs of breame's table (Apache-2.0, read for
#: docs/benchmarks.md, not carried) 179 analyse alike already, and these join 1,205 of
#: the rest both ways and 74 one way (with "encyclopaedia" / "encyclopedia" below); of
#: the bundled vocabulary's words 8 become another of its words, all names or rare
#: ("Alexander", "Anders", "amour", "daemon").
_ENGLISHES: Final = (
    ("our", "or", 2, ("", "s", "ed", "ing", "ite", "ites", "hood", "hoods", "able", "ably",
                      "ful", "fully", "less", "ist", "ists", "ism")),
    ("is", "iz", 2, ("e", "es", "ed", "er", "ers", "ing", "ation", "ations", "able")),
    ("ys", "yz", 2, ("e", "es", "ed", "ing")),
    ("ell", "el", 2, ("ed", "ing", "er", "ers")),
    ("ogue", "og", 2, ("", "s")),
    ("ence", "ense", 2, ("", "s")),
    ("ll", "l", 2, ("ment", "ments")),
)  # fmt: skip
#: The -re / -er and -mme / -m endings, whose endings differ by way, each with the
#: other's ending and the fewest letters before it.
_ONE_WAY_ENDINGS: Final = (
    ("re", "er"), ("res", "ers"), ("red", "ered"), ("er", "re"), ("ers", "res"),
    ("ered", "red"), ("mme", "m"), ("mmes", "ms"),
)  # fmt: skip


def _other_endings() -> dict[str, tuple[tuple[str, int], ...]]:
    """Each word ending a spelling of :data:`_ENGLISHES` or :data:`_ONE_WAY_ENDINGS`
    takes, to the endings the other English writes for it, with the fewest letters
    before it."""
    table: dict[str, tuple[tuple[str, int], ...]] = {}
    for one, other, before, endings in _ENGLISHES:
        for ending in endings:
            table[one + ending] = (*table.get(one + ending, ()), (other + ending, before))
            table[other + ending] = (*table.get(other + ending, ()), (one + ending, before))
    for one, other in _ONE_WAY_ENDINGS:
        table[one] = (*table.get(one, ()), (other, 3))
    return table


_OTHER_ENDINGS: Final = _other_endings()
#: The longest ending :data:`_OTHER_ENDINGS` holds.
_LONGEST_ENDING: Final = max(map(len, _OTHER_ENDINGS))


def spelled_otherwise(word: str) -> tuple[str, ...]:
    """The ways British or American English spells a (lowercase) word the other writes
    (:data:`_ENGLISHES`): "colour" gives "color", "favorite" "favourite"; and a word
    with "ae" inside, the American "e" ("encyclopaedia": "encyclopedia")."""
    found: dict[str, None] = {}
    endings = _OTHER_ENDINGS
    for length in range(1, min(len(word), _LONGEST_ENDING) + 1):
        others = endings.get(word[-length:])
        if others is not None:
            stem = word[:-length]
            for other, before in others:
                if len(stem) >= before:
                    found[stem + other] = None
    at = word.find("ae", 1)
    if at != -1 and len(word) - at >= 4:
        found[word[:at] + "e" + word[at + 2 :]] = None
    found.pop(word, None)
    return tuple(found)


def _slips(word: str) -> Iterable[str]:
    """``word`` with one slip past its first letter: a letter dropped, doubled or
    swapped with the next, or a vowel typed as another."""
    for at in range(1, len(word)):
        head, letter, tail = word[:at], word[at], word[at + 1 :]
        yield head + tail
        yield head + letter + letter + tail
        if tail:
            yield head + tail[0] + letter + tail[1:]
        if letter in _VOWELS:
            for vowel in _VOWELS:
                if vowel != letter:
                    yield head + vowel + tail
