"""The off-topic benchmark's questions and its table (the benchmark itself is not run)."""

from __future__ import annotations

from bench import offtopic


def test_the_questions_span_many_domains_without_repeats() -> None:
    """At least 60 distinct questions over at least 10 domains, none a one-letter query."""
    questions = [text for _, text in offtopic.QUESTIONS]
    assert len(questions) >= 60
    assert len(set(questions)) == len(questions)
    assert len({domain for domain, _ in offtopic.QUESTIONS}) >= 10
    assert offtopic.ONE_LETTER not in questions


def test_the_table_pools_workloads_by_prepares() -> None:
    """A row per workload, backend and gate, and an 'all' row weighted by prepares."""
    tally = {"prepares": 0, "abstained": 0.0, "mean_bytes": 0.0, "p50_ms": 1.0}
    chats = {**tally, "prepares": 300, "abstained": 0.8, "mean_bytes": 1000.0}
    team = {**tally, "prepares": 100, "abstained": 1.0, "mean_bytes": 0.0}
    letter = {**tally, "prepares": 10, "abstained": 1.0}
    results = {
        "asyncio": {
            "chats": {"off": {"questions": chats, "one_letter": letter}},
            "team": {"off": {"questions": team, "one_letter": letter}},
        }
    }
    lines = offtopic.report(results).splitlines()
    assert len(lines) == 2 + 3
    assert lines[-1].startswith("| **all** | asyncio | off | 400 | 85.0% | 750 | 100% | 0 |")


def test_named_questions_get_a_table_of_their_own() -> None:
    tally = {"prepares": 40, "abstained": 0.25, "mean_bytes": 5000.0, "p50_ms": 1.0}
    letter = {**tally, "prepares": 10, "abstained": 1.0}
    results = {
        "asyncio": {"chats": {"on": {"questions": tally, "one_letter": letter, "named": tally}}}
    }
    lines = offtopic.report(results).splitlines()
    assert lines[-1] == "| chats | asyncio | on | 40 | 25.0% | 5000 | 1.00 |"


def test_a_named_question_names_each_speaker_of_each_chat() -> None:
    plan = offtopic._named_plan({"chat": ("Maya", "Theo")})
    assert len(plan) == 2 * len(offtopic.QUESTIONS[::3])
    assert plan[0] == (
        f"According to Maya, {offtopic.QUESTIONS[0][1][0].lower()}{offtopic.QUESTIONS[0][1][1:]}",
        "chat",
    )
