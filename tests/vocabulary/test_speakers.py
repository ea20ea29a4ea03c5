"""A conversation turn's speaker, read off its text with the query's own analysis."""

from __future__ import annotations

import pytest

from satchel.vocabulary import analyse_query, asks_question, says_nothing, speaker_terms


@pytest.mark.parametrize(
    ("text", "speaker"),
    [
        ("Maya: we got a kitten", {"maya"}),
        ("Dr Ana Lima: the scan is clear", {"dr", "ana", "lima"}),
        ("José:\tola", {"josé"}),
    ],
)
def test_a_turn_opening_with_a_name_names_its_speaker(text: str, speaker: set[str]) -> None:
    assert speaker_terms(text) == speaker


@pytest.mark.parametrize(
    "text",
    [
        None,
        "",
        "We got a kitten",
        "At 10:30 we left",  # a digit: a time, not a name
        "Remember this one thing above everything else today: backups",  # a sentence
        "Maya:kitten",  # no space after the colon: a label or a URI, not a turn
        ": nobody",
        "One two three four: too many words",
    ],
)
def test_other_texts_name_no_speaker(text: str | None) -> None:
    assert speaker_terms(text) == frozenset()


def test_a_speaker_meets_the_query_that_names_them() -> None:
    """The query's terms and the speaker's are spelled by the same analysis, possessive
    and case aside."""
    query = analyse_query("What did MAYA's sister study?")
    assert speaker_terms("Maya: she studies law") <= set(query.terms)
    assert not speaker_terms("Leo: she studies law") & set(query.terms)


@pytest.mark.parametrize(
    ("text", "asks"),
    [
        ("Ben: Did you see the match?", True),
        ("Ben: Did you see the match?  \n", True),
        ("Ben: Which one? The red one, obviously.", False),
        ("Ben: I saw it.", False),
        ("", False),
        (None, False),
    ],
)
def test_a_turn_asks_when_it_ends_with_a_question_mark(text: str | None, asks: bool) -> None:
    assert asks_question(text) is asks


@pytest.mark.parametrize(
    ("text", "nothing"),
    [
        ("Bob: lol", True),
        ("Ana: Thanks!", True),
        ("Alice: Deal.", True),
        ("Ben: Haha yeah, same here!", True),
        ("Kim: 😂😂", True),
        ("ok", True),
        ("", True),
        (None, True),
        ("Ana: Thanks! What have you been up to?", True),
        ("Ana: Paris!", False),
        ("Bob: The one near the station.", False),
        ("Alice: She loved the pastries.", False),
        ("Lol: kitten", False),  # a name is not what the turn says
        ("At 10:30 we left", False),
        ("Ana: " + "yeah " * 20, False),  # too long to read: taken to say something
    ],
)
def test_a_turn_says_nothing_when_it_holds_only_fillers(text: str | None, nothing: bool) -> None:
    """Past the speaker's name, only function words and chat fillers, or no word."""
    assert says_nothing(text) is nothing


@pytest.mark.parametrize("text", ["Ana: What's up?", "Ben: Oh, I didn't!", "Kim: it\u2019s ok"])
def test_contractions_say_nothing_by_themselves(text: str) -> None:
    """A clitic is split off at its apostrophe, straight or curly, as the analysis does."""
    assert says_nothing(text)
