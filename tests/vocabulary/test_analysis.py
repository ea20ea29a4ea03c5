"""Text analysis: the rules that turn stored texts and queries into the same terms."""

from __future__ import annotations

import random
import re
import sqlite3
import string
import sys
import threading
import unicodedata
from contextlib import closing, contextmanager
from typing import TYPE_CHECKING

import pytest
import Stemmer

from satchel.vocabulary._analysis import (
    MAX_QUERY_TERMS,
    AnalysedQuery,
    analyse,
    analyse_query,
    index_text,
    match_expression,
    standard_word,
    warm_up,
)
from satchel.vocabulary._analysis import _term as cached_term
from satchel.vocabulary._errors import InvalidRequestError

if TYPE_CHECKING:
    from collections.abc import Iterator


def fullwidth(text: str) -> str:
    """``text`` in full-width forms (ASCII letters, digits and punctuation)."""
    return "".join(chr(ord(char) + 0xFEE0) for char in text)


FTS_TABLE = 'CREATE VIRTUAL TABLE t USING fts5(terms, tokenize="unicode61 remove_diacritics 0")'

DOCUMENTS = {
    1: "Caroline keeps the nightly backups; restoring them was tested on Tuesday.",
    2: "The rate-limit rotation policy changed in release v2.4 (text: foo).",
    3: "PostgreSQL数据库备份每天运行。データベースのバックアップ。",
    4: "Hot-swap the near-line storage: OR, AND, NOT are just words here.",
}

HOSTILE_QUERIES = [
    '"backup* NEAR(restore)"',
    'NEAR("a" "b", 3)',
    "near",
    "NEAR(backup restore)",
    "backup*",
    "^backup",
    "terms:backup",
    "text:foo",
    "{terms skey}: rotation",
    "- backup + restore",
    "backup AND restore OR rotation NOT policy",
    "and or not",
    "AnD oR NoT nEaR",
    '"',
    '""',
    '"""',
    "(",
    ")",
    "((backup)",
    "*",
    ":",
    "{",
    "}",
    "[]",
    "'",
    "\\",
    "\x00",
    "backup\x00restore",
    "\ud800 lone surrogate",
    "'s",
    "",
    "   ",
    'col:"unterminated',
    "release v2.4",
    "数据库",
    fullwidth("NEAR(backup)"),
]

# Characters a fuzzed text is made of: syntax, apostrophes, marks, invisibles, scripts.
FUZZ_ALPHABET = [
    *"abcxyz ABZ 0189",
    *"'\u2019\u02bc\"*^:-+(){}[],.;!?_/\\@#$%&=<>|~`",
    "NEAR",
    "AND",
    "OR",
    "NOT",
    " near/3 ",
    *"éßİıΣσςжЖñ",
    *"数据库备份データベース데이터",
    *"\u0301\u093f\u094d\u064e\u05b8\u00ad\u200d\u200c\u200b\ufe0f",
    *"\x00\t\n",
    fullwidth("AB1"),
    "ﬁ",
    "①",
    "½",
    "🙂",
    "\U00020000",
    "\U0001d400",
    "\U00011000",
    "\U000e0100",
    "\udc00",
]


@pytest.fixture
def fts() -> Iterator[sqlite3.Connection]:
    """An in-memory FTS5 table holding the analysed DOCUMENTS."""
    with closing(sqlite3.connect(":memory:")) as conn:
        conn.execute(FTS_TABLE)
        conn.executemany(
            "INSERT INTO t (rowid, terms) VALUES (?, ?)",
            [(row, index_text(text)) for row, text in DOCUMENTS.items()],
        )
        yield conn


def search(conn: sqlite3.Connection, query: str) -> set[int]:
    """Rows whose indexed terms match any term of ``query``, as the store searches."""
    expression = match_expression(analyse_query(query).terms)
    if not expression:
        return set()
    rows = conn.execute("SELECT rowid FROM t WHERE t MATCH ?", (expression,)).fetchall()
    return {row for (row,) in rows}


def fuzzed_texts(seed: int, count: int) -> list[str]:
    """Deterministic texts drawn from FUZZ_ALPHABET."""
    rng = random.Random(seed)
    return ["".join(rng.choices(FUZZ_ALPHABET, k=rng.randint(0, 40))) for _ in range(count)]


def is_letters_and_digits(term: str) -> bool:
    """Whether every character of ``term`` is in a Unicode L* or N* category."""
    return all(unicodedata.category(char)[0] in "LN" for char in term)


