"""Who said a conversation turn, as the lexical channel spells it. Pure.

A stored conversation turn opens with its speaker's name (``"Maya: we got a kitten"``,
docs/workload.md). A question naming that person ("What is Maya's cat called?") is
most often answered by what they said themselves, yet in a chat of two a name is held
by half the scope's turns, so full text cannot rank by it (it is a common term there,
``vocabulary._retrieval.COMMON_SHARE``). :func:`speaker_terms` reads the speaker off a
turn's text and analyses it with the query's own rules, so a search can tell the turns
said by a person the query names from the rest. :func:`asks_question` and
:func:`says_nothing` tell what kind of turn it is once read. :func:`opens_with_speaker`
tells a turn by its form alone, as a store's query can (a turn without a thread is in
its scope's conversation), and :func:`name_variant` finds how a scope spells a name a
question says otherwise ("Mel" for Melanie; "Bob" for Robert: :func:`nicknames_of`,
from the ``nicknames`` package's table). Soundex (:func:`sounds_like`) is written here:
twenty lines, where a library would add a compiled dependency to the core.
"""

from __future__ import annotations

import difflib
import functools
import math
import re
from collections import defaultdict
from datetime import UTC
from typing import TYPE_CHECKING, Final

from ._analysis import analyse, function_word, standard_word
from ._analysis import warm_up as analysis_warm_up
from ._memo import remembered, text_memo

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence
    from datetime import datetime

#: The longest speaker prefix read: a name, not a sentence that happens to hold a colon.
MAX_SPEAKER_CHARS: Final = 40
#: The most words a speaker prefix holds ("Dr Ana Lima").
MAX_SPEAKER_WORDS: Final = 3
#: The shortest start of a name taken as a short form of it ("Cal" for "Calvin", "Jon"
#: for "Jonathan"); two letters start too many words and names.
MIN_SHORT_NAME: Final = 3

_NOBODY: Final[frozenset[str]] = frozenset()


def speaker_terms(text: str | None) -> frozenset[str]:
    """The analysed terms of the speaker's name ``text`` opens with (``"Maya: ..."``),
    or none when it opens with no name: no colon within the first
    ``MAX_SPEAKER_CHARS`` characters, more than ``MAX_SPEAKER_WORDS`` words before it,
    a digit in them (``"At 10:30 we..."``) unless they are a phone number or a handle
    (``"kate_92"``: :func:`handle_label`), or no space after it."""
    if not text:
        return _NOBODY
    colon = text.find(":", 0, MAX_SPEAKER_CHARS + 1)
    if colon <= 0:
        return _NOBODY
    head = text[: colon + 2]  # the name, the colon and what follows it
    found = _SEEN.get(head)
    if found is None:
        found = _named(head)
        if len(_SEEN) < _SEEN_MOST:
            _SEEN[head] = found
    return found


#: Speaker heads already analysed (a chat has a handful; bounded all the same). A plain
#: dict: a prepare asks it for every turn it reads.
_SEEN: dict[str, frozenset[str]] = {}
_SEEN_MOST: Final = 4096


def _named(head: str) -> frozenset[str]:
    prefix, after = head[:-2], head[-1:]
    if after not in (" ", "\t"):
        return _NOBODY
    words = prefix.split()
    named = 1 <= len(words) <= MAX_SPEAKER_WORDS and not any(c.isdigit() for c in prefix)
    if named or phone_label(prefix) or handle_label(prefix) or placeholder_label(prefix):
        terms = frozenset(analyse(prefix))
        if not terms and (said := prefix.strip().casefold()) in SELF_LABELS:
            return frozenset((said,))
        return terms
    return _NOBODY


#: How a chat's export may label the exporter's own messages ("Me: ...", "You: ..."):
#: words the analysis drops, taken as the label's term all the same.
SELF_LABELS: Final = frozenset({"me", "you", "i", "myself"})


#: A person a messaging app's export labels by their phone number, as it does everyone
#: the exporter has not saved as a contact ("+44 7700 900123: ...", "+1 (555) 123-4567:
#: ..."): a "+", a digit, then digits, spaces, hyphens and brackets, ending with a digit,
#: ``PHONE_DIGITS`` digits at least. Other digits before a colon are no speaker: a date
#: ("2023-05-07: ..."), a time ("At 10: ..."), a step ("Step 1: ...").
PHONE_LABEL: Final = re.compile(r"\+[0-9][0-9 ()-]*[0-9]")
PHONE_DIGITS: Final = 7


def phone_label(name: str) -> bool:
    """Whether a speaker prefix is a phone number (``PHONE_LABEL``)."""
    if PHONE_LABEL.fullmatch(name) is None:
        return False
    return sum("0" <= c <= "9" for c in name) >= PHONE_DIGITS


