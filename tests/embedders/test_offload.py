"""Embedding never holds the event loop: a batch runs in a worker thread unless its
texts are short in all, whatever the number of texts."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

import numpy as np
import pytest

import satchel
from satchel.embedders import HashingEmbedder, StaticEmbedder, _offload
from satchel.embedders._offload import INLINE_CHARS, INLINE_VALUES, embed_checked
from satchel.embedders._protocol import checked_vectors
from satchel.embedders._static import _prefix

if TYPE_CHECKING:
    from collections.abc import Sequence

    import numpy.typing as npt

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("make", [HashingEmbedder, StaticEmbedder], ids=["hashing", "static"])
@pytest.mark.parametrize(
    ("texts", "inline"),
    [
        (["when do backups run?"], True),  # a query
        (["x" * INLINE_CHARS], True),
        (["x" * (INLINE_CHARS + 1)], False),  # one long text: a document
        (["a note of a few words"] * 40, False),  # many short texts adding up
        (["word " * 200_000], False),  # 1 MB
    ],
    ids=["query", "at-the-limit", "past-the-limit", "many-short", "one-megabyte"],
)
async def test_only_short_batches_embed_on_the_calling_thread(
    make: type[HashingEmbedder | StaticEmbedder], texts: list[str], inline: bool
) -> None:
    embedder = make()
    threads: list[int] = []
    original = embedder.embed_sync

    def recording(batch: Sequence[str]) -> npt.NDArray[np.float32]:
        threads.append(threading.get_ident())
        return original(batch)

    embedder.embed_sync = recording  # type: ignore[method-assign, assignment]
    vectors = await embedder.embed(texts)
    assert threads == [threading.get_ident()] if inline else threads != [threading.get_ident()]
    assert len(threads) == 1
    assert vectors.shape == (len(texts), embedder.dimension)
    assert np.array_equal(vectors, original(texts))


def test_a_batch_is_read_only_as_far_as_its_length_tells() -> None:
    """Whether a batch is short is told by its texts' lengths up to the limit and no
    further: a batch of 36,187 notes is not summed whole on the caller's loop."""
    assert _offload._short([])
    assert _offload._short(["x" * 256, "y" * (INLINE_CHARS - 256)])
    assert not _offload._short(["x" * 256, "y" * (INLINE_CHARS - 255)])
    # Past the limit, the rest is never read: a length it cannot take would raise.
    assert not _offload._short(["x" * (INLINE_CHARS + 1), None])  # type: ignore[list-item]


@pytest.mark.parametrize(
    "text",
    [
        "The deploy pipeline runs on Kestrel CI, rebuilt every Tuesday. " * 16_000,
        "x" * 40_000 + " tail words after one long unknown run",
        "\n\n".join(["notes"] * 50_000),
    ],
    ids=["prose", "long-run", "short-lines"],
)
def test_a_long_text_embeds_as_if_tokenised_whole(text: str) -> None:
    """The bundled model's tokenizer keeps the first 512 tokens: only the part of a long
    text they come from is tokenised (1 MB took 0.5 s, holding the GIL), and the vector
    is exactly the one of the whole text."""
    embedder = StaticEmbedder()
    words = len(text.split())
    assert (len(_prefix(text, embedder._kept_words)) < len(text)) == (words > 1024)
    cut = embedder.embed_sync([text, "a short note"])
    embedder._kept_words = None  # tokenise everything, as before
    assert np.array_equal(cut, embedder.embed_sync([text, "a short note"]))


@pytest.mark.parametrize(
    ("rows", "inline"),
    [(1, True), (INLINE_VALUES // 256, True), (INLINE_VALUES // 256 + 1, False), (5000, False)],
    ids=["query", "at-the-limit", "past-the-limit", "a-large-write"],
)
async def test_only_small_outputs_are_checked_on_the_calling_thread(
    rows: int, inline: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An embedder's output is checked where it is small; a large write's (thousands
    of vectors: 165-440 ms for 36,187 of them) in a worker thread, never on the loop."""
    embedder = HashingEmbedder(dimension=256)
    threads: list[int] = []
    original = checked_vectors

    def recording(*args: object) -> npt.NDArray[np.float32]:
        threads.append(threading.get_ident())
        return original(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(_offload, "checked_vectors", recording)
    texts = [f"note {n}" for n in range(rows)]
    vectors = await embed_checked(embedder, texts)
    assert threads == [threading.get_ident()] if inline else threads != [threading.get_ident()]
    assert len(threads) == 1
    assert np.array_equal(vectors, embedder.embed_sync(texts))


async def test_a_large_output_checked_in_a_worker_is_refused_as_a_small_one() -> None:
    """A wrong output is refused wherever it is checked, naming the embedder."""

    class Sloppy(HashingEmbedder):
        async def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
            return np.full((len(texts), self.dimension), 0.5, dtype=np.float32)

    for rows in (1, 5000):
        with pytest.raises(satchel.InvalidRequestError, match=r"embedder Sloppy.*unit length"):
            await embed_checked(Sloppy(dimension=256), [f"note {n}" for n in range(rows)])
