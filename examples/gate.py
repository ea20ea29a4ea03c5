"""The recall-sufficiency gate: a paraphrased question whose evidence round 0 discards.

With the hashing embedder (spelling only) the single pass misses the paraphrase and the
gate's admission round finds it; the default semantic model finds it in round 0.
Run: ``python examples/gate.py``. Prints the pack and the RecallEffort of each arm.
"""

from __future__ import annotations

import json

import anyio

import satchel

FACTS = [
    "Rotating the Kestrel credentials requires a signed ticket from Priya.",
    "The Kestrel service listens on port 7400 behind the internal load balancer.",
    "Kestrel alerts page the on-call engineer after 5 minutes of elevated errors.",
]
QUESTION = "Who approves changing the Kestrel secrets?"


async def arm(policy: satchel.RecallSufficiencyPolicy | None) -> None:
    efforts: list[satchel.RecallEffort] = []

    async def sink(effort: satchel.RecallEffort) -> None:
        efforts.append(effort)

    async with satchel.open_runtime(
        embedder=satchel.HashingEmbedder(), recall_policy=policy, recall_effort_sink=sink
    ) as rt:
        await rt.add_memories("ops", [satchel.MemoryEntry(text=t) for t in FACTS])
        request = satchel.PrepareContextRequest(scope_id="ops", query=QUESTION)
        ctx = await rt.prepare_context(request)
    print("gate", "on" if policy else "off", "->", ctx.status)
    print(ctx.content)
    print(json.dumps(efforts[0].to_json()))


async def main() -> None:
    await arm(None)
    await arm(satchel.RecallSufficiencyPolicy())


if __name__ == "__main__":
    anyio.run(main)
