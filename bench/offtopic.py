"""Abstention: questions no scope discusses, asked of populated scopes.

``python -m bench offtopic`` asks general-knowledge questions (``QUESTIONS``: 85 across
17 domains, written for this benchmark, none about anything a workload's scopes talk
about) of every scope of two workloads:

- the hard synthetic conversations (``bench/_hard_conversations.py``, generated into
  ``bench/.cache/hard-conversations`` when missing; ten chat scopes of ~575 turns), and
- the team sample the CLI demo ingests (``satchel demo``: ``project:harbor`` and
  ``team:platform``, memory, experiences, topic memories, resources and a profile),

with the bundled static embedder, default limits and the default 8,000-byte budget, on
asyncio and on trio, gate off and gate on (``RecallSufficiencyPolicy()``). A prepare
abstains when it returns ``status="empty"``; every abstaining prepare must report the
assessment ``no-relevant`` (a sink checks it). Per workload, backend and gate: the
share of prepares that abstain and the mean ``content_bytes`` delivered, and the same
for the one-letter query ``"x"`` asked of every scope, and for *named* off-topic
questions: every third question asked as a participant's view ("According to Maya,
who wrote the Napoleonic Code?", ``named``), of each chat scope, naming each of its two
first speakers (a name the whole chat is about, so the scope's own term). Prints a
Markdown table and writes JSON (``--out``, default ``bench/results/offtopic.json``),
which also lists the questions some scope answered rather than abstaining.

The goal is at least 90% abstaining and a mean of at most 500 bytes delivered; for the
named questions, at least 60% abstaining.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import anyio
import attrs
import threadpoolctl

import satchel
from bench import orchestrator, recall
from satchel._workload import ingest, read_entries

if TYPE_CHECKING:
    from collections.abc import Sequence

RESULTS: Final = orchestrator.RESULTS
CACHE: Final = orchestrator.CACHE
SAMPLE: Final = Path(satchel.__file__).parent / "cli" / "sample"
BACKENDS: Final = ("asyncio", "trio")
GATES: Final = ("off", "on")
ONE_LETTER: Final = "x"
GOAL_SHARE: Final = 0.9
GOAL_BYTES: Final = 500

#: (domain, question): general knowledge no workload's scopes discuss.
QUESTIONS: Final = (
    ("science", "What is the melting point of gallium?"),
    ("science", "Which element has the atomic number 79?"),
    ("science", "What is the speed of light in a vacuum?"),
    ("science", "Why does ice float on liquid water?"),
    ("science", "What does Avogadro's constant measure?"),
    ("astronomy", "How many moons does Jupiter have?"),
    ("astronomy", "What is the largest volcano in the solar system?"),
    ("astronomy", "How far is the Andromeda galaxy from the Milky Way?"),
    ("astronomy", "What causes a total solar eclipse?"),
    ("astronomy", "Which planet has the shortest year?"),
    ("biology", "How many chambers does a crocodile heart have?"),
    ("biology", "What is the function of mitochondria in a cell?"),
    ("biology", "Which enzyme unwinds the DNA double helix during replication?"),
    ("biology", "How do tardigrades survive in outer space?"),
    ("biology", "What is the lifespan of a Greenland shark?"),
    ("geography", "What is the capital city of Kazakhstan?"),
    ("geography", "Which river flows through Khartoum?"),
    ("geography", "What is the deepest lake on Earth?"),
    ("geography", "Which country has the most time zones?"),
    ("geography", "How tall is Mount Kilimanjaro?"),
    ("history", "Who painted the Sistine Chapel ceiling?"),
    ("history", "When did the Byzantine Empire fall to the Ottomans?"),
    ("history", "Who was the first emperor of the Qin dynasty?"),
    ("history", "What caused the Dust Bowl in the 1930s?"),
    ("history", "Which treaty ended the Thirty Years' War?"),
    ("literature", "Who wrote One Hundred Years of Solitude?"),
    ("literature", "What is the name of the whale in Moby-Dick?"),
    ("literature", "In which century did Geoffrey Chaucer write The Canterbury Tales?"),
    ("literature", "Who is the narrator of The Great Gatsby?"),
    ("literature", "Which poet wrote The Waste Land?"),
    ("music", "How many symphonies did Beethoven compose?"),
    ("music", "What instrument did Charlie Parker play?"),
    ("music", "Which key has three flats in its signature?"),
    ("music", "Who composed The Rite of Spring?"),
    ("music", "What is a fugue in baroque music?"),
    ("sports", "How long is a marathon in kilometres?"),
    ("sports", "Which country won the first FIFA World Cup?"),
    ("sports", "How many players are on a rugby union team?"),
    ("sports", "What is the offside rule in ice hockey?"),
    ("sports", "Who holds the record for most Olympic gold medals?"),
    ("mathematics", "What is the derivative of the natural logarithm?"),
    ("mathematics", "Who proved Fermat's Last Theorem?"),
    ("mathematics", "What is the sum of the interior angles of a hexagon?"),
    ("mathematics", "Is the square root of two a rational number?"),
    ("mathematics", "What does the Riemann hypothesis state about zeta zeros?"),
    ("computing", "What is the time complexity of quicksort in the worst case?"),
    ("computing", "Who invented the World Wide Web?"),
    ("computing", "What does a monad mean in Haskell?"),
    ("computing", "How does the Diffie-Hellman key exchange work?"),
    ("computing", "What is the difference between TCP and UDP?"),
    ("economics", "What does gross domestic product measure?"),
    ("economics", "Who wrote The Wealth of Nations?"),
    ("economics", "What is quantitative easing by a central bank?"),
    ("economics", "What caused the hyperinflation in Weimar Germany?"),
    ("economics", "How is the Gini coefficient calculated?"),
    ("medicine", "What is the normal range of human body temperature in Fahrenheit?"),
    ("medicine", "Which vitamin deficiency causes scurvy?"),
    ("medicine", "How many bones are in the adult human skeleton?"),
    ("medicine", "What does an electrocardiogram record?"),
    ("medicine", "Who discovered penicillin?"),
    ("language", "What language family does Hungarian belong to?"),
    ("language", "How many letters are in the Greek alphabet?"),
    ("language", "What is the origin of the word algorithm?"),
    ("language", "Which language has the most native speakers?"),
    ("language", "What is a palindrome?"),
    ("architecture", "Who designed the Sagrada Familia?"),
    ("architecture", "How tall is the Burj Khalifa?"),
    ("architecture", "What is a flying buttress in Gothic cathedrals?"),
    ("architecture", "When was the Golden Gate Bridge completed?"),
    ("architecture", "What material is the Great Wall of China mostly made of?"),
    ("mythology", "Who is the Norse god of thunder?"),
    ("mythology", "What did Prometheus steal from the gods?"),
    ("mythology", "Which Egyptian god has the head of a jackal?"),
    ("mythology", "How many labours did Hercules complete?"),
    ("mythology", "Who was the Roman goddess of wisdom?"),
    ("film", "Who directed the film Seven Samurai?"),
    ("film", "Which film won the first Academy Award for best picture?"),
    ("film", "What year was the first Star Wars film released?"),
    ("film", "Who played Vito Corleone in The Godfather?"),
    ("film", "What is the highest-grossing animated film of all time?"),
    ("law", "What does habeas corpus mean?"),
    ("law", "Which amendment to the US Constitution abolished slavery?"),
    ("law", "What is the statute of limitations for fraud in Germany?"),
    ("law", "Who wrote the Napoleonic Code?"),
    ("law", "What is the difference between a patent and a trademark?"),
)


@attrs.frozen
class Workload:
    """A workload the questions are asked of: its name, database and scopes."""

    name: str
    db: Path
    scopes: tuple[str, ...]
    #: Each chat scope's first two speakers, for the named questions (none: not a chat).
    speakers: dict[str, tuple[str, ...]] = attrs.Factory(dict)


@attrs.define
class Tally:
    """Prepares of one arm: how many, how many abstained, their bytes and times."""

    prepares: int = 0
    abstained: int = 0
    bytes: list[int] = attrs.Factory(list)
    seconds: list[float] = attrs.Factory(list)

    def add(self, context: satchel.PreparedContext, seconds: float) -> None:
        self.prepares += 1
        self.abstained += context.status == "empty"
        self.bytes.append(context.content_bytes)
        self.seconds.append(seconds)

    def summary(self) -> dict[str, float]:
        return {
            "prepares": self.prepares,
            "abstained": self.abstained / self.prepares,
            "mean_bytes": statistics.fmean(self.bytes),
            "p50_ms": statistics.median(self.seconds) * 1e3,
        }


async def prepare_workloads(folder: Path) -> list[Workload]:
    """The hard conversations (ingested once, cached) and the team sample (ingested into
    ``folder``), each with its scopes."""
    hard = recall.default_workload(10)
    db = CACHE / "offtopic-hard-conversations.db"
    owners = await orchestrator.ingest_workload(db, hard, satchel.StaticEmbedder())
    chats = tuple(sorted({str(key[1]) for key in owners}))
    entries_of_chats, _ = read_entries(hard / "entries.jsonl")
    speakers: dict[str, dict[str, None]] = defaultdict(dict)
    for entry in entries_of_chats:
        if isinstance(entry.record, satchel.MemoryEntry):
            speaker, _, said = entry.record.text.partition(":")
            if said:
                speakers[entry.scope].setdefault(speaker, None)
    team = folder / "team.db"
    entries, errors = read_entries(SAMPLE / "entries.jsonl")
    if errors:
        raise SystemExit(f"the CLI sample is broken: {errors[0]}")
    async with satchel.open_runtime(str(team), embedder=satchel.StaticEmbedder()) as rt:
        await ingest(rt, entries)
    scopes = tuple(sorted({entry.scope for entry in entries}))
    named = {scope: tuple(people)[:2] for scope, people in speakers.items()}
    return [
        Workload("hard-conversations", db, chats, named),
        Workload("team-sample", team, scopes),
    ]


async def ask(workload: Workload, gate: str) -> dict[str, Any]:
    """Every question and the one-letter query of every scope of ``workload``, on one
    runtime: the tallies and the questions some scope did not abstain on."""
    wrong: list[str] = []
    efforts: list[satchel.RecallEffort] = []

    async def sink(effort: satchel.RecallEffort) -> None:
        efforts.append(effort)

    questions, letter, named = Tally(), Tally(), Tally()
    answered: dict[str, list[str]] = defaultdict(list)
    policy = satchel.RecallSufficiencyPolicy() if gate == "on" else None
    async with satchel.open_runtime(
        str(workload.db),
        embedder=satchel.StaticEmbedder(),
        recall_policy=policy,
        recall_effort_sink=sink,
    ) as rt:
        for (_, text), scope in _plan(workload.scopes):
            efforts.clear()
            context, seconds = await _timed(rt, scope, text)
            tally = letter if text == ONE_LETTER else questions
            tally.add(context, seconds)
            (effort,) = efforts
            # An abstention delivers nothing. A pack may be empty without one, too: when
            # round 0's only evidence is the scope's vocabulary and no candidate is
            # vouched for, nothing is delivered (and the gate, if on, may look again).
            if effort.assessment == "no-relevant" and context.status != "empty":
                wrong.append(f"{scope}: {text} ({context.status}, {effort.assessment})")
            if context.status != "empty" and text != ONE_LETTER:
                answered[text].append(scope)
        for text, scope in _named_plan(workload.speakers):
            efforts.clear()
            context, seconds = await _timed(rt, scope, text)
            named.add(context, seconds)
    if wrong:
        raise SystemExit("an abstention delivered something:\n" + "\n".join(wrong[:10]))
    found: dict[str, Any] = {
        "questions": questions.summary(),
        "one_letter": letter.summary(),
        "answered": dict(answered),
    }
    if named.prepares:
        found["named"] = named.summary()
    return found


def _named_plan(speakers: dict[str, tuple[str, ...]]) -> list[tuple[str, str]]:
    """Every third question as a participant's view, of each chat naming each of its
    speakers."""
    return [
        (f"According to {person}, {text[0].lower()}{text[1:]}", scope)
        for scope, people in sorted(speakers.items())
        for person in people
        for _, text in QUESTIONS[::3]
    ]


def _plan(scopes: Sequence[str]) -> list[tuple[tuple[str, str], str]]:
    every = [*QUESTIONS, ("one-letter", ONE_LETTER)]
    return [(question, scope) for question in every for scope in scopes]


async def _timed(
    rt: satchel.Runtime, scope: str, text: str
) -> tuple[satchel.PreparedContext, float]:
    started = time.perf_counter()
    context = await rt.prepare_context(satchel.PrepareContextRequest(scope_id=scope, query=text))
    return context, time.perf_counter() - started


async def measure(workloads: Sequence[Workload]) -> dict[str, dict[str, dict[str, Any]]]:
    """Each workload, gate off and on, on the running backend."""
    return {
        workload.name: {gate: await ask(workload, gate) for gate in GATES} for workload in workloads
    }


def run(backends: Sequence[str]) -> dict[str, Any]:
    """Ingest once, then measure on each backend in turn."""
    with tempfile.TemporaryDirectory(prefix="satchel-offtopic-") as folder:
        workloads = anyio.run(prepare_workloads, Path(folder))
        results = {backend: anyio.run(measure, workloads, backend=backend) for backend in backends}
    return {
        "results": results,
        "config": {
            "questions": len(QUESTIONS),
            "domains": len({domain for domain, _ in QUESTIONS}),
            "scopes": {workload.name: list(workload.scopes) for workload in workloads},
            "embedder": "static",
            "max_bytes": 8000,
            "gate": "on: RecallSufficiencyPolicy(); off: None",
        },
    }


def report(results: dict[str, Any]) -> str:
    """A Markdown table: a row per workload, backend and gate, then all together."""
    lines = [
        "| workload | backend | gate | prepares | abstained | mean bytes | 'x' abstained"
        " | 'x' mean bytes | p50 ms |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    pooled: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for backend, workloads in results.items():
        for name, gates in workloads.items():
            for gate, found in gates.items():
                pooled[backend, gate].append(found)
                lines.append(_row(name, backend, gate, found["questions"], found["one_letter"]))
    for (backend, gate), found in pooled.items():
        questions = _pooled([f["questions"] for f in found])
        letter = _pooled([f["one_letter"] for f in found])
        lines.append(_row("**all**", backend, gate, questions, letter))
    named = [
        (backend, name, gate, found["named"])
        for backend, workloads in results.items()
        for name, gates in workloads.items()
        for gate, found in gates.items()
        if "named" in found
    ]
    if named:
        lines += [
            "",
            "| named questions | backend | gate | prepares | abstained | mean bytes | p50 ms |",
            "|---|---|---|---:|---:|---:|---:|",
        ]
        lines += [
            f"| {name} | {backend} | {gate} | {t['prepares']} | {t['abstained']:.1%}"
            f" | {t['mean_bytes']:.0f} | {t['p50_ms']:.2f} |"
            for backend, name, gate, t in named
        ]
    return "\n".join(lines)


def _row(name: str, backend: str, gate: str, q: dict[str, Any], x: dict[str, Any]) -> str:
    return (
        f"| {name} | {backend} | {gate} | {q['prepares']} | {q['abstained']:.1%}"
        f" | {q['mean_bytes']:.0f} | {x['abstained']:.0%} | {x['mean_bytes']:.0f}"
        f" | {q['p50_ms']:.2f} |"
    )


def _pooled(tallies: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Tallies of several workloads as one, weighted by prepares (p50: the largest)."""
    prepares = sum(t["prepares"] for t in tallies)
    return {
        "prepares": prepares,
        "abstained": sum(t["abstained"] * t["prepares"] for t in tallies) / prepares,
        "mean_bytes": sum(t["mean_bytes"] * t["prepares"] for t in tallies) / prepares,
        "p50_ms": max(t["p50_ms"] for t in tallies),
    }


def parser() -> argparse.ArgumentParser:
    out = argparse.ArgumentParser(
        prog="python -m bench offtopic",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    out.add_argument(
        "--backends",
        nargs="+",
        choices=BACKENDS,
        default=list(BACKENDS),
        help="event loops to run on (default: asyncio trio)",
    )
    out.add_argument(
        "--out",
        type=Path,
        default=RESULTS / "offtopic.json",
        help="JSON results (default bench/results/offtopic.json)",
    )
    return out


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    started = time.perf_counter()
    with threadpoolctl.threadpool_limits(limits=1, user_api="blas"):
        result = run(args.backends)
    result["seconds"] = time.perf_counter() - started
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(report(result["results"]))
    config = result["config"]
    print(
        f"\n{config['questions']} questions over {config['domains']} domains; goal: at least"
        f" {GOAL_SHARE:.0%} abstaining and a mean of at most {GOAL_BYTES} bytes;"
        f" {result['seconds']:.0f} s; written to {args.out}"
    )


if __name__ == "__main__":
    main()
