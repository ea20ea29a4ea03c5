"""Every store ranks the vector channel by the query without its proper names when the
scope is about them (``PoolRequest.vector_for``), and by the whole query otherwise."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pytest

import satchel
from satchel.stores import MemoryStore, PoolRequest, SqliteStore
from satchel.stores.testing import memories
from satchel.vocabulary import analyse_query

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable

    import numpy.typing as npt

    from satchel.stores import Store

pytestmark = pytest.mark.anyio

DIMENSION = 8


def axis(n: int) -> npt.NDArray[np.float32]:
    vector = np.zeros(DIMENSION, dtype=np.float32)
    vector[n] = 1.0
    return vector


@pytest.fixture(params=["memory", "sqlite", "oceanbase"])
async def store(request: pytest.FixtureRequest) -> AsyncIterator[Store]:
    if request.param == "memory":
        opened: Store = MemoryStore()
    elif request.param == "sqlite":
        opened = await SqliteStore.open()
    else:
        make: Callable[[], Store] = request.getfixturevalue("oceanbase")
        opened = make()
    yield opened
    await opened.aclose()


async def seeded(store: Store) -> dict[str, int]:
    """A chat of ten turns, six of them Alice's, three Bob's, one Carla's: the turn
    about food lies along axis 1 (the question's meaning without a name), the greeting
    along axis 0 (the whole question's); the rest elsewhere. Returns each text's key."""
    texts = [
        "Alice: Morning! Did you see the rain?",
        "Alice: My favourite food is grilled sardines",
        "Alice: Deal.",
        "Alice: Miso is a cute name.",
        "Alice: Congrats!",
        "Alice: See you.",
        "Bob: I adopted a cat.",
        "Bob: I start a new job.",
        "Bob: The one near the station.",
        "Carla: We should get sardines.",
    ]
    vectors = np.stack([axis(0), axis(1), *(axis(2 + n % 6) for n in range(8))])
    await memories(store, "chat", [satchel.MemoryEntry(text=t) for t in texts], vectors)
    pool = await store.retrieve(
        "memory", "chat", PoolRequest(analyse_query("sardines rain"), None, 64)
    )
    found = await store.evidence("memory", "chat", [int(k) for k in pool.lexical_keys])
    return {item.text or "": key for key, item in found.items()}


@pytest.mark.parametrize("name", ["Alice", "Bob"])
async def test_a_question_about_the_scopes_participant_ranks_by_its_other_words(
    store: Store, name: str
) -> None:
    """Alice says six turns of ten, Bob three: more than a tenth each, participants."""
    keys = await seeded(store)
    request = PoolRequest(
        analyse_query(f"What does {name} like to eat?"), axis(0), 64, unnamed_vector=axis(1)
    )
    pool = await store.retrieve("memory", "chat", request)
    assert int(pool.vector_keys[0]) == keys["Alice: My favourite food is grilled sardines"]


async def test_a_name_the_scope_is_not_about_keeps_the_whole_query(store: Store) -> None:
    """Carla says one turn of ten: not more than a tenth, so the whole query ranks."""
    keys = await seeded(store)
    request = PoolRequest(
        analyse_query("What does Carla like to eat?"), axis(0), 64, unnamed_vector=axis(1)
    )
    pool = await store.retrieve("memory", "chat", request)
    assert int(pool.vector_keys[0]) == keys["Alice: Morning! Did you see the rain?"]