def test_nfkc_and_casefold_unify_forms() -> None:
    """Compatibility forms and case differences analyse to the same terms."""
    assert analyse("Straße") == analyse("STRASSE") == analyse("strasse")
    assert analyse(fullwidth("ABC")) == ["abc"]
    assert analyse("ﬁle") == analyse("FILE")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("rate-limit", ["rate", "limit"]),
        ("snake_case", ["snake", "case"]),
        ("v1.2.3", ["v1", "2", "3"]),
        ("ops@example.com", ["op", "exampl", "com"]),
        ("(policy)[rotation]{keys}", ["polici", "rotat", "key"]),
    ],
)
def test_punctuation_and_underscores_split_words(text: str, expected: list[str]) -> None:
    """Hyphens, underscores and punctuation separate words."""
    assert analyse(text) == expected


def test_terms_are_only_letters_and_digits() -> None:
    """Whatever the input, every term is a non-empty run of letters and digits."""
    for text in [*HOSTILE_QUERIES, *fuzzed_texts(seed=1, count=1000)]:
        terms = [*analyse(text), *analyse_query(text).terms]
        assert all(term and is_letters_and_digits(term) for term in terms), text


def test_each_term_is_one_fts5_token() -> None:
    """unicode61 splits an indexed text into exactly its terms, one token each."""
    texts = [*DOCUMENTS.values(), *HOSTILE_QUERIES, *fuzzed_texts(seed=2, count=300)]
    with closing(sqlite3.connect(":memory:")) as conn:
        conn.execute(FTS_TABLE)
        conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, instance)")
        conn.executemany(
            "INSERT INTO t (rowid, terms) VALUES (?, ?)",
            [(row, index_text(text)) for row, text in enumerate(texts, start=1)],
        )
        counts = dict(conn.execute("SELECT doc, count(*) FROM v GROUP BY doc").fetchall())
    for row, text in enumerate(texts, start=1):
        assert counts.get(row, 0) == len(analyse(text)), text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Caroline's", ["carolin"]),
        ("Caroline\u2019s", ["carolin"]),
        ("Caroline\u02bcs", ["carolin"]),
        ("Caroline'll", ["carolin"]),
        ("the students' notes", ["student", "note"]),
        ("don't", []),
        ("isn\u2019t", []),
        ("we'll", []),
        ("they\u2019re", []),
        ("I've", []),
        ("she'd", []),
        ("I'm", []),
        ("can't", []),
        ("won't", []),
        ("rock'n'roll", ["rock", "n", "roll"]),
    ],
)
def test_possessives_and_contractions_drop_the_clitic(text: str, expected: list[str]) -> None:
    """A clitic after either apostrophe is dropped, then stopwords apply."""
    assert analyse(text) == expected


def test_negated_modals_become_their_verb() -> None:
    """ "won't" and "can't" become "will" and "can", never the content words "won" (the
    past of "win"), "ca"."""
    assert analyse("won") == ["win"]
    assert analyse("won't") == analyse("will") == []
    assert analyse("can't") == analyse("can") == []
    assert analyse("ca") == ["ca"]


def test_stopwords_are_removed_and_content_kept() -> None:
    """Function words go; content words, "near" among them, stay."""
    assert analyse("What is the state of the backups?") == ["state", "backup"]
    assert analyse("who and how, or not, to an a in on") == []
    assert analyse("near the backup") == ["near", "backup"]


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("backup", "backups"),
        ("rotating", "rotation"),
        ("Caroline's", "Caroline"),
        ("restores", "restoring"),
        ("policies", "policy"),
    ],
)
def test_stemming_merges_word_forms(one: str, other: str) -> None:
    """Inflected and derived forms of a word give the same term."""
    assert analyse(one) == analyse(other)
    assert len(analyse(one)) == 1


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("bought", "buy"),
        ("went", "go"),
        ("children", "child"),
        ("mice", "mouse"),
        ("taught", "teach"),
        ("ate", "eat"),
        ("ran", "run"),
        ("better", "good"),
        ("wrote", "written"),
    ],
)
def test_irregular_forms_meet_their_base_form(one: str, other: str) -> None:
    """The lemmatiser joins forms the stemmer cannot (past tenses, irregular plurals)."""
    assert analyse(one) == analyse(other)
    assert len(analyse(one)) == 1


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("running", "run"),
        ("studies", "study"),
        ("studied", "studying"),
        ("preferred", "prefer"),
        ("programmed", "programs"),
        ("cities", "city"),
    ],
)
def test_regular_forms_still_join(one: str, other: str) -> None:
    """What the stemmer joined still joins: a lemma's spelling variant ("preferr",
    "programme") never splits a regular family."""
    assert analyse(one) == analyse(other)


