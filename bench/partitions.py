"""Scoped full text on seekdb, with the records table partitioned by scope or not.

Run on the engine ``python -m bench chat-scale`` filled (``--dir``, its default folder
by default), it copies the records of the hot user and of ``--scopes`` users into two
new tables of that database, ``exp_flat`` (satchel's ``satchel_records`` whole, as
schema 6 made it) and ``exp_part`` (the same, ``PARTITION BY KEY(scope) PARTITIONS N``), ten
scopes per ``INSERT ... SELECT``, and reports each copy's rows/s (the cost of a bulk
load into either layout). Then it times the full-text statement a retrieve sends
(``_schema.EVERY_HOLDER``: a scope's holders of the query's terms) on both tables,
for 3 queries on the hot scope and one on each of 20 users' scopes (3-6 words of the
scope's own turns), twice over (the first pass reads the tables' blocks from disk),
and reports each pass's median. Last, it times ``ALTER TABLE ... PARTITION BY KEY``
on an empty copy of the table and on the unpartitioned copy (what a migration of an
existing database would run). The two tables are dropped at the end. JSON goes to
``bench/results/partitions.json``.

Run: ``python -m bench partitions [--scopes 100] [--partitions 16]`` after
``python -m bench chat-scale``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any

from bench import _corpus, chat_scale
from satchel.stores.oceanbase import _schema as sql
from satchel.vocabulary import analyse_query

RESULTS = Path(__file__).parent / "results"
TABLES = ("exp_flat", "exp_part")


def copy(cur: Any, table: str, names: list[str], partitions: int) -> float:
    """Make ``table`` like ``satchel_records`` and copy the scopes' rows; rows/s."""
    layout = f" PARTITION BY KEY(scope) PARTITIONS {partitions}" if table == "exp_part" else ""
    cur.execute(f"DROP TABLE IF EXISTS {table}")
    cur.execute(sql.MIGRATIONS[1][-1].replace("IF NOT EXISTS satchel_records", table) + layout)
    started = time.perf_counter()
    for start in range(0, len(names), 10):
        marks = ",".join(f"'{name}'" for name in names[start : start + 10])
        cur.execute(f"INSERT INTO {table} SELECT * FROM satchel_records WHERE scope IN ({marks})")
    seconds = time.perf_counter() - started
    cur.execute(f"SELECT COUNT(*) FROM {table}")
    return float(cur.fetchall()[0][0]) / seconds


def probes(chats: chat_scale.Chats, names: list[str]) -> list[tuple[str, str]]:
    """(scope, terms as the FULLTEXT column holds them): 3 on the hot scope, 1 on each
    of 20 users' scopes."""
    out = []
    for name in names[:21]:
        hot = name == chat_scale.HOT
        seed, count = (0, 10_000) if hot else (int(name.split(":")[1]) + 1, 1000)
        for query in _corpus.queries(chats.texts(seed, count), 3 if hot else 1, seed=5):
            terms = analyse_query(query).terms
            out.append((name, " ".join(sql.indexed_term(term) for term in terms)))
    return out


def holders_ms(cur: Any, table: str, queries: list[tuple[str, str]]) -> float:
    statement = sql.EVERY_HOLDER.replace("satchel_records", table)
    seconds = []
    for scope, against in queries:
        started = time.perf_counter()
        cur.execute(statement % (f"'{scope}'", "'memory'", f"'{against}'", 2049))
        cur.fetchall()
        seconds.append(time.perf_counter() - started)
    return statistics.median(seconds) * 1e3


def alter_seconds(cur: Any, table: str, partitions: int) -> float:
    started = time.perf_counter()
    cur.execute(f"ALTER TABLE {table} PARTITION BY KEY(scope) PARTITIONS {partitions}")
    return time.perf_counter() - started


def measure(cur: Any, scopes: int, partitions: int) -> dict[str, Any]:
    names = [chat_scale.HOT] + [chat_scale.scope_name(n) for n in range(scopes)]
    result: dict[str, Any] = {"scopes": len(names), "partitions": partitions}
    for table in TABLES:
        result[f"{table}_copy_rows_per_s"] = copy(cur, table, names, partitions)
    cur.execute("SELECT COUNT(*) FROM exp_flat")
    result["rows"] = int(cur.fetchall()[0][0])
    queries = probes(chat_scale.Chats(), names)
    for attempt in ("first", "second"):
        for table in TABLES:
            result[f"{table}_holders_p50_ms_{attempt}_pass"] = holders_ms(cur, table, queries)
    cur.execute("DROP TABLE IF EXISTS exp_empty")
    cur.execute(sql.MIGRATIONS[1][-1].replace("IF NOT EXISTS satchel_records", "exp_empty"))
    result["alter_empty_s"] = alter_seconds(cur, "exp_empty", partitions)
    result["alter_flat_s"] = alter_seconds(cur, "exp_flat", partitions)
    for table in (*TABLES, "exp_empty"):
        cur.execute(f"DROP TABLE IF EXISTS {table}")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--dir", type=Path, default=chat_scale.CACHE, help="chat-scale's folder")
    parser.add_argument("--scopes", type=int, default=100, help="users' scopes copied")
    parser.add_argument("--partitions", type=int, default=16)
    args = parser.parse_args()
    import pylibseekdb

    instance = pylibseekdb.open(str((args.dir / "seekdb").resolve()))
    try:
        conn = instance.connect(autocommit=True)
        cur = conn.cursor()
        cur.execute("USE satchel")
        cur.execute("SET SESSION ob_query_timeout = 3600000000, ob_trx_timeout = 3600000000")
        result = measure(cur, args.scopes, args.partitions)
        conn.close()
    finally:
        instance.close()
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "partitions.json").write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