#: A person a chat app labels by their user name ("kate_92", "john.smith85",
#: "mike2000", as Telegram's or Discord's exports do): one word of ASCII letters,
#: digits, "_", "." and "-" that opens with a letter, holds a digit (without one it is
#: a name already) and ``HANDLE_LETTERS`` letters at least, so a short code is no
#: speaker ("Q3: ...", "v2: ...", "H2O: ..."), nor a step said with a space ("Step 1:
#: ..."). A handle's letters are often its person's name: "kate_92" analyses to "kate".
HANDLE_LABEL: Final = re.compile(r"[A-Za-z][A-Za-z0-9_.-]*")
HANDLE_LETTERS: Final = 3


def handle_label(name: str) -> bool:
    """Whether a speaker prefix is a user name holding a digit (``HANDLE_LABEL``)."""
    if HANDLE_LABEL.fullmatch(name) is None or not any("0" <= c <= "9" for c in name):
        return False
    return sum(c.isalpha() for c in name) >= HANDLE_LETTERS


#: A person a dataset or a tool labels by a placeholder and a number, not a name ("User
#: 2", "Speaker 1", "participant3", as anonymised chats and transcripts are written):
#: one of these words, in any case, an optional space and one to ``PLACEHOLDER_DIGITS``
#: digits. Only these words: told by form, "Step 2: ..." or "Room 101: ..." is no
#: speaker.
PLACEHOLDER_WORDS: Final = (
    "user", "speaker", "person", "participant", "member", "guest", "customer", "client",
    "agent", "caller", "player", "patient", "contact",
)  # fmt: skip
PLACEHOLDER_DIGITS: Final = 4
_PLACEHOLDER_HEADS: Final = frozenset(
    (*PLACEHOLDER_WORDS, *(f"{word} " for word in PLACEHOLDER_WORDS))
)


def placeholder_label(name: str) -> bool:
    """Whether a speaker prefix is a placeholder and a number (``PLACEHOLDER_WORDS``):
    ASCII, its digits stripped from the right leaving one of the words, with or without
    a space after it, as a store's SQL reads it (``rtrim``)."""
    head = name.rstrip("0123456789")
    digits = len(name) - len(head)
    return (
        0 < digits <= PLACEHOLDER_DIGITS and name.isascii() and head.lower() in _PLACEHOLDER_HEADS
    )


def without_phone_label(text: str) -> str:
    """``text`` past its speaker when the speaker is a phone number (``PHONE_LABEL``):
    what a turn's vector embeds. A name is kept (a question says it: "What did Maya
    say?"); a number's digits mean nothing a static embedding can use, and in a chat of
    unsaved contacts they drew every turn of one number towards each other. LoCoMo with
    its speakers labelled by phone numbers: 0.693 / 0.842 / 0.701 with the numbers
    embedded, 0.724 / 0.853 / 0.726 without (2,000 / 8,000 bytes / classic)."""
    colon = text.find(": ", 0, MAX_SPEAKER_CHARS + 2)
    return text[colon + 2 :] if colon > 0 and phone_label(text[:colon]) else text


def _label_sql(dialect: str) -> str:
    """:func:`opens_with_speaker` in a store's SQL over a text column ``{text}``."""
    heads = ", ".join(f"'{head}'" for head in sorted(_PLACEHOLDER_HEADS))
    words = "|".join(PLACEHOLDER_WORDS)
    number = "[0-9]" + "[0-9]?" * (PLACEHOLDER_DIGITS - 1)  # no braces: stores format it
    if dialect == "sqlite":
        label = "substr({text}, 1, instr({text}, ': ') - 1)"
        digits = label
        for digit in "0123456789":
            digits = f"replace({digits}, '{digit}', '')"
        return (
            f"(instr({{text}}, ': ') BETWEEN 2 AND {MAX_SPEAKER_CHARS + 1} AND (("
            f"{label} NOT GLOB '*[0-9]*'"
            f" AND length({label}) - length(replace({label}, ' ', '')) <= {MAX_SPEAKER_WORDS - 1})"
            f" OR ({label} GLOB '+[0-9]*[0-9]' AND substr({label}, 2) NOT GLOB '*[^0-9 ()-]*'"
            f" AND length({label}) - length({digits}) >= {PHONE_DIGITS})"
            f" OR ({label} GLOB '[A-Za-z]*' AND {label} NOT GLOB '*[^A-Za-z0-9_.-]*'"
            f" AND {label} GLOB '*[0-9]*' AND length(replace(replace(replace({digits},"
            f" '_', ''), '.', ''), '-', '')) >= {HANDLE_LETTERS})"
            f" OR (lower(rtrim({label}, '0123456789')) IN ({heads})"
            f" AND length({label}) - length(rtrim({label}, '0123456789'))"
            f" BETWEEN 1 AND {PLACEHOLDER_DIGITS})))"
        )
    label = "LEFT({text}, LOCATE(': ', {text}) - 1)"
    return (
        f"(LOCATE(': ', {{text}}) BETWEEN 2 AND {MAX_SPEAKER_CHARS + 1} AND (("
        f"{label} NOT REGEXP '[0-9]'"
        f" AND CHAR_LENGTH({label}) - CHAR_LENGTH(REPLACE({label}, ' ', ''))"
        f" <= {MAX_SPEAKER_WORDS - 1})"
        f" OR ({label} REGEXP '^[+][0-9][0-9 ()-]*[0-9]$'"
        f" AND CHAR_LENGTH(REGEXP_REPLACE({label}, '[^0-9]', '')) >= {PHONE_DIGITS})"
        f" OR ({label} REGEXP '^[A-Za-z][A-Za-z0-9_.-]*$' AND {label} REGEXP '[0-9]'"
        f" AND CHAR_LENGTH(REGEXP_REPLACE({label}, '[^A-Za-z]', '')) >= {HANDLE_LETTERS})"
        f" OR LOWER({label}) REGEXP '^({words}) ?{number}$'))"
    )


