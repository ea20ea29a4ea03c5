"""A deterministic synthetic workload with known evidence, in the WORKLOAD.md format.

Each scope holds facts about a few projects (one fact per template and project) among
filler notes of real English words in random order. Every fact has two queries:
- direct: shares most of its terms with the fact (round 0 serves it; no expansion);
- paraphrased: shares only the project's codename, so round 0's lexical floor (two
  terms of three or more) discards the evidence; a lowered floor admits it.
Plus queries that must not expand: facts asked at the 512-byte floor, and an empty scope.
"""

from __future__ import annotations

import json
import random
from typing import TYPE_CHECKING, Any

from bench import _corpus

if TYPE_CHECKING:
    from pathlib import Path

TEMPLATES = [
    (
        "Rotating the {c} credentials requires a signed ticket from {p}.",
        "How are the {c} credentials rotated?",
        "Who approves changing the {c} secrets?",
    ),
    (
        "The {c} nightly backup runs at {h}:00 UTC and keeps {n} days of snapshots.",
        "When does the {c} nightly backup run?",
        "What time is {c} data copied each evening?",
    ),
    (
        "{p} owns the {c} deploy pipeline and reviews every release.",
        "Who owns the {c} deploy pipeline?",
        "Which person is responsible for shipping {c} builds?",
    ),
    (
        "The {c} service listens on port {port} behind the internal load balancer.",
        "Which port does the {c} service listen on?",
        "Where can I reach {c} on the network?",
    ),
    (
        "{c} alerts page the on-call engineer after {n} minutes of elevated error rates.",
        "When do {c} alerts page the on-call engineer?",
        "How long before someone gets woken up for {c} problems?",
    ),
    (
        "The {c} database migrated from MySQL to Postgres in {month}.",
        "When did the {c} database migrate to Postgres?",
        "Which month did {c} switch storage engines?",
    ),
]
PEOPLE = ["Priya", "Mateo", "Jun", "Sofia", "Ola", "Tariq", "Lena", "Kofi", "Aiko", "Bruno"]
MONTHS = ["January", "March", "May", "July", "September", "November"]


def generate(
    folder: Path, *, scopes: int = 4, projects: int = 8, filler: int = 2500, seed: int = 5
) -> None:
    """Write ``entries.jsonl`` and ``queries.jsonl`` into ``folder``."""
    rng = random.Random(seed)
    # Codenames are words the filler never uses, as a project name is in real notes.
    used = set(_corpus.english_words())
    fresh = [w for w in _corpus.vocabulary(40000, seed=seed + 1) if w not in used and len(w) > 5]
    codenames = iter(fresh[-scopes * projects :])
    fillers = _corpus.english_texts(scopes * filler, seed=seed + 2)
    entries: list[dict[str, Any]] = []
    queries: list[dict[str, Any]] = []
    for s in range(scopes):
        scope = f"team-{s}"
        for _ in range(projects):
            codename = next(codenames)
            for t, (fact, direct, paraphrase) in enumerate(TEMPLATES):
                values = _values(rng, codename)
                entry_id = f"{scope}/{codename}/{t}"
                entries.append({"id": entry_id, "scope": scope, "text": fact.format(**values)})
                for category, text in (("direct", direct), ("paraphrase", paraphrase)):
                    queries.append(
                        _query(
                            f"{entry_id}/{category}",
                            [scope],
                            text.format(**values),
                            entry_id,
                            category,
                        )
                    )
                if rng.random() < 0.15:
                    queries.append(
                        _query(
                            f"{entry_id}/budget",
                            [scope],
                            direct.format(**values),
                            entry_id,
                            "budget-512",
                        )
                    )
                if rng.random() < 0.15:  # asked from another scope that references this one
                    other = f"team-{(s + 1) % scopes}"
                    queries.append(
                        _query(
                            f"{entry_id}/ref",
                            [other, scope],
                            paraphrase.format(**values),
                            entry_id,
                            "multi-scope",
                        )
                    )
        entries.extend(
            {"id": f"{scope}/filler/{i}", "scope": scope, "text": text}
            for i, text in enumerate(fillers[s * filler : (s + 1) * filler])
        )
    queries.append(
        _query("empty/1", ["nobody"], "Who owns the deploy pipeline?", None, "empty-scope")
    )
    folder.mkdir(parents=True, exist_ok=True)
    _write(folder / "entries.jsonl", entries)
    _write(folder / "queries.jsonl", queries)


def _values(rng: random.Random, codename: str) -> dict[str, Any]:
    return {
        "c": codename.capitalize(),
        "p": rng.choice(PEOPLE),
        "h": rng.randrange(0, 6),
        "n": rng.choice([7, 14, 30, 5, 10, 15]),
        "port": rng.randrange(7000, 9000),
        "month": rng.choice(MONTHS),
    }


def _query(
    qid: str, scopes: list[str], text: str, evidence: str | None, category: str
) -> dict[str, Any]:
    return {
        "id": qid,
        "scopes": scopes,
        "query": text,
        "expected": [] if evidence is None else [evidence],
        "category": category,
    }


def _write(path: Path, rows: list[dict[str, Any]]) -> None:
    with path.open("w", encoding="utf-8") as out:
        for row in rows:
            out.write(json.dumps(row) + "\n")
