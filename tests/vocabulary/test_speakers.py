"""A conversation turn's speaker, read off its text with the query's own analysis."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

import hypothesis
import hypothesis.strategies as st
import pytest

from satchel.vocabulary import (
    _retrieval,
    analyse,
    analyse_query,
    asks_question,
    given_name,
    says_nothing,
    speaker_terms,
)
from satchel.vocabulary._analysis import names_apart
from satchel.vocabulary._retrieval import PoolRequest
from satchel.vocabulary._speakers import (
    TURN_SQL,
    answered,
    called_by_name,
    called_names,
    name_variant,
    nicknamed,
    nicknames_of,
    opens_with_speaker,
    sounds_like,
    variant_floor,
)

if TYPE_CHECKING:
    from collections.abc import Mapping


@pytest.mark.parametrize(
    ("text", "speaker"),
    [
        ("Maya: we got a kitten", {"maya"}),
        ("Dr Ana Lima: the scan is clear", {"dr", "ana", "lima"}),
        ("José:\tola", {"jose"}),
        ("+44 7700 900123: see you at six", {"44", "7700", "900123"}),  # an unsaved contact
        ("Me: we got a kitten", {"me"}),  # the exporter's own messages
        ("You: see you at six", {"you"}),
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
        "2023-05-07: the first scan",  # a date: digits, not a phone number
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
        ("Ben: yesss u r sooo right", True),  # as the chat spells them
        ("Ben: sooo my bday", False),
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


@pytest.mark.parametrize(
    ("text", "nothing"),
    [
        ("Ana: <Media omitted>", True),
        ("Ana: \u200eimage omitted", True),
        ("Ben: GIF omitted", True),
        ("Ben: \u200evoice message omitted", True),
        ("Ana: <attached: 00000031-PHOTO-2024-03-01-12-00-00.jpg>", True),
        ("Ben: This message was deleted", True),
        ("Ana: You deleted this message.", True),
        ("Ben: Missed voice call", True),
        ("Ana: Missed group video call, tap to call back", True),
        ("Ben: null", True),
        ("Ana: IMG-20230508-WA0001.jpg (file attached)", True),  # exported with the media
        ("Ben: PTT-20230508-WA0002.opus (file attached)", True),
        ("Ana: \u200elocation: https://maps.google.com/?q=51.50735,-0.12776", True),
        ("Ben: Waiting for this message. This may take a while.", True),
        ("Ana: my new location: the office on Baker Street", False),
        ("Ana: the photo omitted my cat", False),
        ("Ben: I missed the video call with mom", False),
        ("Ana: This message was deleted by the moderator of our hiking club", False),
        ("Ben: <Media omitted> look at my new bike", False),
    ],
)
def test_what_a_messaging_app_writes_where_a_message_was_says_nothing(
    text: str, nothing: bool
) -> None:
    """An export's placeholders for media it left out, deleted messages and missed calls
    answer no question; a turn that says more than the placeholder still says something."""
    assert says_nothing(text) is nothing


@pytest.mark.parametrize(
    ("text", "nothing"),
    [
        ("Ana: hahahaha", True),  # laughter of any length
        ("Ben: hahah", True),
        ("Ana: ahahaha omg", True),
        ("Ben: bahaha", True),
        ("Ana: hehehe", True),
        ("Ben: lolol", True),
        ("Ana: lmaooo", True),
        ("Ben: xD", True),
        ("Ana: hmmm", True),  # sounds typed at any length
        ("Ben: ahh", True),
        ("Ana: awww", True),
        ("Ben: mhm", True),
        ("Ana: yess", True),  # a filler with a letter doubled
        ("Ben: okk", True),
        ("Ana: yeahh", True),
        ("Ben: helloo", True),
        ("Ana: okaay", True),
        ("Ben: heyy", True),
        ("Ana: sounds good", True),  # what chats abbreviate and acknowledge with
        ("Ben: gotcha", True),
        ("Ana: alright", True),
        ("Ben: brb", True),
        ("Ana: hbu?", True),
        ("Ben: oof", True),
        ("Ana: sorry!", True),
        ("Ben: okie", True),
        ("Ana: :D", True),  # a face's letter is no word
        ("Ben: ok :P", True),
        ("Ana: <3", True),
        ("Ben: hahaha I got the job", False),
        ("Ana: good news, we adopted a cat", False),
        ("Ben: bee", False),  # letters undoubled make no function word of a word
        ("Ana: butt", False),
        ("Ben: hiss", False),
        ("Ana: Hawaii", False),
        ("Ben: Hannah", False),
        ("Ana: haiku", False),
        ("Ben: at 8)", False),
        ("Ana: see you at the gym at 6", False),
        ("Ben: https://youtu.be/dQw4w9WgXcQ", True),  # a link shared alone
        ("Ana: lol www.example.com", True),
        ("Ben: https://open.spotify.com/track/4cOdK2wGLETKBW3PvgPWqT?si=" + "a1b2" * 20, True),
        ("Ana: this recipe https://www.allrecipes.com/recipe/12345/", False),
        ("Ben: https://x.com/" + "a" * 1100, False),  # too long to read
        ("Ana: Loved \u201cI got the job!\u201d", True),  # a reaction quoting a message
        ("Ben: Laughed at \u201c" + "the dog ate my homework again " * 10 + "\u201d", True),
        ("Ana: Reacted \U0001f602 to \u201cthat dog\u201d", True),
        ('Ben: Liked "see you at 7"', True),
        ('Ana: Loved "Inception" so much', False),
        ("Ben: I said \u201cno\u201d to the job in Lisbon because of the long commute", False),
    ],
)
def test_fillers_as_people_type_them_say_nothing(text: str, nothing: bool) -> None:
    """Laughter and sounds at any length, a filler with a letter doubled for emphasis,
    the chat's abbreviations and acknowledgements, faces, a link shared alone and an
    app's reaction quoting a message (up to ``LONGEST_MARKED_TEXT``) say nothing; a word
    that only spells like one, or a filler, a link or a quotation beside what someone
    did, says something."""
    assert says_nothing(text) is nothing


@pytest.mark.parametrize("text", ["Ana: What's up?", "Ben: Oh, I didn't!", "Kim: it\u2019s ok"])
def test_contractions_say_nothing_by_themselves(text: str) -> None:
    """A clitic is split off at its apostrophe, straight or curly, as the analysis does."""
    assert says_nothing(text)


@pytest.mark.parametrize(
    ("word", "code"),
    [
        ("robert", "R163"),
        ("rupert", "R163"),
        ("ashcraft", "A261"),  # h does not part two letters of the same sound
        ("tymczak", "T522"),
        ("pfister", "P236"),  # the first letter's sound is not repeated
        ("geena", "G500"),
        ("gina", "G500"),
        ("a", "A000"),
        ("42", ""),
    ],
)
def test_a_word_sounds_like_its_soundex_code(word: str, code: str) -> None:
    assert sounds_like(word) == code


#: Terms of a chat of 100 turns starting with the letters asked, with their holders.
HELD = {
    "melani": 48, "melt": 1, "melon": 3, "nathan": 40, "nap": 9, "new": 9, "gina": 30,
    "gin": 2, "tim": 20, "time": 6, "ottili": 45, "start": 9,
}  # fmt: skip


@pytest.mark.parametrize(
    ("name", "spelled"),
    [
        ("mel", "melani"),  # the name starts a participant's: the most held of them
        ("timothi", "tim"),  # a participant's name starts it
        ("nate", "nathan"),  # the same first three letters, spelled alike
        ("geena", "gina"),  # the same sound, spelled alike
        ("napoleon", None),  # "nap" starts it, but is held by too few to be a participant
        ("newton", None),  # "nathan" sounds the same, but is spelled otherwise
        ("ottoman", None),  # "ottili" starts the same, but is spelled otherwise
        ("star", None),  # a word starting "start", held by too few
        ("mo", None),  # two letters name too many
        ("zed", None),
    ],
)
def test_a_name_the_scope_never_holds_is_found_as_it_spells_it(
    name: str, spelled: str | None
) -> None:
    assert name_variant(name, HELD, 100) == spelled


@pytest.mark.parametrize(
    ("name", "held", "spelled"),
    [
        ("kate", {"katherin": 40, "kathi": 3}, "katherin"),  # a nickname of the label's
        ("katherin", {"kate": 40}, "kate"),  # the label a nickname of the name said
        ("jim", {"jame": 45, "jill": 30}, "jame"),  # not "jill": no relation, three letters
        ("draw", {"andrew": 50}, "andrew"),  # "Drew" (as analysed), another first letter
        ("jo", {"joanna": 45}, "joanna"),  # two letters, named by the table only
        ("jo", {"john": 45}, None),  # two letters start too many names
        ("draw", {"andrew": 9}, None),  # held by too few to be a participant
        ("kate", {"kathleen": 30, "katherin": 40}, "katherin"),  # the most held of them
    ],
)
def test_a_nickname_is_found_as_the_scope_spells_the_name(
    name: str, held: dict[str, int], spelled: str | None
) -> None:
    """A nickname spelled unlike its name ("Kate" for Katherine, "Drew" for Andrew) is
    found by the nickname table, before any spelling rule, either way round."""
    assert name_variant(name, held, 100) == spelled


def test_the_nickname_table_relates_names_as_analysed() -> None:
    """The table's names are analysed as a question's are ("james" is "jame"), both ways
    round; a name it lacks, or a function word, relates to none."""
    assert {"jim", "jimmi", "jami"} <= nicknames_of("jame")
    assert "jame" in nicknames_of("jim")
    assert "andrew" in nicknames_of(analyse_query("Drew").terms[0])  # lemmatised "draw"
    assert nicknames_of("zoltan") == frozenset()
    assert nicknames_of("will") == frozenset()  # "will" analyses to no term


def test_the_one_label_related_to_a_name_is_its_person() -> None:
    """A name no label says goes to the one person whose label holds a nickname of it or
    a name it is one of; not when a label says it, nor when two labels are related."""
    robert, sam, ana = frozenset({"robert", "smith"}), frozenset({"sam"}), frozenset({"ana"})
    assert nicknamed((robert, sam, ana, robert), frozenset({"bob"})) == {"bob": robert}
    assert nicknamed((robert, sam), frozenset({"robert"})) == {}  # the label says it
    assert nicknamed((robert, sam), frozenset({"zoltan"})) == {}
    rob = frozenset({"rob"})  # a nickname of Robert's too: Bob is either
    assert nicknamed((robert, rob, sam), frozenset({"bob"})) == {}
    assert nicknamed((sam, frozenset({"jame"})), frozenset({"jim", "sam"})) == {
        "jim": frozenset({"jame"})
    }
    joanna, jolene = frozenset({"joanna"}), frozenset({"jolen"})
    assert nicknamed((sam, jolene), frozenset({"jo"})) == {"jo": jolene}  # two letters start it
    assert nicknamed((sam, joanna), frozenset({"jo"})) == {"jo": joanna}  # the table's
    assert nicknamed((sam, joanna, jolene), frozenset({"jo"})) == {}  # either of two
    cal = frozenset({"cal"})
    assert nicknamed((sam, cal), frozenset({"ca"})) == {}  # two letters the table lacks


def test_the_names_a_person_read_answers_to() -> None:
    """Of the names a scope never holds, those a read person answers to: a short form of
    their label or a nickname related to one person's label only."""
    melanie, robert = frozenset({"melani"}), frozenset({"robert"})
    alexandra, cassandra = frozenset({"alexandra"}), frozenset({"cassandra"})
    people: tuple[frozenset[str], ...] = (melanie, robert, alexandra, frozenset())
    assert answered(people, ("mel", "bob", "zoltan", "sandi")) == ("mel", "bob", "sandi")
    assert answered((*people, cassandra), ("sandi", "mo")) == ()  # two Sandys; two letters


