"""A deterministic synthetic workload with known evidence (the format: docs/workload.md).

Each ``team-{s}`` scope holds facts about a few projects (one fact per template and
project, each project named by a codename the filler never uses) among filler notes of
real English words in random order. Categories, and what each exercises:
- direct: shares most of its terms with the fact (round 0 serves it; no expansion);
- paraphrase: shares only the project's codename, so round 0's lexical floor (two
  terms of three or more) discards the evidence; a lowered floor admits it;
- budget-512: a direct question asked at the 512-byte floor (must not expand);
- multi-scope: a paraphrase asked from the next scope, which references this one;
- empty-scope: a question to a scope that holds nothing (must not expand);
- cjk: Chinese and Japanese facts in the team scopes, asked in the same language with
  several words in common: found lexically through CJK bigrams;
- long: a fact near the start of a 3,000-6,000 byte note of filler, asked directly;
  the pack truncates the note to ``Limits.item_bytes`` and must still cite it;
- decoy: ``decoys-{k}`` scopes where each fact hides among 30 notes that reuse its
  codename and some, never all, of its question's words in unrelated sentences:
  ranking, not admission, must find it;
- near-floor: the query shares exactly one of its three or more terms with the fact,
  an ordinary word, never the codename (absent from the query), so round 0's floor
  discards it and a floor of one admits it. The query stays answerable because each
  topic occurs once per scope, so this design was kept over the fallback of sharing
  the codename plus one word that is frequent in the filler (which would overlap with
  paraphrase).

The first five categories are written first and draw on ``random.Random(seed)`` only,
so they are row for row what they were before the others existed; the others follow,
drawn from ``random.Random(seed + 100)``, with codenames of their own so they never
add an entry that shares an older category's codename.
"""

from __future__ import annotations

import functools
import json
import random
import re
from typing import TYPE_CHECKING, Any

from bench import _corpus
from satchel.vocabulary._analysis import analyse

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

Row = dict[str, Any]

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

# (fact, query): natural sentences; each query shares several words (so CJK bigrams)
# with its fact. Scope s holds rows 2s and 2s + 1 (modulo the table). CJK text takes
# its own fullwidth punctuation, which RUF001 would flag as ambiguous:
# ruff: noqa: RUF001
CJK_FACTS = [
    ("深圳办公室的备份每天凌晨三点运行。", "深圳办公室的备份几点运行？"),
    ("新员工的笔记本电脑由北京的行政部统一采购。", "新员工的笔记本电脑由哪个部门采购？"),
    ("上海数据中心的服务器每年十月进行一次全面检修。", "上海数据中心的服务器什么时候检修？"),
    ("客户投诉必须在二十四小时内由值班经理回复。", "客户投诉要在多长时间内回复？"),
    (
        "東京オフィスの会議室は毎週金曜日の午後に清掃されます。",
        "東京オフィスの会議室はいつ清掃されますか？",
    ),
    ("大阪の倉庫では在庫の棚卸しを毎月末に行います。", "大阪の倉庫の棚卸しはいつ行いますか？"),
    ("経費精算の締め切りは毎月十五日です。", "経費精算の締め切りはいつですか？"),
    ("测试环境的数据库密码每九十天更换一次。", "测试环境的数据库密码多久更换一次？"),
]

# (fact, direct question) for the long notes.
LONG_FACTS = [
    (
        "The {c} incident runbook lives in the operations wiki and {p} revises it after "
        "every outage.",
        "Where does the {c} incident runbook live?",
    ),
    (
        "{c} customer invoices are exported to the finance warehouse every Friday at {h}:30.",
        "When are {c} customer invoices exported?",
    ),
    (
        "The {c} mobile app is translated into {n} languages by an agency in Lisbon.",
        "How many languages is the {c} mobile app translated into?",
    ),
    (
        "The {c} staging cluster is rebuilt from scratch every Monday before {h}:00 UTC.",
        "When is the {c} staging cluster rebuilt?",
    ),
]

# (fact, query): the query shares exactly one analysed term with its fact (the word
# after the arrow) and never names the codename; one topic per scope, so each query
# still points at one fact.
NEAR_FLOOR = [
    (
        "{c} keeps its billing archive on the tape library in the Dublin office.",
        "Where is the billing history physically stored?",  # -> billing
    ),
    (
        "{c} translators finish the Portuguese release notes {n} days before launch.",
        "Who prepares the Portuguese documentation for customers?",  # -> Portuguese
    ),
    (
        "The {c} office plants are watered by the reception team on Tuesdays.",
        "Which crew looks after the greenery and watering?",  # -> watering
    ),
    (
        "{c} laptops are encrypted with a recovery key kept at the security desk.",
        "Where is the spare key for locked computers?",  # -> key
    ),
    (
        "{c} interns present their summer projects to the board in {month}.",
        "When do the summer students demo to the directors?",  # -> summer
    ),
    (
        "The {c} coffee machine is descaled every second Thursday by {p}.",
        "Who cleans the espresso machine and how frequently?",  # -> machine
    ),
    (
        "{c} visitors sign the confidentiality agreement at the front gate.",
        "What confidentiality paperwork do guests complete?",  # -> confidentiality
    ),
    (
        "The {c} parking spaces are assigned by lottery each {month}.",
        "How does the yearly lottery for car bays work?",  # -> lottery
    ),
]

