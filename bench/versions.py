"""``python -m bench versions``: CPU per prepare of two satchel installs, alternated.

A change's figure is only as good as the machine's quiet: this machine's speed moves by
a third between runs of the same code, so two versions are compared in one run, their
processes alternated. Give each install's interpreter (``--python``, twice: a virtual
environment holding, say, the commit an issue was filed on, and this checkout's); each
ingests every workload with its own ``python -m satchel ingest`` (each release reads
the workload format, and writes its own schema), then, pair after pair, each runs
``bench/_asked.py`` on a fresh copy of its store: every question with evidence asked
once after two warm-up questions a scope, then again, then again each right after a
write of one turn to its scope (8,000 bytes, gate on; the public API only, so any
release runs it).

Workloads: ``--workload DIR`` (any workload folder, repeatable), ``--lifelike``
(``bench peer``'s ten lifelike conversations) and ``--locomo PATH`` (the LoCoMo release,
as ``bench locomo`` reads it). Reported per workload: each side's CPU per prepare in
each pass (median over the pairs, every pair's figure beside it), the second side's
over the first's, each side's evidence recall (8,000 bytes, gate on), and whether each
side's packs were the same in every pair and the same as the other side's (the same
workload entries cited, in the same order, with the same text). Written to ``--out``
(default ``bench/results/versions.json``).

To make an earlier commit's install::

    git archive COMMIT | tar -x -C /tmp/old
    python3 -m venv /tmp/old-venv && /tmp/old-venv/bin/pip install -e /tmp/old
    python -m bench versions --python /tmp/old-venv/bin/python \\
        --python .venv/bin/python --lifelike --locomo locomo10.zip
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Final

from bench import _lifelike_conversations as lifelike
from bench import locomo, peer

RESULTS: Final = Path(__file__).parent / "results"
ASKED: Final = Path(__file__).parent / "_asked.py"


def ingest(python: Path, workload: Path, db: Path) -> None:
    """``workload`` into a new store at ``db`` by ``python``'s own satchel."""
    command = [str(python), "-m", "satchel", "ingest", "--db", str(db), str(workload)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{python} could not ingest {workload}:\n{done.stderr}")


def asked(python: Path, db: Path, workload: Path, backend: str) -> dict[str, Any]:
    """One side's passes over ``db`` (``bench/_asked.py``'s JSON line)."""
    command = [str(python), str(ASKED), str(db), str(workload / "queries.jsonl")]
    done = subprocess.run(
        [*command, "--backend", backend], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"{python} failed on {db}:\n{done.stderr}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def compare(
    pythons: list[Path], workloads: dict[str, Path], pairs: int, backend: str, work: Path
) -> dict[str, Any]:
    """Every workload ingested by each side, then ``pairs`` rounds of each side's passes,
    the sides alternated (the first side first in odd rounds, second in even ones)."""
    results: dict[str, Any] = {}
    for name, workload in workloads.items():
        stores = [work / f"{name}-{side}.db" for side in range(len(pythons))]
        for python, db in zip(pythons, stores, strict=True):
            print(f"{name}: ingesting with {python}", file=sys.stderr)
            ingest(python, workload, db)
        runs: list[list[dict[str, Any]]] = [[] for _ in pythons]
        for number in range(pairs):
            order = range(len(pythons)) if number % 2 == 0 else reversed(range(len(pythons)))
            for side in order:
                runs[side].append(asked(pythons[side], stores[side], workload, backend))
                print(f"{name}: pair {number + 1}, side {side + 1}: once "
                      f"{runs[side][-1]['once']:.0f} us, again {runs[side][-1]['again']:.0f} us",
                      file=sys.stderr)  # fmt: skip
        results[name] = summary(runs)
    return {"pythons": [str(p) for p in pythons], "backend": backend, "pairs": pairs,
            "workloads": results}  # fmt: skip


def summary(runs: list[list[dict[str, Any]]]) -> dict[str, Any]:
    """Each side's medians and every figure, the later side's medians over the first's,
    and whether packs were the same within each side and across the sides."""
    sides = [
        {
            "once": statistics.median(run["once"] for run in side),
            "again": statistics.median(run["again"] for run in side),
            "once_each": [round(run["once"]) for run in side],
            "again_each": [round(run["again"]) for run in side],
            "after_write": statistics.median(run["after_write"] for run in side),
            "after_write_each": [round(run["after_write"]) for run in side],
            "system_once": statistics.median(run["once_system"] for run in side),
            "recall": side[0]["recall"],
            "prepares": side[0]["prepares"],
            "packs_steady": len({run["packs"] for run in side}) == 1,
            "packs": side[0]["packs"],
        }
        for side in runs
    ]
    first, last = sides[0], sides[-1]
    return {
        "sides": sides,
        "ratio_once": last["once"] / first["once"],
        "ratio_again": last["again"] / first["again"],
        "ratio_after_write": last["after_write"] / first["after_write"],
        "packs_same": len({side["packs"] for side in sides}) == 1,
    }


def report(result: dict[str, Any]) -> str:
    lines = [
        "| workload | side | prepares | CPU us asked once (each pair) | asked again (each pair)"
        " | again, each after a write (each pair) | evidence recall | packs steady |",
        "|---|---|---:|---|---|---|---:|---|",
    ]
    for name, found in result["workloads"].items():
        for number, side in enumerate(found["sides"], start=1):
            figures = " | ".join(
                f"**{side[kind]:.0f}** ({' / '.join(map(str, side[f'{kind}_each']))})"
                for kind in ("once", "again", "after_write")
            )
            lines.append(
                f"| {name} | {number} | {side['prepares']} | {figures} | {side['recall']:.3f}"
                f" | {side['packs_steady']} |"
            )
        ratios = " | ".join(
            f"**{found[f'ratio_{kind}']:.2f}**" for kind in ("once", "again", "after_write")
        )
        same = "the same" if found["packs_same"] else "differ"
        lines.append(f"| {name} | 2 / 1 | | {ratios} | | packs {same} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bench versions",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--python",
        type=Path,
        action="append",
        required=True,
        help="an install's interpreter; give two (the first is the base)",
    )
    parser.add_argument(
        "--workload",
        type=Path,
        action="append",
        default=[],
        help="a workload folder (entries.jsonl, queries.jsonl); repeatable",
    )
    parser.add_argument("--lifelike", action="store_true", help="bench peer's lifelike chats")
    parser.add_argument("--locomo", type=Path, help="the LoCoMo release (zip, folder or json)")
    parser.add_argument("--pairs", type=int, default=3, help="rounds of both sides (default 3)")
    parser.add_argument("--backend", choices=("asyncio", "trio"), default="asyncio")
    parser.add_argument("--out", type=Path, default=RESULTS / "versions.json")
    args = parser.parse_args()
    if len(args.python) != 2:
        parser.error("--python: give exactly two interpreters, the base first")
    if args.pairs < 1:
        parser.error("--pairs: at least 1")
    with tempfile.TemporaryDirectory(prefix="satchel-bench-versions-") as directory:
        work = Path(directory)
        workloads = {folder.resolve().name: folder for folder in args.workload}
        if args.lifelike:
            workloads["lifelike"] = peer.current_workload(10, lifelike.SESSIONS)
        if args.locomo is not None:
            workloads["locomo"] = locomo.workload(
                locomo.conversations(args.locomo), work / "locomo"
            )
        if not workloads:
            parser.error("name a workload: --workload DIR, --lifelike or --locomo PATH")
        result = compare(args.python, workloads, args.pairs, args.backend, work)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(report(result))
    print(f"\nwritten to {args.out}")


if __name__ == "__main__":
    main()
