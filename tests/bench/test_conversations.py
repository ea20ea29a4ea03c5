"""The synthetic conversational workload: deterministic, well-formed, and each category's
evidence standing in the relation to its query that the category claims."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from datetime import UTC, date, datetime, timedelta
from typing import TYPE_CHECKING

import pytest

from bench import _conversation_facts as facts
from bench import _conversations
from tests.bench._rows import Row, read_rows

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path


STOPWORDS = frozenset({
    "a", "an", "the", "and", "or", "but", "to", "of", "for", "in", "on", "at", "by", "with",
    "about", "from", "what", "which", "who", "how", "when", "where", "did", "do", "does", "is",
    "was", "are", "be", "been", "has", "have", "had", "it", "its", "that", "this", "i", "my",
    "me", "you", "your", "his", "her", "their", "they", "he", "she", "we", "our", "s", "t", "ll",
})  # fmt: skip
MONTHS = {
    "January": 1, "February": 2, "March": 3, "April": 4, "May": 5, "June": 6, "July": 7,
    "August": 8, "September": 9, "October": 10, "November": 11, "December": 12,
}  # fmt: skip
WEEKDAYS = {"Friday": 4, "Saturday": 5}


def content_words(text: str) -> set[str]:
    """Lowercased words minus stopwords, with a plural ``s`` stripped."""
    words = (w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in STOPWORDS)
    return {w[:-1] if len(w) > 3 and w.endswith("s") else w for w in words}


def moment(row: Row) -> datetime:
    return datetime.fromisoformat(row["created_at"])


@pytest.fixture(scope="module")
def workload(generated: Callable[[str], Path]) -> Path:
    return generated("conversations")


def by_category(queries: list[Row], category: str) -> list[Row]:
    chosen = [q for q in queries if q["category"] == category]
    assert chosen, f"no {category} query"
    return chosen


def test_expected_ids_exist_in_the_query_scope(entries: dict[str, Row], queries: list[Row]) -> None:
    """Every expected id names an entry of the query's own scope."""
    for query in queries:
        assert query["scopes"] == [query["id"].split("/")[0]]
        assert query["expected"]
        for entry_id in query["expected"]:
            assert entries[entry_id]["scope"] == query["scopes"][0]


def test_entries_are_dated_dialog_turns_in_order(entries: dict[str, Row]) -> None:
    """Each entry is a named dialog turn with a UTC ``Z`` time and a thread; a thread's
    turns are in strictly increasing time order."""
    threads: defaultdict[str, list[datetime]] = defaultdict(list)
    for row in entries.values():
        assert row["created_at"].endswith("Z")
        assert moment(row).tzinfo == UTC
        assert row["kind"] == "dialog"
        assert re.fullmatch(r"[A-Z][a-z]+: \S.*", row["text"])
        assert row["thread"].startswith(f"{row['scope']}/session-")
        threads[row["thread"]].append(moment(row))
    for times in threads.values():
        assert times == sorted(set(times))


def test_single_hop_question_reuses_the_fact_words(
    entries: dict[str, Row], queries: list[Row]
) -> None:
    """A single-hop query shares two or more words with its fact, and a decoy turn
    elsewhere shares a word other than the speaker's name."""
    for query in by_category(queries, "single-hop"):
        (evidence,) = query["expected"]
        words = content_words(query["query"])
        assert len(words & content_words(entries[evidence]["text"])) >= 2
        name = content_words(entries[evidence]["text"].split(":")[0])
        decoys = [
            row
            for row in entries.values()
            if row["id"] != evidence and row["scope"] == query["scopes"][0]
            if words - name & content_words(row["text"])
        ]
        assert decoys


def test_reply_answer_shares_no_word_and_follows_the_question(
    entries: dict[str, Row], queries: list[Row]
) -> None:
    """A reply's answer shares no content word with the query and directly follows, in
    the same thread, a turn sharing at least two."""
    ids = list(entries)
    for query in by_category(queries, "reply"):
        (evidence,) = query["expected"]
        words = content_words(query["query"])
        assert not words & content_words(entries[evidence]["text"])
        before = entries[ids[ids.index(evidence) - 1]]
        assert before["thread"] == entries[evidence]["thread"]
        assert before["id"].split(":")[1] == str(int(evidence.split(":")[1]) - 1)
        assert len(words & content_words(before["text"])) >= 2


@pytest.mark.parametrize("exchange", facts.REPLY, ids=lambda e: e.query[:30])
def test_every_reply_template_keeps_answer_and_query_apart(exchange: facts.Exchange) -> None:
    """No reply template's answer shares a content word with its query or its question's
    two-word overlap, whatever the table row the generator picks."""
    query = content_words(exchange.query.format(asker="Alice"))
    assert not query & content_words("Bob: " + exchange.answer)
    assert len(query & content_words("Alice: " + exchange.question)) >= 2


def event_day(text: str, said_on: date) -> date:
    """The day a dated turn's event happened, from its relative phrase."""
    match = re.search(r"yesterday|today|this morning|last (Friday|Saturday)", text)
    assert match, text
    if match.group(1):
        day = said_on - timedelta(days=1)
        while day.weekday() != WEEKDAYS[match.group(1)]:
            day -= timedelta(days=1)
        return day
    return said_on - timedelta(days=1 if match.group(0) == "yesterday" else 0)


