"""The README's Quickstart, verbatim below this docstring (tests/test_examples.py checks
that they are the same): write every family, prepare a pack, read a cited version back
and forget an entry, in ``quickstart.db`` in the working directory. Every write carries a
key, so running it again writes nothing and prints the same.

Run: ``python examples/quickstart.py``.
"""

import anyio

import satchel


async def main() -> None:
    # One SQLite file ("quickstart.db"); ":memory:" also works, and keeps nothing.
    async with satchel.open_runtime("quickstart.db") as rt:
        # A key makes a write idempotent: the same key and content write nothing again.
        [ref] = await rt.add_memories(
            "project:demo",
            [satchel.MemoryEntry(text="Backups run nightly at 02:00 UTC", key="backup-time")],
        )
        await rt.add_experiences(
            "project:demo",
            [
                satchel.Experience(
                    situation="a restore took 3 hours",
                    action="switched to incremental backups",
                    outcome="restores take 20 minutes",
                    lesson="test restores monthly",
                    key="restore-2024-03",
                )
            ],
        )
        await rt.add_topic_memories(
            "project:demo",
            [satchel.TopicMemory(title="Backups", text="Nightly, kept 30 days.", key="backups")],
        )
        await rt.set_profile("project:demo", satchel.Profile(text="Prefers short answers"))
        await rt.add_resources(
            "project:demo",
            [
                satchel.Resource(
                    uri="docs/backup.md",
                    body="...",
                    abstract="How backups are run and restored",
                    key="docs/backup.md",
                )
            ],
        )

        request = satchel.PrepareContextRequest(
            scope_id="project:demo", query="when do backups run?", max_bytes=8000
        )
        ctx = await rt.prepare_context(request)
        print(ctx.status, ctx.content_bytes)  # "ready" or "empty"; always <= max_bytes
        print(ctx.content)  # the pack, or None when nothing fits

        record = await rt.get_memory(ref)  # exactly the version a pack cites
        print("cited:", record.text)

        # Forget is forever: out of search for good; every version stays readable.
        [old] = await rt.add_memories(
            "project:demo",
            [satchel.MemoryEntry(text="Backups ran at 01:00 UTC until March", key="old-time")],
        )
        await rt.forget_memory(old)
        print("forgotten, still readable:", (await rt.get_memory(old)).text)


anyio.run(main)  # or anyio.run(main, backend="trio")
