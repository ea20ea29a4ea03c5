"""A deterministic synthetic conversational workload (the format: docs/workload.md).

Each conversation is its own scope (``conv-{k}``): two speakers with first names talking
over dated sessions spread across about a year, one thread per session, mostly small
talk. Into it are planted facts whose queries exercise one recall path each:

- ``single-hop``: a turn states a fact; the question reuses a few of its words (lexical).
- ``reply``: a question turn and the other speaker's answer; the query shares words with
  the question only, so the answer is found through its neighbour in the thread.
- ``date``: an event told relative to its session ("yesterday", "last Friday"); the query
  names the absolute date and nothing else distinctive (temporal resolution).
- ``relative``: news in the last two sessions; the query says "today", "last week", ...
  relative to the newest entry of the scope (recency windows).
- ``multi-session``: a list question whose items sit in 2-4 sessions and share at most one
  word with it (recall across threads, by meaning).

Decoy turns reuse a fact's words in another sense, so a lexical match is not trivially
the answer. Deterministic for a seed: one ``random.Random``, no clock.
"""

from __future__ import annotations

import argparse
import collections
import functools
import itertools
import json
import random
import re
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from bench import _conversation_facts as facts
from bench import _corpus

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

MONTHS = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)  # fmt: skip
FIRST_DAY = date(2022, 1, 3)


@attrs.define
class Session:
    """One dated session: turn ``t`` (0-based) is said ``minutes[t]`` after ``start``."""

    number: int
    start: datetime
    first_speaker: int
    minutes: list[int]
    texts: list[str | None]

    @property
    def day(self) -> date:
        return self.start.date()

    def speaker(self, turn: int) -> int:
        return (self.first_speaker + turn) % 2

    def free(self, speaker: int, width: int = 1) -> list[int]:
        """Turns where ``speaker`` can say something (``width`` turns in a row are free);
        the first and last turns stay for a greeting and a goodbye."""
        return [
            t
            for t in range(1, len(self.texts) - width)
            if self.speaker(t) == speaker and all(s is None for s in self.texts[t : t + width])
        ]


@attrs.define
class Conversation:
    """A scope's two speakers, its sessions and the queries planted so far."""

    scope: str
    names: tuple[str, str]
    sessions: list[Session]
    queries: list[dict[str, Any]] = attrs.field(factory=list)

    def put(self, session: Session, turn: int, utterance: str) -> str:
        """Write an utterance at a turn; returns the entry id."""
        session.texts[turn] = f"{self.names[session.speaker(turn)]}: {utterance}"
        return f"{self.scope}/S{session.number}:{turn + 1}"

    def say(
        self, rng: random.Random, speaker: int, utterance: str, among: Sequence[Session] = ()
    ) -> str:
        """Put an utterance at a random free turn of ``speaker``; returns the entry id."""
        session, turn = claim(rng, among or self.planting, speaker)
        return self.put(session, turn, utterance)

    @property
    def planting(self) -> list[Session]:
        """Sessions open to facts: all but the last two, which hold the ``relative`` news
        alone so "today" or "last week" has one substantive answer per speaker."""
        return self.sessions[:-2] if len(self.sessions) > 3 else self.sessions

    def ask(self, category: str, query: str, expected: list[str]) -> None:
        qid = f"{self.scope}/{category}/{len(self.queries) + 1}"
        self.queries.append(
            {
                "id": qid,
                "scopes": [self.scope],
                "query": query,
                "expected": expected,
                "category": category,
            }
        )


def generate(folder: Path, *, conversations: int = 6, sessions: int = 18, seed: int = 11) -> None:
    """Write ``entries.jsonl`` and ``queries.jsonl`` into ``folder``.

    Args:
        folder: created if missing; both files are replaced.
        conversations: number of scopes ``conv-0`` ... ``conv-{n-1}``.
        sessions: sessions per conversation; each category plants ``sessions // 4``
            queries per conversation (at least one), ``relative`` two.
        seed: the one source of randomness.

    Raises:
        ValueError: if there are fewer than two sessions or no conversation.
    """
    if conversations < 1 or sessions < 2:
        raise ValueError("need at least one conversation of at least two sessions")
    rng = random.Random(seed)
    starts = rng.sample(range(max(365, conversations)), conversations)
    convs = [
        _conversation(rng, k, sessions, FIRST_DAY + timedelta(days=starts[k]))
        for k in range(conversations)
    ]
    folder.mkdir(parents=True, exist_ok=True)
    write_rows(folder / "entries.jsonl", [row for c in convs for row in _entries(rng, c)])
    write_rows(folder / "queries.jsonl", [q for c in convs for q in c.queries])