#: How a store's query tells a conversation turn without a thread (:func:`opens_with_speaker`).
#: SQLite and MySQL spell the same rule over a text column ``{text}``: the first ": " at
#: character 2 to ``MAX_SPEAKER_CHARS + 1`` (1-based), and before it no ASCII digit and
#: at most two spaces, a phone number (``PHONE_LABEL``), a user name (``HANDLE_LABEL``)
#: or a placeholder and a number (``PLACEHOLDER_WORDS``).
TURN_SQL: Final = {"sqlite": _label_sql("sqlite"), "mysql": _label_sql("mysql")}


#: Turns of a conversation kept without threads more than this many seconds apart are
#: not neighbours: a chat falls silent between its conversations, and a scope of notes
#: with a remark said now and then is no conversation (a day).
TIMELINE_GAP: Final = 86_400.0


def opens_with_speaker(text: str | None) -> bool:
    """Whether a text is a conversation turn by its form: it opens with a name of at
    most three words and ``MAX_SPEAKER_CHARS`` characters, no digit in it, or with a
    phone number (``PHONE_LABEL``), a user name (``HANDLE_LABEL``) or a placeholder and
    a number (``"User 2"``: :func:`placeholder_label`), then ": "
    (``"Maya: we got a kitten"``, ``"+44 7700 900123: see you"``, ``"kate_92: hi"``).
    A turn written without a thread is in its scope's conversation, read in time
    order (a store's neighbours: the turns without a thread said within
    ``TIMELINE_GAP`` of it, or undated as it is); a store's query applies the same rule
    (``TURN_SQL``), so the rule is this plain one rather than
    :func:`speaker_terms`'s analysis."""
    if not text:
        return False
    colon = text.find(": ")
    if not 0 < colon <= MAX_SPEAKER_CHARS:
        return False
    name = text[:colon]
    if name.count(" ") <= MAX_SPEAKER_WORDS - 1 and not any("0" <= c <= "9" for c in name):
        return True
    return phone_label(name) or handle_label(name) or placeholder_label(name)


def said_by(speaker: frozenset[str], terms: frozenset[str], names: frozenset[str]) -> bool:
    """Whether a turn whose speaker's name analyses to ``speaker`` (:func:`speaker_terms`)
    was said by a person a query names: one of the query's ``terms`` is a term of the
    speaker's name, or one of the proper names it says (``names``, analysed) is a
    short form of one, or one a short form of it: the start of the other, at least
    ``MIN_SHORT_NAME`` letters ("Cal" asked of a chat where Calvin speaks, "Katherine"
    of one where Kath does). A chat labels people as its app knows them, and a question
    says the name its asker uses."""
    if speaker & terms:
        return True
    return any(_short_for(name, said) for name in names for said in speaker)


def said_past_speaker(text: str) -> str:
    """What a conversation turn says after its speaker's name and colon (the whole
    ``text`` of one that opens with no name within ``MAX_SPEAKER_CHARS``)."""
    return text[text.find(":", 0, MAX_SPEAKER_CHARS + 1) + 1 :]


#: Where a turn calls someone by name: at the start of a sentence with a comma or an
#: exclamation after it ("Mel, guess what"), after a greeting or a thanks ("Hey Kate",
#: "Thanks, Caroline!"), or at a sentence's end after a comma ("That's great, Jon!").
_CALLED: Final = tuple(
    re.compile(pattern, re.IGNORECASE)
    for pattern in (
        r"(?:^|[.!?]\s+)([^\W\d_]+)\s*[,!]",
        r"\b(?:hey|hi|hiya|heya|hello|thanks|thank\s+you|thx|congrats|congratulations"
        r"|morning|night|bye|sorry|dear|yo|aw+|oh|wow|omg)[,!]?\s+([^\W\d_]+)",
        r",\s*([^\W\d_]+)\s*(?:[.!?]|$)",
    )
)
#: Texts whose names called (:func:`called_names`) are kept: the turns a prepare reads.
CALLED_KEPT: Final = 8192
_CALLS: dict[str, frozenset[str]] = text_memo()