def test_given_names_said_apart_may_be_as_many_people_read() -> None:
    """As many given names as people were read may be theirs, when said apart; one name
    of two words is someone else."""
    one, two = frozenset({"44", "7700", "900111"}), frozenset({"user", "2"})
    named = frozenset({"melani"})
    assert answered((one, two), ("carolin", "gina"), apart=True) == ("carolin", "gina")
    assert answered((one, named), ("carolin", "gina"), apart=True) == ("carolin", "gina")
    assert answered((one, two), ("carolin", "gina")) == ()  # "Mona Lisa"
    assert answered((one,), ("carolin", "gina"), apart=True) == ()  # one person read
    assert answered((one, two), ("carolin", "mongolia"), apart=True) == ()  # a place
    assert names_apart("What do Jon and Gina both like?")
    assert names_apart("What did Jon say about Gina's store?")
    assert not names_apart("Who painted the Mona Lisa?")


def test_a_nicknames_first_letter_is_read_too() -> None:
    """For a name the scope never holds, a store reads the terms starting as it does and
    as each of its nicknames and names it is one of: "Bob" may be Robert."""
    request = PoolRequest(analyse_query("What did Bob and Al cook?"), None, 16)
    starts = request.name_starts({"cook": 2})
    assert starts[0] == "b"
    assert {"r", "a"} <= set(starts)
    assert request.name_starts({"cook": 2, "bob": 5, "al": 9}) == ()


