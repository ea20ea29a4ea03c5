"""``SatchelStore``: satchel as a LangGraph ``BaseStore`` (the ``satchel[langgraph]`` extra).

A LangGraph item is one satchel memory entry:

- **namespace -> scope.** ``("users", "ana")`` is the scope ``langgraph:users/ana``: the
  prefix ``langgraph:``, then each label percent-encoded (``quote(label, safe="")``, so
  no label can spell the ``/`` between labels) and joined by ``/``. The encoding is
  reversible (:func:`scope_of`, :func:`namespace_of`), and ``list_namespaces`` reads the
  namespaces back from the scopes the Runtime lists.
- **key -> idempotency key.** The item's key is the entry's ``key``: a put of a new value
  is a new version of the same entry (the old versions stay readable by their refs).
- **value -> text.** The value is kept as its JSON text (lossless: a value JSON cannot
  hold exactly, such as a tuple, a non-string key or NaN, is refused), and that text is
  what satchel searches. ``updated_at`` is the entry's ``created_at``, stamped by the
  put; ``created_at`` is its first version's.
- **search with a query** is satchel's own recall: one ``explain_context`` over the
  namespace prefix's scopes (the first, the rest as references), items in the pack's
  order, each scored by its receipt; ``filter``, ``offset`` and ``limit`` apply to that
  ranking. A query nothing in the store is relevant to finds nothing (satchel abstains).
  Without a query, items are listed newest first, namespace by namespace.
- **get and delete read by key.** satchel's public API reads a memory entry by its ref,
  not by its key, so a store remembers the ref of every key it put, or read on its way
  (up to 4,096 keys, least recently used first out): a get of a remembered key reads
  that version and asks for the next one (two ``get_memory`` calls, one step more per
  version another writer added), and a delete erases the remembered entry at once. A
  key it does not remember, or whose entry was erased meanwhile (the key may name
  another entry now), is found by walking the namespace's listing (a thousand records
  a page), which remembers every key it passes. Versions never change once written,
  so the records a search reads are remembered by ref (4,096) and read once.
- **delete erases** (``Runtime.erase``), it does not forget. A LangGraph delete means
  the item is gone, and a later put of the same key must bring it back: satchel's
  forget is forever for a key (the same key and content written again stays
  forgotten), whereas an erase frees the key and removes every version.
- **TTL is not supported** (``supports_ttl`` is False): a put with a ``ttl`` raises
  ``NotImplementedError``, as LangGraph's base class does. ``index`` is accepted and
  has no effect: satchel indexes every value whole.

The store's methods are async (``aget``, ``aput``, ``asearch``, ...). The sync ones
(``get``, ``put``, ...) run the async ones on the event loop the store was made (or last
used) on, from a worker thread, as LangGraph runs a sync node; called on the loop
itself they would block it, and raise instead.
"""

from __future__ import annotations

import contextlib
import json
import math
import threading
from collections import OrderedDict
from collections.abc import Hashable, Iterable, Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final, Generic, Protocol, TypeVar
from urllib.parse import quote, unquote

import anyio
import anyio.from_thread
import anyio.lowlevel

import satchel

try:
    from langgraph.store.base import (
        BaseStore,
        GetOp,
        Item,
        ListNamespacesOp,
        MatchCondition,
        Op,
        PutOp,
        Result,
        SearchItem,
        SearchOp,
    )
except ModuleNotFoundError as missing:  # pragma: no cover - the extra is installed in tests
    raise ModuleNotFoundError(
        "satchel.integrations.langgraph needs LangGraph: pip install 'satchel[langgraph]'",
        name=missing.name,
    ) from missing

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["SatchelStore", "namespace_of", "scope_of"]

#: Every scope a SatchelStore writes starts with it.
SCOPE_PREFIX: Final = "langgraph:"
#: The kind of the memory entry an item is.
ITEM_KIND: Final = "langgraph-item"
#: The largest page a listing takes.
_PAGE: Final = 1000
#: How many keys' refs, and how many versions' records, a store remembers.
REMEMBERED: Final = 4096

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class _Remembered(Generic[K, V]):
    """At most ``size`` values by key, the least recently used dropped first."""

    def __init__(self, size: int = REMEMBERED) -> None:
        self._values: OrderedDict[K, V] = OrderedDict()
        self._size = size

    def get(self, key: K) -> V | None:
        value = self._values.get(key)
        if value is not None:
            self._values.move_to_end(key)
        return value

    def put(self, key: K, value: V) -> None:
        self._values[key] = value
        self._values.move_to_end(key)
        if len(self._values) > self._size:
            self._values.popitem(last=False)

    def drop(self, key: K) -> None:
        self._values.pop(key, None)


