"""SatchelStore against the behaviours LangGraph's own store tests check on its
in-memory store (put, get, update, delete, namespaces, prefixes, filters, limit and
offset, search, TTL), in satchel's words, over a Runtime and over a Client of a real
``satchel serve``, on asyncio and trio."""

from __future__ import annotations

import uuid
from collections import Counter
from typing import TYPE_CHECKING, Any

import anyio
import pytest
from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    PutOp,
    SearchOp,
)

import satchel
from satchel.integrations.langgraph import SatchelStore, namespace_of, scope_of

from ..client._serving import TOKEN, Server, running_server

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterator

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with running_server(tmp_path_factory.mktemp("langgraph")) as running:
        yield running


@pytest.fixture(params=["runtime", "client"])
async def store(request: pytest.FixtureRequest, server: Server) -> AsyncIterator[SatchelStore]:
    if request.param == "runtime":
        async with satchel.open_runtime(embedder=satchel.HashingEmbedder()) as runtime:
            yield SatchelStore(runtime)
        return
    async with satchel.Client(server.url, token=TOKEN) as client:
        yield SatchelStore(client)


def root() -> str:
    """A namespace root of the test's own (the client's server is shared)."""
    return f"t{uuid.uuid4().hex[:8]}"


def test_it_is_a_langgraph_store() -> None:
    """SatchelStore is a BaseStore that refuses TTL."""
    assert issubclass(SatchelStore, BaseStore)
    assert SatchelStore.supports_ttl is False
    with pytest.raises(satchel.InvalidRequestError, match="runtime_or_client"):
        SatchelStore(object())  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "namespace",
    [("users",), ("users", "ana"), ("a/b", "c:d", "50%", "é", "x y"), ("users", "ana", "docs")],
)
def test_namespaces_map_to_scopes_and_back(namespace: tuple[str, ...]) -> None:
    """The scope encoding is reversible, keeps labels apart, and marks its scopes."""
    scope_id = scope_of(namespace)
    assert scope_id.startswith("langgraph:")
    assert namespace_of(scope_id) == namespace
    assert namespace_of("project:demo") is None
    assert scope_of(("a/b",)) != scope_of(("a", "b"))


async def test_put_get_update_delete(store: SatchelStore) -> None:
    """An item reads back as put; a new value is an update keeping created_at; a
    delete removes it; a missing key is None."""
    namespace = (root(), "ana")
    value = {"text": "Ana prefers tea", "nested": {"n": 1.5, "list": [1, "two", None]}}
    await store.aput(namespace, "pref", value)
    item = await store.aget(namespace, "pref")
    assert isinstance(item, Item)
    assert (item.namespace, item.key, item.value) == (namespace, "pref", value)
    assert item.created_at == item.updated_at
    await store.aput(namespace, "pref", {"text": "Ana prefers coffee"})
    updated = await store.aget(namespace, "pref")
    assert updated is not None
    assert updated.value == {"text": "Ana prefers coffee"}
    assert updated.created_at == item.created_at
    assert updated.updated_at > item.updated_at
    await store.adelete(namespace, "pref")
    assert await store.aget(namespace, "pref") is None
    assert await store.aget(namespace, "never") is None
    await store.adelete(namespace, "never")  # deleting nothing is no error


async def test_a_deleted_key_can_be_put_again(store: SatchelStore) -> None:
    """Delete erases: the same key and value put again is a live item again."""
    namespace = (root(),)
    await store.aput(namespace, "k", {"v": 1})
    await store.adelete(namespace, "k")
    await store.aput(namespace, "k", {"v": 1})
    item = await store.aget(namespace, "k")
    assert item is not None
    assert item.value == {"v": 1}


