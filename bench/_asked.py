"""One side of ``python -m bench versions``: CPU per prepare of the satchel this
interpreter imports, through the public API alone.

Run as a file (``python bench/_asked.py DB QUERIES``), never imported by the bench
package: the interpreter may hold an earlier satchel, whose internals differ, so this
reads the workload's ``queries.jsonl`` and the ids file ``satchel ingest`` wrote with
the standard library (rather than ``bench.peer``'s order of questions and satchel's
own readers, which it spells again) and calls only what every release keeps:
``open_runtime``, ``prepare_context``, ``add_memories``, ``parse_context`` and
``RecallSufficiencyPolicy``. On a copy of ``DB`` it asks two warm-up questions of every
scope, then every question that has evidence once (each scope's questions shuffled, the
scopes taken in turn), then all of them again, then all of them again each right after
a write of one turn to its scope (the question as a user's message, as an agent records
a turn before preparing for it: the write's own time not counted), and prints one JSON
line: the process CPU time per prepare of each pass (user + system, microseconds), the
system time alone (to the clock's tick), the evidence recall of the first pass, and a
digest of every pack in order, each item as the workload entry it cites and the text it
delivers (each install mints its own ids, so equal digests mean the same items, in the
same order, served alike).
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import random
import shutil
import tempfile
import time
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from itertools import zip_longest
from pathlib import Path
from typing import Any

import anyio

import satchel

#: Asked of every scope before the measured passes (``bench peer``'s warm-up).
WARM_UP = ("How have things been lately?", "Any plans coming up?")
#: The third pass's writes: each question as a user's message, a minute apart from
#: this time on, in a thread of their own.
WRITTEN_FROM = datetime(2031, 1, 1, tzinfo=UTC)
WRITTEN_THREAD = "bench-asked"


def questions(path: Path, seed: int = 7) -> list[dict[str, Any]]:
    """The questions with evidence, each scope's shuffled, one from each scope in turn."""
    lines = path.read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in lines if line.strip()]  # a blank line holds none
    by_scope: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        if row.get("expected"):
            by_scope[row["scopes"][0]].append(row)
    rng = random.Random(seed)
    for asked in by_scope.values():
        rng.shuffle(asked)
    return [row for turn in zip_longest(*by_scope.values()) for row in turn if row is not None]


def workload_ids(db: Path) -> dict[str, str]:
    """The workload id of each record id ``satchel ingest`` wrote beside ``db``
    (``DB.ids.jsonl``), the record id spelled whole (32 hex digits) as
    ``parse_context`` gives it, whichever spelling the file uses."""
    found: dict[str, str] = {}
    path = db.with_name(db.name + ".ids.jsonl")
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        record = str(row["key"][2])
        if len(record) == 22:  # the pack's short spelling of a minted id
            record = base64.urlsafe_b64decode(record + "==").hex()
        found[record] = row["id"]
    return found


def delivered(content: str, ids: dict[str, str]) -> list[tuple[str, str]]:
    """Each item of a pack as the workload id it cites and the text it serves (none
    for an empty result)."""
    if not content:
        return []
    return [
        (ids.get(str(item.citation.id), str(item.citation.id)), item.text or "")
        for item in satchel.parse_context(content)
    ]


async def passes(db: Path, queries: Path, budget: int) -> dict[str, Any]:
    """Every question asked once and then again on a fresh copy of ``db``."""
    asked = questions(queries)
    ids = workload_ids(db)
    recall: list[float] = []
    scopes = list(dict.fromkeys(row["scopes"][0] for row in asked))
    digest = hashlib.sha256()
    result: dict[str, Any] = {"prepares": len(asked), "satchel": satchel.__file__}
    with tempfile.TemporaryDirectory(prefix="satchel-bench-asked-") as directory:
        copy = Path(directory) / "store.db"
        shutil.copyfile(db, copy)
        policy = satchel.RecallSufficiencyPolicy()
        async with satchel.open_runtime(str(copy), recall_policy=policy) as runtime:

            async def ask(scopes: list[str], query: str) -> str:
                request = satchel.PrepareContextRequest(
                    scope_id=scopes[0], query=query, max_bytes=budget, references=tuple(scopes[1:])
                )
                return (await runtime.prepare_context(request)).content or ""

            for scope in scopes:
                for query in WARM_UP:
                    await ask([scope], query)
            for name in ("once", "again", "after_write"):
                spent = system = 0.0
                contents = []
                for number, row in enumerate(asked):
                    if name == "after_write":  # the user's message recorded, then asked
                        turn = satchel.MemoryEntry(
                            text=f"User: {row['query']}",
                            created_at=WRITTEN_FROM + timedelta(minutes=number),
                            thread=WRITTEN_THREAD,
                        )
                        (ref,) = await runtime.add_memories(row["scopes"][0], [turn])
                        ids[ref.entry_id] = f"{WRITTEN_THREAD}/{number}"  # alike on each side
                    cpu, sys_before = time.process_time(), os.times().system
                    contents.append(await ask(row["scopes"], row["query"]))
                    spent += time.process_time() - cpu
                    system += os.times().system - sys_before
                result[name] = spent / len(asked) * 1e6
                result[f"{name}_system"] = system / len(asked) * 1e6
                for row, content in zip(asked, contents, strict=True):  # read after timing
                    items = delivered(content, ids)
                    digest.update(json.dumps(items).encode())
                    if name == "once":
                        cited = {workload_id for workload_id, _ in items}
                        found = sum(expected in cited for expected in row["expected"])
                        recall.append(found / len(row["expected"]))
    result["packs"] = digest.hexdigest()
    result["recall"] = sum(recall) / len(recall)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("db", type=Path)
    parser.add_argument("queries", type=Path)
    parser.add_argument("--budget", type=int, default=8000)
    parser.add_argument("--backend", choices=("asyncio", "trio"), default="asyncio")
    args = parser.parse_args()
    result = anyio.run(passes, args.db, args.queries, args.budget, backend=args.backend)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
