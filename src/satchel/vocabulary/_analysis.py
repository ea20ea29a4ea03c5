"""Text analysis shared by indexing and querying: the only place text becomes terms.

The store writes ``index_text(text)`` into its FTS5 column and computes matched terms
from it; a prepare analyses its query once and searches with ``match_expression``. Both
sides must go through these same rules, so changing any of them changes what stored
rows mean: a store built with other rules must re-analyse its rows (each store's schema
version names the analysis it holds, and its migration re-analyses).

An English word becomes its lemma (simplemma's dictionary: "bought" -> "buy", "mice"
-> "mouse") and then its Snowball stem, so irregular forms the stemmer cannot join
meet their base form; see ``_base`` for the guard on the lemmatiser's answers. The stem
is PyStemmer's (Snowball's C library), named here and not through ``snowballstemmer``,
which hands out PyStemmer's stemmer whenever it happens to be installed: the stems are
the same (201,230 English words compared, 0 apart), the C one some 100 times faster
(a cold analysis of LoCoMo and the lifelike chats 37 -> 19 us a text), and it loads no
stemmer of 30 other languages at import (10,000 objects every full garbage collection
walked; docs/benchmarks.md, "The stemmer").

Every term is a run of Unicode letters and digits only (categories L* and N*), so that
SQLite's ``unicode61`` tokenizer sees each term as exactly one token and no query can
reach FTS5 syntax. (SQLite's tables are older than Python's: the few letters they
still class as marks, New Tai Lue vowel signs, vanish in FTS5; such a term matches
nothing and never fails.) Pure but for reading the lemmatiser's table once (``warm_up``):
no other I/O, no anyio, no clock.
"""

from __future__ import annotations

import calendar
import functools
import itertools
import json
import re
import threading
import unicodedata
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

import attrs
import Stemmer

from ._dates import DateMention, extract_dates
from ._errors import InvalidRequestError
from ._respelling import RESPELLINGS_KEPT, spelled_otherwise, typed_otherwise
from ._turns import PIECE_CHARS, let_loop_in, pieces

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

MAX_QUERY_TERMS: Final[int] = 24
"""Cap on the distinct terms of one query: bounds the MATCH and the admission floor."""

_MAX_TERM_CHARS: Final = 64
#: Words of a long text stemmed between two looks at the event loop (``let_loop_in``).
_STEM_RUN: Final = 32
_STEM_CACHE_SIZE: Final = 1 << 15
_DIGIT_BONUS: Final = 3
_CJK_WEIGHT: Final = 3

# Function words that carry no topic. Surface forms, checked before stemming; "near"
# is kept on purpose (a content word, and FTS5 syntax only when unquoted). The last line
# holds what remains of a contraction written without its apostrophe ("don t"), the next
# two how people spell function words in messages ("u", "dont", "cuz"). Kept
# as text (hence the noqa): 169 words one per line would bury the module.
_STOPWORDS: Final = frozenset(
    """
    a about above after again against all also am among an and any are as at
    be because been before being below between both but by can cannot could did do does
    doing during each either else ever every few for from further had has have having he
    her here hers herself him himself his how however i if in into is it its itself just
    let many me more most much must my myself neither no nor not now of on once only onto
    or other others otherwise our ours ourselves out over own per rather same shall she
    should since so some such than that the their theirs them themselves then there
    therefore these they this those though through thus to too toward towards under until
    up upon us very via was we were what whatever when whenever where whereas wherever
    whether which while who whoever whom whose why will with within without would yet you
    your yours yourself yourselves
    d ll m re s t ve
    u ur r ya yall im ive youre youve theyre dont doesnt didnt isnt wasnt arent werent
    havent hasnt hadnt couldnt wouldnt shouldnt thats whats cuz coz b4 abt tho thru
    """.split()  # noqa: SIM905
)


def function_word(word: str) -> bool:
    """Whether a casefolded surface word is a function word, which carries no topic."""
    return word in _STOPWORDS