def called_names(text: str | None) -> frozenset[str]:
    """The analysed words a conversation turn calls someone by, past its speaker's name
    (``"Mel: Hey Caroline! Thanks, babe."``: caroline, babe): in a chat of two, the
    other person's name, nickname or endearment. Kept by text. Any word in those places
    is taken ("Wow, that's great!" gives wow): a caller asks whether a name it knows is
    among them. A turn that says nothing calls nobody: a phone's reaction quoting the
    other's message ("Loved “Thanks, Kate!”") repeats their call, it is not its own."""
    if not text or not speaker_terms(text):
        return _NOBODY
    found = _CALLS.get(text)  # the common case, without a call
    return remembered(_CALLS, text, _called, CALLED_KEPT) if found is None else found


def _called(text: str) -> frozenset[str]:
    if says_nothing(text):  # a reaction quoting the other's "Thanks, Kate!" calls nobody
        return _NOBODY
    said = said_past_speaker(text).strip()
    return frozenset(
        term for pattern in _CALLED for word in pattern.findall(said) for term in analyse(word)
    )


#: The fewest turns read that call someone by a name the query says, for
#: :func:`called_by_name` to take the name for one of the people read.
MIN_CALLS: Final = 2
_NO_ONE: Final[frozenset[frozenset[str]]] = frozenset()


def called_by_name(
    speakers: Sequence[frozenset[str]],
    texts: Sequence[str | None],
    places: Sequence[tuple[str | None, datetime | None]],
    names: frozenset[str],
) -> frozenset[frozenset[str]]:
    """Whom the query's ``names`` (analysed) call, of the names no speaker's label says
    (:func:`said_by`), among the turns read (their ``speakers`` by :func:`speaker_terms`,
    ``texts``, and ``places``: each turn's thread and time; its thread, or the day it
    was said when it has none, is a chat's conversation at a time). A chat export labels
    people as the phone knows them ("Katherine Smith", a phone number) while a question
    says what the asker calls them ("Kate"), and people call each other by that name
    (:func:`called_names`), never themselves. So for each such name called at least
    ``MIN_CALLS`` times: in a chat of two, the one of the two who never calls it; with
    more people, the one person who never calls it among those read in the
    conversations where it is called (none without a thread or a time). Nobody when
    both of two, or all but none or several, call it: a pet or a friend everyone speaks
    of is nobody's label."""
    people = {speaker for speaker in speakers if speaker}
    if len(people) < 2:
        return _NO_ONE
    unnamed = unlabelled(people, names)
    if not unnamed:
        return _NO_ONE
    calls: dict[str, dict[frozenset[str], int]] = {name: {} for name in unnamed}
    where: dict[str, set[str | None]] = {name: set() for name in unnamed}
    many = len(people) > 2  # where a name is called matters only then
    for speaker, text, place in zip(speakers, texts, places, strict=True):
        if speaker and (said := called_names(text)):
            for name in said.intersection(unnamed):
                calls[name][speaker] = calls[name].get(speaker, 0) + 1
                if many:
                    where[name].add(_conversation(*place))
    called = set()
    for name, by in calls.items():
        if sum(by.values()) < MIN_CALLS:
            continue
        among = people
        if many:
            here = where[name] - {None}
            among = {
                who
                for who, place in zip(speakers, places, strict=True)
                if who and _conversation(*place) in here
            }
        left = among - by.keys()
        if len(left) == 1:
            called.update(left)
    return frozenset(called)


def unlabelled(speakers: Iterable[frozenset[str]], names: Iterable[str]) -> list[str]:
    """The ``names`` (analysed) no label of the ``speakers`` (by :func:`speaker_terms`)
    says (:func:`said_by`): those :func:`called_by_name` and :func:`nicknamed` look
    for. A caller that finds none need not gather what those read."""
    people = tuple(speaker for speaker in speakers if speaker)
    return [
        name
        for name in names
        if not any(said_by(person, frozenset((name,)), frozenset((name,))) for person in people)
    ]


def nicknamed(
    speakers: Sequence[frozenset[str]], names: frozenset[str]
) -> dict[str, frozenset[str]]:
    """Each of the query's ``names`` (analysed) that no label of the read turns' people
    says (their ``speakers``, by :func:`speaker_terms`), to the one person whose label
    holds a nickname of it or a name it is one of (:func:`nicknames_of`: "Jim" asked of
    a chat where James speaks), or, for a name of two letters the table knows (which
    :func:`said_by` leaves: "Jo", "Al", "Ed"), a name it starts ("Jo" for Jolene; not
    "Ca" for Cal: two letters the table does not know start too many words). A store
    respells such a name when a participant's share of its scope holds the other
    (:func:`name_variant`); among many people each holds less, and the read turns'
    labels still tell. None for a name two people's labels are so related to ("Jo"
    where Joanna and Jolene speak). A name that is also someone the chat only speaks of
    (a friend Jack, in John's chat) is taken for the participant all the same: the turns
    that say it are still the full text's best hits."""
    found: dict[str, frozenset[str]] = {}
    people = None
    for name in names:
        related = nicknames_of(name)
        if not related:  # a two-letter word the table knows is someone's nickname
            continue
        started = len(name) < MIN_SHORT_NAME  # which said_by leaves
        if people is None:
            people = {speaker for speaker in speakers if speaker}
        known = [
            person
            for person in people
            if not person.isdisjoint(related)
            or (started and any(said.startswith(name) for said in person))
        ]
        if len(known) == 1 and unlabelled(people, (name,)):
            found[name] = known[0]
    return found


