"""The hard conversational workload keeps its hardness: names on every turn, questions
that share (almost) no stemmed word with their evidence, irregular forms a stemmer
cannot join, lists across sessions, dates the evidence never states; and the recall
command runs end to end on a tiny workload."""

from __future__ import annotations

import json
import re
import sys
from collections import defaultdict
from datetime import date, datetime
from typing import TYPE_CHECKING

import pytest
import Stemmer

from bench import __main__ as bench_main
from bench import _hard_conversations as hard
from bench import recall
from satchel.vocabulary import extract_dates
from satchel.vocabulary._analysis import _STOPWORDS as STOPWORDS
from tests.bench._rows import Row, read_rows

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path


@pytest.fixture(scope="module")
def workload(generated: Callable[[str], Path]) -> Path:
    return generated("hard-conversations")


@pytest.fixture(scope="module")
def names(entries: dict[str, Row]) -> dict[str, set[str]]:
    """Each scope's speaker names (the prefixes of its turns) as index terms."""
    found: defaultdict[str, set[str]] = defaultdict(set)
    for row in entries.values():
        found[row["scope"]] |= terms(row["text"].split(":", 1)[0])
    return dict(found)


_STEMMER = Stemmer.Stemmer("english")


def terms(text: str) -> set[str]:
    """Snowball stems of the words, satchel's stopwords out: the analysis the workload is
    built to be hard for (a stemmer alone keeps "bought" and "buy" apart)."""
    words = [word for word in re.findall(r"[^\W_]+", text.lower()) if word not in STOPWORDS]
    return set(_STEMMER.stemWords(words))


def shared(query: Row, text: str, names: dict[str, set[str]]) -> set[str]:
    """The stemmed words a question shares with a text, speaker names aside."""
    return terms(query["query"]) & terms(text) - names[query["scopes"][0]]


def by_category(queries: list[Row], category: str) -> list[Row]:
    chosen = [q for q in queries if q["category"] == category]
    assert chosen, f"no {category} query"
    return chosen


def said_on(row: Row) -> date:
    return datetime.fromisoformat(row["created_at"]).date()


def test_every_category_is_asked_and_every_expected_id_exists(
    entries: dict[str, Row], queries: list[Row]
) -> None:
    """All nine categories are present; each expected id names a turn of the query's
    own scope."""
    assert {q["category"] for q in queries} == set(hard.CATEGORIES)
    for query in queries:
        assert query["expected"]
        for entry_id in query["expected"]:
            assert entries[entry_id]["scope"] == query["scopes"][0]


def test_every_turn_is_named_and_questions_name_a_speaker(
    entries: dict[str, Row], queries: list[Row], names: dict[str, set[str]]
) -> None:
    """Every turn starts with one of its scope's two speaker names, so a name matches
    about half the scope; every question names one of them."""
    for row in entries.values():
        assert re.fullmatch(r"[A-Z][a-z]+: \S.*", row["text"]), row["text"]
        assert row["kind"] == "dialog"
        assert row["thread"].startswith(f"{row['scope']}/session-")
    assert all(len(speakers) == 2 for speakers in names.values())
    for query in queries:
        assert terms(query["query"]) & names[query["scopes"][0]], query["query"]


def test_small_talk_is_long_noisy_and_reuses_the_questions_words(
    entries: dict[str, Row], queries: list[Row], names: dict[str, set[str]]
) -> None:
    """Turns are chat-length on average; some are bare acknowledgements, some carry
    emoji; every question's words (names aside) also occur in turns that are not its
    evidence."""
    texts = [row["text"].split(": ", 1)[1] for row in entries.values()]
    assert 80 <= sum(map(len, texts)) / len(texts) <= 200
    acks = {ack.format(other="").rstrip(", !") for ack in hard.ACKS}
    assert sum(text.rstrip(" !") in acks or len(text) < 25 for text in texts) > len(texts) / 20
    assert any(emoji in text for text in texts for emoji in hard.EMOJI)
    for query in queries:
        scope, evidence = query["scopes"][0], set(query["expected"])
        assert any(
            shared(query, row["text"], names)
            for row in entries.values()
            if row["scope"] == scope and row["id"] not in evidence
        ), query["query"]


