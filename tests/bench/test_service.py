"""``python -m bench service``'s check that the service finds what it acknowledged."""

from __future__ import annotations

import pytest

from bench import _load, service
from tests.http._service import serving

pytestmark = pytest.mark.anyio


async def test_an_acknowledged_entry_is_found_by_the_id_the_service_gave() -> None:
    """The service spells an entry id as a pack prints it, and ``parse_context`` gives
    it whole: the check compares the two spelled alike (it found 0 of 100 when it
    compared them as they came)."""
    async with serving() as (client, _):
        target = _load.HttpTarget(client)
        texts = [f"zq{n}x the orchard ladder number {n} was repaired" for n in range(5)]
        written = await target.write(texts)
        for entry in written:
            assert entry.entry_id in await service.cited_ids(target, entry.text)
        # The read back takes the same spelling.
        assert [await target.read(entry) for entry in written] == texts


async def test_a_question_nothing_answers_cites_nothing() -> None:
    """An empty result has no pack to parse: the check counts it as not found."""
    async with serving() as (client, _):
        target = _load.HttpTarget(client)
        assert await service.cited_ids(target, "anything at all") == set()