def answered(
    speakers: Sequence[frozenset[str]], names: Sequence[str], *, apart: bool = False
) -> tuple[str, ...]:
    """The ``names`` (analysed proper names a scope never holds) that a person of the read
    turns answers to (their ``speakers``, by :func:`speaker_terms`): a short form of a
    name in their label (:func:`said_by`: "Mel" beside Melanie's turns), or a nickname
    related to one person's label only (:func:`nicknamed`: "Bob" beside Robert's).
    Among many people a store respells none of them (no name's share is a
    participant's), so only the turns read tell that such a question is about someone
    the scope holds.

    And the one given name the question says (:func:`given_name`), or as many as people
    were read when it says them ``apart`` ("What do Jon and Gina both like?"), may be
    someone read: a chat labels people as its app knows them, by a phone number ("+44
    7700 900111", as a messaging app labels whoever is not a saved contact), a
    placeholder ("User 2"), "Me", or a name the asker never uses (a contact saved as
    "Mom"), and people texting rarely call each other by name; or someone the chat
    talks of without naming. A question about a person is no sign that it asks about
    something the scope never mentions: its other words judge that. Two names side by
    side are someone else ("Mona Lisa"), and so is a place beside ("What does Caroline
    think the capital of Mongolia is?"); a given name that is a place too is taken for
    a person ("Georgia")."""
    people = {speaker for speaker in speakers if speaker}
    if (
        people
        and names
        and all(map(given_name, names))
        and (len(names) == 1 or (apart and len(names) <= len(people)))
    ):
        return tuple(names)
    return tuple(
        name
        for name in names
        if any(said_by(person, _NOBODY, frozenset((name,))) for person in people)
        or nicknamed(speakers, frozenset((name,)))
    )


def _conversation(thread: str | None, said_at: datetime | None) -> str | None:
    """The conversation a turn is part of, for :func:`called_by_name`: its thread, or the
    day it was said (UTC) when it has none."""
    if thread is not None:
        return thread
    return None if said_at is None else said_at.astimezone(UTC).date().isoformat()


def asks_question(text: str | None) -> bool:
    """Whether a conversation turn asks a question: its text ends with a question mark.
    A chat's questions echo a topic's words; its answers hold the facts."""
    return bool(text) and text.rstrip().endswith("?")  # type: ignore[union-attr]


