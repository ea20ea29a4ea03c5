"""``bench peer``'s measurement, without PowerContext: its headline asks every question
once, scopes interleaved, after warm-up questions it never measures; the repeated
figure comes after; the lexical probe reuses each question's evidence words; the report
says all three and the workload's shape."""

from __future__ import annotations

import itertools
import re
from collections import Counter
from typing import TYPE_CHECKING

import anyio
import pytest

from bench import _lifelike_conversations as lifelike
from bench import orchestrator, peer
from satchel._workload import WorkloadQuery, read_queries

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path


@pytest.fixture(scope="module")
def workload(generated: Callable[[str], Path]) -> Path:
    return generated("lifelike-conversations")


@pytest.fixture(scope="module")
def asked(workload: Path) -> list[WorkloadQuery]:
    return [q for q in read_queries(workload / "queries.jsonl")[0] if q.expected]


def test_questions_interleave_the_scopes_each_once(asked: list[WorkloadQuery]) -> None:
    """Every question once; no two in a row from one scope while another has some left."""
    order = peer.interleaved(asked)
    assert sorted(q.id for q in order) == sorted(q.id for q in asked)
    scopes = [q.scopes[0] for q in order]
    left = Counter(scopes)
    for current, following in itertools.pairwise(scopes):
        left[current] -= 1
        assert current != following or sum(n for s, n in left.items() if s != current) == 0
    assert order == peer.interleaved(asked)  # deterministic


def test_warm_up_questions_are_never_the_measured_ones(asked: list[WorkloadQuery]) -> None:
    warm = peer.warm_up(asked)
    assert len(warm) == len(peer.WARM_UP) * len({q.scopes[0] for q in asked})
    assert not {q.query for q in warm} & {q.query for q in asked}


def test_the_headline_asks_each_question_once_then_the_repeats(
    asked: list[WorkloadQuery],
) -> None:
    """The warm-up first on both arms (unmeasured); then each question once per arm in
    the first samples, the arms taking turns per block; the repeats apart."""
    calls: list[tuple[str, str]] = []

    def arm(name: str) -> peer.Ask:
        async def ask(query: WorkloadQuery) -> peer.Answer:
            calls.append((name, query.id))
            if name == "satchel":  # the arm in this process: its CPU time is measured
                return peer.Answer(0.001, list(query.expected), 100, cpu_seconds=0.0008)
            return peer.Answer(0.01, list(query.expected), 100)

        return ask

    queries = peer.interleaved(asked)[:6]
    warm = peer.warm_up(queries)
    ask = {name: arm(name) for name in peer.ARMS}
    first, repeated = anyio.run(lambda: peer.measure(ask, queries, warm, repeat=2, block=4))
    assert calls[: 2 * len(warm)] == [(a, q.id) for a in peer.ARMS for q in warm]
    for name in peer.ARMS:
        assert all(len(v) == 1 for v in first.seconds[name].values())
        assert all(len(v) == 2 for v in repeated.seconds[name].values())
        assert set(first.seconds[name]) == {q.id for q in queries}
    measured = calls[2 * len(warm) :]
    firsts = [name for name, _ in measured[: 2 * len(queries)]]
    assert firsts == ["satchel"] * 4 + ["powercontext"] * 4 + ["powercontext"] * 2 + ["satchel"] * 2
    result = peer.summarise(queries, first, repeated)
    assert result["ratio_p50"] == pytest.approx(10)
    assert result["repeated_ratio_p50"] == pytest.approx(10)
    assert result["arms"]["satchel"]["recall"]["all"] == 1.0
    assert result["arms"]["satchel"]["cpu_us"] == pytest.approx(800)
    assert result["arms"]["powercontext"]["cpu_us"] is None


def test_the_probe_reuses_its_evidence_words(asked: list[WorkloadQuery], workload: Path) -> None:
    """A probe question names its evidence's speaker and reuses its words: most of its
    terms are in its evidence, where the workload's questions hold few."""
    probe = peer.lexical_probe(asked, workload)
    assert [q.expected for q in probe] == [q.expected for q in asked]
    assert all(re.fullmatch(r"What did [A-Z][a-z]+ say about .+\?", q.query) for q in probe)
    assert peer.probe_overlap(probe, workload) >= 0.6
    assert lifelike.shape(workload)["question_terms_in_evidence"] <= 0.3


def test_the_report_says_the_headline_the_repeats_the_probe_and_the_shape(
    asked: list[WorkloadQuery], workload: Path
) -> None:
    queries = asked[:4]
    first, repeated = peer.Samples(), peer.Samples()
    for samples, scale in ((first, 1.0), (repeated, 0.5)):
        for query in queries:
            for name, seconds in (("satchel", 0.002), ("powercontext", 0.03)):
                samples.seconds[name][query.id].append(seconds * scale)
                samples.delivered[name][query.id] = list(query.expected)
                samples.sizes[name].append(1000)
            samples.cpu["satchel"].append(0.0007)
    result = peer.summarise(queries, first, repeated)
    result["probe"] = peer.summarise(queries, first, peer.Samples())
    result["probe"]["terms_in_evidence"] = 0.8
    result["workload"] = {"shape": lifelike.shape(workload)}
    result["load_average"] = {"start": 1.0, "end": 2.0}
    result["config"] = {"repeat": 3}
    text = peer.report(result)
    assert "each question asked once: **15.0x** (repeated questions: 15.0x)" in text
    assert "lexical probe" in text
    assert "ratio **15.0x**" in text
    assert "words per turn mean" in text
    assert "load average (1 min) at the start 1.0" in text
    assert "| satchel | 2.00 | 2.00 | 700 |" in text  # CPU us per prepare beside p50
    assert "| PowerContext 1.4.1 | 30.00 | 30.00 | - |" in text


def test_the_cached_conversations_are_named_by_their_content(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same generator output is found again in its folder; a generator that changed
    writes a folder of its own, so its stores are never the stale ones."""
    monkeypatch.setattr(orchestrator, "CACHE", tmp_path)
    first = peer.current_workload(1, 4)
    assert peer.current_workload(1, 4) == first
    assert first.name.startswith("lifelike-conversations-1x4-")
    assert read_queries(first / "queries.jsonl")[0]
    generate = lifelike.generate

    def reseeded(folder: Path, *, conversations: int, sessions: int) -> None:
        generate(folder, conversations=conversations, sessions=sessions, seed=5)

    monkeypatch.setattr(lifelike, "generate", reseeded)
    second = peer.current_workload(1, 4)
    assert second != first
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted([first.name, second.name])
