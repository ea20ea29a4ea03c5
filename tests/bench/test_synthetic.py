"""The synthetic workload: deterministic, its first five categories unchanged, and each
later category's evidence standing in the relation to its query that the category claims."""

from __future__ import annotations

import hashlib
import re
from collections import Counter, defaultdict
from typing import TYPE_CHECKING

import pytest

from satchel.recall._admission import required_matches
from satchel.vocabulary._analysis import analyse, analyse_query

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from tests.bench._rows import Row


# sha256 of the rows the generator wrote BEFORE the cjk, long, decoy and near-floor
# categories were added (computed from that version, default seed, filler=100 as
# ``SYNTHETIC_FILLER`` in conftest.py, other arguments default): they must stay the
# files' first rows, byte for byte. (At the full defaults the old files hashed
# a4d943ec... and 229e6b6d...; the queries do not depend on ``filler``.)
OLD_ENTRIES = (592, "a86d852c041b97e12573c4d1b0457d7b2428cdf2eba3e4a82dc1536c531a3b7d")
OLD_QUERIES = (445, "229e6b6d04777d2a5ecf2c664e07974afefa7f01172c9c8bb3f2d5015e1f4388")
CJK = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]")


@pytest.fixture(scope="module")
def workload(generated: Callable[[str], Path]) -> Path:
    return generated("synthetic")


def of_category(queries: list[Row], category: str) -> list[Row]:
    return [query for query in queries if query["category"] == category]


def evidence(entries: dict[str, Row], query: Row) -> str:
    (entry_id,) = query["expected"]
    text: str = entries[entry_id]["text"]
    return text


def prefix_digest(path: Path, rows: int) -> str:
    lines = path.read_bytes().splitlines(keepends=True)
    return hashlib.sha256(b"".join(lines[:rows])).hexdigest()


def test_older_categories_are_unchanged(workload: Path) -> None:
    """The first five categories' rows come first and are byte-identical to before."""
    for file, (rows, digest) in (("entries.jsonl", OLD_ENTRIES), ("queries.jsonl", OLD_QUERIES)):
        assert prefix_digest(workload / file, rows) == digest


def test_expected_ids_exist_in_a_query_scope(entries: dict[str, Row], queries: list[Row]) -> None:
    """Every expected id is an entry of one of its query's scopes."""
    for query in queries:
        for entry_id in query["expected"]:
            assert entries[entry_id]["scope"] in query["scopes"], query["id"]


def test_new_category_counts(queries: list[Row]) -> None:
    """At the defaults: two cjk and two long per scope, six decoy, one near-floor a project."""
    counts = Counter(query["category"] for query in queries)
    assert {name: counts[name] for name in ("cjk", "long", "decoy", "near-floor")} == {
        "cjk": 8,
        "long": 8,
        "decoy": 6,
        "near-floor": 32,
    }
    assert counts["empty-scope"] == 1


def test_long_entries_state_the_fact_before_truncation(
    entries: dict[str, Row], queries: list[Row]
) -> None:
    """A long entry is 3,000-6,000 bytes and its first 500 bytes hold every query term."""
    for query in of_category(queries, "long"):
        data = evidence(entries, query).encode()
        assert 3000 <= len(data) <= 6000
        head = set(analyse(data[:500].decode(errors="ignore")))
        assert set(analyse_query(query["query"]).terms) <= head, query["id"]


def test_cjk_queries_share_enough_bigrams(entries: dict[str, Row], queries: list[Row]) -> None:
    """CJK facts hold CJK text; their queries share enough bigrams to clear round 0."""
    for query in of_category(queries, "cjk"):
        text = evidence(entries, query)
        assert CJK.search(text)
        terms = analyse_query(query["query"]).terms
        shared = {term for term in terms if CJK.match(term)} & set(analyse(text))
        assert len(shared) >= required_matches(len(terms)), query["id"]


def test_near_floor_queries_share_exactly_one_term(
    entries: dict[str, Row], queries: list[Row]
) -> None:
    """A near-floor query has 3+ terms, shares one with its fact, and omits the codename."""
    for query in of_category(queries, "near-floor"):
        terms = analyse_query(query["query"]).terms
        codename = query["expected"][0].split("/")[1]
        assert len(terms) >= 3
        assert len(set(terms) & set(analyse(evidence(entries, query)))) == 1, query["id"]
        assert codename not in query["query"].lower()


def test_decoys_reuse_the_codename_but_not_every_query_term(
    entries: dict[str, Row], queries: list[Row]
) -> None:
    """Each decoy fact hides among 20+ notes with its codename, none holding all its terms."""
    scopes: dict[str, list[Row]] = defaultdict(list)
    for row in entries.values():
        scopes[row["scope"]].append(row)
    for query in of_category(queries, "decoy"):
        (entry_id,) = query["expected"]
        codename = entry_id.split("/")[1]
        terms = set(analyse_query(query["query"]).terms)
        assert terms <= set(analyse(entries[entry_id]["text"]))
        decoys = [
            row["text"]
            for row in scopes[query["scopes"][0]]
            if row["id"] != entry_id and codename in row["text"].lower()
        ]
        assert len(decoys) >= 20
        assert all(not terms <= set(analyse(text)) for text in decoys)