#: What a chat says when it says nothing: acknowledgements, laughter, greetings,
#: one-word reactions and what chats abbreviate them to ("brb", "hbu", "tysm"). With
#: function words, all a turn that says nothing holds. Typed longer ("yess", "okk",
#: "hahahah") they are fillers all the same (:func:`chat_filler`).
CHAT_FILLERS: Final = frozenset(
    """
    absolutely agreed ah aha aight alright alrite aw awesome aww brb bruh bye cheers
    congrats congratulations cool cya damn dang deal definitely dude eek exactly gm gn
    good gosh gotcha great ha hah haha hahaha hbu heh hehe hello hey hi hiya hm hmm huh
    idk ikr indeed jeez k kk lmao lmfao lmk lol nah nice np nvm ofc oh ok okay okey okie
    omg oof oops phew right rofl same smh sorry sounds sure tbh thank thanks thanx thx
    totally true ttyl ty tysm tyvm ugh uh um wbu welcome whoa woah wow xo xoxo xx ya yah
    yay ye yea yeah yeh yep yes yikes yo yup
    """.split()  # noqa: SIM905
)
#: A sound typed as a word, at any length: laughter ("haha", "ahahah", "hehehe",
#: "bahaha", "lolol", "lmaooo", "rofl", "xD"), hesitation and reaction ("hmmm", "mhm",
#: "umm", "ahh", "ohh", "oooh", "awww", "yayyy", "woww", "omgg"). Matched against a
#: whole casefolded word.
_SOUNDS: Final = re.compile(
    r"""
    (?:b|bw|m|mu|mw)?a?(?:h+[aeiou]+){2,}h*
    | l+o+l+(?:o+l+)*z* | l+m+f?a+o+ | r+o+f+l+ | x+d+
    | h+m+ | m+h+m+ | u+[hm]+ | a+h+ | e+h+ | o+h+ | o+o+h* | a+w+ | y+a+y+ | w+o+w+ | o+m+g+
    """,
    re.VERBOSE,
)
#: A letter said more than once in a row ("okk", "yeaah").
_REPEATED: Final = re.compile(r"(\w)\1+")
#: Faces typed with punctuation (":)", ";-P", ":D", "<3", "^_^", "-_-"), taken out of a
#: turn before its words are read: a face's letter ("D", "P") is no word ("xD" is a sound).
_FACES: Final = re.compile(r"(?<!\w)(?:[:;=][-'^o]?[()\[\]dDpPoO/\\|*3]+|<3+|\^_*\^|-_+-)(?!\w)")
#: What is left of a negated auxiliary once its "n't" is split off at the apostrophe
#: ("didn't" -> "didn", "t"): function words all the same.
_NEGATED_AUXILIARIES: Final = frozenset(
    """
    ain aren couldn didn doesn don hadn hasn haven isn mustn shan shouldn wasn weren won
    wouldn
    """.split()  # noqa: SIM905
)
#: The longest turn (past its speaker's name) :func:`says_nothing` reads: a longer one
#: says something ("Haha yeah, same here, thanks so much!" is 37 characters).
MAX_FILLER_CHARS: Final = 64
#: The longest text :func:`says_nothing` reads (a name, ": " and a filler's length): a
#: longer one says something, and a store's query passes it by unread, unless it holds
#: one of :data:`MARKED_BY` (a link, a quotation), read up to ``LONGEST_MARKED_TEXT``.
LONGEST_FILLER_TEXT: Final = MAX_SPEAKER_CHARS + 2 + MAX_FILLER_CHARS
#: The longest text holding a link or a quotation that :func:`says_nothing` reads: a
#: shared link is often longer than a filler ("https://open.spotify.com/track/...?si=..."
#: is 74 characters), a reaction quotes the whole message it reacts to, and neither
#: says anything by itself.
LONGEST_MARKED_TEXT: Final = 1024
#: What every link (``://``, ``www.``) or reaction's quotation (a quotation mark) holds: a
#: text longer than a filler holding none of these says something (a store's query
#: looks for them as these strings).
MARKED_BY: Final = ("://", "www.", "\u201c", '"')
#: How a store's query tells a text :func:`says_nothing` may hold true for, without
#: reading it (a longer one says something): at most ``LONGEST_FILLER_TEXT`` characters,
#: or ``LONGEST_MARKED_TEXT`` when it holds one of ``MARKED_BY``. SQLite and MySQL spell
#: it over a text column ``{text}``, as :data:`TURN_SQL` spells a turn.
MAY_SAY_NOTHING_SQL: Final = {
    dialect: (
        f"({length}({{text}}) <= {LONGEST_FILLER_TEXT} OR ({length}({{text}})"
        f" <= {LONGEST_MARKED_TEXT} AND ("
        + " OR ".join(find.format(mark=mark) for mark in MARKED_BY)
        + ")))"
    )
    for dialect, length, find in (
        ("sqlite", "length", "instr({{text}}, '{mark}') > 0"),
        ("mysql", "CHAR_LENGTH", "LOCATE('{mark}', {{text}}) > 0"),
    )
}
#: A link, to its first space: taken out of a turn before its length and words are read.
_LINKS: Final = re.compile(r"(?:[a-z][a-z0-9+.-]*://|www\.)\S*", re.IGNORECASE)
#: A reaction a messaging app writes as a message of its own, quoting the message it
#: reacts to (an iPhone's to a phone without iMessage, "Loved “I got the job!”"; Android's
#: Google Messages, "Reacted 😂 to “...”"); matched against the whole of a turn past its
#: speaker's name, casefolded.
_REACTION: Final = re.compile(
    r"""
    (?:loved|liked|disliked|laughed\ at|emphasi[sz]ed|questioned
       |reacted\ \S{1,8}\ to|removed\ an?\ \S{1,12}\ from)
    \ [“"].*["”]
    """,
    re.VERBOSE | re.DOTALL,
)
#: A word, split at an apostrophe as the analysis splits clitics ("what's" -> "what", "s").
_WORD: Final = re.compile(r"[^\W_]+")
#: What a messaging app writes where a message was (an English export's spellings): a
#: photo or a file not exported ("<Media omitted>", "image omitted", "<attached:
#: 00000031-PHOTO-2024-03-01.jpg>") or exported beside the chat ("IMG-20240301-WA0001.jpg
#: (file attached)"), a location's link once taken out ("location: https://..."), a
#: message not yet decrypted ("Waiting for this message"), a message deleted or taken
#: back, a call missed, a view-once message ("null"). Matched against the whole of a turn
#: past its speaker's name, casefolded, with the direction marks some exports put before
#: it.
APP_PLACEHOLDER: Final = re.compile(
    r"""
    <?\s*(?:media|image|photo|video|audio|voice\ message|sticker|gif|document
          |contact\ card|video\ note|view\ once\ \w+(?:\ \w+)?)\ omitted\s*>?
    | <attached:[^>]*>
    | [\w-]+\.\w{2,5}\ \(file\ attached\)
    | (?:live\ )?location:
    | waiting\ for\ this\ message(?:\.\ this\ may\ take\ a\ while)?\.?
    | this\ message\ was\ deleted\.? | you\ deleted\ this\ message\.?
    | missed\ (?:group\ )?(?:voice|video)\ call(?:,.*)?
    | (?:you\ )?unsent\ a\ message\.?
    | null
    """,
    re.VERBOSE,
)
#: The direction marks an export puts before a placeholder (iOS: U+200E).
_MARKS: Final = "\u200e\u200f\ufeff \t"