def test_a_variant_must_be_held_by_a_participants_share_of_the_scope() -> None:
    """A word that starts like the name is not taken for it unless a tenth of the turns
    hold it, as a participant's name is: ten of 100 turns, 100 of 1,000; four at least."""
    assert (variant_floor(100), variant_floor(1000), variant_floor(26)) == (10, 100, 4)
    assert name_variant("mel", {"melt": 10}, 100) == "melt"
    assert name_variant("mel", {"melt": 99}, 1000) is None
    assert name_variant("timothi", {"tim": 100}, 1000) == "tim"


def test_a_request_is_asked_as_the_scope_spells_its_names() -> None:
    """The names a scope never holds are respelled in the query's terms, names and rare
    words, the frequencies follow, and the request says which it put in."""
    request = PoolRequest(analyse_query("Did Nate and Geena go to Oslo?"), None, 16)
    frequencies = {"oslo": 3}
    assert request.name_starts(frequencies) == ("n", "i", "g")  # Nate: Ignatius too
    asked, counts = request.naming_held(frequencies, HELD, 100)
    assert asked.query.terms == ("nathan", "gina", "go", "oslo")
    assert asked.query.names == ("nathan", "gina", "oslo")
    assert asked.spelled == ("nathan", "gina")
    assert counts == {"oslo": 3, "nathan": 40, "gina": 30}
    assert asked.unheld_names(counts) == ()
    assert request.name_starts({"oslo": 3, "nate": 1, "geena": 1}) == ()
    same, _ = request.naming_held(frequencies, {}, 100)
    assert same is request


