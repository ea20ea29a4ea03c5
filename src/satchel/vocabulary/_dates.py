"""Dates a query names, and the time windows they select. Pure: no I/O, no clock.

"When" questions about conversations name dates that live in when a memory was
recorded, not in its text: "What did Alice do on 7 May 2023?" is answered by "I went to
a pottery class yesterday!" said on 8 May. :func:`extract_dates` finds the dates and
ranges a query names; :meth:`DateMention.window` turns one into a UTC window, resolving
relative phrases ("yesterday", "last week", "three days ago", "last Friday") against a
reference day: the scope's newest entry, since a conversation's "now" is its last turn.
Every window is widened by a day on each side, so "yesterday" said the next day and
"tomorrow" said the day before still fall in.

Hand-written patterns, not a date library: a query naming no date must cost nothing
(one regular-expression search), and general parsers guess dates in ordinary words
("may", "march", "second") that a recall channel must not act on.
"""

from __future__ import annotations

import calendar
import itertools
import re
from datetime import UTC, date, datetime, timedelta
from typing import TYPE_CHECKING, Final, Literal

import attrs

from ._memo import remembered, text_memo
from ._turns import let_loop_in, pieces

if TYPE_CHECKING:
    from collections.abc import Iterator

Unit = Literal["day", "week", "month", "year"]

MONTHS: Final = {
    name.lower(): number
    for number in range(1, 13)
    for name in (calendar.month_name[number], calendar.month_abbr[number])
} | {"sept": 9}
WEEKDAYS: Final = {calendar.day_name[number].lower(): number for number in range(7)}
NUMBERS: Final = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "couple of": 2, "few": 3,
}  # fmt: skip
MARGIN: Final = timedelta(days=1)
#: The longest span a memory's own text may name and still date it: "last year".
MENTION_SPAN: Final = timedelta(days=366)
#: The widest span a memory's text names that any window counts it in: a span wider
#: than this belongs only to windows at least as wide ("last month" to a question about
#: that month, not to one about a day of it).
NARROW_SPAN: Final = timedelta(days=7)

_MONTH = r"(?P<month>" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>(?:19|20)\d\d)"
_AMOUNT = r"(?P<amount>\d{1,3}|" + "|".join(sorted(NUMBERS, key=len, reverse=True)) + ")"
_UNIT = r"(?P<unit>day|week|month|year)s?"
_NO_DATE = r"(?!,?\s+(?:of\s+)?\d)"
_WEEKDAY = r"(?P<weekday>" + "|".join(WEEKDAYS) + r")"