def test_single_hop_paraphrases_its_fact(
    entries: dict[str, Row], queries: list[Row], names: dict[str, set[str]]
) -> None:
    """A single-hop question shares at most one stemmed word with its fact."""
    for query in by_category(queries, "single-hop"):
        (evidence,) = query["expected"]
        assert len(shared(query, entries[evidence]["text"], names)) <= 1, query["query"]


def test_reply_answer_shares_no_stemmed_word_with_the_question(
    entries: dict[str, Row], queries: list[Row], names: dict[str, set[str]]
) -> None:
    """A reply's answer shares no stemmed word with the question but a speaker's name,
    and directly follows, in the same thread and from the other speaker, the asking
    turn, which shares at least one."""
    ids = list(entries)
    for query in by_category(queries, "reply"):
        (evidence,) = query["expected"]
        answer = entries[evidence]
        assert not shared(query, answer["text"], names), query["query"]
        ask = entries[ids[ids.index(evidence) - 1]]
        assert ask["thread"] == answer["thread"]
        assert int(ask["id"].rsplit(":", 1)[1]) + 1 == int(evidence.rsplit(":", 1)[1])
        assert ask["text"].split(":")[0] != answer["text"].split(":")[0]
        assert shared(query, ask["text"], names), query["query"]


def test_word_forms_evidence_holds_an_irregular_form_of_a_question_word(
    entries: dict[str, Row], queries: list[Row], names: dict[str, set[str]]
) -> None:
    """Each word-forms turn holds an irregular form whose base form the question uses
    and the turn does not, and which the stemmer keeps apart from it; no other word
    is shared."""
    forms = {pair for fact in hard.WORD_FORMS for pair in fact.forms}
    for query in by_category(queries, "word-forms"):
        (evidence,) = query["expected"]
        text = entries[evidence]["text"]
        words = set(re.findall(r"[a-z]+", text.lower()))
        matched = [
            (irregular, base)
            for irregular, base in forms
            if irregular in words and terms(base) <= terms(query["query"])
        ]
        assert matched, query["query"]
        for irregular, base in matched:
            assert terms(irregular) != terms(base)
            assert not terms(base) & terms(text)
        assert not shared(query, text, names), query["query"]


def test_multi_session_items_span_threads_and_share_little(
    entries: dict[str, Row], queries: list[Row], names: dict[str, set[str]]
) -> None:
    """A list question's 2-4 items sit in as many sessions, each sharing at most one
    stemmed word with it."""
    for query in by_category(queries, "multi-session"):
        threads = [entries[e]["thread"] for e in query["expected"]]
        assert 2 <= len(set(threads)) == len(threads) <= 4
        for entry_id in query["expected"]:
            assert len(shared(query, entries[entry_id]["text"], names)) <= 1


def test_open_domain_evidence_is_the_named_speakers_own_and_shares_little(
    entries: dict[str, Row], queries: list[Row], names: dict[str, set[str]]
) -> None:
    """An inference question's 2-3 evidence turns are said by the speaker it names, in
    as many sessions, and share at most one stemmed word with it between them; the
    other speaker says something on the same topic that is not evidence."""
    for query in by_category(queries, "open-domain"):
        evidence = [entries[e] for e in query["expected"]]
        threads = {row["thread"] for row in evidence}
        assert 2 <= len(threads) == len(evidence) <= 3
        speakers = {row["text"].split(":", 1)[0] for row in evidence}
        assert len(speakers) == 1
        assert speakers <= set(re.findall(r"[A-Z][a-z]+", query["query"]))
        together = " ".join(row["text"] for row in evidence)
        assert len(shared(query, together, names)) <= 1, query["query"]
        inference = next(
            i for i in hard.OPEN_DOMAIN if evidence[0]["text"].split(": ", 1)[1] in i.evidence
        )
        scope_texts = {row["text"] for row in entries.values() if row["scope"] in query["scopes"]}
        (other,) = names[query["scopes"][0]] - terms(next(iter(speakers)))
        for text in inference.other:
            assert any(t.endswith(text) and terms(t.split(":")[0]) == {other} for t in scope_texts)