# How people spell everyday words to each other in messages, and the word each stands
# for: analysed as that word on both sides (``_term``), a question's "birthday" meets a
# chat's "bday". Only spellings no dictionary reads otherwise ("bro", "sis", "min" and
# "bc" name other things too); those of function words are stopwords. With them, the
# words people say of their family and their things where a question about them
# writes another ("my mom" for "Deborah's mother", "the kids" for "her children", "as a
# kid" for "as a child", "my bike" for "a bicycle"). Kept as text for the same reason
# as the stopwords.
_CHAT_SPELLINGS: Final[dict[str, str]] = dict(
    pair.split(":")
    for pair in """
    bday:birthday bdays:birthdays convo:conversation convos:conversations
    fam:family fav:favorite favs:favorites fave:favorite faves:favorites
    gf:girlfriend bf:boyfriend bff:friend bffs:friends hubby:husband
    pic:picture pics:pictures pix:pictures vid:video vids:videos msg:message
    msgs:messages txt:text ppl:people pls:please plz:please thx:thanks
    tmrw:tomorrow tmr:tomorrow tmrow:tomorrow tomoz:tomorrow tonite:tonight
    nite:night wknd:weekend wk:week wks:weeks yr:year yrs:years hrs:hours
    mins:minutes xmas:christmas uni:university hw:homework appt:appointment
    vacay:vacation biz:business luv:love gud:good gr8:great l8r:later
    mom:mother moms:mothers mum:mother mums:mothers mommy:mother mummy:mother
    dad:father dads:fathers daddy:father grandma:grandmother grandmas:grandmothers
    granny:grandmother grandpa:grandfather grandpas:grandfathers granddad:grandfather
    grandad:grandfather kid:child kids:children kiddo:child kiddos:children
    bike:bicycle bikes:bicycles tv:television fridge:refrigerator
    tourney:tournament tourneys:tournaments
    """.split()  # noqa: SIM905
)


# English clitics dropped after an apostrophe; "n't" is handled apart because it
# changes the word before it ("don't" -> "do", "can't" -> "can").
_CLITICS: Final = frozenset({"d", "ll", "m", "re", "s", "ve"})
_NEGATED: Final = {"ca": "can", "wo": "will", "sha": "shall", "ai": "is"}

# Han, Hiragana, Katakana and Hangul blocks. Only ever applied to runs that are
# already letters and digits, so the blocks may be generous (holes and punctuation in
# them can never reach this class).
_CJK: Final = (
    "\u1100-\u11ff\u2e80-\u2fdf\u3005-\u3007\u3021-\u3029\u3031-\u3035\u3038-\u303c"
    "\u3040-\u30ff\u3130-\u318f\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\ua960-\ua97f"
    "\uac00-\ud7ff\uf900-\ufaff\uff65-\uffdc\U0001b000-\U0001b16f\U00020000-\U000323af"
)
_WORDS: Final = re.compile(r"[^\W_]+(?:'[^\W_]+)*")
_SCRIPT_RUNS: Final = re.compile(f"([{_CJK}]+)|([^{_CJK}]+)")
_CJK_START: Final = re.compile(f"[{_CJK}]")
# Invisible format characters that sit inside words (soft hyphen, zero-width
# (non-)joiners, word joiner, BOM). The zero-width space is not here: it separates words.
_IN_WORD_FORMAT: Final = "\u00ad\u200c\u200d\u2060\ufeff"
# Where combining marks can be: planes 0 and 1 and the variation selectors, less the
# unified ideographs, Hangul syllables, surrogates and private use, which are full
# blocks of other categories. Skipping them makes the one-off scan a third faster.
_MARK_SCAN: Final = (
    (0x0300, 0x3400),
    (0x4DC0, 0x4E00),
    (0xA000, 0xAC00),
    (0xD7A4, 0xD800),
    (0xF900, 0x20000),
    (0xE0100, 0xE01F0),
)

# Words whose dictionary lemma is another word in today's English (a Latin plural, an
# archaic past tense, a name): they keep their plain stem. See ``_base``.
_NOT_LEMMATISED: Final = frozenset(
    """
    bare bayer capita cola dice fuller galen gan gemini greed holden inning lan lei
    lighter maria media nam opera reed rei skies slang sous sox spade span stranger
    tanner wan weed worse
    """.split()  # noqa: SIM905
)

