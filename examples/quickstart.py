"""The README's first example: write every family, prepare a pack, cite and revise a memory.

Run: ``python examples/quickstart.py`` (add ``trio`` to run it on trio).
"""

from __future__ import annotations

import sys

import anyio

import satchel


async def main() -> None:
    async with satchel.open_runtime(":memory:") as rt:
        refs = await rt.add_memories(
            "project:demo", [satchel.MemoryEntry(text="Backups run nightly at 02:00 UTC")]
        )
        await rt.add_experiences(
            "project:demo",
            [
                satchel.Experience(
                    situation="a restore took 3 hours",
                    action="switched to incremental backups",
                    outcome="restores take 20 minutes",
                    lesson="test restores monthly",
                )
            ],
        )
        await rt.add_topic_memories(
            "project:demo", [satchel.TopicMemory(title="Backups", text="Nightly, kept 30 days.")]
        )
        await rt.set_profile("project:demo", satchel.Profile(text="Prefers short answers"))
        await rt.add_resources(
            "project:demo",
            [satchel.Resource(uri="docs/backup.md", body="...", abstract="How backups run")],
        )
        request = satchel.PrepareContextRequest(
            scope_id="project:demo", query="when do backups run?", max_bytes=8000
        )
        ctx = await rt.prepare_context(request)
        print(ctx.status, ctx.content_bytes)
        print(ctx.content)
        record = await rt.get_memory(refs[0])
        print("cited:", record.text)
        ref2 = await rt.update_memory(refs[0], satchel.MemoryEntry(text="Backups run at 03:00 UTC"))
        await rt.forget_memory(ref2)
        print("after forget:", (await rt.prepare_context(request)).status)


if __name__ == "__main__":
    anyio.run(main, backend=sys.argv[1] if len(sys.argv) > 1 else "asyncio")
