"""An embedder's output is checked where satchel receives it: a bad one is refused,
naming the embedder, before anything is stored, and the scope keeps serving."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pytest

import satchel
from satchel.embedders import HashingEmbedder, fingerprint_of

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from pathlib import Path

pytestmark = pytest.mark.anyio

DIMENSION = 8


def unit_rows(count: int) -> np.ndarray[Any, np.dtype[np.float64]]:
    rows = np.zeros((count, DIMENSION))
    rows[:, 0] = 1.0
    return rows


class Returning:
    """An embedder of the right dimension whose ``embed`` returns what ``make`` makes."""

    dimension = DIMENSION

    def __init__(self, make: Callable[[int], object]) -> None:
        self.make = make

    async def embed(self, texts: Sequence[str]) -> Any:
        return self.make(len(texts))


def with_value(value: float) -> Callable[[int], object]:
    def make(count: int) -> object:
        rows = unit_rows(count).astype(np.float32)
        rows[:, 1] = value
        return rows

    return make


BAD_OUTPUTS = [
    pytest.param(lambda n: unit_rows(n)[:, :-1].astype(np.float32), "shape", id="narrow"),
    pytest.param(lambda n: unit_rows(n + 1).astype(np.float32), "shape", id="extra-row"),
    pytest.param(with_value(float("nan")), "not finite", id="nan"),
    pytest.param(with_value(float("inf")), "not finite", id="inf"),
    pytest.param(with_value(1e38), "unit length", id="huge"),
    pytest.param(lambda n: unit_rows(n) * 1e39, "not finite", id="float64-overflow"),
    pytest.param(lambda n: unit_rows(n) * 3, "unit length", id="float64-not-unit"),
    pytest.param(lambda n: np.full((n, DIMENSION), "x"), "<U1", id="strings"),
    pytest.param(lambda n: [[1.0, "x"]] * n, "not float32 numbers", id="mixed-list"),
    pytest.param(lambda n: None, "object", id="none"),
    pytest.param(
        lambda n: unit_rows(n) + np.float64(1e-12), "cannot hold exactly", id="float64-lossy"
    ),
    pytest.param(
        lambda n: [[1.0] + [0.0] * (DIMENSION - 1), [1.0]] * n, "no array", id="ragged-list"
    ),
    pytest.param(lambda n: [1.0] + [0.0] * (DIMENSION - 1), "shape", id="flat-list"),
]


@pytest.mark.parametrize(("make", "said"), BAD_OUTPUTS)
async def test_a_bad_output_is_refused_naming_the_embedder(
    make: Callable[[int], object], said: str
) -> None:
    """A write through an embedder whose output is malformed raises InvalidRequestError
    naming the embedder and the fault, and writes nothing."""
    async with satchel.open_runtime(embedder=Returning(make)) as rt:
        with pytest.raises(satchel.InvalidRequestError, match="embedder Returning") as raised:
            await rt.add_memories("s", [satchel.MemoryEntry(text="the backup runs nightly")])
        assert said in str(raised.value)
        assert await rt.store.scope_counts() == {}


async def test_float64_output_is_stored_as_float32_and_served() -> None:
    """Unit rows in float64 (or as lists) are taken as float32: later prepares of the
    scope serve them (a float64 write once broke every later prepare of its scope)."""
    inner = HashingEmbedder(dimension=DIMENSION)

    class Float64:
        dimension = DIMENSION

        async def embed(self, texts: Sequence[str]) -> Any:
            return (await inner.embed(texts)).astype(np.float64).tolist()

    async with satchel.open_runtime(embedder=Float64()) as rt:
        await rt.add_memories("s", [satchel.MemoryEntry(text="the backup runs nightly")])
        context = await rt.prepare_context(
            satchel.PrepareContextRequest(scope_id="s", query="when does the backup run")
        )
    assert context.status == "ready"
    assert "nightly" in (context.content or "")


async def test_a_bad_query_vector_is_refused() -> None:
    """The query's vector is checked too: a prepare through an embedder that returns a
    wrong shape raises InvalidRequestError naming it, not a reshape error."""
    good = HashingEmbedder(dimension=DIMENSION)
    calls = 0

    class GoodThenBad:
        dimension = DIMENSION

        async def embed(self, texts: Sequence[str]) -> Any:
            nonlocal calls
            calls += 1
            vectors = await good.embed(texts)
            return vectors if calls == 1 else vectors[:, :4]

    async with satchel.open_runtime(embedder=GoodThenBad()) as rt:
        await rt.add_memories("s", [satchel.MemoryEntry(text="the backup runs nightly")])
        with pytest.raises(satchel.InvalidRequestError, match="embedder GoodThenBad"):
            await rt.prepare_context(satchel.PrepareContextRequest(scope_id="s", query="backup"))


@pytest.mark.parametrize(("make", "said"), BAD_OUTPUTS)
async def test_a_refused_write_leaves_the_scope_serving(
    make: Callable[[int], object], said: str, tmp_path: Path
) -> None:
    """After a refused write the file holds nothing of it: reopened with a good embedder
    of the same fingerprint, the scope takes writes and serves prepares."""
    database = str(tmp_path / "s.db")
    good = HashingEmbedder(dimension=DIMENSION)

    class Bad(Returning):
        fingerprint = fingerprint_of(good)

    async with satchel.open_runtime(database, embedder=Bad(make)) as rt:
        with pytest.raises(satchel.InvalidRequestError, match="embedder Bad") as raised:
            await rt.add_memories("s", [satchel.MemoryEntry(text="the backup runs weekly")])
        assert said in str(raised.value)
    async with satchel.open_runtime(database, embedder=good) as rt:
        assert await rt.store.scope_counts() == {}
        await rt.add_memories("s", [satchel.MemoryEntry(text="the backup runs nightly")])
        context = await rt.prepare_context(
            satchel.PrepareContextRequest(scope_id="s", query="when does the backup run")
        )
    assert context.status == "ready"
    assert "nightly" in (context.content or "")
    assert "weekly" not in (context.content or "")


def _spoil(database: str, blob: bytes) -> None:
    """Write ``blob`` over the first record's stored vector, as an unchecked embedder
    did before its output was checked."""
    import sqlite3

    with sqlite3.connect(database) as conn:
        conn.execute("UPDATE records SET embedding = ? WHERE row = 1", (blob,))


@pytest.mark.parametrize(
    ("blob", "said"),
    [
        pytest.param(unit_rows(1)[0].tobytes(), "vectors of 16 values", id="float64"),
        pytest.param(np.full(DIMENSION, np.nan, np.float32).tobytes(), "not finite", id="nan"),
        pytest.param((unit_rows(1)[0] * 3).astype(np.float32).tobytes(), "unit", id="not-unit"),
    ],
)
async def test_a_database_already_holding_bad_vectors_says_to_rebuild_them(
    blob: bytes, said: str, tmp_path: Path
) -> None:
    """Vectors an unchecked embedder stored before are reported when the store reads
    them (at open, or at the scope's first search), naming ``satchel reembed``; after
    ``reembed`` the scope serves again."""
    database = str(tmp_path / "s.db")
    good = HashingEmbedder(dimension=DIMENSION)
    entries = [satchel.MemoryEntry(text=t) for t in ("the backup runs nightly", "tea at four")]
    async with satchel.open_runtime(database, embedder=good) as rt:
        await rt.add_memories("s", entries)
    _spoil(database, blob)
    request = satchel.PrepareContextRequest(scope_id="s", query="when does the backup run")
    refused = (satchel.StoreError, satchel.PrepareFailedError)  # at open, or at search
    with pytest.raises(refused, match="satchel reembed") as raised:
        async with satchel.open_runtime(database, embedder=good) as rt:
            await rt.prepare_context(request)
    assert said in str(raised.value)
    store = await satchel.stores.SqliteStore.open(database)
    try:
        assert await store.reembed(good) == 2
    finally:
        await store.aclose()
    async with satchel.open_runtime(database, embedder=good) as rt:
        context = await rt.prepare_context(request)
    assert "nightly" in (context.content or "")