# Past forms whose dictionary lemma is a homograph far rarer in a chat than the verb
# ("won" the currency, "felt" the cloth), so "Which tournament did Nate win?" met no "I
# won it!". Their verb's lemma instead. See ``_base``.
_MISSED_LEMMAS: Final = {"won": "win", "felt": "feel"}

_STEMMER: Final = Stemmer.Stemmer("english")
# The stemmer keeps its state on the object and the store analyses in worker threads,
# so one lock serialises it (a stem costs about a microsecond).
_STEMMER_LOCK: Final = threading.Lock()


@attrs.frozen
class AnalysedQuery:
    """A query as the lexical channel sees it.

    ``terms`` are the distinct analysed terms in query order, at most the cap given to
    ``analyse_query``; empty when the query has no content words. ``dates`` are the
    dates and ranges the query names, for the time channel.
    """

    text: str = attrs.field(validator=attrs.validators.instance_of(str))
    terms: tuple[str, ...] = attrs.field(
        validator=attrs.validators.deep_iterable(
            attrs.validators.instance_of(str), attrs.validators.instance_of(tuple)
        )
    )
    dates: tuple[DateMention, ...] = ()
    #: The terms of words rare in the language (:func:`rare_in_language`): a codename,
    #: a species, a product; not an everyday word that happens to be rare somewhere.
    rare: frozenset[str] = frozenset()
    #: The terms of the proper names the query says (:func:`proper_names`): a person,
    #: a place, a project.
    names: tuple[str, ...] = ()
    #: The query without those names, for the vector channel of a scope that is about
    #: them (``PoolRequest.vector_for``); None when the query names nothing.
    unnamed: str | None = None
    #: The terms the query's words (its names' aside) become run together two by two
    #: (:func:`_run_together`: "road trip" as "roadtrip"), spelled the other English
    #: way or typed with one slip (``_respelling``): a store that holds one searches it
    #: beside the query's terms (``PoolRequest.respelled``).
    respellings: tuple[str, ...] = ()


def analyse(text: str) -> list[str]:
    """Index terms of ``text`` in order, duplicates kept.

    Args:
        text: Any text; the empty string gives no terms.

    Returns:
        Normalised, stopword-free, stemmed terms and CJK bigrams.
    """
    words = _words(text)
    if len(words) <= _STEM_RUN:
        return [term for term in map(_term, words) if term]
    # A long text (in a worker thread): stemming a word not seen before takes up to
    # ~20 µs, so a few dozen at a time, letting a waiting event loop in between.
    terms: list[str] = []
    for first in range(0, len(words), _STEM_RUN):
        terms += filter(None, map(_term, words[first : first + _STEM_RUN]))
        let_loop_in()
    return terms


def index_text(text: str) -> str:
    """What the store writes into its FTS5 column: the terms joined by spaces."""
    terms = analyse(text)
    if len(terms) <= _JOIN_RUN:
        return " ".join(terms)
    joined = []  # a long text's: one join of 170k terms held the GIL for 2 ms
    for first in range(0, len(terms), _JOIN_RUN):
        joined.append(" ".join(terms[first : first + _JOIN_RUN]))
        let_loop_in()
    return " ".join(joined)


#: Terms joined between two chances for a waiting event loop to take the GIL.
_JOIN_RUN: Final = 16384


def analyse_query(text: str, *, max_terms: int = MAX_QUERY_TERMS) -> AnalysedQuery:
    """Analyse a query once for every family, scope and round of a prepare.

    Args:
        text: The query as the caller wrote it.
        max_terms: Most distinct terms to keep; when the query has more, the most
            informative are kept (see ``_informativeness``), in query order.

    Returns:
        The query with its distinct terms.

    Raises:
        InvalidRequestError: (a ValueError) If ``text`` is not a string, or ``max_terms``
            is not an integer of at least 1.
    """
    if not isinstance(text, str):
        raise InvalidRequestError("text must be a string")
    if isinstance(max_terms, bool) or not isinstance(max_terms, int) or max_terms < 1:
        raise InvalidRequestError(f"max_terms must be an integer >= 1, got {max_terms!r}")
    words = list(dict.fromkeys(_words(text)))
    if len(words) <= max_terms:
        source: dict[str, str] = {}
        for word in words:
            if term := _term(word):
                source.setdefault(term, word)
    else:
        source = _most_informative(words, max_terms)
    terms = tuple(source)
    rare = frozenset(term for term, word in source.items() if rare_in_language(standard_word(word)))
    dates = extract_dates(text, question=True)
    found = proper_names(text)
    names = tuple(dict.fromkeys(term for _, _, name in found for term in analyse(name)))
    unnamed = _without(text, found) if names else None
    said = [(term, word) for term, word in source.items() if term not in names]
    respellings = typed_otherwise(
        [form for pair in said for form in pair],
        dictionary_terms(),
        first=[
            *_run_together(text, source, names),
            *(other for term, word in said for other in _spelled_otherwise(word, term)),
        ],
        leave_out=source,
    )
    return AnalysedQuery(
        text=text, terms=terms, dates=dates, rare=rare, names=names, unnamed=unnamed,
        respellings=respellings,
    )  # fmt: skip