@pytest.mark.parametrize(
    ("word", "unlike"),
    [
        ("gone", "gan"),  # a chain: "gan" is itself "gin"'s form
        ("las", "la"),  # three letters never lose one: an abbreviation
        ("lbs", "lb"),
        ("opera", "opus"),  # homographs the dictionary reads as rare forms
        ("maria", "mare"),
        ("skies", "ski"),
        ("bet", "better"),
    ],
)
def test_rare_readings_do_not_join_unrelated_words(word: str, unlike: str) -> None:
    """The guard on the lemmatiser keeps unrelated words apart."""
    assert analyse(word) != analyse(unlike)
    assert len(analyse(word)) == 1


def test_lemmas_never_make_a_stopword_or_leave_letters() -> None:
    """A content word whose lemma is a stopword, or holds punctuation, keeps its own
    stem ("outing" -> "out", "etc" -> "etc."); function words still vanish."""
    stemmer = Stemmer.Stemmer("english")
    words = ["outing", "canning", "fewer", "etc"]
    assert analyse(" ".join(words)) == [stemmer.stemWord(word) for word in words]
    assert analyse("was were been being is are am") == []
    assert analyse("I'd have bought it") == ["buy"]


def test_lemmatiser_leaves_other_terms_alone() -> None:
    """Digits, mixed identifiers, CJK, other scripts and capitalised names stay as the
    stemmer alone gave them."""
    assert analyse("2024 v2 mp3s 数据库 жизни") == ["2024", "v2", "mp3s", "数据", "据库", "жизни"]
    assert analyse("Caroline Melanie June Monday") == ["carolin", "melani", "june", "monday"]


@contextmanager
def indexed(*texts: str) -> Iterator[sqlite3.Connection]:
    """A full-text table holding ``texts`` as rows 1, 2, ..., analysed as a store does."""
    with closing(sqlite3.connect(":memory:")) as conn:
        conn.execute(FTS_TABLE)
        conn.executemany(
            "INSERT INTO t (rowid, terms) VALUES (?, ?)",
            [(row, index_text(text)) for row, text in enumerate(texts, 1)],
        )
        yield conn


def test_query_and_index_agree_on_lemmas() -> None:
    """A question in base forms finds a text in irregular forms, and back."""
    with indexed("Melanie bought two mice for the children", "Caroline went hiking") as conn:
        assert search(conn, "What did Melanie buy?") == {1}
        assert search(conn, "a mouse for the child") == {1}
        assert search(conn, "Where does Caroline go?") == {2}
        assert search(conn, "she buys") == {1}


@pytest.mark.parametrize(
    ("chat", "written"),
    [
        ("my bday", "my birthday"),
        ("new pics of the fam", "new pictures of the family"),
        ("my fave convo", "my favorite conversation"),
        ("see u tmrw", "see you tomorrow"),
        ("Caroline's bday's on Sat", "Caroline's birthday is on Sat"),
        ("my mom and dad", "my mother and father"),
        ("took the kids to see grandma", "took the children to see grandmother"),
        ("my mum fixed her bike", "my mother fixed her bicycle"),
        ("as a kid I watched tv", "as a child I watched television"),
        ("I won the tourney and felt great", "I win the tournament and feel great"),
    ],
)
def test_chat_spellings_are_analysed_as_the_words_they_spell(chat: str, written: str) -> None:
    """People spell everyday words their own way in messages: a chat's "bday" and a
    question's "birthday" are one term, and "u" is the function word it spells."""
    assert analyse(chat) == analyse(written)


@pytest.mark.parametrize(
    ("stretched", "written"),
    [
        ("sooo goood", "so good"),
        ("yesss, I loooove it", "yes, I love it"),
        ("AWESOMEEE", "awesome"),
        ("cuteeee puppyyy", "cute puppy"),
    ],
)
def test_a_letter_stretched_for_emphasis_is_said_once(stretched: str, written: str) -> None:
    """A letter said three times or more is said as the dictionary says the word:
    "sooo" is the function word "so", "goood" is "good"."""
    assert analyse(stretched) == analyse(written)