def test_a_names_variant_kept_beside_the_terms_is_found_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With the store's ``variants`` beside ``held``, each unheld name is compared with
    the scope's terms once at a version, and later questions get the same spelling."""
    compared: list[str] = []

    def counted(name: str, held: Mapping[str, int], rows: int) -> str | None:
        compared.append(name)
        return name_variant(name, held, rows)

    monkeypatch.setattr(_retrieval, "name_variant", counted)
    frequencies = {"oslo": 3}
    variants: dict[str, str | None] = {}
    first = PoolRequest(analyse_query("Did Nate and Geena go to Oslo?"), None, 16)
    asked, counts = first.naming_held(frequencies, HELD, 100, variants)
    assert variants == {"nate": "nathan", "geena": "gina"}
    again = PoolRequest(analyse_query("Where did Geena and Nate travel?"), None, 16)
    asked_again, counts_again = again.naming_held({}, HELD, 100, variants)
    assert compared == ["nate", "geena"]
    assert asked_again.spelled == ("gina", "nathan")
    assert counts_again == {"gina": 30, "nathan": 40}
    plain, plain_counts = first.naming_held(frequencies, HELD, 100)
    assert (plain.query, plain_counts) == (asked.query, counts)
    assert compared == ["nate", "geena", "nate", "geena"]
    never = PoolRequest(analyse_query("What did Zoltan say?"), None, 16)
    never.naming_held({}, HELD, 100, variants)
    never.naming_held({}, HELD, 100, variants)
    assert variants["zoltan"] is None
    assert compared.count("zoltan") == 1


@hypothesis.settings(max_examples=400, deadline=None)
@hypothesis.given(
    name=st.text(alphabet="Ab 7é:", max_size=44), rest=st.text(alphabet="x :", max_size=6)
)
def test_a_turn_is_told_alike_in_python_and_in_sqlite(name: str, rest: str) -> None:
    """The stores' SQL rule for a turn without a thread says what the Python one says."""
    text = f"{name}{rest}"
    with sqlite3.connect(":memory:") as conn:
        (told,) = conn.execute("SELECT " + TURN_SQL["sqlite"].format(text="?1"), (text,)).fetchone()
    assert bool(told) is opens_with_speaker(text)