class _Memory(Protocol):
    """What the store calls: the public API a Runtime and a Client share."""

    async def add_memories(
        self, scope_id: str, entries: Sequence[satchel.MemoryEntry]
    ) -> list[satchel.MemoryRef]: ...
    async def get_memory(self, ref: satchel.MemoryRef) -> satchel.MemoryRecord: ...
    async def erase(self, target: satchel.Citation | satchel.MemoryRef) -> int: ...
    async def explain_context(self, request: object) -> satchel.Explanation: ...
    async def list_scopes(self) -> tuple[satchel.ScopeSummary, ...]: ...
    async def list_records(
        self,
        scope_id: str,
        family: str | None = None,
        *,
        include_forgotten: bool = False,
        cursor: str | None = None,
        limit: int = 100,
    ) -> satchel.RecordPage: ...


def scope_of(namespace: tuple[str, ...]) -> str:
    """The scope a namespace's items live in (``("users", "ana")`` ->
    ``langgraph:users/ana``)."""
    return SCOPE_PREFIX + "/".join(quote(label, safe="") for label in namespace)


def namespace_of(scope_id: str) -> tuple[str, ...] | None:
    """The namespace :func:`scope_of` made ``scope_id`` of; None for another scope."""
    if not scope_id.startswith(SCOPE_PREFIX):
        return None
    return tuple(unquote(label) for label in scope_id[len(SCOPE_PREFIX) :].split("/"))