CJK_PER_SCOPE = 2
LONG_PER_SCOPE = 2
DECOY_SCOPES = 2
DECOY_FACTS = 3  # per decoy scope
DECOYS_PER_FACT = 30


def generate(
    folder: Path, *, scopes: int = 4, projects: int = 8, filler: int = 2500, seed: int = 5
) -> None:
    """Write ``entries.jsonl`` and ``queries.jsonl`` into ``folder``.

    Args:
        folder: Where to write; created if missing.
        scopes: Team scopes (``team-0`` ...).
        projects: Projects per team scope; also the near-floor facts per scope (at most
            ``len(NEAR_FLOOR)``).
        filler: Filler notes per team scope.
        seed: Seeds every random choice: the same seed writes the same bytes.
    """
    old = scopes * projects
    names = _fresh_codenames(seed)
    own = names[len(names) - old :]
    entries, queries = _base_rows(random.Random(seed), own, scopes, filler, seed)
    rng = random.Random(seed + 100)
    # New material takes the codenames just before the base rows' own.
    extra = iter(reversed(names[: len(names) - old]))
    for more_entries, more_queries in (
        _cjk_rows(scopes),
        _long_rows(rng, extra, scopes),
        _decoy_rows(rng, extra),
        _near_floor_rows(rng, extra, scopes, min(projects, len(NEAR_FLOOR))),
    ):
        entries.extend(more_entries)
        queries.extend(more_queries)
    folder.mkdir(parents=True, exist_ok=True)
    _write(folder / "entries.jsonl", entries)
    _write(folder / "queries.jsonl", queries)


def _base_rows(
    rng: random.Random, codenames: tuple[str, ...], scopes: int, filler: int, seed: int
) -> tuple[list[Row], list[Row]]:
    """The first five categories, in the order and with the draws they always had."""
    projects = len(codenames) // scopes if scopes else 0
    fillers = _corpus.english_texts(scopes * filler, seed=seed + 2)
    names = iter(codenames)
    entries: list[Row] = []
    queries: list[Row] = []
    for s in range(scopes):
        scope, other = f"team-{s}", f"team-{(s + 1) % scopes}"
        for _ in range(projects):
            _project_rows(rng, scope, other, next(names), entries, queries)
        entries.extend(
            {"id": f"{scope}/filler/{i}", "scope": scope, "text": text}
            for i, text in enumerate(fillers[s * filler : (s + 1) * filler])
        )
    queries.append(
        _query("empty/1", ["nobody"], "Who owns the deploy pipeline?", None, "empty-scope")
    )
    return entries, queries


def _project_rows(
    rng: random.Random,
    scope: str,
    other: str,
    codename: str,
    entries: list[Row],
    queries: list[Row],
) -> None:
    """One project's facts and their direct, paraphrased, 512-byte and multi-scope
    questions (the latter two for about one fact in seven each)."""
    for t, (fact, direct, paraphrase) in enumerate(TEMPLATES):
        values = _values(rng, codename)
        entry_id = f"{scope}/{codename}/{t}"
        entries.append({"id": entry_id, "scope": scope, "text": fact.format(**values)})
        for category, text in (("direct", direct), ("paraphrase", paraphrase)):
            queries.append(
                _query(f"{entry_id}/{category}", [scope], text.format(**values), entry_id, category)
            )
        if rng.random() < 0.15:
            queries.append(
                _query(
                    f"{entry_id}/budget", [scope], direct.format(**values), entry_id, "budget-512"
                )
            )
        if rng.random() < 0.15:  # asked from another scope that references this one
            question = paraphrase.format(**values)
            queries.append(
                _query(f"{entry_id}/ref", [other, scope], question, entry_id, "multi-scope")
            )


def _cjk_rows(scopes: int) -> tuple[list[Row], list[Row]]:
    """``CJK_PER_SCOPE`` facts of ``CJK_FACTS`` per team scope, one query each."""
    entries: list[Row] = []
    queries: list[Row] = []
    for s in range(scopes):
        for j in range(CJK_PER_SCOPE):
            index = (s * CJK_PER_SCOPE + j) % len(CJK_FACTS)
            fact, question = CJK_FACTS[index]
            entry_id = f"team-{s}/cjk/{index}"
            entries.append({"id": entry_id, "scope": f"team-{s}", "text": fact})
            queries.append(_query(f"{entry_id}/cjk", [f"team-{s}"], question, entry_id, "cjk"))
    return entries, queries