@hypothesis.settings(max_examples=800, deadline=None)
@hypothesis.given(
    name=st.one_of(
        st.text(alphabet="+0123456789 ()-aé٣", min_size=1, max_size=24),
        st.text(alphabet="aZk0 9_.-é", min_size=1, max_size=12),
        st.builds(
            str.__add__,
            st.sampled_from(
                ["User", "user ", "SPEAKER ", "Step ", "Us", "\u017fpeaker ", "User  "]
            ),
            st.text(alphabet="0123456789 a", max_size=6),
        ),
    ),
    rest=st.sampled_from([": hi", ":hi", ": ", " : x"]),
)
def test_a_numbered_speaker_is_told_alike_in_python_and_in_sqlite(name: str, rest: str) -> None:
    """The same as a phone number labels a speaker (digits, spaces, brackets, hyphens), a
    user name does (letters, digits, "_", "." and "-") or a placeholder and a number."""
    text = f"{name}{rest}"
    with sqlite3.connect(":memory:") as conn:
        (told,) = conn.execute("SELECT " + TURN_SQL["sqlite"].format(text="?1"), (text,)).fetchone()
    assert bool(told) is opens_with_speaker(text)


@pytest.mark.parametrize(
    ("text", "terms"),
    [
        ("kate_92: hi", {"kate", "92"}),
        ("caroline_42: I painted", {"carolin", "42"}),
        ("Q3: the figures", set()),
        ("Step 1: open", set()),
    ],
)
def test_a_user_names_letters_are_its_speakers_terms(text: str, terms: set[str]) -> None:
    assert speaker_terms(text) == terms


@pytest.mark.parametrize(
    ("text", "turn"),
    [
        ("Maya: hi", True),
        ("+44 7700 900123: see you at six", True),
        ("+1 (555) 123-4567: on my way", True),
        ("+49 151 1234 5678: hallo", True),
        ("2023-05-07: the first scan", False),
        ("Step 1: open the valve", False),
        ("kate_92: see you at six", True),
        ("john.smith85: on my way", True),
        ("mike2000: hi", True),
        ("Step1: open the valve", True),
        ("Q3: the figures", False),
        ("v2: the release", False),
        ("H2O: water", False),
        ("92kate: hi", False),
        ("kate_92!: hi", False),
        ("User 2: hi", True),
        ("SPEAKER 12: hi", True),
        ("participant3: ok", True),
        ("Room 101: the meeting", False),
        ("User  2: two spaces", False),
        ("User 12345: five digits", False),
        ("+44 7700: too short a number", False),
        ("Dr Ana Lima: the scan", True),
        ("José: olá", True),
        ("One two three four: no", False),
        ("At 10: we left", False),
        ("Maya:hi", False),
        (": nobody", False),
        ("a note without a speaker", False),
        ("", False),
        (None, False),
    ],
)
def test_a_turn_opens_with_a_speaker(text: str | None, turn: bool) -> None:
    assert opens_with_speaker(text) is turn


@pytest.mark.parametrize(
    ("text", "called"),
    [
        ("Sam: Hey Kate! How was the weekend?", True),
        ("Sam: Thanks, Kate.", True),
        ("Sam: hi kate how are u", True),
        ("Sam: That sounds lovely, Kate!", True),
        ("Sam: Kate, guess what happened", True),
        ("Sam: I saw Kate at the market", False),
        ("Sam: Kate's sister called", False),
        ("Kate: nothing here", False),
        ("no speaker, Kate!", False),
        (None, False),
    ],
)
def test_called_names_are_the_words_a_turn_calls_someone_by(text: str | None, called: bool) -> None:
    assert ("kate" in called_names(text)) is called


def test_the_other_of_a_chat_of_two_is_called_by_the_name() -> None:
    sam, pat = frozenset({"sam"}), frozenset({"pat"})
    texts = ["Sam: Hey Kate!", "Pat: hello", "Sam: Thanks, Kate.", "Pat: Kate is my friend"]
    speakers = [speaker_terms(text) for text in texts]
    assert speakers == [sam, pat, sam, pat]
    kate = frozenset({"kate"})

    def called(texts: list[str], names: frozenset[str]) -> frozenset[frozenset[str]]:
        heard = [speaker_terms(text) for text in texts]
        return called_by_name(heard, texts, [(None, None)] * len(texts), names)

    assert called(texts, kate) == {pat}
    assert called(texts[:2], kate) == set()  # one call
    assert called(texts, frozenset({"jon"})) == set()
    assert called(texts, frozenset({"kate", "sam"})) == {pat}  # Sam: a label
    assert called([*texts, "Pat: Oh, Kate!"], kate) == set()  # both call her: a friend
    # the exporter labelled "Me" is a person: the one Sam calls Kate
    assert called(["Sam: Hey Kate!", "Me: hello", "Sam: Thanks, Kate."], kate) == {
        frozenset({"me"})
    }
    # Pat's phone reacting to Sam's call quotes it: no call of Pat's
    assert called([*texts, "Pat: Loved \u201cThanks, Kate.\u201d"], kate) == {pat}