def test_absolute_date_names_the_day_the_event_happened(
    entries: dict[str, Row], queries: list[Row], names: dict[str, set[str]]
) -> None:
    """The question names the day (or month) the event happened, which the turn states
    only relative to the day it was said; it shares at most one other word with it."""
    for query in by_category(queries, "absolute-date"):
        (evidence,) = query["expected"]
        row = entries[evidence]
        phrase = max((p for p in hard.DATE_PHRASES if p in row["text"]), key=len)
        span = hard.event_days(phrase, said_on(row))
        assert span is not None
        (mention,) = extract_dates(query["query"], question=True)
        assert mention.start is not None
        assert mention.end is not None
        assert mention.start <= span[0]
        assert span[1] < mention.end
        assert len(shared(query, row["text"], names)) <= 1, query["query"]


def test_relative_in_memory_asks_for_the_month_the_turn_points_to(
    entries: dict[str, Row], queries: list[Row]
) -> None:
    """The turn says "last month", "next week"... and the question names the month or
    year that points to, no phrase of the turn's."""
    phrases = (*hard.PAST_PHRASES, *hard.FUTURE_PHRASES)
    for query in by_category(queries, "relative-in-memory"):
        (evidence,) = query["expected"]
        row = entries[evidence]
        phrase = max((p for p in phrases if p in row["text"]), key=len)
        when = hard.told_when(phrase, said_on(row))
        assert when is not None
        assert query["query"].endswith(f"{when}?"), query["query"]
        assert phrase not in query["query"]


def test_relative_questions_point_at_the_newest_sessions(
    entries: dict[str, Row], queries: list[Row]
) -> None:
    """A relative question's phrase describes its evidence's day as seen from the
    scope's newest turn, and the evidence sits in one of the last sessions."""
    newest: dict[str, date] = {}
    for row in entries.values():
        newest[row["scope"]] = max(newest.get(row["scope"], date.min), said_on(row))
    for query in by_category(queries, "relative-question"):
        (evidence,) = query["expected"]
        row = entries[evidence]
        valid = hard.recent_phrases(said_on(row), newest[row["scope"]])
        assert any(query["query"].endswith(f" {phrase}?") for phrase in valid), query["query"]
        assert (newest[row["scope"]] - said_on(row)).days < 31


def test_temporal_noise_is_old_and_asked_with_a_relative_phrase(
    entries: dict[str, Row], queries: list[Row]
) -> None:
    """Temporal-noise evidence sits in a scope's older half; the question holds a
    relative phrase anyway."""
    sessions: defaultdict[str, set[int]] = defaultdict(set)
    for row in entries.values():
        sessions[row["scope"]].add(int(row["thread"].rsplit("-", 1)[1]))
    phrases = (*hard.NOISE_PHRASES, "earlier this year", "last year")
    for query in by_category(queries, "temporal-noise"):
        (evidence,) = query["expected"]
        row = entries[evidence]
        number = int(row["thread"].rsplit("-", 1)[1])
        assert number <= len(sessions[row["scope"]]) // 2
        assert any(f" {phrase}" in query["query"] for phrase in phrases), query["query"]


def test_recall_help_explains_the_command(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``python -m bench recall --help`` exits 0 and documents its options."""
    monkeypatch.setattr(sys, "argv", ["bench", "recall", "--help"])
    with pytest.raises(SystemExit) as exit_info:
        bench_main.main()
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    for option in ("--workload", "--conversations", "--arms", "--budgets", "--out"):
        assert option in out


def test_recall_runs_every_arm_at_every_budget(tmp_path: Path) -> None:
    """On a one-conversation, four-session workload the command writes recall in
    [0, 1] per category for every arm at 2000, 4000, 8000 and classic."""
    workload = tmp_path / "tiny"
    hard.generate(workload, conversations=1, sessions=4, seed=2)
    out = tmp_path / "recall.json"
    recall.main(["--workload", str(workload), "--repeat", "1", "--out", str(out)])
    result = json.loads(out.read_text())
    assert set(result["arms"]) == {arm.name for arm in recall.ARMS}
    categories = {q["category"] for q in read_rows(workload / "queries.jsonl")}
    for rows in result["arms"].values():
        assert set(rows) == {"2000", "4000", "8000", "classic"}
        for values in rows.values():
            assert set(values["recall"]) == {"all", *categories}
            assert all(0.0 <= v <= 1.0 for v in values["recall"].values())
            assert values["p50_ms"] > 0