def test_standard_word_keeps_what_it_does_not_know() -> None:
    """A word spelled as written stays; a known word with a letter three times stays
    ("www"); an unknown stretched word is said with the letter twice, so its other
    stretchings meet it."""
    assert [standard_word(word) for word in ("birthday", "kestrel", "www")] == [
        "birthday",
        "kestrel",
        "www",
    ]
    assert standard_word("qwxzvvvv") == standard_word("qwxzvvv") == "qwxzvv"
    assert [standard_word(word) for word in ("bday", "goood", "sooo")] == ["birthday", "good", "so"]


def test_a_question_finds_the_chat_that_spells_its_words_otherwise() -> None:
    """Index and query agree: "birthday" finds "bday", "pictures" finds "pics"."""
    with indexed("Ana: my bday was sooo fun", "Ben: sent u the pics") as conn:
        assert search(conn, "When was Ana's birthday?") == {1}
        assert search(conn, "Which pictures did Ben send?") == {2}
    with indexed("Deb: my mom loved cooking", "Dave: my dad and I fixed cars as kids") as conn:
        assert search(conn, "What were Deb's mother's hobbies?") == {1}
        assert search(conn, "What did Dave and his father do as children?") == {2}


def test_warm_up_is_idempotent() -> None:
    """Loading the lemmatiser's table ahead of use changes nothing but timing."""
    before = analyse("bought")
    warm_up()
    warm_up()
    assert analyse("bought") == before == ["buy"]


def test_digits_pass_unchanged() -> None:
    """Numbers and short identifiers are kept as written."""
    assert analyse("2024 007 42 v2") == ["2024", "007", "42", "v2"]


def test_long_tokens_are_cut_and_not_stemmed() -> None:
    """A token over 64 characters is cut to 64; tokens of 64 or more are not stemmed."""
    blob = "q" * 100
    assert analyse(blob) == ["q" * 64]
    assert analyse_query(f"find {blob}x please").terms == ("find", "q" * 64, "pleas")
    assert analyse("ab" * 30 + "ing") == ["ab" * 30]
    assert analyse("ab" * 30 + "a" + "ing") == ["ab" * 30 + "aing"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("数据库", ["数据", "据库"]),
        ("数", ["数"]),
        ("PostgreSQL数据库", ["postgresql", "数据", "据库"]),
        ("データ", ["デー", "ータ"]),
        ("데이터", ["데이", "이터"]),
        ("数据, 库", ["数据", "库"]),
    ],
)
def test_cjk_runs_become_bigrams(text: str, expected: list[str]) -> None:
    """Han, kana and Hangul runs are emitted as overlapping bigrams."""
    assert analyse(text) == expected


def test_cjk_query_matches_inside_longer_run(fts: sqlite3.Connection) -> None:
    """A CJK query finds a text where it is part of a longer run."""
    assert set(analyse_query("数据库").terms) <= set(analyse("数据库备份"))
    assert search(fts, "数据库") == {3}
    assert search(fts, "バックアップ") == {3}


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("\u0915\u093f\u0924\u093e\u092c", "\u0915\u0924\u092c"),  # Devanagari vowel signs
        ("\u0643\u064e\u062a\u064e\u0628\u064e", "\u0643\u062a\u0628"),  # Arabic harakat
        ("İstanbul", "istanbul"),
        ("hy\u00adphen", "hyphen"),
        ("q\u0301uark", "quark"),  # no precomposed q-acute
        ("e\u0301tude", "\u00e9tude"),  # composable marks are composed, not dropped
    ],
)
def test_marks_and_invisible_joiners_do_not_split_words(one: str, other: str) -> None:
    """Combining marks NFKC cannot compose, and in-word format characters, are dropped."""
    assert analyse(one) == analyse(other)
    assert len(analyse(one)) == 1


@pytest.mark.parametrize(
    ("accented", "plain"),
    [
        ("José", "Jose"),
        ("café", "cafe"),
        ("Pokémon", "pokemon"),
        ("naïve fiancée", "naive fiancee"),
        ("Łukasz Ørsted", "Lukasz Orsted"),  # letters drawn with a stroke
        ("Nguyễn Đức", "Nguyen Duc"),  # two marks on one letter
        ("São Paulo", "Sao Paulo"),
        ("Cæsar", "Caesar"),
    ],
)
def test_latin_letters_are_folded_without_their_diacritics(accented: str, plain: str) -> None:
    """A word typed with or without its accents is one term: people type names and
    borrowed words both ways."""
    assert analyse(accented) == analyse(plain)
    assert analyse_query(f"Where is {accented}?").terms == analyse_query(f"Where is {plain}?").terms