def says_nothing(text: str | None) -> bool:
    """Whether a conversation turn says nothing a question could ask about: past its
    speaker's name, every word is a function word or a chat filler (:func:`chat_filler`:
    "lol", "hahahah", "okk"), as the chat spells them ("sooo", "u": ``standard_word``),
    or it holds no word at all ("Ana: Thanks!", an emoji, a face typed ":D"), or it is
    what a messaging app writes where a message was (``APP_PLACEHOLDER``: "Ana: <Media
    omitted>", "Ben: This message was deleted"). A chat of short messages holds many;
    placed beside a hit they would take a small pack's room. So does a link shared with
    nothing more ("Ana: https://youtu.be/...", "Ben: lol https://..."): its words are an
    address, and its odd ones would rate it rare; and a reaction an app writes as a
    message (``_REACTION``: "Ben: Loved “I got the job!”"), which repeats the message
    it reacts to under another speaker. A turn longer than ``MAX_FILLER_CHARS`` once its
    links are taken out is taken to say something, and so, unread, is a text longer than
    ``LONGEST_FILLER_TEXT`` holding none of ``MARKED_BY`` or ``LONGEST_MARKED_TEXT``
    holding one."""
    if not text:
        return True
    marked = any(mark in text for mark in MARKED_BY)
    if len(text) > (LONGEST_MARKED_TEXT if marked else LONGEST_FILLER_TEXT):
        return False  # past any name, still longer than a filler: most turns
    colon = text.find(": ", 0, MAX_SPEAKER_CHARS + 2)
    body = text if colon < 0 else text[colon + 2 :]
    if marked:
        if _REACTION.fullmatch(body.strip(_MARKS).casefold()):
            return True
        body = _LINKS.sub(" ", body)
    if len(body) > MAX_FILLER_CHARS:
        return False
    if APP_PLACEHOLDER.fullmatch(body.strip(_MARKS).casefold()):
        return True
    return all(  # stops at the first word that says something
        function_word(word) or word in _NEGATED_AUXILIARIES or chat_filler(word)
        for word in (
            standard_word(found.group().casefold())
            for found in _WORD.finditer(_FACES.sub(" ", body))
        )
    )


def chat_filler(word: str) -> bool:
    """Whether a casefolded word (as ``standard_word`` spells it) is a chat's filler: one
    of ``CHAT_FILLERS``, also typed with a letter said twice or more ("yess", "okk",
    "helloo", "okaay"), or a sound typed at any length (``_SOUNDS``: "hahahah", "lolol",
    "hmmm"). A word the list holds only once its letters are doubled is no filler: the
    letters are undoubled, never doubled."""
    if word in CHAT_FILLERS:
        return True
    if _REPEATED.search(word) is not None:
        last = word[-1]
        if word.rstrip(last) + last in CHAT_FILLERS or _REPEATED.sub(r"\1", word) in CHAT_FILLERS:
            return True
    return _SOUNDS.fullmatch(word) is not None


def passed_over(text: str | None) -> bool:
    """Whether a read of a record's thread neighbours passes it over: it has a text, and
    the text says nothing (:func:`says_nothing`: "Ben: lol", "Ana: <Media omitted>").
    Beside a hit such a turn is no context of it, and in a chat of short messages it
    would stand between a question and its answer; the turn said after it is the hit's
    neighbour instead. A record without a text (a resource's abstract) is not passed."""
    return bool(text) and says_nothing(text)


#: A term a scope holds is taken for a name its question spells otherwise only when at
#: least this share of the scope's records hold it: a participant of the chat, whose
#: name opens their turns. Everyday words start names too ("start" for "Star Wars",
#: "new" for "Newton"), and a chat says them in fewer of its turns.
SPEAKER_SHARE: Final = 0.1
#: How alike two names that start or sound the same must be spelled (difflib's ratio:
#: twice the letters they share in order over both lengths): "nate" and "nathan" 0.6,
#: "gina" and "geena" 0.67; "ottoman" and "ottili" 0.46, "newton" and "nathan" (one
#: Soundex code) 0.5.
ALIKE: Final = 0.6
#: The fewest records holding a term taken for a name spelled otherwise, however small
#: the scope: in a handful of records a word said three times is no one's name.
MIN_VARIANT_HOLDERS: Final = 4


def variant_floor(rows: int) -> int:
    """The fewest records of a scope of ``rows`` that hold a term taken for another
    spelling of a question's name (``SPEAKER_SHARE``; ``MIN_VARIANT_HOLDERS`` at
    least)."""
    return max(MIN_VARIANT_HOLDERS, math.ceil(SPEAKER_SHARE * rows))