async def test_values_are_kept_losslessly_or_refused(store: SatchelStore) -> None:
    """Unicode, floats and nesting come back equal; what JSON cannot hold is refused."""
    namespace = (root(),)
    value = {"s": "naïve \u2028 ☃", "f": 0.1, "big": 2**60, "deep": {"a": [{"b": False}]}}
    await store.aput(namespace, "v", value)
    item = await store.aget(namespace, "v")
    assert item is not None
    assert item.value == value
    for bad in ({"t": (1, 2)}, {"nan": float("nan")}, {"o": object()}, {1: "int key"}):
        with pytest.raises(satchel.InvalidRequestError, match="value of 'bad'"):
            await store.aput(namespace, "bad", bad)  # type: ignore[arg-type]
    assert await store.aget(namespace, "bad") is None


async def test_ttl_is_refused_clearly(store: SatchelStore) -> None:
    """A put with a TTL raises NotImplementedError and writes nothing."""
    namespace = (root(),)
    with pytest.raises(NotImplementedError, match="TTL"):
        await store.aput(namespace, "k", {"v": 1}, ttl=5)
    with pytest.raises(NotImplementedError, match="TTL"):
        await store.abatch([PutOp(namespace, "k", {"v": 1}, ttl=5.0)])
    assert await store.aget(namespace, "k") is None


async def test_invalid_namespaces_are_refused(store: SatchelStore) -> None:
    """LangGraph's namespace rules hold: not empty, no periods, not under 'langgraph'."""
    for namespace in [(), ("a.b",), ("langgraph", "x"), ("",)]:
        with pytest.raises(InvalidNamespaceError):
            await store.aput(namespace, "k", {"v": 1})


async def fill(store: SatchelStore) -> str:
    """A small tree of items: (r, docs, a) x3, (r, docs, b) x2, (r, users, ana) x1."""
    top = root()
    for index, (kind, score) in enumerate([("report", 4.0), ("note", 5.5), ("report", 3.0)]):
        await store.aput((top, "docs", "a"), f"a{index}", {"type": kind, "score": score})
    for index in range(2):
        await store.aput((top, "docs", "b"), f"b{index}", {"type": "note", "meta": {"lang": "en"}})
    await store.aput((top, "users", "ana"), "profile", {"type": "profile", "score": 9})
    return top


async def test_search_by_prefix_filter_limit_offset(store: SatchelStore) -> None:
    """A prefix selects its namespaces' items; filters match exactly or by operator,
    nested objects member by member; limit and offset page the result."""
    top = await fill(store)
    assert len(await store.asearch((top,), limit=100)) == 6
    assert len(await store.asearch((top, "docs"), limit=100)) == 5
    assert {i.key for i in await store.asearch((top, "docs", "b"))} == {"b0", "b1"}
    assert await store.asearch((root(),)) == []
    reports = await store.asearch((top,), filter={"type": "report"})
    assert {i.key for i in reports} == {"a0", "a2"}
    high = await store.asearch((top,), filter={"score": {"$gt": 3.5, "$lte": 5.5}})
    assert {i.key for i in high} == {"a0", "a1"}
    assert {i.key for i in await store.asearch((top,), filter={"type": {"$ne": "note"}})} == {
        "a0",
        "a2",
        "profile",
    }
    assert len(await store.asearch((top,), filter={"meta": {"lang": "en"}})) == 2
    everything = await store.asearch((top,), limit=100)
    assert [i.key for i in await store.asearch((top,), limit=2, offset=1)] == [
        i.key for i in everything[1:3]
    ]
    assert await store.asearch((top,), offset=10) == []


async def test_search_with_a_query_ranks_by_satchels_recall(store: SatchelStore) -> None:
    """A query finds the relevant item first, with a score; an irrelevant query
    finds nothing; filters apply to the ranking."""
    top = root()
    await store.aput((top, "m"), "tea", {"text": "Ana drinks green tea every morning"})
    await store.aput((top, "m"), "bike", {"text": "Ben rides his bike to the office"})
    await store.aput((top, "n"), "deploy", {"text": "Deploys freeze on Fridays", "team": "ops"})
    found = await store.asearch((top,), query="what does Ana drink in the morning")
    assert found[0].key == "tea"
    assert found[0].score is not None
    assert found[0].value == {"text": "Ana drinks green tea every morning"}
    assert await store.asearch((top,), query="zebra quantum xylophone") == []
    assert await store.asearch((top,), query="deploys freeze", filter={"team": "dev"}) == []
    [deploy] = await store.asearch((top, "n"), query="deploys freeze")
    assert deploy.namespace == (top, "n")