def _run_together(text: str, source: Mapping[str, str], names: Sequence[str]) -> tuple[str, ...]:
    """The terms of each two words the question says side by side as one word, as a
    chat types a compound ("road trip": "roadtrip", "ice cream": "icecream", "best
    friend": "bestfriend"): both words among those its kept terms came from (``source``:
    a pasted page's thousands of words are not stemmed in pairs), of letters, neither
    one of the question's ``names`` (terms), and the pair's term neither word's own."""
    kept = set(source.values())
    tokens = _WORDS.findall(_fold(text))
    found: dict[str, None] = {}
    for one, two in itertools.pairwise(tokens):
        if one not in kept or two not in kept:
            continue
        if not (one.isascii() and one.isalpha() and two.isascii() and two.isalpha()):
            continue
        first, second = _term(one), _term(two)
        if not first or not second or first in names or second in names:
            continue
        term = _term(one + two)
        if term and term != first and term != second:
            found[term] = None
    return tuple(found)


#: A word and its possessive (``Alice``, ``Alice's``), letters of any script.
_CAPITALISED: Final = re.compile(r"\b([^\W\d_]+)(?:['\N{RIGHT SINGLE QUOTATION MARK}]s\b)?")
#: What ends a sentence before a word: the word after it is capitalised as any first word.
_SENTENCE_END: Final = re.compile(r"(?:^|[.!?:;\"\N{LEFT DOUBLE QUOTATION MARK}(]\s*)$")
#: Capitalised words that name no one: the calendar's (the time channel reads them) and
#: the pronoun.
_NOT_NAMES: Final = frozenset(
    word.casefold()
    for word in (*calendar.month_name[1:], *calendar.month_abbr[1:], *calendar.day_name, "I")
)


def proper_names(text: str) -> list[tuple[int, int, str]]:
    """The proper names a question says, as ``(start, end, name)``: each capitalised
    word that does not open a sentence (where every word is capitalised), is not all
    capitals (an acronym's meaning is in its letters), and is no month, weekday or
    "I"; a possessive ``'s`` goes with its name. Model-free, so a name opening the
    question is missed, and a capitalised common word inside one is taken."""
    found = []
    for match in _CAPITALISED.finditer(text):
        word = match.group(1)
        if not word[0].isupper() or len(word) < 2 or word.isupper():
            continue
        if word.casefold() in _NOT_NAMES:
            continue
        if _SENTENCE_END.search(text, 0, match.start()):
            continue
        found.append((match.start(), match.end(), word))
    return found


def names_apart(text: str) -> bool:
    """Whether the proper names a question says (:func:`proper_names`) are each said
    apart ("Jon and Gina", "Gina's store ... Jon"), none right after another ("Mona
    Lisa", "Sarah Jones": one name of two words)."""
    found = proper_names(text)
    return all(text[end:start].strip() for (_, end, _), (start, _, _) in itertools.pairwise(found))


def _without(text: str, names: Sequence[tuple[int, int, str]]) -> str:
    """``text`` with the spans of ``names`` cut out, spaces closed up."""
    kept, at = [], 0
    for start, end, _ in names:
        kept.append(text[at:start])
        at = end
    kept.append(text[at:])
    return " ".join("".join(kept).split())


#: Fewest letters of a word :func:`rare_in_language` can call rare (shorter ones are
#: abbreviations, chat spellings and typos as often as they are names of things).
RARE_MIN_LETTERS: Final = 5


