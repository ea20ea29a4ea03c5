"""Date extraction from queries and the windows the time channel searches."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime
from unittest import mock

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from satchel.vocabulary import _dates
from satchel.vocabulary._dates import (
    asks_when,
    extract_dates,
    may_name_a_date,
    mentioned_days,
    says_when,
    shifted,
)

REFERENCE = date(2023, 5, 10)  # a Wednesday


def days(mention_window: tuple[float, float] | None) -> tuple[date, date]:
    assert mention_window is not None
    low, high = mention_window
    return (
        datetime.fromtimestamp(low, UTC).date(),
        datetime.fromtimestamp(high, UTC).date(),
    )


@pytest.mark.parametrize(
    ("query", "first", "last"),
    [
        ("What did Alice do on 7 May 2023?", date(2023, 5, 6), date(2023, 5, 9)),
        ("What did Bob do on May 7, 2023?", date(2023, 5, 6), date(2023, 5, 9)),
        ("Where was Alice on December 4th, 2023?", date(2023, 12, 3), date(2023, 12, 6)),
        ("the 4th of December 2023", date(2023, 12, 3), date(2023, 12, 6)),
        ("notes from 2023-12-04", date(2023, 12, 3), date(2023, 12, 6)),
    ],
)
def test_absolute_days_select_the_day_with_a_days_margin(
    query: str, first: date, last: date
) -> None:
    """An absolute date selects that day, widened by one day on each side."""
    (mention,) = extract_dates(query)
    assert not mention.relative
    assert days(mention.window(None)) == (first, last)


def test_month_and_year_select_the_whole_month() -> None:
    """ "in May 2023" is May as a whole, not the month-without-year reading."""
    (mention,) = extract_dates("What did Alice plan in May 2023?")
    assert days(mention.window(None)) == (date(2023, 4, 30), date(2023, 6, 2))


def test_a_year_selects_the_year() -> None:
    """ "in 2022" is the calendar year."""
    (mention,) = extract_dates("Which trips did Bob take in 2022?")
    assert days(mention.window(None)) == (date(2021, 12, 31), date(2023, 1, 2))


@pytest.mark.parametrize(
    ("query", "first", "last"),
    [
        ("What did Alice mention yesterday?", date(2023, 5, 8), date(2023, 5, 11)),
        ("What did Bob say today?", date(2023, 5, 9), date(2023, 5, 12)),
        ("What did Bob eat this morning?", date(2023, 5, 9), date(2023, 5, 12)),
        ("the day before yesterday", date(2023, 5, 7), date(2023, 5, 10)),
        ("What happened three days ago?", date(2023, 5, 6), date(2023, 5, 9)),
        ("What did Bob talk about last week?", date(2023, 4, 30), date(2023, 5, 9)),
        ("What did they do last month?", date(2023, 3, 31), date(2023, 5, 2)),
        ("Where did Alice go last Friday?", date(2023, 5, 4), date(2023, 5, 7)),
        ("a couple of weeks ago", date(2023, 4, 23), date(2023, 5, 2)),
        ("in March", date(2023, 2, 28), date(2023, 4, 2)),
        ("What happened in June?", date(2022, 5, 31), date(2022, 7, 2)),
        ("on December 4", date(2022, 12, 3), date(2022, 12, 6)),
    ],
)
def test_relative_mentions_resolve_against_the_reference_day(
    query: str, first: date, last: date
) -> None:
    """Relative phrases, and months without a year, resolve against the reference day
    (a month later in the year than the reference is last year's)."""
    (mention,) = extract_dates(query)
    assert mention.relative
    assert mention.window(None) is None
    assert days(mention.window(REFERENCE)) == (first, last)


@pytest.mark.parametrize(
    "query",
    [
        "Who owns the deploy pipeline?",
        "May I ask what Alice recommended?",
        "What is the name of Alice's beagle?",
        "How many people march in the parade?",
        "February 30, 2023",
        "",
    ],
)
def test_queries_naming_no_date_yield_nothing(query: str) -> None:
    """No date, no mention: ordinary words ("may", "march") and impossible dates are
    not dates."""
    assert extract_dates(query) == ()


#: Words that texts naming dates, and almost naming them, are made of.
_DATE_WORDS = (
    "May 7 7th 2023 2023-05-07 of in last this next week Sunday on ago 3 days two years"
    " back yesterday the day before sept. mid early x7 may2023 tomorrow morning"
)
_DATE_TALK = st.lists(st.sampled_from(_DATE_WORDS.split()), max_size=12).map(" ".join)


@given(_DATE_TALK | st.text(max_size=40))
@example("mid-March 2023, the 4th of December 2023 and 2023-12-04")
def test_the_scanner_checks_the_word_boundary_every_way_starts_with_once(text: str) -> None:
    """Every way of naming a date starts at a word boundary, so the scanner checks it
    once, before its alternatives: it finds what each alternative with its own
    boundary finds."""
    assert all(pattern.startswith(_dates._BOUNDARY) for pattern in _dates._PATTERNS.values())
    each = re.compile(
        "|".join(
            f"(?P<_{name}>{pattern.replace('(?P<', f'(?P<{name}_')})"
            for name, pattern in _dates._PATTERNS.items()
        ),
        re.IGNORECASE,
    )

    def found(
        scanner: re.Pattern[str],
    ) -> list[tuple[str | None, tuple[int, int], dict[str, str | None]]]:
        return [(m.lastgroup, m.span(), m.groupdict()) for m in scanner.finditer(text)]

    assert found(_dates._SCANNER) == found(each)


def test_several_mentions_are_kept_in_order() -> None:
    """Every date a query names is returned, in order."""
    found = extract_dates("Did Alice go between May 1, 2023 and yesterday?")
    assert [m.phrase for m in found] == ["May 1, 2023", "yesterday"]


def test_calendar_units_shift_across_year_boundaries() -> None:
    """A shifted month or week crosses a year boundary correctly."""
    assert shifted(date(2024, 1, 15), "month", -1) == (date(2023, 12, 1), date(2024, 1, 1))
    assert shifted(date(2024, 1, 3), "week", -1) == (date(2023, 12, 25), date(2024, 1, 1))
    assert shifted(date(2024, 1, 3), "year", -1) == (date(2023, 1, 1), date(2024, 1, 1))


def test_a_memory_names_days_relative_to_when_it_was_said() -> None:
    """A memory's own "yesterday" or "last Saturday" resolves against the day it was
    said, and so do the weeks, months and years it names ("last month", "next week")."""
    said_on = date(2022, 12, 20)  # a Tuesday
    found = mentioned_days("Blood donation last Saturday, then cake yesterday", said_on)
    assert days(found[0]) == (date(2022, 12, 17), date(2022, 12, 18))
    assert days(found[1]) == (date(2022, 12, 19), date(2022, 12, 20))
    assert [days(span) for span in mentioned_days("last month was busy", said_on)] == [
        (date(2022, 11, 1), date(2022, 12, 1))
    ]
    assert [days(span) for span in mentioned_days("we fly next week", said_on)] == [
        (date(2022, 12, 26), date(2023, 1, 2))
    ]
    assert [days(span) for span in mentioned_days("this month and last year", said_on)] == [
        (date(2022, 12, 1), date(2023, 1, 1)),
        (date(2021, 1, 1), date(2022, 1, 1)),
    ]
    assert mentioned_days("see you next weekend", said_on) == []
    assert mentioned_days("nothing dated here", said_on) == []


@pytest.mark.parametrize(
    ("text", "question", "named"),
    [
        ("Can I run a load test against staging on Sunday?", True, False),
        ("Is the office open on Fridays or on Friday?", True, False),
        ("What did Ana cook last Sunday?", True, True),
        ("Where did the team go this Friday?", True, True),
        ("We went hiking on Sunday.", False, True),  # said: the last Sunday before
    ],
)
def test_a_bare_weekday_in_a_question_names_no_day(text: str, question: bool, named: bool) -> None:
    """Asked, "on Sunday" is a recurring rule or the coming day as often as the last
    one: it names no day (so the time channel does not fill a pack with last Sunday's
    records). "last"/"this" Sunday still does, and so does "on Sunday" in a memory."""
    assert bool(extract_dates(text, question=question)) == named


@pytest.mark.parametrize("offset", range(480, 530, 3))
def test_a_date_on_the_cut_between_two_pieces_of_a_long_text_is_found_once(
    offset: int,
) -> None:
    """A long text is scanned in pieces of 512 characters; a date straddling a cut is
    found whole, once, wherever the cut falls."""
    text = "x" * offset + " we met on May 7, 2023 and again 3 days ago " + "filler " * 300
    found = extract_dates(text)
    assert [mention.phrase for mention in found] == ["May 7, 2023", "3 days ago"]


@pytest.mark.parametrize(
    ("question", "asks"),
    [
        ("When did Melanie run a charity race?", True),
        ("  when is the party", True),
        ("In which year did Jon open his studio?", True),
        ("What date was the concert?", True),
        ("On what day did they meet?", True),
        ("How long ago did Ana move to Lisbon?", True),
        ("How long has Nate had his first two turtles?", True),
        ("How long did it take Joanna to finish her book?", True),
        ("How many years passed between the two adoptions?", True),
        ("How many dogs does Audrey have?", False),
        ("What did Ana do when it rained?", False),
        ("How long is the hike?", False),
        ("Whenever she can, what does Ana cook?", False),
        ("Which city did Ana visit?", False),
    ],
)
def test_a_question_asks_when_by_how_it_opens(question: str, asks: bool) -> None:
    assert asks_when(question) is asks


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("Melanie: I ran a charity race for mental health last Saturday.", True),
        ("Bob: We moved here in March 2021.", True),
        ("Ana: I got the keys yesterday!", True),
        ("Ana: three weeks ago I quit.", True),
        ("Nate: I've had them for 3 years now and they bring me joy!", True),
        ("Jolene: We've been together for three years.", True),
        ("Audrey: Usually for about an hour, they love it.", True),
        ("Bob: The move took two weeks.", True),
        ("Storage estimate: 90-day photo retention is about 120 GB.", True),
        ("Evan: Let's paint next Saturday!", True),
        ("Bob: We fly out in two weeks.", True),
        ("Jolene: I was in Bogota last summer.", True),
        ("Ana: I fell in love with the place.", False),
        ("John: Playing drums a month now, tough but fun.", True),
        ("Ana: I ran a race for a good cause.", False),
        ("Ana: We walked for miles.", False),
        ("Ana: I ran a charity race for mental health.", False),
        ("Ben: Sounds great, may I come?", False),
        ("", False),
        (None, False),
    ],
)
def test_a_turn_says_when_by_the_dates_it_names(text: str | None, says: bool) -> None:
    assert says_when(text) is says