#: One alternative per way of naming a date, tried left to right at each position; each
#: starts at a word boundary.
_PATTERNS: Final = {
    "iso": rf"\b{_YEAR}-(?P<mon>[01]\d)-(?P<day>[0-3]\d)\b",
    "month_day_year": rf"\b{_MONTH}\s+{_DAY},?\s+{_YEAR}\b",
    "day_month_year": rf"\b{_DAY}\s+(?:of\s+)?{_MONTH},?\s+{_YEAR}\b",
    "month_year": rf"\b{_MONTH},?\s+(?:of\s+)?{_YEAR}\b",
    "month_day": rf"\b{_MONTH}\s+{_DAY}\b(?!\s*(?:,\s*)?\d)",
    "day_month": rf"\b{_DAY}\s+(?:of\s+)?{_MONTH}\b",
    "in_month": rf"\b(?:in|during|since|early|late|mid|last|this)[\s-]+{_MONTH}\b{_NO_DATE}",
    "in_year": rf"\b(?:in|during|since|of|year)\s+{_YEAR}\b",
    "ago": rf"\b{_AMOUNT}\s+{_UNIT}\s+(?:ago|back|earlier)\b",
    "weekday": rf"\b(?P<which>last|this|on|past)\s+{_WEEKDAY}\b",
    "last_unit": (
        r"\b(?P<which>last|past|previous|this|next)\s+(?P<unit>week|month|year|weekend)\b"
    ),
    "day_before": r"\bthe\s+day\s+before\s+yesterday\b",
    "yesterday": (
        r"\b(?P<word>yesterday|today|tonight|tomorrow|this\s+(?:morning|afternoon|evening))\b"
    ),
}
#: The alternatives of :data:`_PATTERNS` behind the one word boundary they all start
#: with: at a position inside a word (most of a text) the scanner fails at once, where
#: it tried every alternative's own boundary in turn (110 against 72 us a turn that
#: may name a date; the same matches).
_BOUNDARY: Final = r"\b"
_SCANNER: Final = re.compile(
    _BOUNDARY
    + "(?:"
    + "|".join(
        f"(?P<_{name}>{pattern.removeprefix(_BOUNDARY).replace('(?P<', f'(?P<{name}_')})"
        for name, pattern in _PATTERNS.items()
    )
    + ")",
    re.IGNORECASE,
)
#: The cheap test that lets a text naming no date skip the scanner (:func:`may_name_a_date`):
#: what the scanner's every way of naming a date needs, one of them at least.
_DATE_PARTS: Final = ("yesterday", "today", "tonight", "tomorrow", "previous")
_DATE_WORDS: Final = frozenset({"ago", *MONTHS, *WEEKDAYS})
#: "this", "last", "next" and "past" name a date only before one of :data:`_SPANS`
#: (or a month or a weekday, which name one themselves): "last week", "this morning";
#: "back" and "earlier" only after a unit: "a few years back".
_RELATIVE: Final = frozenset({"this", "last", "next", "past"})
_SPANS: Final = frozenset({"week", "weekend", "month", "year", "morning", "afternoon", "evening"})
_UNITS: Final = frozenset({"day", "days", "week", "weeks", "month", "months", "year", "years"})
_BEFORE: Final = frozenset({"back", "earlier"})
_DIGIT: Final = re.compile(r"\d")
_LETTERS: Final = re.compile(r"[^\W\d_]+")
#: What case folding leaves apart that the scanner's ``IGNORECASE`` takes for "i".
_DOTTED_I: Final = str.maketrans({"\u0131": "i", "\u0307": None})


def may_name_a_date(text: str) -> bool:
    """False when ``text`` cannot name a date the scanner finds: no digit, none of
    :data:`_DATE_PARTS`, no month, weekday or "ago" as a word, no "this", "last",
    "next" or "past" before a span of time and no unit before "back" or "earlier", in
    any case. Nine chat turns in ten, at a few microseconds (one alternation of every
    such word took 83 us a turn, every position trying every word; and a turn saying
    "this" or "last" as people do, "this is great", cost the whole scan, 0.6 us a
    character)."""
    if _DIGIT.search(text):
        return True
    folded = text.casefold().translate(_DOTTED_I)
    if any(part in folded for part in _DATE_PARTS):
        return True
    words = _LETTERS.findall(folded)
    if not _DATE_WORDS.isdisjoint(words):
        return True
    return any(
        (word in _RELATIVE and after in _SPANS) or (word in _UNITS and after in _BEFORE)
        for word, after in itertools.pairwise(words)
    )


@attrs.frozen
class DateMention:
    """One date or range a query names.

    Absolute mentions carry ``start``/``end`` (end exclusive); ``month`` and ``day``
    without a year take the reference year. Relative ones carry ``unit`` and ``shift``:
    the calendar ``unit`` shifted by ``shift`` from the reference day's (``weekday``
    set: the most recent such weekday before it).
    """

    phrase: str
    start: date | None = None
    end: date | None = None
    unit: Unit | None = None
    shift: int = 0
    weekday: int | None = None
    month: int | None = None
    day: int | None = None

    @property
    def relative(self) -> bool:
        """Whether the window depends on the reference day."""
        return self.start is None

    def window(
        self, reference: date | None, margin: timedelta = MARGIN
    ) -> tuple[float, float] | None:
        """The UTC window ``[low, high)`` in epoch seconds, ``margin`` each side.

        Returns None for a relative mention without a reference day, and for a window
        that would run past the calendar's ends (year 1 or 9999): it selects nothing.
        """
        try:
            span = self.span(reference)
            if span is None:
                return None
            start, end = span
            low = datetime.combine(start, datetime.min.time(), UTC) - margin
            high = datetime.combine(end, datetime.min.time(), UTC) + margin
            return low.timestamp(), high.timestamp()
        except (OverflowError, ValueError):
            return None

    def span(self, reference: date | None) -> tuple[date, date] | None:
        """The days ``[start, end)`` this mention names, seen from ``reference``."""
        if self.start is not None and self.end is not None:
            return self.start, self.end
        if reference is None:
            return None
        if self.month is not None:
            return _in_reference_year(self.month, self.day, reference)
        if self.weekday is not None:
            back = (reference.weekday() - self.weekday - 1) % 7 + 1
            day = reference - timedelta(days=back)
            return day, day + timedelta(days=1)
        assert self.unit is not None
        return shifted(reference, self.unit, self.shift)