def test_each_name_no_label_says_is_read_alone() -> None:
    """A question naming both people of a chat labelled by numbers: each calls the
    other by a name, and each name finds its person."""
    one, two = "+44 7700 900001", "+44 7700 900002"
    texts = [f"{one}: Hey Kate!", f"{two}: Hi Jon!", f"{one}: Thanks, Kate.", f"{two}: Oh, Jon!"]
    speakers = [speaker_terms(text) for text in texts]
    threads = [(None, None)] * len(texts)
    assert called_by_name(speakers, texts, threads, frozenset({"kate", "jon"})) == set(speakers)
    assert called_by_name(speakers, texts, threads, frozenset({"kate"})) == {speakers[1]}


def test_a_name_a_label_says_whole_is_a_label_however_short() -> None:
    """A two-letter label the question says ("Jo") is no short form, yet it is a label."""
    texts = ["Al: Hey Jo!", "Jo: hi", "Al: Thanks, Jo.", "Jo: sure"]
    speakers = [speaker_terms(text) for text in texts]
    assert called_by_name(speakers, texts, [(None, None)] * 4, frozenset({"jo"})) == set()


def test_in_a_group_the_one_who_never_calls_the_name_where_it_is_called_is_named() -> None:
    """Of the people read in the threads where a name is called, the one who never
    calls it; nobody when two never do, or when the chat is kept without threads."""
    texts = ["Al: Hey Kate!", "Bo: Thanks, Kate.", "Cy: sure thing", "Di: Morning, Kate!"]
    speakers = [speaker_terms(text) for text in texts]
    kate = frozenset({"kate"})
    day = datetime(2024, 3, 1, 9, tzinfo=UTC)
    places = [("t1", day), ("t1", day), ("t1", day), ("t2", day)]
    assert called_by_name(speakers, texts, places, kate) == {frozenset({"cy"})}
    # without threads, the day stands in for the thread
    other_day = [(None, day), (None, day), (None, day), (None, day + timedelta(days=1))]
    assert called_by_name(speakers, texts, other_day, kate) == {frozenset({"cy"})}
    # Di, read in another thread only, is no candidate; in one thread two never call her
    texts[3] = "Di: sure"
    assert called_by_name(speakers, texts, [("t1", day)] * 4, kate) == set()
    assert called_by_name(speakers, texts, [(None, None)] * 4, kate) == set()


@pytest.mark.parametrize(
    ("name", "given"),
    [("Caroline", True), ("Bob", True), ("Mel", True), ("Mongolia", False), ("Jupiter", False)],
)
def test_a_given_name_is_one_the_nickname_table_knows(name: str, given: bool) -> None:
    """Asked of the analysed term, as a query's names are."""
    (term,) = analyse(name)
    assert given_name(term) is given


PHONE = frozenset({"44", "7700", "900111"})


@pytest.mark.parametrize(
    ("speakers", "names", "heard"),
    [
        ((PHONE, frozenset({"kate"})), ("carolin",), ("carolin",)),
        ((PHONE,), ("bob",), ("bob",)),
        ((frozenset({"kate"}), frozenset({"ana"})), ("carolin",), ("carolin",)),
        ((PHONE,), ("mona", "lisa"), ()),
        ((PHONE,), ("carolin", "mongolia"), ()),
        ((PHONE,), ("mongolia",), ()),
        ((frozenset({"kate"}), frozenset({"ana"})), ("georgia",), ("georgia",)),
        ((frozenset({"user", "2"}),), ("carolin",), ("carolin",)),
        ((frozenset({"user2"}),), ("carolin",), ("carolin",)),
        ((frozenset({"me"}), frozenset({"kate"})), ("carolin",), ("carolin",)),
    ],
    ids=[
        "phone",
        "phone-nickname",
        "names",
        "two-names",
        "and-a-place",
        "a-place",
        "georgia",
        "placeholder",
        "placeholder-handle",
        "me",
    ],
)
def test_a_given_name_may_be_anyone_read(
    speakers: tuple[frozenset[str], ...], names: tuple[str, ...], heard: tuple[str, ...]
) -> None:
    """The one given name a question says may be someone read, labelled by a phone
    number, as the exporter ("Me") or by a name the asker never uses ("Georgia" too, a
    place as well); with a place or a second name besides, it is someone else."""
    assert answered(speakers, names) == heard
