"""What a full-text search costs by FTS5's statement and from held postings, and what
holding a scope's postings costs: reading them and patching them after a write.

The embedded store searches a scope by FTS5's statement until the statement has cost
about what reading the scope's postings costs, then from the held postings
(``stores/sqlite/_postings.py``, ``ROWS_PER_SEARCH``), and patches them after each write
of the scope (``PATCH_ROWS``). This prices the four, per scope size, in process CPU time
(user + system), so the constants can be checked on any machine:

- ``statement us``: one search by the statement (the term counts and the full-text
  query, as ``SqliteStore.retrieve`` runs them);
- ``held us``: the same search from held postings (no statement);
- ``read ms``: reading the scope's postings from the database;
- ``patch ms``: following a write of one new record;
- ``pays back``: searches after which reading has paid for itself
  (``read / (statement - held)``), beside ``read / statement``, the searches
  ``ROWS_PER_SEARCH`` waits for (``1 + rows // ROWS_PER_SEARCH``).

Scopes are ``bench scale``'s real-word notes written as the store writes them (no
vectors), beside a second scope of the same size (BM25's totals are the table's);
queries are 3-6 words of a random note, every search is asked again, best of three.

Run: ``python -m bench postings [--sizes 400 2000 10000] [--queries 200]`` (JSON in
``bench/results/postings.json``).
"""

from __future__ import annotations

import argparse
import json
import random
import sqlite3
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench import _corpus
from satchel.stores.sqlite import _postings, _postings_cache, _rows, _search
from satchel.stores.sqlite import _schema as sql
from satchel.vocabulary._analysis import analyse_query, index_text
from satchel.vocabulary._retrieval import PoolRequest

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from satchel.stores import _postings as shared

RESULTS = Path(__file__).parent / "results"
ROUNDS = 3
#: The pool size of a memory search (``Limits.pool_size``).
POOL = 128


def store(texts: Sequence[str]) -> sqlite3.Connection:
    """An in-memory database of the store's schema: scope 1 holds ``texts``, scope 2 as
    many others."""
    conn = sqlite3.connect(":memory:")
    _rows.create_schema(conn)
    for scope_id, written in (("measured", texts), ("other", texts[::-1])):
        scope_key = _rows.ensure_scope(conn, scope_id)
        for n, text in enumerate(written):
            _rows.insert(conn, "memory", scope_key, f"r{n}", 1, index_text(text))
    conn.commit()
    return conn


def _cpu_us(run: Callable[[], object], times: int) -> float:
    """CPU microseconds per call, the best of :data:`ROUNDS` rounds."""
    best = float("inf")
    for _ in range(ROUNDS):
        started = time.process_time()
        for _ in range(times):
            run()
        best = min(best, (time.process_time() - started) / times * 1e6)
    return best


def measure(size: int, queries: int, seed: int = 3) -> dict[str, Any]:
    """The figures of one scope of ``size`` notes."""
    texts = _corpus.english_texts(size, seed=seed)
    conn = store(texts)
    chance = random.Random(seed)
    asked = []
    for text in chance.choices(texts, k=queries):
        words = text.split()
        said = " ".join(chance.sample(words, min(len(words), chance.randint(3, 6))))
        asked.append(PoolRequest(analyse_query(said), None, POOL))
    postings = _postings.read_postings(conn, "memory", 1)
    assert postings is not None, "bench scale's notes are plain ASCII"
    held = (postings, _postings.read_totals(conn, "memory"))

    def search(by: tuple[shared.ScopePostings, shared.Totals] | None) -> None:
        for request in asked:
            terms = request.query.terms
            if by is None:
                frequencies = _search.term_frequencies(conn, "memory", 1, terms)
            else:
                frequencies = by[0].frequencies(sql.term_prefix(1), terms)
            _search.lexical_hits(conn, "memory", 1, request, size, frequencies, by)

    statement = _cpu_us(lambda: search(None), 1) / queries
    from_held = _cpu_us(lambda: search(held), 1) / queries
    read = _cpu_us(lambda: _postings.read_postings(conn, "memory", 1), 1) / 1e3
    added = [(int(postings.rows[-1]) + 1, index_text(texts[0]))]
    patch = _cpu_us(lambda: postings.patched(sql.term_prefix(1), added, []), 5) / 1e3
    return {
        "rows": size,
        "statement_us": round(statement, 1),
        "held_us": round(from_held, 1),
        "read_ms": round(read, 3),
        "patch_ms": round(patch, 3),
        "pays_back": round(read * 1e3 / max(statement - from_held, 1e-9), 1),
        "read_over_statement": round(read * 1e3 / statement, 1),
        "waits_for": 1 + size // _postings_cache.ROWS_PER_SEARCH,
        "bytes": postings.nbytes,
    }


def report(rows: Sequence[dict[str, Any]]) -> str:
    lines = [
        "| rows | statement us | held us | read ms | patch ms | pays back | read / statement"
        " | waits for | bytes |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    lines.extend(
        f"| {row['rows']:,} | {row['statement_us']:.0f} | {row['held_us']:.0f}"
        f" | {row['read_ms']:.2f} | {row['patch_ms']:.2f} | {row['pays_back']:.0f}"
        f" | {row['read_over_statement']:.0f} | {row['waits_for']} | {row['bytes']:,} |"
        for row in rows
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench postings", description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[400, 2000, 10000])
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args(argv)
    rows = [measure(size, args.queries) for size in args.sizes]
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "postings.json").write_text(json.dumps(rows, indent=2) + "\n")
    print(report(rows))
