"""Every pack ``satchel demo`` prints holds its question's evidence, read back through
``satchel.parse_context``; on asyncio and trio."""

from __future__ import annotations

import pytest

import satchel
from satchel._workload import ingest
from satchel.cli._demo import DEMO_PREPARES, load_sample

pytestmark = pytest.mark.anyio


async def test_every_demo_pack_holds_its_questions_evidence() -> None:
    """Each demo prepare (its query, budget and assembly) delivers every entry its
    sample query expects, whole, within its budget."""
    entries, queries = load_sample()
    async with satchel.open_runtime() as rt:
        report = await ingest(rt, entries)
        ids = {key[:3]: workload_id for workload_id, key in report.ids.items()}
        for demo in DEMO_PREPARES:
            query = queries[demo.query_id]
            context = await rt.prepare_context(demo.request(query))
            items = satchel.parse_context(context.content)
            found = {ids.get(key_of(item.citation)): item for item in items}
            assert set(query.expected) <= set(found), (demo.query_id, sorted(map(str, found)))
            assert not any(found[expected].truncated for expected in query.expected)
            assert context.content_bytes <= demo.max_bytes


def key_of(citation: satchel.Citation) -> tuple[str, ...]:
    """The family, scope and id (as it has one) ingestion's citation keys begin with."""
    return tuple(part for part in (citation.family, citation.scope, citation.id) if part)