async def test_list_namespaces(store: SatchelStore) -> None:
    """Namespaces list sorted, by prefix and suffix (with wildcards), cut at a depth,
    paged; a namespace whose items are all deleted is gone."""
    top = await fill(store)
    mine = MatchCondition("prefix", (top,))
    assert await store.alist_namespaces(prefix=(top,)) == [
        (top, "docs", "a"),
        (top, "docs", "b"),
        (top, "users", "ana"),
    ]
    assert await store.alist_namespaces(prefix=(top, "*", "a")) == [(top, "docs", "a")]
    assert await store.alist_namespaces(prefix=(top,), suffix=("ana",)) == [(top, "users", "ana")]
    assert await store.alist_namespaces(prefix=(top,), max_depth=2) == [
        (top, "docs"),
        (top, "users"),
    ]
    assert await store.alist_namespaces(prefix=(top,), limit=1, offset=1) == [(top, "docs", "b")]
    [listed] = await store.abatch([ListNamespacesOp((mine,), max_depth=1)])
    assert listed == [(top,)]
    await store.adelete((top, "users", "ana"), "profile")
    assert (top, "users", "ana") not in await store.alist_namespaces(prefix=(top,))


async def test_batch_runs_ops_in_order(store: SatchelStore) -> None:
    """One batch of mixed ops: each sees the puts before it; results line up."""
    top = root()
    results = await store.abatch(
        [
            PutOp((top,), "k", {"v": 1}),
            GetOp((top,), "k"),
            PutOp((top,), "k", None),
            GetOp((top,), "k"),
            SearchOp((top,)),
        ]
    )
    assert results[0] is None
    assert isinstance(results[1], Item)
    assert results[1].value == {"v": 1}
    assert results[2:] == [None, None, []]


async def test_the_sync_methods_run_from_a_worker_thread(store: SatchelStore) -> None:
    """put/get/search/delete/list_namespaces work from a worker thread (as LangGraph
    runs a sync node), and refuse to block the event loop itself."""
    top = root()

    def sync_calls() -> list[Any]:
        store.put((top,), "k", {"v": "sync"})
        got = store.get((top,), "k")
        found = store.search((top,))
        namespaces = store.list_namespaces(prefix=(top,))
        store.delete((top,), "k")
        return [got, found, namespaces, store.get((top,), "k")]

    got, found, namespaces, gone = await anyio.to_thread.run_sync(sync_calls)
    assert got.value == {"v": "sync"}
    assert [item.key for item in found] == ["k"]
    assert namespaces == [(top,)]
    assert gone is None
    with pytest.raises(RuntimeError, match="would block the event loop"):
        store.get((top,), "k")


async def test_a_query_search_returns_up_to_its_limit(store: SatchelStore) -> None:
    """A search with a query is not capped below LangGraph's default limit of 10: the
    pack's budget, not a section limit, bounds it."""
    top = root()
    for index in range(14):
        await store.aput((top,), f"n{index}", {"text": f"note {index} about the nightly backup"})
    found = await store.asearch((top,), query="nightly backup note", limit=12)
    assert len(found) == 12
    assert len({item.key for item in found}) == 12


# ------------------------------------------------------------------ reading by key


class Counted:
    """A Runtime or Client whose methods count the calls a SatchelStore makes of them."""

    def __init__(self, api: satchel.Runtime | satchel.Client) -> None:
        self.api = api
        self.calls: Counter[str] = Counter()

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.api, name)

        async def counted(*args: Any, **kwargs: Any) -> Any:
            self.calls[name] += 1
            return await method(*args, **kwargs)

        return counted