class SatchelStore(BaseStore):
    """A LangGraph store over a satchel Runtime or Client (see the module's docstring
    for how items, namespaces, search and delete map onto satchel).

    Args:
        runtime_or_client: an open :class:`satchel.Runtime` or :class:`satchel.Client`;
            the store does not close it.

    Raises:
        InvalidRequestError: ``runtime_or_client`` is neither.
    """

    supports_ttl = False

    def __init__(self, runtime_or_client: _Memory) -> None:
        names = ("add_memories", "get_memory", "erase", "explain_context", "list_records")
        if not all(callable(getattr(runtime_or_client, name, None)) for name in names):
            raise satchel.InvalidRequestError(
                "runtime_or_client must be a satchel.Runtime or a satchel.Client"
            )
        self._memory = runtime_or_client
        #: (scope, key) -> the newest ref of the key's entry this store knows of.
        self._refs: _Remembered[tuple[str, str], satchel.MemoryRef] = _Remembered()
        #: ref -> its record: a version never changes once written.
        self._versions: _Remembered[satchel.MemoryRef, satchel.MemoryRecord] = _Remembered()
        self._token: object | None = None
        self._loop_thread: int | None = None
        with contextlib.suppress(RuntimeError):  # outside a loop: the first async call sets it
            self._token = anyio.lowlevel.current_token()
            self._loop_thread = threading.get_ident()

    # -- the batch ------------------------------------------------------------------

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Run ``ops`` in order (a put is visible to the ops after it)."""
        self._token = anyio.lowlevel.current_token()
        self._loop_thread = threading.get_ident()
        return [await self._run(op) for op in ops]

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """:meth:`abatch`, from a worker thread of the store's event loop."""
        if self._token is None:
            raise RuntimeError(
                "SatchelStore's sync methods run on the event loop the store was made on:"
                " make it inside that loop (or await one of its async methods first)"
            )
        if threading.get_ident() == self._loop_thread:
            raise RuntimeError(
                "SatchelStore's sync methods would block the event loop they were called on:"
                " await aget/aput/asearch/adelete/alist_namespaces there instead"
            )
        return anyio.from_thread.run(self.abatch, list(ops), token=self._token)  # type: ignore[arg-type]

    async def _run(self, op: Op) -> Result:
        if isinstance(op, GetOp):
            return await self._get(op.namespace, op.key)
        if isinstance(op, PutOp):
            await self._put(op)
            return None
        if isinstance(op, SearchOp):
            return await self._search(op)
        if isinstance(op, ListNamespacesOp):
            return await self._list_namespaces(op)
        raise satchel.InvalidRequestError(f"op must be a LangGraph store op, not {op!r}")

    # -- the ops --------------------------------------------------------------------

    async def _get(self, namespace: tuple[str, ...], key: str) -> Item | None:
        found = await self._latest(scope_of(namespace), key)
        return None if found is None else await self._item(found, Item)

    async def _put(self, op: PutOp) -> None:
        if op.ttl is not None:
            raise NotImplementedError(
                "TTL is not supported by SatchelStore: put without a ttl (items are kept"
                " until deleted)"
            )
        scope_id = scope_of(op.namespace)
        if op.value is None:
            await self._delete(scope_id, op.key)
            return
        entry = satchel.MemoryEntry(
            text=_text_of(op.value, op.key),
            kind=ITEM_KIND,
            created_at=datetime.now(UTC),
            key=op.key,
        )
        [ref] = await self._memory.add_memories(scope_id, [entry])
        self._refs.put((scope_id, op.key), ref)

    async def _delete(self, scope_id: str, key: str) -> None:
        """Erase the entry under ``key``. A remembered entry erased here held the key
        (a key names one entry until that entry is erased), so nothing else can."""
        remembered = self._refs.get((scope_id, key))
        self._refs.drop((scope_id, key))
        if remembered is not None and await self._memory.erase(remembered) > 0:
            return
        found = await self._walk(scope_id, key)
        if found is not None:
            self._refs.drop((scope_id, key))
            await self._memory.erase(found.ref)

    async def _search(self, op: SearchOp) -> list[SearchItem]:
        scopes = [
            scope_id
            for scope_id, namespace in await self._namespaces()
            if namespace[: len(op.namespace_prefix)] == op.namespace_prefix
        ]
        if not scopes:
            return []
        if op.query:
            ranked = await self._recalled(scopes, op.query)
        else:
            ranked = [(record, None) for scope_id in scopes for record in await self._all(scope_id)]
        matching = [
            (record, score)
            for record, score in ranked
            if _matches(json.loads(record.text), op.filter)
        ]
        window = matching[op.offset : op.offset + op.limit]
        return [await self._item(record, SearchItem, score) for record, score in window]

    async def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        namespaces = [namespace for _, namespace in await self._namespaces()]
        if op.match_conditions:
            namespaces = [
                namespace
                for namespace in namespaces
                if all(_matches_path(condition, namespace) for condition in op.match_conditions)
            ]
        if op.max_depth is not None:
            namespaces = [namespace[: op.max_depth] for namespace in namespaces]
        return sorted(set(namespaces))[op.offset : op.offset + op.limit]

    # -- reading satchel ------------------------------------------------------------

    async def _namespaces(self) -> list[tuple[str, tuple[str, ...]]]:
        """Every scope holding a live item, with its namespace, sorted."""
        found = []
        for summary in await self._memory.list_scopes():
            namespace = namespace_of(summary.scope_id)
            if namespace is not None and summary.records.get("memory", 0) > 0:
                found.append((summary.scope_id, namespace))
        return sorted(found, key=lambda pair: pair[1])

    async def _all(self, scope_id: str, key: str | None = None) -> list[satchel.MemoryRecord]:
        """Every live item's record in the scope, newest first; with ``key``, only the
        item under it (a walk of the scope's listing, a thousand records a page, that
        stops at the item). Every key passed on the way is remembered."""
        found = []
        cursor = None
        while True:
            page = await self._memory.list_records(scope_id, "memory", cursor=cursor, limit=_PAGE)
            for stored in page.records:
                if stored.key is None:
                    continue
                record = _record_of(stored)
                self._refs.put((scope_id, stored.key), record.ref)
                if key in (None, stored.key):
                    found.append(record)
                    if key is not None:
                        return found
            if (cursor := page.cursor) is None:
                return found

    async def _walk(self, scope_id: str, key: str) -> satchel.MemoryRecord | None:
        """The live item under ``key``, found in the scope's listing."""
        found = await self._all(scope_id, key)
        return found[0] if found else None

    async def _latest(self, scope_id: str, key: str) -> satchel.MemoryRecord | None:
        """The live item under ``key``: its remembered entry's newest version, else
        what the listing holds under it."""
        remembered = self._refs.get((scope_id, key))
        if remembered is not None:
            newest = await self._newest(remembered)
            if newest is not None:
                self._refs.put((scope_id, key), newest.ref)
                return newest
            self._refs.drop((scope_id, key))
        return await self._walk(scope_id, key)

    async def _newest(self, ref: satchel.MemoryRef) -> satchel.MemoryRecord | None:
        """The newest version of ``ref``'s entry from ``ref`` on, or None when the entry
        was erased. ``ref`` itself is read from satchel (an erase must be seen), the
        versions after it until one does not exist."""
        try:
            record = await self._memory.get_memory(ref)
        except satchel.NotFoundError:
            return None
        self._versions.put(ref, record)
        while True:
            after = satchel.MemoryRef(ref.scope_id, ref.entry_id, record.ref.version + 1)
            try:
                record = await self._read(after)
            except satchel.NotFoundError:
                return record

    async def _read(self, ref: satchel.MemoryRef) -> satchel.MemoryRecord:
        """Exactly the version ``ref`` names (read once: a version never changes)."""
        record = self._versions.get(ref)
        if record is None:
            record = await self._memory.get_memory(ref)
            self._versions.put(ref, record)
        return record

    async def _recalled(
        self, scopes: list[str], query: str
    ) -> list[tuple[satchel.MemoryRecord, float | None]]:
        """The items satchel's recall delivers for ``query``, in the pack's order."""
        request = satchel.PrepareContextRequest(
            scope_id=scopes[0],
            query=query,
            max_bytes=32768,
            references=tuple(scopes[1:]),
        )
        explained = await self._memory.explain_context(request)
        ranked = []
        for receipt in explained.receipts:
            cited = receipt.citation
            if cited.family != "memory" or cited.id is None or cited.version is None:
                continue
            record = await self._read(satchel.MemoryRef(cited.scope, cited.id, cited.version))
            if record.key is not None:
                ranked.append((record, receipt.score))
        return ranked

    async def _item(
        self, record: satchel.MemoryRecord, kind: Any, score: float | None = None
    ) -> Any:
        """The LangGraph item (``Item`` or ``SearchItem``) ``record`` is."""
        ref = record.ref
        namespace = namespace_of(ref.scope_id)
        assert namespace is not None
        updated = record.created_at or datetime.fromtimestamp(0, UTC)
        created = updated
        if ref.version != 1:
            first = await self._read(satchel.MemoryRef(ref.scope_id, ref.entry_id, 1))
            created = first.created_at or updated
        fields = {
            "namespace": namespace,
            "key": record.key or "",
            "value": json.loads(record.text),
            "created_at": created,
            "updated_at": updated,
        }
        return kind(**fields) if kind is Item else kind(**fields, score=score)