def rare_in_language(word: str) -> bool:
    """Whether a (folded) word is rare in general English: made of ASCII letters, at
    least ``RARE_MIN_LETTERS`` long, and neither it nor its dictionary lemma is a whole
    word of the bundled embedder's WordPiece vocabulary (about 20,000 frequent words:
    "capital", "paperwork" and "pottery" are; "kestrel" and "kubernetes" are not).

    A model-free frequency signal at no cost of its own: the vocabulary ships with
    satchel (``models/minilm-static-256/tokenizer.json``, Apache-2.0).
    """
    if len(word) < RARE_MIN_LETTERS or not (word.isascii() and word.isalpha()):
        return False
    common = _common_words()
    if word in common:
        return False
    lemma = _lemma(word)
    if lemma is not None and lemma in common:
        return False
    for suffix, replacement in _INFLECTIONS:
        if word.endswith(suffix) and word[: -len(suffix)] + replacement in common:
            return False
    return True


#: Regular endings a vocabulary word may carry in a question ("deadlines", "approves").
_INFLECTIONS: Final = (
    ("ies", "y"), ("es", ""), ("s", ""), ("ed", ""), ("ed", "e"), ("ing", ""),
    ("ing", "e"), ("er", ""), ("ers", ""), ("ly", ""),
)  # fmt: skip


@functools.cache
def _common_words() -> frozenset[str]:
    """The whole words (no ``##`` pieces, letters only) of the bundled WordPiece
    vocabulary."""
    from importlib import resources

    path = resources.files("satchel") / "models" / "minilm-static-256" / "tokenizer.json"
    vocabulary = json.loads(path.read_text(encoding="utf-8"))["model"]["vocab"]
    return frozenset(word for word in vocabulary if word.isascii() and word.isalpha())


@functools.lru_cache(maxsize=RESPELLINGS_KEPT)
def _spelled_otherwise(word: str, term: str) -> tuple[str, ...]:
    """The terms of a query's ``word`` (analysed to ``term``) as British or American
    English spells it otherwise (:func:`~._respelling.spelled_otherwise`): "favorit"
    for "favourite"; none that analyses as the word does."""
    others = (_term(other) for other in spelled_otherwise(word))
    return tuple(dict.fromkeys(other for other in others if other and other != term))


@functools.cache
def dictionary_terms() -> frozenset[str]:
    """The whole words of the bundled vocabulary (:func:`_common_words`) and their
    terms: what a slip of a dictionary word must not be to be taken for one
    (``_respelling``). Built once a process (about 0.07 s; ``warm_up``)."""
    common = _common_words()
    return common | frozenset(map(_term, common))


def match_expression(terms: Sequence[str]) -> str:
    """A safe FTS5 MATCH body: every term a quoted phrase, joined with ``OR``.

    Quoting makes operators (``NEAR``, ``AND``, ``*``, ``:``, ...) plain text; inner
    quotes are doubled and NUL, which ends an FTS5 string early, becomes a space (the
    tokenizer would split there anyway).

    Args:
        terms: Analysed terms, usually ``AnalysedQuery.terms``.

    Returns:
        The expression, or the empty string when there are no terms: callers then skip
        the lexical channel.

    Raises:
        InvalidRequestError: (a ValueError) If ``terms`` is not a sequence of strings; a
            single string is refused: it would be split into characters.
    """
    if (
        isinstance(terms, str)
        or not isinstance(terms, Sequence)
        or not all(isinstance(term, str) for term in terms)
    ):
        raise InvalidRequestError("terms must be a sequence of strings")
    return " OR ".join(_phrase(term) for term in terms)


def _phrase(term: str) -> str:
    return '"' + term.replace('"', '""').replace("\x00", " ") + '"'


def _words(text: str) -> list[str]:
    """Surface words of ``text`` in order: folded, clitics and stopwords removed, CJK
    runs as bigrams, long words cut; not yet stemmed.

    A long text is read a piece at a time (pieces end at whitespace, which no word
    holds), letting a waiting event loop in between: one scan of a 1 MB text held the
    GIL for 30-90 ms."""
    if len(text) <= PIECE_CHARS:
        return _piece_words(text, [])
    words: list[str] = []
    for start, end in pieces(text):
        _piece_words(text[start:end], words)
        let_loop_in()
    return words