def _long_rows(
    rng: random.Random, names: Iterator[str], scopes: int
) -> tuple[list[Row], list[Row]]:
    """``LONG_PER_SCOPE`` long notes per team scope, each asked one direct question."""
    entries: list[Row] = []
    queries: list[Row] = []
    for s in range(scopes):
        for j in range(LONG_PER_SCOPE):
            codename = next(names)
            fact, question = LONG_FACTS[(s * LONG_PER_SCOPE + j) % len(LONG_FACTS)]
            values = _values(rng, codename)
            entry_id = f"team-{s}/{codename}/long"
            text = _long_text(rng, fact.format(**values))
            entries.append({"id": entry_id, "scope": f"team-{s}", "text": text})
            queries.append(
                _query(
                    f"{entry_id}/long", [f"team-{s}"], question.format(**values), entry_id, "long"
                )
            )
    return entries, queries


def _long_text(rng: random.Random, fact: str) -> str:
    """A 3,000-6,000 byte paragraph of filler with ``fact`` as its second sentence, so
    a note truncated to 2,000 bytes still states it."""
    target = rng.randint(3200, 5500)  # a sentence is at most 24 * 19 bytes past it
    parts = [_filler_sentence(rng, 5, 9), fact]
    size = sum(len(part) + 1 for part in parts)
    while size < target:
        parts.append(_filler_sentence(rng, 8, 24))
        size += len(parts[-1]) + 1
    return " ".join(parts)


def _decoy_rows(rng: random.Random, names: Iterator[str]) -> tuple[list[Row], list[Row]]:
    """``DECOY_SCOPES`` scopes of ``DECOY_FACTS`` facts, each among its decoys."""
    entries: list[Row] = []
    queries: list[Row] = []
    for k in range(DECOY_SCOPES):
        scope = f"decoys-{k}"
        rows: list[Row] = []
        for j in range(DECOY_FACTS):
            t = (k * DECOY_FACTS + j) % len(TEMPLATES)
            fact, direct, _ = TEMPLATES[t]
            values = _values(rng, next(names))
            entry_id = f"{scope}/{values['c'].lower()}/{t}"
            question = direct.format(**values)
            rows.append({"id": entry_id, "scope": scope, "text": fact.format(**values)})
            rows.extend(_decoys(rng, entry_id, values["c"], question))
            queries.append(_query(f"{entry_id}/decoy", [scope], question, entry_id, "decoy"))
        rng.shuffle(rows)  # the fact sits anywhere among its decoys
        entries.extend(rows)
    return entries, queries


def _decoys(rng: random.Random, entry_id: str, codename: str, question: str) -> list[Row]:
    """``DECOYS_PER_FACT`` filler notes holding ``codename`` next to one of the
    question's words ("Zorbak backup"), plus others, never all of them."""
    words = [w for w in re.findall(r"[A-Za-z]+", question) if analyse(w) and w != codename]
    scope = entry_id.split("/", 1)[0]
    rows: list[Row] = []
    for i in range(DECOYS_PER_FACT):
        chosen = rng.sample(words, rng.randint(1, max(1, len(words) - 1)))
        sentence = [rng.choice(_english_words()) for _ in range(rng.randint(12, 26))]
        sentence.insert(rng.randrange(len(sentence) + 1), f"{codename} {chosen[0]}")
        for word in chosen[1:]:
            sentence.insert(rng.randrange(len(sentence) + 1), word)
        rows.append({"id": f"{entry_id}/decoy/{i}", "scope": scope, "text": _sentence(sentence)})
    return rows


def _near_floor_rows(
    rng: random.Random, names: Iterator[str], scopes: int, per_scope: int
) -> tuple[list[Row], list[Row]]:
    """The first ``per_scope`` topics of ``NEAR_FLOOR`` in every team scope."""
    entries: list[Row] = []
    queries: list[Row] = []
    for s in range(scopes):
        for fact, question in NEAR_FLOOR[:per_scope]:
            values = _values(rng, next(names))
            entry_id = f"team-{s}/{values['c'].lower()}/near"
            entries.append({"id": entry_id, "scope": f"team-{s}", "text": fact.format(**values)})
            queries.append(
                _query(f"{entry_id}/near-floor", [f"team-{s}"], question, entry_id, "near-floor")
            )
    return entries, queries


@functools.cache
def _fresh_codenames(seed: int) -> tuple[str, ...]:
    """Pseudo-words the filler never uses, as a project name is in real notes (cached:
    drawing 40,000 pseudo-words takes about a second)."""
    used = set(_english_words())
    vocabulary = _corpus.vocabulary(40000, seed=seed + 1)
    return tuple(w for w in vocabulary if w not in used and len(w) > 5)


@functools.cache
def _english_words() -> tuple[str, ...]:
    return tuple(_corpus.english_words())


def _filler_sentence(rng: random.Random, shortest: int, longest: int) -> str:
    return _sentence([rng.choice(_english_words()) for _ in range(rng.randint(shortest, longest))])


def _sentence(words: list[str]) -> str:
    text = " ".join(words)
    return text[:1].upper() + text[1:] + "."


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