def _conversation(rng: random.Random, k: int, sessions: int, first_day: date) -> Conversation:
    names = rng.sample(facts.NAMES, 2)
    conv = Conversation(f"conv-{k}", (names[0], names[1]), _sessions(rng, sessions, first_day))
    count = max(1, sessions // 4)
    # Most constrained first: relative needs the last sessions, reply two turns in a row.
    _plant_relative(rng, conv)
    _plant_replies(rng, conv, min(count, len(facts.REPLY)))
    _plant_lists(rng, conv, min(count, len(facts.MULTI_SESSION)))
    _plant_dates(rng, conv, min(count, len(facts.DATE_EVENTS)))
    _plant_facts(rng, conv, min(count, len(facts.SINGLE_HOP)))
    return conv


def _sessions(rng: random.Random, count: int, first_day: date) -> list[Session]:
    day, out = first_day, []
    for number in range(1, count + 1):
        if number > 1:
            day += timedelta(days=rng.randint(2, 30))
        start = datetime(day.year, day.month, day.day, rng.randint(9, 20), rng.randrange(60))
        turns = rng.randint(14, 24)
        steps = [rng.choice((1, 2)) for _ in range(turns - 1)]
        minutes = list(itertools.accumulate(steps, initial=0))
        out.append(Session(number, start, rng.randrange(2), minutes, [None] * turns))
    return out


def claim(
    rng: random.Random, sessions: Sequence[Session], speaker: int, width: int = 1
) -> tuple[Session, int]:
    slots = [(s, t) for s in sessions for t in s.free(speaker, width)]
    if not slots:
        raise ValueError("sessions too short for the planted facts")
    return rng.choice(slots)


def _plant_facts(rng: random.Random, conv: Conversation, count: int) -> None:
    for fact in rng.sample(facts.SINGLE_HOP, count):
        speaker = rng.randrange(2)
        entry = conv.say(rng, speaker, fact.text.format(x=rng.choice(fact.values)))
        conv.say(rng, speaker, fact.decoy)
        conv.ask("single-hop", fact.question.format(name=conv.names[speaker]), [entry])


def _plant_replies(rng: random.Random, conv: Conversation, count: int) -> None:
    for exchange in rng.sample(facts.REPLY, count):
        asker = rng.randrange(2)
        session, turn = claim(rng, conv.planting, asker, width=2)
        conv.put(session, turn, exchange.question)
        answer = conv.put(session, turn + 1, exchange.answer)
        conv.say(rng, asker, exchange.decoy)
        conv.ask("reply", exchange.query.format(asker=conv.names[asker]), [answer])


def _plant_lists(rng: random.Random, conv: Conversation, count: int) -> None:
    for topic in rng.sample(facts.MULTI_SESSION, count):
        speaker = rng.randrange(2)
        open_sessions = [s for s in conv.planting if s.free(speaker)]
        size = min(rng.randint(2, 4), len(open_sessions))
        chosen = rng.sample(open_sessions, size)
        items = rng.sample(topic.items, size)
        entries = [conv.say(rng, speaker, item, [s]) for s, item in zip(chosen, items, strict=True)]
        conv.say(rng, speaker, topic.decoy)
        conv.ask("multi-session", topic.query.format(name=conv.names[speaker]), entries)


def _plant_dates(rng: random.Random, conv: Conversation, count: int) -> None:
    """Plant events at days unique per speaker, then ask for each by its absolute date."""
    events: list[tuple[int, date, str]] = []
    for template in rng.sample(facts.DATE_EVENTS, count):
        speaker = rng.randrange(2)
        taken = {day for s, day, _ in events if s == speaker}
        for _ in range(100):
            session, turn = claim(rng, conv.planting, speaker)
            phrase = rng.choice(facts.DATE_PHRASES)
            day = session.day - timedelta(days=days_back(phrase, session.day))
            if day not in taken:
                events.append((speaker, day, conv.put(session, turn, template.format(when=phrase))))
                break
    per_month = collections.Counter((s, day.year, day.month) for s, day, _ in events)
    for speaker, day, entry in events:
        forms = ["day", "us"] + (["month"] if per_month[speaker, day.year, day.month] == 1 else [])
        when = date_text(day, rng.choice(forms))
        query = rng.choice(facts.DATE_QUERIES).format(name=conv.names[speaker], date=when)
        conv.ask("date", query, [entry])


def days_back(phrase: str, day: date) -> int:
    """How many days before ``day`` an event said on ``day`` with ``phrase`` happened."""
    if phrase in ("today", "this morning"):
        return 0
    if phrase == "yesterday":
        return 1
    weekday = {"last Friday": 4, "last Saturday": 5}[phrase]
    return (day.weekday() - weekday - 1) % 7 + 1  # the latest such weekday strictly before


def date_text(day: date, form: str) -> str:
    month = MONTHS[day.month - 1]
    if form == "day":
        return f"on {day.day} {month} {day.year}"
    if form == "us":
        return f"on {month} {day.day}, {day.year}"
    return f"in {month} {day.year}"


def _plant_relative(rng: random.Random, conv: Conversation) -> None:
    """News in each of the last two sessions, asked relative to the newest session."""
    newest = conv.sessions[-1].day
    speakers = rng.sample((0, 1), 2)
    news = rng.sample(facts.NEWS, 2)
    for session, speaker, text in zip(conv.sessions[-2:], speakers, news, strict=True):
        entry = conv.say(rng, speaker, text, [session])
        names = {"name": conv.names[speaker], "other": conv.names[1 - speaker]}
        query = rng.choice(facts.RELATIVE_QUERIES).format(
            **names, phrase=relative_phrase(session.day, newest)
        )
        conv.ask("relative", query, [entry])


def relative_phrase(day: date, newest: date) -> str:
    """How someone on ``newest`` refers to ``day``: "today", "last week", "last month"..."""
    delta = (newest - day).days
    if delta < 3:
        return ("today", "yesterday", "two days ago")[delta]
    weeks = ((newest - timedelta(newest.weekday())) - (day - timedelta(day.weekday()))).days // 7
    if weeks < 4:
        return ("earlier this week", "last week", "two weeks ago", "three weeks ago")[weeks]
    months = (newest.year - day.year) * 12 + newest.month - day.month
    return ("earlier this month", "last month", "a month ago")[months]


def _entries(rng: random.Random, conv: Conversation) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for session in conv.sessions:
        # A shuffled deck, so no small-talk line repeats within a session.
        deck = iter(rng.sample(facts.SMALL_TALK, len(facts.SMALL_TALK)))
        for turn, text in enumerate(session.texts):
            if text is None:
                conv.put(session, turn, _small_talk(rng, conv, session, turn, deck))
            rows.append(row_of(conv.scope, session, turn))
    return rows


def row_of(scope: str, session: Session, turn: int) -> dict[str, Any]:
    moment = session.start + timedelta(minutes=session.minutes[turn])
    return {
        "id": f"{scope}/S{session.number}:{turn + 1}",
        "scope": scope,
        "family": "memory",
        "text": session.texts[turn],
        "kind": "dialog",
        "created_at": f"{moment:%Y-%m-%dT%H:%M:%S}Z",
        "thread": f"{scope}/session-{session.number}",
    }


def _small_talk(
    rng: random.Random, conv: Conversation, session: Session, turn: int, deck: Iterator[str]
) -> str:
    if turn == 0:
        template = rng.choice(facts.GREETINGS)
    elif turn == len(session.texts) - 1:
        template = rng.choice(facts.CLOSINGS)
    else:
        template = next(deck)
    slots = {key: rng.choice(options) for key, options in facts.SLOTS.items()}
    other = conv.names[1 - session.speaker(turn)]
    return template.format(other=other, word=rng.choice(_words()), **slots)


@functools.cache
def _words() -> list[str]:
    """Real English words for the small talk, minus every word of the planted tables."""
    tables = (facts.SINGLE_HOP, facts.REPLY, facts.MULTI_SESSION, facts.DATE_EVENTS, facts.NEWS)
    planted = set(re.findall(r"[a-z]+", repr(tables).lower()))
    return [w for w in _corpus.english_words() if w not in planted]


def write_rows(path: Path, rows: list[dict[str, Any]]) -> None:
    with path.open("w", encoding="utf-8") as out:
        for row in rows:
            out.write(json.dumps(row, ensure_ascii=False) + "\n")


def main(argv: list[str] | None = None) -> None:
    """``python -m bench._conversations OUT_DIR``: write the workload and print its counts."""
    parser = argparse.ArgumentParser(
        prog="python -m bench._conversations",
        description="Write a synthetic conversational workload (entries.jsonl, queries.jsonl) "
        "with planted single-hop, reply, date, relative and multi-session queries.",
    )
    parser.add_argument("out", type=Path, metavar="OUT_DIR", help="folder to write into")
    parser.add_argument("--conversations", type=int, default=6, help="scopes (default 6)")
    parser.add_argument("--sessions", type=int, default=18, help="per scope (default 18)")
    parser.add_argument("--seed", type=int, default=11, help="random seed (default 11)")
    args = parser.parse_args(argv)
    generate(args.out, conversations=args.conversations, sessions=args.sessions, seed=args.seed)
    print_counts(args.out)


def print_counts(folder: Path) -> None:
    """Print a workload's questions per category and turns per scope."""
    for name, field in (("queries.jsonl", "category"), ("entries.jsonl", "scope")):
        with (folder / name).open(encoding="utf-8") as lines:
            counts = collections.Counter(json.loads(line)[field] for line in lines)
        print(f"{name}: " + ", ".join(f"{k} {n}" for k, n in sorted(counts.items())))


if __name__ == "__main__":
    main()