def named_date(query: str) -> tuple[int, int, int | None]:
    """(year, month, day or None) of the date a query names."""
    if m := re.search(r"on (\d{1,2}) ([A-Z][a-z]+) (\d{4})\?", query):
        return int(m[3]), MONTHS[m[2]], int(m[1])
    if m := re.search(r"on ([A-Z][a-z]+) (\d{1,2}), (\d{4})\?", query):
        return int(m[3]), MONTHS[m[1]], int(m[2])
    m = re.search(r"in ([A-Z][a-z]+) (\d{4})\?", query)
    assert m, query
    return int(m[2]), MONTHS[m[1]], None


def test_date_query_names_the_day_the_event_happened(
    entries: dict[str, Row], queries: list[Row]
) -> None:
    """A date query names the event's absolute day (or its month, when that month holds
    the speaker's only dated event) and no word of the event."""
    events: list[tuple[str, str, str, date]] = []  # (query, speaker, event text, its day)
    for query in by_category(queries, "date"):
        (evidence,) = query["expected"]
        text = entries[evidence]["text"]
        speaker = f"{query['scopes'][0]}/{text.split(':')[0]}"
        said_on = moment(entries[evidence]).date()
        events.append((query["query"], speaker, text, event_day(text, said_on)))
    per_month = Counter((speaker, d.year, d.month) for _, speaker, _, d in events)
    for asked, speaker, text, happened in events:
        year, month, day = named_date(asked)
        assert (happened.year, happened.month) == (year, month)
        assert day is None or happened.day == day
        assert day is not None or per_month[speaker, year, month] == 1
        assert content_words(asked) & content_words(text) == content_words(text.split(":")[0])


def relative_holds(phrase: str, day: date, newest: date) -> bool:
    """Whether someone on ``newest`` would call ``day`` by ``phrase``."""
    monday = (newest - timedelta(days=newest.weekday())) - (day - timedelta(days=day.weekday()))
    months = (newest.year - day.year) * 12 + newest.month - day.month
    delta = (newest - day).days
    checks = {
        "today": delta == 0,
        "yesterday": delta == 1,
        "two days ago": delta == 2,
        "earlier this week": monday.days == 0 and delta > 2,
        "last week": monday.days == 7 and delta > 2,
        "two weeks ago": monday.days == 14,
        "three weeks ago": monday.days == 21,
        "earlier this month": months == 0 and monday.days > 21,
        "last month": months == 1 and monday.days > 21,
        "a month ago": months == 2 and monday.days > 21,
    }
    return checks[phrase]


def test_relative_evidence_is_dated_as_the_query_says(
    entries: dict[str, Row], queries: list[Row]
) -> None:
    """A relative query's phrase describes its evidence's day as seen from the scope's
    newest entry."""
    newest: dict[str, date] = {}
    for row in entries.values():
        newest[row["scope"]] = max(newest.get(row["scope"], date.min), moment(row).date())
    for query in by_category(queries, "relative"):
        (evidence,) = query["expected"]
        phrase = re.search(
            r" (today|yesterday|\w+ \w+ ago|\w+ this \w+|last \w+)\?$", query["query"]
        )
        assert phrase, query["query"]
        day = moment(entries[evidence]).date()
        assert relative_holds(phrase[1], day, newest[query["scopes"][0]]), query["query"]


def test_multi_session_evidence_spans_threads(entries: dict[str, Row], queries: list[Row]) -> None:
    """A list question's evidence sits in two to four sessions, one item each, and each
    item shares at most one content word with it."""
    for query in by_category(queries, "multi-session"):
        threads = [entries[e]["thread"] for e in query["expected"]]
        assert 2 <= len(set(threads)) == len(threads) <= 4
        for entry_id in query["expected"]:
            said = entries[entry_id]["text"].split(": ", 1)[1]
            assert len(content_words(query["query"]) & content_words(said)) <= 1


def test_defaults_balance_the_categories(tmp_path: Path) -> None:
    """At the defaults each main category has about 25 queries and relative about 10."""
    _conversations.generate(tmp_path)
    counts = Counter(q["category"] for q in read_rows(tmp_path / "queries.jsonl"))
    assert set(counts) == {"single-hop", "reply", "date", "relative", "multi-session"}
    assert all(20 <= n <= 30 for c, n in counts.items() if c != "relative")
    assert 8 <= counts["relative"] <= 12


def test_cli_writes_and_counts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The command line writes the folder and prints the counts per category and scope."""
    _conversations.main([str(tmp_path), "--conversations", "1", "--sessions", "4"])
    out = capsys.readouterr().out
    assert "queries.jsonl: date 1, multi-session 1, relative 2, reply 1, single-hop 1" in out
    assert "entries.jsonl: conv-0 " in out


def test_rejects_too_few_sessions(tmp_path: Path) -> None:
    """One session cannot hold the relative news of two."""
    with pytest.raises(ValueError, match="two sessions"):
        _conversations.generate(tmp_path, sessions=1)