def name_variant(name: str, held: Mapping[str, int], rows: int) -> str | None:
    """How a scope of ``rows`` records spells ``name``, an analysed proper name of a
    question that none of its records holds, given ``held``: terms the scope holds that
    start with the name's first letter or a related name's (``PoolRequest.name_starts``),
    and how many of its records hold each. Of those held by at least ``SPEAKER_SHARE``
    of the records, the first found of, in this order: a nickname of the name or a name
    it is one of (:func:`nicknames_of`: "robert" for "bob"; the only kind a name of two
    letters may find, "joanna" for "jo"); a term the name starts ("melani" for "mel"); a
    term that starts the name ("john" for "johnni"); one spelled alike (``ALIKE``) that
    starts with the same ``MIN_SHORT_NAME`` letters ("nate" for "nathan") or sounds the
    same (:func:`sounds_like`: "gina" for "geena"). The most held of its kind; None
    when there is none: a name the scope never says.

    A question says the name its asker uses; a chat labels people as its app knows
    them. Read as unheld, such a name would make the question look like one about
    someone else (``Pool.unheld_names``)."""
    related = nicknames_of(name)
    spelled = len(name) >= MIN_SHORT_NAME  # two letters start too many words
    if not spelled and not related:
        return None
    least = variant_floor(rows)
    found: list[tuple[int, int, str]] = []
    for term, count in held.items():
        if count < least or term == name:
            continue
        if term in related:
            found.append((0, -count, term))
        elif not spelled:
            continue
        elif term.startswith(name):
            found.append((1, -count, term))
        elif name.startswith(term) and len(term) >= MIN_SHORT_NAME:
            found.append((2, -count, term))
        elif _spelled_alike(name, term) and (
            term.startswith(name[:MIN_SHORT_NAME]) or sounds_like(term) == sounds_like(name)
        ):
            found.append((3, -count, term))
    return min(found)[2] if found else None


def nicknames_of(name: str) -> frozenset[str]:
    """The names a table of English nicknames relates to ``name``, all analysed: its
    nicknames and the names it is a nickname of ("jim" for "jame", as James analyses;
    "robert", "rob" and "bert" for "bob"). A chat labels Robert as his phone knows him,
    a question says Bob; nothing in their spelling says so. The table is the
    ``nicknames`` package's (Apache-2.0), read once a process (``warm_up``)."""
    return _nickname_table().get(name, _NOBODY)


def given_name(name: str) -> bool:
    """Whether ``name`` (analysed, as a query's names are) is a person's given name as
    the nickname table knows them: a name or a nickname of one ("carolin" as Caroline
    analyses, "bob"; not "mongolia"). A question naming a person a chat never names
    may still be about one of its people (:func:`answered`): the chat labels them as
    its app knows them, by a phone number, and people texting rarely call each other
    by name."""
    return name in _nickname_table()


@functools.cache
def _nickname_table() -> dict[str, frozenset[str]]:
    import nicknames

    related: defaultdict[str, set[str]] = defaultdict(set)
    for canonical, relation, nickname in nicknames.name_triplets():
        if relation != "has_nickname":
            continue
        one, other = _one_term(canonical), _one_term(nickname)
        if one and other and one != other:
            related[one].add(other)
            related[other].add(one)
    return {name: frozenset(names) for name, names in related.items()}


def _one_term(name: str) -> str | None:
    """A name's single analysed term; None for one that analyses to none ("will", a
    function word) or to several ("k.c.")."""
    terms = analyse(name)
    return terms[0] if len(terms) == 1 else None


def warm_up() -> None:
    """Read what a prepare's analysis and its names' spellings read once a process (the
    lemmatiser's table, about 0.3 s; the nicknames', some 20 ms) now. Blocking:
    ``open_runtime`` calls it in a worker thread."""
    analysis_warm_up()
    _nickname_table()


def _spelled_alike(one: str, other: str) -> bool:
    return difflib.SequenceMatcher(None, one, other).ratio() >= ALIKE


#: Soundex's digit for each consonant that sounds alike (vowels, h, w and y have none).
_SOUNDEX: Final = {
    letter: digit
    for digit, letters in enumerate(("bfpv", "cgjkqsxz", "dt", "l", "mn", "r"), start=1)
    for letter in letters
}


def sounds_like(word: str) -> str:
    """The American Soundex code of ``word`` (``"robert"`` -> ``"R163"``): its first
    letter and the digits of the next three consonant sounds, so that names spelled
    differently and said the same share it ("geena", "gina"). Letters outside a-z are
    passed over."""
    letters = [c for c in word.casefold() if "a" <= c <= "z"]
    if not letters:
        return ""
    digits = []
    last = _SOUNDEX.get(letters[0], 0)
    for letter in letters[1:]:
        digit = _SOUNDEX.get(letter, 0)
        if digit and digit != last:
            digits.append(str(digit))
            if len(digits) == 3:
                break
        if letter not in "hw":  # h and w do not part two letters of the same sound
            last = digit
    return (letters[0].upper() + "".join(digits)).ljust(4, "0")


def _short_for(one: str, other: str) -> bool:
    shorter, longer = (one, other) if len(one) <= len(other) else (other, one)
    return len(shorter) >= MIN_SHORT_NAME and longer.startswith(shorter)