def _piece_words(text: str, words: list[str]) -> list[str]:
    """``words`` extended by the surface words of one piece of text."""
    for token in _WORDS.findall(_fold(text)):
        if not token.isascii():
            _add_mixed(token, words)
        elif "'" in token:
            _add_word(token, words)
        elif token not in _STOPWORDS:
            # The common case, inlined: analysis runs on every stored text.
            words.append(token[:_MAX_TERM_CHARS])
    return words


def _fold(text: str) -> str:
    """NFKC and casefold, one apostrophe, Latin letters without their diacritics, no
    marks: equal text gives equal terms, and "José", "café" and "Pokémon" meet "Jose",
    "cafe" and "pokemon" as people type them (:func:`_latin_bases`)."""
    if text.isascii():
        return text.lower()
    text = unicodedata.normalize("NFKC", text).casefold().translate(_latin_bases())
    return _invisible().sub("", text.replace("\u2019", "'").replace("\u02bc", "'"))


@functools.cache
def _latin_bases() -> dict[int, str]:
    """Each Latin letter with a diacritic (Latin-1, Latin Extended-A and -B, Latin
    Extended Additional) as its plain letter: "é" as "e", "ñ" as "n", "ế" as "e", and
    the letters drawn with a stroke or joined, which decompose to nothing (``_STROKED``:
    "ł" as "l", "ø" as "o", "æ" as "ae"). People type names and borrowed words with and
    without their accents, and a search engine folds them alike (FTS5's tokenizer
    does by default). Other scripts keep theirs: a Cyrillic "й" or a Greek "ά" is a
    letter of its own there. Built once a process from this Python's Unicode tables."""
    table = {ord(letter): plain for letter, plain in _STROKED.items()}
    for code in itertools.chain(range(0xC0, 0x250), range(0x1E00, 0x1F00)):
        decomposed = unicodedata.normalize("NFD", chr(code))
        base, marks = decomposed[0], decomposed[1:]
        plain = marks and base.isascii() and base.isalpha()
        if plain and all(unicodedata.category(mark) == "Mn" for mark in marks):
            table[code] = base
    return table


#: Latin letters with a stroke, or two letters joined, that Unicode does not decompose,
#: as people type them on a keyboard without them.
_STROKED: Final = {
    "ł": "l", "Ł": "l", "ø": "o", "Ø": "o", "đ": "d", "Đ": "d", "ħ": "h", "Ħ": "h",
    "\u0131": "i", "ŧ": "t", "Ŧ": "t", "ƀ": "b", "ƶ": "z", "æ": "ae", "Æ": "ae", "œ": "oe",
    "Œ": "oe", "ð": "d", "Ð": "d", "þ": "th", "Þ": "th",
}  # fmt: skip


def _add_mixed(token: str, words: list[str]) -> None:
    """Split a non-ASCII token into CJK runs (as bigrams) and other words."""
    for cjk, other in _SCRIPT_RUNS.findall(token):
        if cjk:
            words.extend(_bigrams(cjk))
        else:
            _add_word(other, words)


def _add_word(token: str, words: list[str]) -> None:
    """Add the content words of a token, which may hold apostrophes."""
    parts = _split_clitics(token) if "'" in token else [token]
    words.extend(part[:_MAX_TERM_CHARS] for part in parts if part and part not in _STOPWORDS)


#: A letter said three times or more in a row: "sooo", "goood", "yesss".
_STRETCHED: Final = re.compile(r"([^\W\d_])\1\1+")
#: The longest word :func:`_unstretched` reads: a longer run of letters is an
#: identifier or a blob ("qqqq..."), kept as written.
_STRETCHED_MAX_CHARS: Final = 32


def standard_word(word: str) -> str:
    """The word a casefolded surface word spells: itself, or the everyday word a chat
    spells so ("bday": birthday), or with a letter stretched for emphasis said as the
    dictionary says it ("sooo": so, "goood": good). A chat's spelling of a function
    word ("u", "dont") is a stopword already."""
    word = _CHAT_SPELLINGS.get(word, word)
    return _unstretched(word) if _STRETCHED.search(word) else word