#: Pieces of text that name dates, nearly do, or spell their letters as ``IGNORECASE``
#: reads them (a dotless or dotted I, a long S, the Kelvin sign, a ligature).
PIECES = st.sampled_from(
    [
        "this", "THIS", "th\u0131s", "TH\u0130S", "la\u017ft", "\u212aago", "ago", "_ago",
        "agoé", "Ago_", "next", "PAST", "previously", "Yesterday's", "2023", "٣", "²", "sept",
        "Sept.", "may", "MAYbe", "monday", "Mondays", "fri", "tonight", "to night", "the",
        "day", "paﬆ", "chicago", "next\u0131", "ß", "week", "weekend", "weeks", "years",
        "morning", "back", "earlier", "few", "two", "a", "on", "in", " ", ", ", "-", "\u0301",
        "\n",
    ]
)  # fmt: skip


@given(st.lists(st.one_of(PIECES, st.text(max_size=4)), max_size=12).map(" ".join))
@example("Melanie: I painted a sunrise")
@example("We met TH\u0130S week")
@example("a few years back")
@example("this is great, last time too")
def test_the_cheap_test_stops_only_texts_naming_no_date(text: str) -> None:
    """A text the cheap test stops is one in which the scanner, run on it, finds no
    date: the test only spares the scan."""
    with mock.patch.object(_dates, "may_name_a_date", return_value=True):
        scanned = extract_dates(text)
    assert extract_dates(text) == scanned
    if not may_name_a_date(text):
        assert scanned == ()


def test_a_span_said_back_or_earlier_names_a_date_alone() -> None:
    """ "a few years back" names a date whatever else the text says (the alternation the
    cheap test replaced let it through only beside a word such as "this")."""
    assert [m.phrase for m in extract_dates("I coded a bit a few years back")] == ["few years back"]
    assert not may_name_a_date("this is great, last time too")