@pytest.mark.parametrize(
    ("word", "unlike"),
    [
        ("йогурт", "иогурт"),  # a Cyrillic short i is a letter of its own
        ("άλφα", "αλφα"),  # Greek keeps its accents
        ("がっこう", "かっこう"),  # kana with a voicing mark are other kana
    ],
)
def test_other_scripts_keep_their_marked_letters(word: str, unlike: str) -> None:
    assert analyse(word) != analyse(unlike)


def test_zero_width_space_separates_words() -> None:
    """A zero-width space is a word break, not an in-word joiner."""
    assert analyse("backup\u200brotation") == ["backup", "rotat"]


@pytest.mark.parametrize("query", HOSTILE_QUERIES)
def test_hostile_queries_are_plain_terms(fts: sqlite3.Connection, query: str) -> None:
    """FTS5 syntax in a query becomes plain terms and never an SQLite error."""
    terms = analyse_query(query).terms
    assert all(is_letters_and_digits(term) for term in terms)
    search(fts, query)


@pytest.mark.parametrize(
    ("query", "rows"),
    [
        ('"backup* NEAR(restore)"', {1, 4}),
        ("text:foo", {2}),
        ("{terms skey}: rotation", {2}),
        ("release v2.4", {2}),
        ("AND OR NOT", set()),
        (fullwidth("NEAR(backup)"), {1, 4}),
        ("Caroline's restored backup", {1}),
    ],
)
def test_hostile_queries_find_expected_rows(
    fts: sqlite3.Connection, query: str, rows: set[int]
) -> None:
    """Operators in a query are searched as words, so the right rows still match."""
    assert search(fts, query) == rows


def test_random_queries_never_break_fts5(fts: sqlite3.Connection) -> None:
    """Random code points and syntax fragments always give a valid MATCH."""
    rng = random.Random(0)
    for query in fuzzed_texts(seed=3, count=500):
        search(fts, query)
    for _ in range(500):
        search(fts, "".join(chr(rng.randrange(0x110000)) for _ in range(rng.randint(1, 30))))


def test_match_expression_quotes_every_term(fts: sqlite3.Connection) -> None:
    """Terms become quoted phrases joined by OR; inner quotes double, NUL becomes a space."""
    assert match_expression([]) == ""
    assert match_expression(("backup", "near")) == '"backup" OR "near"'
    assert match_expression(['a"b']) == '"a""b"'
    assert match_expression(["a\x00b"]) == '"a b"'
    weird = ['"', "NEAR(", "*", "", "a\x00", "x:y", "{c}", "AND"]
    expression = match_expression(weird)
    fts.execute("SELECT rowid FROM t WHERE t MATCH ?", (expression,)).fetchall()


@pytest.mark.parametrize("terms", ["backup", [5], ["ok", None], None, 5])
def test_match_expression_rejects_what_is_not_a_sequence_of_strings(terms: object) -> None:
    """A string (it would be split into characters), None or a non-string term raises
    InvalidRequestError naming terms."""
    with pytest.raises(InvalidRequestError, match=r"^terms must be a sequence of strings"):
        match_expression(terms)  # type: ignore[arg-type]


def test_query_terms_are_distinct_in_query_order() -> None:
    """Query terms are deduplicated and keep the order of first occurrence."""
    query = analyse_query("Backups of the backup rotation, rotating backups")
    assert query.terms == ("backup", "rotat")
    assert query.text == "Backups of the backup rotation, rotating backups"


def test_query_terms_agree_with_index_terms() -> None:
    """Below the cap, a query's terms are the distinct terms the index would hold."""
    for text in [*DOCUMENTS.values(), *fuzzed_texts(seed=4, count=100)]:
        assert analyse_query(text).terms == tuple(dict.fromkeys(analyse(text)))


def test_query_cap_keeps_the_most_informative_terms() -> None:
    """Over the cap, long words and words with digits win; query order is restored."""
    query = "cat dog configuration emu fox rotation gnu v2 hen 数据 owl"
    assert analyse_query(query, max_terms=4).terms == ("configur", "rotat", "v2", "数据")
    assert analyse_query(query, max_terms=1).terms == ("configur",)


def test_query_cap_ties_go_to_the_earlier_word() -> None:
    """Equally informative words are kept in order of first occurrence."""
    assert analyse_query("yak cat dog emu", max_terms=2).terms == ("yak", "cat")


def test_query_cap_counts_distinct_terms_not_words() -> None:
    """Words that stem alike fill one slot, leaving room for the next word."""
    query = "backups backup backing rotation yak"
    assert analyse_query(query, max_terms=2).terms == ("backup", "rotat")


