"""StaticEmbedder: the bundled static model loads offline, verified, and embeds meaningfully."""

from __future__ import annotations

import shutil
from typing import TYPE_CHECKING

import numpy as np
import pytest

import satchel
from satchel.embedders._static import _bundled_folder, _mean_into

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def embedder() -> satchel.StaticEmbedder:
    return satchel.StaticEmbedder()


def test_bundled_model_loads_with_its_checksums(embedder: satchel.StaticEmbedder) -> None:
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
    with pytest.raises(satchel.ModelLoadError, match=r"model\.safetensors"):
        satchel.StaticEmbedder(copy)


def test_missing_model_folder_is_a_clear_error(tmp_path: Path) -> None:
    """A folder without the model's files raises ModelLoadError, not a bare OSError."""
    with pytest.raises(satchel.ModelLoadError, match="cannot load"):
        satchel.StaticEmbedder(tmp_path)


def model_copy(tmp_path: Path, *, checksums: bool = False) -> Path:
    """A copy of the bundled model folder, without checksums.json unless asked."""
    copy = tmp_path / "folder"
    shutil.copytree(_bundled_folder(), copy)
    if not checksums:
        (copy / "checksums.json").unlink()
    return copy


def flat_embeddings(path: Path) -> None:
    from safetensors.numpy import save_file

    save_file({"embeddings": np.zeros(8, dtype=np.float32)}, str(path))


def empty_embeddings(path: Path) -> None:
    from safetensors.numpy import save_file

    save_file({"embeddings": np.zeros((0, 8), dtype=np.float32)}, str(path))


@pytest.mark.parametrize("path", [5, 2.5, b"model", object()])
def test_path_of_the_wrong_type_is_refused_by_name(path: object) -> None:
    """StaticEmbedder(path=X) for a non-path X raises InvalidRequestError naming path."""
    with pytest.raises(satchel.InvalidRequestError, match=r"^StaticEmbedder\.path must be"):
        satchel.StaticEmbedder(path)  # type: ignore[arg-type]


def test_a_path_like_loads(tmp_path: Path) -> None:
    """A str or a pathlib.Path folder loads alike."""
    copy = model_copy(tmp_path)
    assert satchel.StaticEmbedder(copy).dimension == satchel.StaticEmbedder(str(copy)).dimension


DAMAGES = [
    pytest.param("tokenizer.json", "{not json", "tokenizer", id="tokenizer-not-json"),
    pytest.param("tokenizer.json", '{"model": 5}', "tokenizer", id="tokenizer-wrong-shape"),
    pytest.param("model.safetensors", "garbage" * 3, "model", id="safetensors-garbage"),
    pytest.param("model.safetensors", flat_embeddings, "model", id="embeddings-1-d"),
    pytest.param("model.safetensors", empty_embeddings, "model", id="embeddings-empty"),
    pytest.param("config.json", "[1, 2]", "config", id="config-a-list"),
    pytest.param("config.json", '{"max_length": 1180591620717411303424}', "config", id="huge-max"),
    pytest.param("config.json", '{"max_length": -1}', "config", id="negative-max"),
    pytest.param("checksums.json", '"abc"', "checksums", id="checksums-a-string"),
    pytest.param("checksums.json", '{"model.safetensors": 5}', "model", id="checksum-a-number"),
]


@pytest.mark.parametrize(("name", "damage", "stem"), DAMAGES)
def test_a_damaged_model_file_is_a_model_load_error(
    tmp_path: Path, name: str, damage: str | Callable[[Path], None], stem: str
) -> None:
    """Any failure reading a model file raises ModelLoadError naming the file, whatever the
    tokenizers or safetensors library raised."""
    copy = model_copy(tmp_path, checksums=name == "checksums.json")
    if callable(damage):
        damage(copy / name)
    else:
        (copy / name).write_text(damage)
    with pytest.raises(satchel.ModelLoadError, match=rf"{stem}\.(json|safetensors)"):
        satchel.StaticEmbedder(copy)