@pytest.fixture(params=["runtime", "client"])
async def api(
    request: pytest.FixtureRequest, server: Server
) -> AsyncIterator[satchel.Runtime | satchel.Client]:
    if request.param == "runtime":
        async with satchel.open_runtime(embedder=satchel.HashingEmbedder()) as runtime:
            yield runtime
        return
    async with satchel.Client(server.url, token=TOKEN) as client:
        yield client


async def test_a_key_put_here_is_read_and_deleted_without_a_listing(
    api: satchel.Runtime | satchel.Client,
) -> None:
    """A get of a key this store put reads its version and asks for the next (two
    get_memory calls, no listing); a delete erases it in one call; a get afterwards
    finds nothing, by a listing."""
    counted = Counted(api)
    store = SatchelStore(counted)
    namespace = (root(), "ana")
    for n in range(5):
        await store.aput(namespace, f"k{n}", {"n": n})
    counted.calls.clear()
    item = await store.aget(namespace, "k2")
    assert item is not None
    assert item.value == {"n": 2}
    assert counted.calls == Counter(get_memory=2)
    counted.calls.clear()
    await store.adelete(namespace, "k2")
    assert counted.calls == Counter(erase=1)
    assert await store.aget(namespace, "k2") is None
    assert counted.calls["list_records"] == 1


async def test_a_key_another_writer_changed_reads_as_it_is_now(
    api: satchel.Runtime | satchel.Client,
) -> None:
    """Two stores over one satchel: a new version the other put is read by asking for
    the next versions, no listing; once the other deleted the key and put it again (a
    new entry), the remembered entry is gone and a listing finds the new one; a delete
    then takes the new entry."""
    counted = Counted(api)
    mine, other = SatchelStore(counted), SatchelStore(api)
    namespace = (root(),)
    await mine.aput(namespace, "k", {"v": 1})
    await other.aput(namespace, "k", {"v": 2})
    await other.aput(namespace, "k", {"v": 3})
    counted.calls.clear()
    item = await mine.aget(namespace, "k")
    assert item is not None
    assert item.value == {"v": 3}
    assert counted.calls["list_records"] == 0
    await other.adelete(namespace, "k")
    await other.aput(namespace, "k", {"v": 4})
    counted.calls.clear()
    again = await mine.aget(namespace, "k")
    assert again is not None
    assert again.value == {"v": 4}
    assert counted.calls["list_records"] == 1
    await mine.adelete(namespace, "k")
    assert await other.aget(namespace, "k") is None


async def test_a_key_never_seen_is_found_once_by_a_listing(
    api: satchel.Runtime | satchel.Client,
) -> None:
    """A store that did not put a key finds it by walking the namespace's listing,
    which remembers every key it passed: the next gets need no listing."""
    namespace = (root(),)
    writer = SatchelStore(api)
    for n in range(3):
        await writer.aput(namespace, f"k{n}", {"n": n})
    counted = Counted(api)
    reader = SatchelStore(counted)
    assert [(await reader.aget(namespace, f"k{n}")).value for n in (0, 1, 2)] == [  # type: ignore[union-attr]
        {"n": 0},
        {"n": 1},
        {"n": 2},
    ]
    assert counted.calls["list_records"] == 1


async def test_a_repeated_search_reads_each_version_once(
    api: satchel.Runtime | satchel.Client,
) -> None:
    """A search with a query reads each delivered item's version once; the same search
    again reads none (a version never changes), and finds the same items."""
    counted = Counted(api)
    store = SatchelStore(counted)
    top = root()
    await store.aput((top,), "tea", {"text": "Ana drinks green tea every morning"})
    await store.aput((top,), "coffee", {"text": "Ben drinks black coffee every morning"})
    counted.calls.clear()
    first = await store.asearch((top,), query="what do they drink every morning")
    assert first
    assert counted.calls["get_memory"] == len(first)
    counted.calls.clear()
    second = await store.asearch((top,), query="what do they drink every morning")
    assert [item.key for item in second] == [item.key for item in first]
    assert counted.calls["get_memory"] == 0
    assert counted.calls["explain_context"] == 1