def test_default_cap_bounds_a_huge_query() -> None:
    """A 5000-word query keeps MAX_QUERY_TERMS terms and stems only a few dozen words."""
    rng = random.Random(5)
    words = [
        "".join(rng.choices(string.ascii_lowercase, k=rng.randint(4, 12))) + "zq"
        for _ in range(5000)
    ]
    misses = cached_term.cache_info().misses
    terms = analyse_query(" ".join(words)).terms
    assert len(terms) == MAX_QUERY_TERMS
    assert cached_term.cache_info().misses - misses <= 2 * MAX_QUERY_TERMS
    positions = [words.index(term) for term in terms]
    assert positions == sorted(positions)


@pytest.mark.parametrize("max_terms", [0, -1, "3", 2.0, True, None])
def test_max_terms_must_be_a_positive_integer(max_terms: object) -> None:
    """A cap below one or not an integer raises InvalidRequestError naming max_terms."""
    with pytest.raises(InvalidRequestError, match=r"^max_terms must be an integer >= 1"):
        analyse_query("backup", max_terms=max_terms)  # type: ignore[arg-type]


@pytest.mark.parametrize("text", [None, 5, b"backup"])
def test_query_text_must_be_a_string(text: object) -> None:
    """analyse_query of a non-string raises InvalidRequestError naming text."""
    with pytest.raises(InvalidRequestError, match=r"^text must be a string"):
        analyse_query(text)  # type: ignore[arg-type]


def test_analysed_query_validates_its_fields() -> None:
    """Terms are a tuple of strings."""
    with pytest.raises(TypeError):
        AnalysedQuery(text="backup", terms=["backup"])  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        AnalysedQuery(text="backup", terms=(1,))  # type: ignore[arg-type]


def test_index_text_joins_terms_with_spaces() -> None:
    """The FTS5 column value is the terms in order, single-space separated."""
    assert index_text("Nightly backups, rotating keys!") == "night backup rotat key"
    assert index_text("the of and") == ""


def test_analysis_is_thread_safe() -> None:
    """Worker threads stemming new words at once all get the right stems."""
    rng = random.Random(6)
    words = [
        "".join(rng.choices("bcdfglnrst", k=4)) + rng.choice(["ations", "ingly", "nesses"])
        for _ in range(4000)
    ]
    words = [word for word in words if not re.search(r"(.)\1\1", word)]  # not stretched
    reference = Stemmer.Stemmer("english")
    expected = {word: reference.stemWord(word) for word in words}
    cached_term.cache_clear()
    wrong: list[str] = []

    def work(chunk: list[str]) -> None:
        try:
            wrong.extend(w for w in chunk if analyse(w) != [expected[w]])
        except Exception as error:  # a corrupted stemmer can raise IndexError
            wrong.append(repr(error))

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=work, args=(words[i::4],)) for i in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    assert wrong == []


def test_a_long_texts_index_text_is_its_terms_joined() -> None:
    """A text of more terms than one join takes is joined a run at a time, to the same
    string."""
    text = " ".join(f"word{n % 5000} Running" for n in range(20_000))
    assert index_text(text) == " ".join(analyse(text))


@pytest.mark.parametrize(
    ("query", "names", "unnamed"),
    [
        ("What does Alice like to eat?", ("alic",), "What does like to eat?"),
        ("What did Alice's sister do in July?", ("alic",), "What did sister do in July?"),
        (
            "What did Alice\N{RIGHT SINGLE QUOTATION MARK}s sister do?",
            ("alic",),
            "What did sister do?",
        ),
        ("Where was John on Monday in May?", ("john",), "Where was on Monday in May?"),
        ("Who approves kestrel paperwork deadlines", (), None),
        ("What does LGBTQ mean to Caroline?", ("carolin",), "What does LGBTQ mean to ?"),
        ("Caroline went where? Did Melanie follow", ("melani",), "Caroline went where? Did follow"),
        ("Did I tell you about Lisbon", ("lisbon",), "Did I tell you about"),
    ],
)
def test_proper_names_are_the_capitalised_words_inside_a_sentence(
    query: str, names: tuple[str, ...], unnamed: str | None
) -> None:
    """A capitalised word opening a sentence, an acronym, a month, a weekday and "I"
    name no one; a possessive goes with its name."""
    analysed = analyse_query(query)
    assert (analysed.names, analysed.unnamed) == (names, unnamed)