def test_a_damaged_bundled_model_falls_back_to_hashing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bundled tokenizer.json that does not parse (checksums matching) falls back to the
    HashingEmbedder instead of crashing default_embedder()."""
    import hashlib
    import json

    from satchel.embedders import _static

    copy = model_copy(tmp_path, checksums=True)
    (copy / "tokenizer.json").write_text("{not json")
    listing = json.loads((copy / "checksums.json").read_text())
    listing["tokenizer.json"] = hashlib.sha256((copy / "tokenizer.json").read_bytes()).hexdigest()
    (copy / "checksums.json").write_text(json.dumps(listing))
    monkeypatch.setattr(_static, "_bundled_folder", lambda: copy)
    monkeypatch.setattr(_static, "bundled", _static.StaticEmbedder)
    assert isinstance(_static.default_embedder(), satchel.HashingEmbedder)


def test_embeddings_are_deterministic_and_normalised(embedder: satchel.StaticEmbedder) -> None:
    """The same texts give the same unit vectors; a text with no tokens gives zeros."""
    texts = ["Backups run nightly", "Restores take twenty minutes", ""]
    first, second = embedder.embed_sync(texts), embedder.embed_sync(texts)
    assert first.dtype == np.float32
    assert np.array_equal(first, second)
    assert np.allclose(np.linalg.norm(first[:2], axis=1), 1.0, atol=1e-5)
    assert not first[2].any()


def test_embeddings_are_numpys_mean_and_norm_bit_for_bit(
    embedder: satchel.StaticEmbedder,
) -> None:
    """The mean of a text's token vectors and their normalisation are numpy's ``mean``
    and ``linalg.norm`` to the bit, spelled without their checks: stored vectors and
    every search's similarities stay what they were."""
    texts = [
        "When did Caroline go to the LGBTQ support group?",
        "Melanie: I painted a sunrise last week, the lake was so calm!",
        "a",
        "x " * 300,
        "",
    ]
    vectors = embedder._vectors
    unk, encode = embedder._tokenizer.unk_id, embedder._tokenizer.encode
    expected = np.zeros((len(texts), embedder.dimension), dtype=np.float32)
    for row, text in enumerate(texts):
        ids = [i for i in encode(text) if i != unk]
        if ids:
            expected[row] = vectors[ids].mean(axis=0, dtype=np.float32)
    norms = np.linalg.norm(expected, axis=1, keepdims=True)
    np.divide(expected, norms, out=expected, where=norms > 0)
    assert embedder.embed_sync(texts).tobytes() == expected.tobytes()


def test_a_float32_mean_into_a_row_is_numpys_mean() -> None:
    rng = np.random.default_rng(7)
    for count in (1, 2, 3, 7, 64, 513):
        rows = rng.standard_normal((count, 16)).astype(np.float32)
        row = np.empty(16, dtype=np.float32)
        _mean_into(row, rows)
        assert row.tobytes() == rows.mean(axis=0, dtype=np.float32).tobytes()


def test_paraphrase_ranks_above_unrelated(embedder: satchel.StaticEmbedder) -> None:
    """A paraphrase pair is more similar than an unrelated pair (the point of a semantic model)."""
    query, paraphrase, unrelated = embedder.embed_sync(
        [
            "who signs off on key rotation",
            "Rotating the kestrel credentials requires a signed ticket",
            "The office plants need water on Fridays",
        ]
    )
    assert float(query @ paraphrase) > float(query @ unrelated) + 0.2


async def test_runtime_prepares_with_the_static_embedder(embedder: satchel.StaticEmbedder) -> None:
    """A runtime opened with the static embedder writes and prepares as with any embedder."""
    async with satchel.open_runtime(embedder=embedder) as rt:
        await rt.add_memories("s", [satchel.MemoryEntry(text="Backups run nightly at 02:00 UTC")])
        request = satchel.PrepareContextRequest(scope_id="s", query="when are backups taken?")
        assert (await rt.prepare_context(request)).status == "ready"


async def test_static_embedder_brings_its_calibrated_floors(
    embedder: satchel.StaticEmbedder,
) -> None:
    """With the bundled model, round 0 admits cosines from its baseline (0.22, not 0.3)."""
    assert embedder.calibration.baseline == 0.22
    async with satchel.open_runtime(embedder=embedder) as rt:
        coordinator = rt._preparer.coordinator
        assert coordinator._rules.round_zero.vector_floor() == 0.22


async def test_default_is_the_static_model_only_when_it_loads(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """open_runtime() embeds with the bundled model; if it cannot load, with hashing."""
    from satchel.embedders import _static

    async with satchel.open_runtime() as rt:
        assert isinstance(rt._preparer.embedder, satchel.StaticEmbedder)

    def broken() -> satchel.StaticEmbedder:
        raise satchel.ModelLoadError("model.safetensors does not match its checksum")

    monkeypatch.setattr(_static, "bundled", broken)
    with caplog.at_level("WARNING", logger="satchel"):
        async with satchel.open_runtime() as rt:
            assert isinstance(rt._preparer.embedder, satchel.HashingEmbedder)
            await rt.add_memories("s", [satchel.MemoryEntry(text="Backups run nightly")])
            request = satchel.PrepareContextRequest(scope_id="s", query="backups")
            assert (await rt.prepare_context(request)).status == "ready"
    assert "did not load" in caplog.text


def test_the_bundled_model_finds_a_paraphrase_among_turns_that_share_its_speaker(
    embedder: satchel.StaticEmbedder,
) -> None:
    """Trained towards its teacher, the bundled model reads what a turn says, not only who
    said it: "What does Alice like to eat?" finds "My favourite food is grilled
    sardines" among the three nearest turns of a chat, above Alice's turns about
    nothing. Distilled only (each token alone through the teacher), it ranked the
    sardines seventh of twelve, below "Morning! Did you see the rain?"."""
    from tests.orchestration.test_budget_order import CHAT

    similarities = (
        embedder.embed_sync(CHAT) @ embedder.embed_sync(["What does Alice like to eat?"])[0]
    )
    ranked = [CHAT[i] for i in np.argsort(-similarities)]
    sardines = ranked.index("Alice: My favourite food is grilled sardines")
    assert sardines < 3
    assert sardines < ranked.index("Alice: Morning! Did you see the rain?")
    assert sardines < ranked.index("Alice: Miso is a cute name.")