def extract_dates(text: str, *, question: bool = False) -> tuple[DateMention, ...]:
    """Every date or range ``text`` names, in order; empty (and cheap) when none.

    With ``question``, "on Sunday" names no date: asked, a bare weekday is a recurring
    rule or the coming day as often as the last one ("Can I run a load test against
    staging on Sunday?"), so only "last", "this" or "past" make it the last one. Said
    in a memory, "on Sunday" tells of the last Sunday before the day it was said.
    """
    if not may_name_a_date(text):
        return ()
    found: list[DateMention] = []
    for match in _matches(text):
        kind = match.lastgroup
        assert kind is not None
        fields = {
            key.removeprefix(f"{kind[1:]}_"): value
            for key, value in match.groupdict().items()
            if value is not None and key.startswith(f"{kind[1:]}_")
        }
        if question and kind == "_weekday" and fields["which"].lower() == "on":
            continue
        mention = _mention(kind[1:], match.group(0), fields)
        if mention is not None:
            found.append(mention)
    return tuple(found)


#: How far past its piece a date found in a long text may run ("the day before
#: yesterday", "September 30th, 2023" and what the scanner's lookaheads read after them).
_OVERHANG: Final = 128
#: Characters scanned in one go: the scanner reads about 0.6 µs per character, and more
#: where digits abound, holding the GIL throughout.
_SCAN_CHARS: Final = 512


def _matches(text: str) -> Iterator[re.Match[str]]:
    """The scanner's matches in ``text``; a long text is scanned a piece at a time (one
    scan of 1 MB held the GIL for 160 ms), letting a waiting event loop in between.

    Each piece is scanned a little past its end, so a date that straddles the cut is
    found whole; it belongs to the piece where it starts, and the next scan starts
    after it.
    """
    if len(text) <= _SCAN_CHARS:
        yield from _SCANNER.finditer(text)
        return
    resume = 0
    for start, end in pieces(text, _SCAN_CHARS):
        for match in _SCANNER.finditer(text, max(start, resume), end + _OVERHANG):
            if match.start() >= end:
                break
            resume = match.end()
            yield match
        let_loop_in()


def mentioned_days(text: str, said_on: date) -> list[tuple[float, float]]:
    """The days a memory's text names, resolved against the day it was said: "I went to
    a pottery class yesterday!" said on 8 May names 7 May, and "we moved last month"
    said then names April. Spans up to ``MENTION_SPAN`` (a year) are kept; the time
    channel counts one wider than ``NARROW_SPAN`` only for a window at least as wide.

    Returns:
        UTC windows ``[start, end)`` in epoch seconds, without margin.
    """
    found: list[tuple[float, float]] = []
    for mention in extract_dates(text):
        try:
            span = mention.span(said_on)
        except (OverflowError, ValueError):  # past the calendar's ends: names no day
            continue
        if span is not None and span[1] - span[0] <= MENTION_SPAN:
            window = mention.window(said_on, timedelta(0))
            if window is not None:
                found.append(window)
    return found


