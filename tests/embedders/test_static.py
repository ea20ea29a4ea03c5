"""StaticEmbedder: the bundled static model loads offline, verified, and embeds meaningfully."""

from __future__ import annotations

import shutil
from typing import TYPE_CHECKING

import numpy as np
import pytest

import glean
from glean.embedders._static import _bundled_folder

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def embedder() -> glean.StaticEmbedder:
    return glean.StaticEmbedder()


def test_bundled_model_loads_with_its_checksums(embedder: glean.StaticEmbedder) -> None:
    """The bundled model loads from the package, 256 dimensions, its digest recorded."""
    assert embedder.dimension == 256
    assert embedder.name == "minilm-static-256"
    assert len(embedder.checksum) == 64


def test_corrupted_model_file_is_refused(tmp_path: Path) -> None:
    """A model file that does not match checksums.json raises ModelLoadError naming it."""
    copy = tmp_path / "model"
    shutil.copytree(_bundled_folder(), copy)
    data = bytearray((copy / "model.safetensors").read_bytes())
    data[-1] ^= 0xFF
    (copy / "model.safetensors").write_bytes(bytes(data))
    with pytest.raises(glean.ModelLoadError, match=r"model\.safetensors"):
        glean.StaticEmbedder(copy)


def test_missing_model_folder_is_a_clear_error(tmp_path: Path) -> None:
    """A folder without the model's files raises ModelLoadError, not a bare OSError."""
    with pytest.raises(glean.ModelLoadError, match="cannot load"):
        glean.StaticEmbedder(tmp_path)


def test_embeddings_are_deterministic_and_normalised(embedder: glean.StaticEmbedder) -> None:
    """The same texts give the same unit vectors; a text with no tokens gives zeros."""
    texts = ["Backups run nightly", "Restores take twenty minutes", ""]
    first, second = embedder.embed_sync(texts), embedder.embed_sync(texts)
    assert first.dtype == np.float32
    assert np.array_equal(first, second)
    assert np.allclose(np.linalg.norm(first[:2], axis=1), 1.0, atol=1e-5)
    assert not first[2].any()


def test_paraphrase_ranks_above_unrelated(embedder: glean.StaticEmbedder) -> None:
    """A paraphrase pair is more similar than an unrelated pair (the point of a semantic model)."""
    query, paraphrase, unrelated = embedder.embed_sync(
        [
            "who signs off on key rotation",
            "Rotating the kestrel credentials requires a signed ticket",
            "The office plants need water on Fridays",
        ]
    )
    assert float(query @ paraphrase) > float(query @ unrelated) + 0.2


async def test_runtime_prepares_with_the_static_embedder(embedder: glean.StaticEmbedder) -> None:
    """A runtime opened with the static embedder writes and prepares as with any embedder."""
    async with glean.open_runtime(embedder=embedder) as rt:
        await rt.add_memories("s", [glean.MemoryEntry(text="Backups run nightly at 02:00 UTC")])
        request = glean.PrepareContextRequest(scope_id="s", query="when are backups taken?")
        assert (await rt.prepare_context(request)).status == "ready"


async def test_static_embedder_brings_its_calibrated_floors(embedder: glean.StaticEmbedder) -> None:
    """With the bundled model, round 0 admits cosines from its baseline (0.25, not 0.3)."""
    assert embedder.calibration.baseline == 0.25
    async with glean.open_runtime(embedder=embedder) as rt:
        coordinator = rt._preparer.coordinator
        assert coordinator._round0.vector_floor() == 0.25


async def test_default_is_the_static_model_only_when_it_loads(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """open_runtime() embeds with the bundled model; if it cannot load, with hashing."""
    from glean.embedders import _static

    async with glean.open_runtime() as rt:
        assert isinstance(rt._preparer.embedder, glean.StaticEmbedder)

    def broken() -> glean.StaticEmbedder:
        raise glean.ModelLoadError("model.safetensors does not match its checksum")

    monkeypatch.setattr(_static, "bundled", broken)
    with caplog.at_level("WARNING", logger="glean"):
        async with glean.open_runtime() as rt:
            assert isinstance(rt._preparer.embedder, glean.HashingEmbedder)
            await rt.add_memories("s", [glean.MemoryEntry(text="Backups run nightly")])
            request = glean.PrepareContextRequest(scope_id="s", query="backups")
            assert (await rt.prepare_context(request)).status == "ready"
    assert "did not load" in caplog.text