@functools.lru_cache(maxsize=4096)
def _unstretched(word: str) -> str:
    """A word with each letter said three or more times in a row said twice, or once:
    the first a function word ("sooo": so), else the first an everyday word ("goood":
    good), else the first the lemmatiser's dictionary knows, else twice; a known word
    stays as it is ("www"), and so does a word of digits or over
    ``_STRETCHED_MAX_CHARS`` letters."""
    if len(word) > _STRETCHED_MAX_CHARS or not word.isalpha():
        return word
    forms = (word, _STRETCHED.sub(r"\1\1", word), _STRETCHED.sub(r"\1", word))
    common = _common_words()
    for known in (_STOPWORDS.__contains__, common.__contains__, _lemma):
        for form in forms:
            if known(form):
                return form
    return forms[1]


def _split_clitics(token: str) -> list[str]:
    """Words of a token with apostrophes: a trailing English clitic dropped ("we'll",
    "Caroline's"), "n't" undone ("won't" -> "will"), any other apostrophe a break."""
    *parts, last = token.split("'")
    if last == "t" and parts[-1].endswith("n"):
        base = parts[-1][:-1]
        parts[-1] = _NEGATED.get(base, base)
    elif last not in _CLITICS:
        parts.append(last)
    return parts


def _bigrams(run: str) -> list[str]:
    """Overlapping character pairs of a CJK run: CJK text has no spaces, and pairs
    find a word inside a longer run ("数据库" in "数据库备份")."""
    if len(run) == 1:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


@functools.lru_cache(maxsize=_STEM_CACHE_SIZE)
def _term(word: str) -> str:
    """The index term of a surface word: the Snowball stem of its lemma.

    Only words of 3 to 63 characters that end in an ASCII letter are stemmed: the
    English stemmer changes nothing else (digits, CJK bigrams, other scripts), and a
    word of 64 or more characters is an identifier or blob already cut to 64, whose
    prefix must stay exactly as written. Of those, the words of ASCII letters alone
    are lemmatised first (``_base``), unless the lemma's stem merely extends the
    word's own (a spelling variant or an expanded abbreviation: "preferred" ->
    "preferr", "programmed" -> "programme", "sept" -> "september"), so that every
    join the stemmer made before still holds.

    A chat's spelling is the word it spells first (:func:`standard_word`: "bday" is
    "birthday", "goood" is "good"); one that spells a function word ("sooo") has no
    term: the empty string, which ``analyse`` leaves out.
    """
    if word in _CHAT_SPELLINGS or _STRETCHED.search(word):
        word = standard_word(word)
        if word in _STOPWORDS:
            return ""
    if 2 < len(word) < _MAX_TERM_CHARS and "a" <= word[-1] <= "z":
        stem = _stem(word)
        if word.isascii() and word.isalpha():
            base = _base(word)
            if base != word:
                lemma_stem = _stem(base)
                if lemma_stem and not (len(lemma_stem) > len(stem) and lemma_stem.startswith(stem)):
                    return lemma_stem
        return stem
    return word


def _stem(word: str) -> str:
    with _STEMMER_LOCK:
        stem: str = _STEMMER.stemWord(word)
    return stem


def _base(word: str) -> str:
    """The lemma ``_term`` stems in place of ``word`` (lowercase ASCII letters), or
    ``word`` itself.

    The dictionary (from Wiktionary) also holds rare readings of common words, so its
    lemma is taken only when it is:

    - two or more ASCII letters, three for a word of three ("went" -> "go" is kept,
      "las" -> "la" and "lbs" -> "lb" are abbreviations, not plurals);
    - not a stopword: a content word must not vanish ("outing" -> "out");
    - its own lemma: a true headword maps to itself, and a chain marks a rare reading
      ("gone" -> "gan" -> "gin", "laid" -> "lay" -> "lie");
    - the lemma of a word not in ``_NOT_LEMMATISED``, the homographs the rules above
      let through.

    These rules are generic; the list is the residue of a review of every change the
    lemmatiser made to the 21,000 most frequent English words (the bundled embedder's
    vocabulary), kept short on purpose; ``_MISSED_LEMMAS`` holds the few past forms it
    reads as another word.
    """
    if word in _NOT_LEMMATISED:
        return word
    if word in _MISSED_LEMMAS:
        return _MISSED_LEMMAS[word]
    lemma = _lemma(word)
    if (
        lemma is None
        or lemma == word
        or not (lemma.isascii() and lemma.isalpha())
        or len(lemma) < (3 if len(word) == 3 else 2)
        or lemma in _STOPWORDS
        or _lemma(lemma) not in (None, lemma)
    ):
        return word
    return lemma