#: How a question asks for a time: it opens with "when", asks which year, month, day
#: or date, how long ago, or how long something has gone on ("How long has Nate had
#: his turtles?"; not "How long is the hike?").
_ASKS_WHEN: Final = re.compile(
    r"\s*(?:when\b|how\s+long\s+(?:ago|has|have|had|did|does|do|was|were)\b"
    r"|how\s+many\s+(?:years|months|weeks|days)\b"
    r"|(?:(?:in|on|during|by)\s+)?(?:what|which)\s+(?:year|month|day|date|week)\b)",
    re.IGNORECASE,
)


def asks_when(question: str) -> bool:
    """Whether ``question`` asks when something happened: it opens with "when" ("When
    did Ana move?"), asks which year, month, week, day or date ("In which year...?",
    "What date...?"), how long ago, or for how long ("How long have they dated?")."""
    return _ASKS_WHEN.match(question) is not None


def says_when(text: str | None) -> bool:
    """Whether a memory's text says when something happened: it names a date, a month,
    a weekday, or a day relative to when it was said ("yesterday", "last week", "three
    days ago"), as :func:`extract_dates` finds them, or says a time that scanner does
    not place (:data:`_UNDATED`): how long something has gone on ("I've had them for 3
    years now"), a time to come ("next Saturday", "in two weeks") or a season ("last
    summer"). Asked when, a chat's answer is the turn that says so ("I ran a charity
    race last Saturday"), or is dated by it; asked since when, the turn that says for
    how long.
    Remembered per text (``_memo``; the scanner reads a turn in about 100 us)."""
    return bool(text) and remembered(_SAID_WHEN, text, _names_a_time, SAID_WHEN_KEPT)  # type: ignore[arg-type]


def _names_a_time(text: str) -> bool:
    return _says_undated_time(text) or bool(extract_dates(text))


def _says_undated_time(text: str) -> bool:
    """Whether ``text`` says a time the date scanner does not date (:data:`_UNDATED`);
    most turns name no unit of time or season, and a look for one costs a quarter of
    the pattern's search (3.5 against 14 us a turn)."""
    folded = text.lower()
    return any(word in folded for word in _TIME_WORDS) and _UNDATED.search(text) is not None


#: How :data:`_UNDATED` reads an amount, a unit of time and a season.
_AMOUNT_SAID: Final = (
    r"(?:a\s+)?(?:\d{1,3}|" + "|".join(sorted(NUMBERS, key=len, reverse=True)) + r"|several|many)"
)
_SPAN_UNITS: Final = ("minute", "hour", "day", "week", "month", "year", "decade")
_SEASONS: Final = ("spring", "summer", "autumn", "fall", "winter")
_SPAN_SAID: Final = rf"(?:{'|'.join(_SPAN_UNITS)})s?"
_SEASON: Final = rf"(?:{'|'.join(_SEASONS)})"
#: Times a chat says that name no date the scanner can place, yet tell when or for how
#: long: a span something has gone on for ("for (about) three years", "took two weeks",
#: "a month now", "5 years already", "a 90-day retention": how a chat answers since when,
#: "When did Nate get his turtles?": "I've had them for 3 years"), a span to come ("in
#: two weeks", "a few days later"), a coming weekday ("next Saturday"), or a season
#: ("last summer", "over the winter").
_UNDATED: Final = re.compile(
    rf"\b(?:for|took|lasted|spent)\s+"
    rf"(?:(?:about|around|almost|nearly|over|just|only|the\s+(?:past|last))\s+)?"
    rf"{_AMOUNT_SAID}[\s-]+{_SPAN_SAID}\b"
    rf"|\b{_AMOUNT_SAID}[\s-]+{_SPAN_SAID}\s+(?:now|already|so\s+far|later)\b"
    rf"|\b\d{{1,3}}-{_SPAN_SAID}\b|\bin\s+{_AMOUNT_SAID}\s+{_SPAN_SAID}\b"
    rf"|\bnext\s+(?:weekend|{'|'.join(WEEKDAYS)})\b"
    rf"|\b(?:last|this|next|past)\s+{_SEASON}\b|\b(?:in|over|during)\s+the\s+{_SEASON}\b",
    re.IGNORECASE,
)
#: What :data:`_UNDATED` cannot match without: a unit of time or a season.
_TIME_WORDS: Final = (*_SPAN_UNITS, *_SEASONS)


