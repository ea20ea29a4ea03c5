"""The store contract (``satchel.stores.Store``), one suite for every store: the checks
``satchel.stores.testing`` ships for backend authors, each run on every store in
``STORES`` (and per async backend), each its own test.

A new store joins by adding one async factory to ``STORES``; a contract clause a store is
known to break is listed in ``KNOWN_DEVIATIONS`` (check name -> store name -> why), where
its test is a strict xfail (it fails the day the store is fixed, so the entry is removed
then).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import pytest

import satchel
from satchel.stores import MemoryStore, SqliteStore, Store
from satchel.stores.testing import CHECKS, EMBEDDER, check_store, every_key, remember, turn

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable

pytestmark = pytest.mark.anyio


async def _memory_store(request: pytest.FixtureRequest) -> Store:
    return MemoryStore()


async def _sqlite_store(request: pytest.FixtureRequest) -> Store:
    return await SqliteStore.open()


async def _oceanbase_store(request: pytest.FixtureRequest) -> Store:
    """A database of its own on the session's seekdb engine (``tests/conftest.py``)."""
    make: Callable[[], Store] = request.getfixturevalue("oceanbase")
    return make()


#: Every store the contract runs on: a name and an async factory of an open, empty store
#: (given the test's request, for stores that need another fixture).
STORES: dict[str, Callable[[pytest.FixtureRequest], Awaitable[Store]]] = {
    "memory": _memory_store,
    "sqlite": _sqlite_store,
    "oceanbase": _oceanbase_store,
}

#: Contract clauses a store is known to break: check name -> store name -> why.
KNOWN_DEVIATIONS: dict[str, dict[str, str]] = {}


@pytest.fixture(params=list(STORES))
async def store(request: pytest.FixtureRequest) -> AsyncIterator[Store]:
    """An open, empty store of each kind; closed after the test."""
    opened = await STORES[request.param](request)
    yield opened
    await opened.aclose()


@pytest.mark.parametrize("check", list(CHECKS))
async def test_the_contract(store: Store, check: str, request: pytest.FixtureRequest) -> None:
    reason = KNOWN_DEVIATIONS.get(check, {}).get(request.node.callspec.params["store"])
    if reason is not None:
        request.applymarker(pytest.mark.xfail(reason=reason, strict=True))
    await CHECKS[check](store)


async def test_every_bundled_store_rates_its_evidence(store: Store) -> None:
    """The contract's rating clause holds for a store that rates nothing; every store
    satchel ships rates, and alike."""
    await remember(store, "s", ["Ana: thanks!", "Ben: thanks, the kestrel nested", "Ana: thanks"])
    found = await store.evidence("memory", "s", await every_key(store))
    ratings = sorted(item.rarity for item in found.values())  # type: ignore[type-var]
    # "thank" is every turn's (0), "kestrel" and "nest" one turn's (ln 3 / ln 203).
    assert ratings == pytest.approx([0.0, 0.0, 2 * math.log(3) / (3 * math.log(203))])


async def test_check_store_runs_every_check_and_names_the_one_that_fails() -> None:
    """The kit's entry point runs the whole suite on fresh stores; a store that breaks a
    clause fails with the check's name, and ``skip`` must name real checks."""
    opened: list[MemoryStore] = []

    async def fresh() -> Store:
        opened.append(MemoryStore())
        return opened[-1]

    await check_store(fresh)
    assert len(opened) == len(CHECKS)

    class ForgetsNothing(MemoryStore):
        async def forget_memory(self, ref: satchel.MemoryRef) -> bool:
            return False

    async def broken() -> Store:
        return ForgetsNothing()

    with pytest.raises(AssertionError, match="forget"):
        await check_store(broken)
    with pytest.raises(KeyError, match="no such check"):
        await check_store(fresh, skip=["no_such_check"])


# -- end to end -------------------------------------------------------------------------


async def test_every_store_delivers_the_same_context(request: pytest.FixtureRequest) -> None:
    """The same corpus written through a runtime on each store, and the same prepares,
    deliver the same items with the same citations (ids named by write order)."""
    delivered: dict[str, list[list[tuple[object, ...]]]] = {}
    for name, factory in STORES.items():
        async with satchel.open_runtime(store=await factory(request), embedder=EMBEDDER) as rt:
            names = await write_corpus(rt)
            delivered[name] = [
                [
                    (item.citation.family, names.get(str(item.citation.id), item.citation.id),
                     item.citation.version, item.tier, item.text, item.at)
                    for item in satchel.parse_context((await rt.prepare_context(asked)).content)
                ]
                for asked in REQUESTS
            ]  # fmt: skip
    reference = delivered.pop("memory")
    assert all(len(items) >= 3 for items in reference)
    families = {item[0] for items in reference for item in items}
    assert all(item[1] != "record 5" for items in reference for item in items)  # forgotten
    assert families == {"memory", "experience", "topic-memory", "resource", "profile"}
    for name, packs in delivered.items():
        assert packs == reference, name


SECTIONS = satchel.Assembly(
    (
        satchel.Section("profile", 1),
        satchel.Section("memory", 4),
        satchel.Section("experience", 1),
        satchel.Section("topic-memory", 1),
        satchel.Section("resource", 1),
    )
)
REQUESTS = [
    satchel.PrepareContextRequest(scope_id="c", query=query, assembly=SECTIONS)
    for query in (
        "kestrel deployment rollback",
        "what did Alice do yesterday?",
        "harbour lantern festival on 9 May 2023",
        "how do I configure the kestrel cluster",
    )
] + [  # the limits scaled to a 32 KB budget: pools of 1,052 candidates asked of each store
    satchel.PrepareContextRequest(scope_id="c", query="kestrel deployment", max_bytes=32768)
]


async def write_corpus(rt: satchel.Runtime) -> dict[str, str]:
    """One scope of every family, with a forget and an update; returns a stable name per
    record id (its family and write position)."""
    topics = ["kestrel", "harbour", "lantern", "pottery", "deployment", "cluster", "bread"]
    entries = [
        turn(
            f"{('Alice', 'Bob')[n % 2]}: note {n} on {topics[n % 7]} and {topics[(n * 3) % 7]}",
            60 * 5 * n,
            thread=f"t{n % 3}",
        )
        for n in range(40)
    ]
    entries.append(turn("Alice: I went to the lantern festival yesterday", 60 * 5 * 40))
    refs = await rt.add_memories("c", entries)
    await rt.update_memory(refs[3], turn("Bob: rolled back the kestrel deployment", 15))
    await rt.forget_memory(refs[5])
    experiences = await rt.add_experiences(
        "c",
        [
            satchel.Experience("kestrel deployment failed", "rolled back", "recovered", "pin"),
            satchel.Experience("harbour trip", "took the ferry", "late", "check times"),
        ],
    )
    topic_refs = await rt.add_topic_memories(
        "c",
        [
            satchel.TopicMemory("kestrel cluster", "three nodes; configure with kestrel.toml"),
            satchel.TopicMemory("lantern festival", "every May at the harbour"),
        ],
    )
    await rt.add_resources(
        "c",
        [
            satchel.Resource("docs/kestrel.md", "body", abstract="configure the kestrel cluster"),
            satchel.Resource("docs/harbour.md", "body", abstract="harbour map", overview="piers"),
        ],
    )
    await rt.set_profile("c", satchel.Profile("Alice and Bob run the kestrel cluster"))
    named = [*[r.entry_id for r in refs], *[r.id for r in (*experiences, *topic_refs)]]
    return {record_id: f"record {n}" for n, record_id in enumerate(named)}