def _record_of(stored: satchel.StoredRecord) -> satchel.MemoryRecord:
    """A listed item's record, as ``get_memory`` would read its version."""
    cited = stored.citation
    ref = satchel.MemoryRef(cited.scope, str(cited.id), int(cited.version or 1))
    return satchel.MemoryRecord(
        ref=ref,
        text=stored.text,
        kind=ITEM_KIND,
        tags=(),
        created_at=stored.created_at,
        thread=None,
        key=stored.key,
    )


def _text_of(value: Mapping[str, Any], key: str) -> str:
    """``value`` as the JSON text kept for it, refused unless it reads back equal."""
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError) as exc:
        raise satchel.InvalidRequestError(f"value of {key!r} is not JSON: {exc}") from None
    if not isinstance(value, Mapping) or json.loads(text) != value or _has_tuple(value):
        raise satchel.InvalidRequestError(
            f"value of {key!r} must be a JSON object (string keys; lists, not tuples)"
        )
    return text


def _has_tuple(value: object) -> bool:
    if isinstance(value, tuple):
        return True
    if isinstance(value, Mapping):
        return any(_has_tuple(item) for item in value.values())
    if isinstance(value, list):
        return any(_has_tuple(item) for item in value)
    return False


def _matches(value: Mapping[str, Any], wanted: Mapping[str, Any] | None) -> bool:
    """Whether ``value`` passes a search's ``filter``, as LangGraph's stores read it: a
    field equal to the given value (objects compared member by member, lists element
    by element), or passing every ``$eq``/``$ne``/``$gt``/``$gte``/``$lt``/``$lte``."""
    return not wanted or all(_compare(value.get(name), given) for name, given in wanted.items())


def _compare(actual: Any, given: Any) -> bool:
    if isinstance(given, Mapping):
        if any(name.startswith("$") for name in given):
            return all(_operator(actual, name, operand) for name, operand in given.items())
        return isinstance(actual, Mapping) and all(
            _compare(actual.get(name), item) for name, item in given.items()
        )
    if isinstance(given, list | tuple):
        return (
            isinstance(actual, list | tuple)
            and len(actual) == len(given)
            and all(_compare(a, g) for a, g in zip(actual, given, strict=True))
        )
    return bool(actual == given)


def _operator(actual: Any, name: str, operand: Any) -> bool:
    if name == "$eq":
        return bool(actual == operand)
    if name == "$ne":
        return bool(actual != operand)
    order = {"$gt": float.__gt__, "$gte": float.__ge__, "$lt": float.__lt__, "$lte": float.__le__}
    if name not in order:
        raise satchel.InvalidRequestError(f"filter operator {name} is not one of $eq, $ne, "
                                          "$gt, $gte, $lt, $lte")  # fmt: skip
    try:
        number = float(actual)
    except (TypeError, ValueError):
        return False
    return not math.isnan(number) and bool(order[name](number, float(operand)))


def _matches_path(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    """Whether ``namespace`` starts (``prefix``) or ends (``suffix``) with the
    condition's path, ``*`` matching any one label."""
    path = condition.path
    if len(namespace) < len(path):
        return False
    if condition.match_type == "prefix":
        pairs = zip(namespace, path, strict=False)
    elif condition.match_type == "suffix":
        pairs = zip(reversed(namespace), reversed(path), strict=False)
    else:
        raise satchel.InvalidRequestError(
            f"match_type must be prefix or suffix, not {condition.match_type!r}"
        )
    return all(wanted in ("*", label) for label, wanted in pairs)
