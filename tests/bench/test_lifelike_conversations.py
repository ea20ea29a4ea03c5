"""The lifelike conversations look like real chats where a prepare spends its time: turns
of real length with a long tail, a real chat's vocabulary, shared photos, questions of
about ten words naming people and dates; and the hard conversations' questions keep
their relation to their evidence through the padding."""

from __future__ import annotations

import random
import re
from datetime import datetime
from typing import TYPE_CHECKING

import pytest
from bench._conversations import MONTHS

from bench import _hard_conversations as hard
from bench import _lifelike_conversations as lifelike
from tests.bench.test_hard_conversations import by_category, shared, terms

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from tests.bench._rows import Row


@pytest.fixture(scope="module")
def workload(generated: Callable[[str], Path]) -> Path:
    return generated("lifelike-conversations")


@pytest.fixture(scope="module")
def shape(workload: Path) -> dict[str, float]:
    return lifelike.shape(workload)


@pytest.fixture(scope="module")
def names(entries: dict[str, Row]) -> dict[str, set[str]]:
    """Each scope's speaker names as index terms."""
    found: dict[str, set[str]] = {}
    for row in entries.values():
        found.setdefault(row["scope"], set()).update(terms(row["text"].split(":", 1)[0]))
    return found


def test_turns_are_as_long_as_real_chat_turns(
    shape: dict[str, float], entries: dict[str, Row]
) -> None:
    """~27 words a turn on average, p95 ~57, a tail to the longest allowed: real chats'
    26.8 / 57 / 98 (the synthetic conversations had 8.8 / 13)."""
    assert 24 <= shape["turn_words_mean"] <= 30
    assert 50 <= shape["turn_words_p95"] <= 64
    assert 80 <= shape["turn_words_max"] <= lifelike.LONGEST
    assert 550 <= shape["turns_per_scope"] <= 650
    for row in entries.values():
        assert re.fullmatch(r"[A-Z][a-z]+: \S.*", row["text"]), row["text"]


def test_a_scope_uses_as_many_words_as_a_real_chat(shape: dict[str, float]) -> None:
    """~1,800 distinct words per scope (real chats: ~1,770; the synthetic ones ~640)."""
    assert 1_600 <= shape["distinct_words_per_scope"] <= 2_000


def test_some_turns_share_a_photo(shape: dict[str, float], entries: dict[str, Row]) -> None:
    """A few percent of turns describe a photo they share, whole."""
    assert 0.03 <= shape["photo_share"] <= 0.1
    for row in entries.values():
        if "[shares a photo of" in row["text"]:
            assert re.search(r"\[shares a photo of [^\]]{10,}\]", row["text"]), row["text"]


def test_questions_run_to_about_ten_words_naming_people_and_dates(
    shape: dict[str, float], queries: list[Row]
) -> None:
    """Questions of ~10 words (real chats' ~10; the synthetic ones 8), every one naming
    a speaker, most a date or time, some the other speaker too."""
    assert 9.5 <= shape["question_words_mean"] <= 11
    assert shape["questions_naming_a_speaker"] == 1.0
    assert shape["questions_naming_a_date"] >= 0.5
    framed = [q for q in queries if re.match(r"(Talking to|In a chat with|When) ", q["query"])]
    assert len(framed) >= len(queries) / 5


def test_a_month_a_question_names_is_its_evidence_month(
    entries: dict[str, Row], queries: list[Row]
) -> None:
    """A question framed with a month ("In March 2022, what ...") names the month its
    evidence was said in."""
    pattern = re.compile(rf"^(?:In|Back in|Talking to \w+ in|When \w+ and \w+ spoke in) "
                         rf"({'|'.join(MONTHS)}) (\d{{4}}),")  # fmt: skip
    found = 0
    for query in queries:
        match = pattern.match(query["query"])
        if match is None:
            continue
        found += 1
        month = (int(match.group(2)), MONTHS.index(match.group(1)) + 1)
        for entry_id in query["expected"]:
            said = datetime.fromisoformat(entries[entry_id]["created_at"])
            assert (said.year, said.month) == month, query["query"]
    assert found >= len(queries) / 10


def test_every_category_is_asked_and_every_expected_id_exists(
    entries: dict[str, Row], queries: list[Row]
) -> None:
    assert {q["category"] for q in queries} == set(hard.CATEGORIES)
    for query in queries:
        for entry_id in query["expected"]:
            assert entries[entry_id]["scope"] == query["scopes"][0]


def test_padding_keeps_each_question_apart_from_its_evidence(
    entries: dict[str, Row], queries: list[Row], names: dict[str, set[str]]
) -> None:
    """The stories that pad evidence to its length share no word with the question:
    a reply's answer still shares none, a single-hop fact and each list item at most
    one, a word-forms turn none besides its irregular form; and padding names no time."""
    for query in by_category(queries, "reply"):
        assert not shared(query, entries[query["expected"][0]]["text"], names), query["query"]
    for category in ("single-hop", "multi-session"):
        for query in by_category(queries, category):
            for entry_id in query["expected"]:
                assert len(shared(query, entries[entry_id]["text"], names)) <= 1
    for query in by_category(queries, "word-forms"):
        assert not shared(query, entries[query["expected"][0]]["text"], names), query["query"]
    padded = [
        entries[entry_id]["text"]
        for query in queries
        for entry_id in query["expected"]
        if lifelike.words(entries[entry_id]["text"]) > 30
    ]
    assert len(padded) >= len(queries) / 4


def test_padding_never_names_a_time() -> None:
    """No story padding a planted turn holds a word naming a day, month or year."""
    conv = hard.planted(random.Random(3), 0, 8, hard.FIRST_DAY)
    cast = hard.Cast(("the lab", "the hotel"), ("the flat hunt", "the leaky shed"))
    lines = lifelike.Lines(random.Random(4), conv, cast)
    for _ in range(200):
        text = lines.neutral()
        assert text is not None
        assert not set(lifelike.WORD.findall(text.lower())) & lifelike.TIME_WORDS, text


def test_cli_writes_and_describes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lifelike.main([str(tmp_path), "--conversations", "1", "--sessions", "4"])
    out = capsys.readouterr().out
    assert (tmp_path / "entries.jsonl").exists()
    assert "words per turn mean" in out
    assert "distinct words per scope" in out


def test_rejects_too_few_sessions(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="four sessions"):
        lifelike.generate(tmp_path, sessions=3)