#: Texts :func:`says_when` has read, and what it found.
SAID_WHEN_KEPT: Final = 16_384
_SAID_WHEN: dict[str, bool] = text_memo()


def shifted(reference: date, unit: Unit, shift: int) -> tuple[date, date]:
    """The calendar ``unit`` holding ``reference``, moved by ``shift`` units."""
    if unit == "day":
        day = reference + timedelta(days=shift)
        return day, day + timedelta(days=1)
    if unit == "week":
        monday = reference - timedelta(days=reference.weekday()) + timedelta(weeks=shift)
        return monday, monday + timedelta(weeks=1)
    if unit == "month":
        index = reference.year * 12 + reference.month - 1 + shift
        start = date(index // 12, index % 12 + 1, 1)
        return start, _month_end(start.year, start.month)
    start = date(reference.year + shift, 1, 1)
    return start, date(start.year + 1, 1, 1)


def _mention(kind: str, phrase: str, fields: dict[str, str]) -> DateMention | None:
    try:
        if kind in ("iso", "month_day_year", "day_month_year"):
            month = int(fields["mon"]) if "mon" in fields else MONTHS[fields["month"].lower()]
            day = date(int(fields["year"]), month, int(fields["day"]))
            return DateMention(phrase, start=day, end=day + timedelta(days=1))
        if kind == "month_year":
            year, month = int(fields["year"]), MONTHS[fields["month"].lower()]
            return DateMention(phrase, start=date(year, month, 1), end=_month_end(year, month))
        if kind in ("month_day", "day_month"):
            month, day_of = MONTHS[fields["month"].lower()], int(fields["day"])
            date(2000, month, day_of)  # validates the day (2000 is a leap year)
            return DateMention(phrase, month=month, day=day_of)
        if kind == "in_month":
            return DateMention(phrase, month=MONTHS[fields["month"].lower()])
        if kind == "in_year":
            year = int(fields["year"])
            return DateMention(phrase, start=date(year, 1, 1), end=date(year + 1, 1, 1))
    except ValueError:
        return None  # "February 30, 2023": not a date
    return _relative(kind, phrase, fields)


def _relative(kind: str, phrase: str, fields: dict[str, str]) -> DateMention | None:
    if kind == "ago":
        amount = fields["amount"].lower()
        count = int(amount) if amount.isdigit() else NUMBERS[amount]
        return DateMention(phrase, unit=fields["unit"].lower(), shift=-count)  # type: ignore[arg-type]
    if kind == "weekday":
        return DateMention(phrase, weekday=WEEKDAYS[fields["weekday"].lower()])
    if kind == "last_unit":
        unit, which = fields["unit"].lower(), fields["which"].lower()
        shift = {"this": 0, "next": 1}.get(which, -1)
        if unit == "weekend":
            if shift > 0:
                return None  # the coming weekend: no day said so far
            return DateMention(phrase, weekday=5 if shift else 6)
        return DateMention(phrase, unit=unit, shift=shift)  # type: ignore[arg-type]
    if kind == "day_before":
        return DateMention(phrase, unit="day", shift=-2)
    word = fields["word"].lower()
    shift = {"yesterday": -1, "tomorrow": 1}.get(word, 0)
    return DateMention(phrase, unit="day", shift=shift)


def _in_reference_year(month: int, day: int | None, reference: date) -> tuple[date, date]:
    """A month (or month and day) without a year: its latest occurrence not after the
    reference month, since conversations talk about the past."""
    year = reference.year if month <= reference.month else reference.year - 1
    if day is None:
        return date(year, month, 1), _month_end(year, month)
    if month == 2 and day == 29 and not calendar.isleap(year):
        day = 28
    start = date(year, month, day)
    return start, start + timedelta(days=1)


def _month_end(year: int, month: int) -> date:
    return date(year + month // 12, month % 12 + 1, 1)