def _lemma(word: str) -> str | None:
    """The dictionary lemma of ``word``, lowercased; None for a word it lacks."""
    found = _dictionary()(word, "en")
    return None if found is None else found.lower()


@functools.cache
def _dictionary() -> Callable[[str, str], str | None]:
    """simplemma's dictionary lookup, its English table loaded (see ``warm_up``).

    Only the dictionary: its rule-based guesses for unknown words (names, identifiers,
    typos) would second-guess the stemmer, which already handles regular forms.
    """
    from simplemma.strategies import DictionaryLookupStrategy

    lookup = DictionaryLookupStrategy().get_lemma
    lookup("bought", "en")  # reads and decompresses the English table
    return lookup


def warm_up() -> None:
    """Load the lemmatiser's English table now (about 0.3 s and 20 MB, once a process).

    Otherwise the first analysis pays it, which may be a prepare's query on the event
    loop. Blocking: ``open_runtime`` calls it in a worker thread.
    """
    _dictionary()
    dictionary_terms()


def _most_informative(words: list[str], max_terms: int) -> dict[str, str]:
    """The ``max_terms`` distinct terms of the best-ranked words, in query order, each
    with the first word of the query that gave it.

    Words are stemmed in rank order only until enough distinct terms are found, so a
    pasted document costs a few dozen stems, not thousands.
    """
    scores = [-_informativeness(word) for word in words]
    ranked = sorted(range(len(words)), key=scores.__getitem__)
    first_seen: dict[str, int] = {}
    for index in ranked:
        term = _term(words[index])
        if not term:
            continue
        first_seen[term] = min(first_seen.get(term, index), index)
        if len(first_seen) == max_terms:
            break
    return {
        term: words[first_seen[term]] for term in sorted(first_seen, key=first_seen.__getitem__)
    }


def _informativeness(word: str) -> int:
    """Rarity proxy without corpus statistics: longer words are rarer; a CJK bigram
    counts like a six-letter word; digits (versions, years, ids) add a bonus.
    Sorting is stable, so ties keep query order."""
    score = len(word)
    if not word.isascii() and _CJK_START.match(word):
        score *= _CJK_WEIGHT
    if not word.isalpha():  # words are letters and digits: so it holds a digit
        score += _DIGIT_BONUS
    return score


@functools.cache
def _invisible() -> re.Pattern[str]:
    """Combining marks and in-word format characters, to delete after NFKC.

    Marks NFKC could not compose would split words ("हिन्दी", voweled Arabic, the dot
    casefold leaves on "İ"); without them every term is letters and digits. Built on
    the first non-ASCII text (tens of milliseconds, once) from this Python's Unicode
    tables rather than a copied list that would age.
    """
    marks = [
        cp
        for lo, hi in _MARK_SCAN
        for cp in range(lo, hi)
        if unicodedata.category(chr(cp))[0] == "M"
    ]
    bmp = _char_class(cp for cp in marks if cp <= 0xFFFF)
    astral = _char_class(cp for cp in marks if cp > 0xFFFF)
    # A class holding astral code points compiles to a list of ranges scanned per
    # character (7x slower here); the lookahead keeps BMP text on the bitmap class.
    return re.compile(f"[{bmp}{_IN_WORD_FORMAT}]|(?=[\U00010000-\U0010ffff])[{astral}]")


def _char_class(code_points: Iterable[int]) -> str:
    """A regex class body of ranges for ``code_points`` given in ascending order."""
    ranges: list[list[int]] = []
    for cp in code_points:
        if ranges and ranges[-1][1] == cp - 1:
            ranges[-1][1] = cp
        else:
            ranges.append([cp, cp])
    return "".join(f"{re.escape(chr(lo))}-{re.escape(chr(hi))}" for lo, hi in ranges)
