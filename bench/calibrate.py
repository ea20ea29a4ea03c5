"""Calibrate the cosine floors for an embedder on the synthetic workload: one command.

Embeds every direct and paraphrased question with its evidence, and the questions against
the workload's filler notes, then prints the similarity distributions and floors that
separate them:
- ``baseline``: round 0's cosine floor, above a typical question's closest unrelated
  note (the median, over questions, of the best filler match);
- ``expansion``: the floor expansion rounds may lower to, above the filler's 99.9th
  percentile: lower than that, a second look admits noise;
- ``min_top_similarity``: a best hit below this is weak: the 10th percentile of the
  evidence similarity of direct and paraphrased questions, whichever is lower.
Run: ``python -m bench.calibrate [--embedder hashing|static | --model PATH] [--filler 2500]``;
pass the suggested values as ``Calibration`` (an embedder's ``calibration`` attribute).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np

import satchel
from bench import _synthetic
from satchel._workload import read_entries, read_queries

CACHE = Path(__file__).parent / ".cache"


def distributions(embedder: Any, workload: Path, sample: int = 200) -> dict[str, Any]:
    entries, _ = read_entries(workload / "entries.jsonl")
    queries, _ = read_queries(workload / "queries.jsonl")
    text = {e.id: getattr(e.record, "text", "") for e in entries}
    filler = [t for i, t in text.items() if "/filler/" in i][:5000]
    noise = embedder.embed_sync(filler)
    out: dict[str, Any] = {}
    for category in ("direct", "paraphrase"):
        chosen = [q for q in queries if q.category == category][:sample]
        asked = embedder.embed_sync([q.query for q in chosen])
        evidence = embedder.embed_sync([text[q.expected[0]] for q in chosen])
        against = asked @ noise.T
        out[category] = {
            "evidence_p10": float(np.percentile((asked * evidence).sum(1), 10)),
            "evidence_p50": float(np.percentile((asked * evidence).sum(1), 50)),
            "filler_p99": float(np.percentile(against, 99)),
            "filler_p999": float(np.percentile(against, 99.9)),
            "filler_best_p50": float(np.median(against.max(1))),
        }
    return out


def suggest(found: dict[str, Any]) -> dict[str, float]:
    def up(value: float) -> float:
        return float(np.ceil(value * 20) / 20)  # to the next 0.05

    noise = max(found["direct"]["filler_p999"], found["paraphrase"]["filler_p999"])
    best = max(found["direct"]["filler_best_p50"], found["paraphrase"]["filler_best_p50"])
    weakest = min(found["direct"]["evidence_p10"], found["paraphrase"]["evidence_p10"])
    baseline = up(best)
    return {
        "baseline": baseline,
        "expansion": min(up(noise), baseline),
        "min_top_similarity": float(np.floor(weakest * 20) / 20),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--embedder", choices=("hashing", "static"), default="static")
    parser.add_argument("--model", metavar="PATH", help="calibrate this model2vec folder instead")
    parser.add_argument("--filler", type=int, default=2500)
    args = parser.parse_args()
    workload = CACHE / f"workload-synthetic-{args.filler}"
    if not (workload / "entries.jsonl").exists():
        _synthetic.generate(workload, filler=args.filler)
    embedder: Any = satchel.HashingEmbedder()
    if args.model:
        embedder = satchel.StaticEmbedder(args.model, verify=False)
    elif args.embedder == "static":
        embedder = satchel.StaticEmbedder()
    found = distributions(embedder, workload)
    print(
        json.dumps(
            {"embedder": embedder.fingerprint, "distributions": found, "suggested": suggest(found)},
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
