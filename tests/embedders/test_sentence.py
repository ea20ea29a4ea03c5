"""SentenceTransformerEmbedder: a local sentence-transformers folder, offline, one encode at a time.

CI installs neither sentence-transformers nor torch: a fake ``sentence_transformers``
module stands in, so these tests pin the wrapper, not the model.
"""

from __future__ import annotations

import sys
import threading
import types
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread
import numpy as np
import pytest

import satchel
from satchel.cli._main import build_parser
from tests.cli._driver import run, write_workload

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    import numpy.typing as npt

DIMENSION = 4


class FakeModel:
    """Stands in for ``SentenceTransformer``: records how it was built and every encode."""

    def __init__(self, path: str, **options: Any) -> None:
        self.path = path
        self.options = options
        self.lock = threading.Lock()
        self.log: list[tuple[str, tuple[str, ...]]] = []
        self.active = 0
        self.most_active = 0
        self.hold_first = False  # the first encode waits for `release` once it has entered
        self.first_entered = threading.Event()
        self.release = threading.Event()
        created.append(self)

    def get_sentence_embedding_dimension(self) -> int:
        return DIMENSION

    def encode(self, texts: Sequence[str], **options: Any) -> npt.NDArray[np.float64]:
        with self.lock:
            first = not self.log
            self.log.append(("enter", tuple(texts)))
            self.active += 1
            self.most_active = max(self.most_active, self.active)
        if first and self.hold_first:
            self.first_entered.set()
            self.release.wait(timeout=10)  # a safety net: the test sets it
        with self.lock:
            self.active -= 1
            self.log.append(("exit", tuple(texts)))
        return np.array([_raw(text) for text in texts], dtype=np.float64)


created: list[FakeModel] = []


def _raw(text: str) -> list[float]:
    """A deterministic, unnormalised vector for ``text``."""
    return [len(text) + 1.0, text.count("a") * 2.0, 3.0, float(sum(map(ord, text)) % 7)]


@pytest.fixture
def fake_library(monkeypatch: pytest.MonkeyPatch) -> list[FakeModel]:
    """Install a fake ``sentence_transformers``; returns the models it creates."""
    created.clear()
    fake = types.ModuleType("sentence_transformers")
    fake.SentenceTransformer = FakeModel  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "sentence_transformers", fake)
    return created


@pytest.fixture
def model_folder(tmp_path: Path) -> Path:
    """A folder laid out like a saved sentence-transformers model."""
    folder = tmp_path / "mini-model"
    (folder / "1_Pooling").mkdir(parents=True)
    (folder / "model.safetensors").write_bytes(b"weights v1")
    (folder / "config.json").write_text('{"hidden_size": 4}')
    (folder / "modules.json").write_text("[]")
    (folder / "1_Pooling" / "config.json").write_text('{"pooling_mode_mean_tokens": true}')
    return folder


@pytest.mark.anyio
async def test_embeddings_are_unit_float32_rows(
    fake_library: list[FakeModel], model_folder: Path
) -> None:
    """embed returns (n, dimension) float32 rows of unit length, in input order."""
    embedder = satchel.SentenceTransformerEmbedder(model_folder)
    texts = ["Backups run nightly", "a banana", "x"]
    out = await embedder.embed(texts)
    assert embedder.dimension == DIMENSION
    assert out.dtype == np.float32
    assert out.shape == (3, DIMENSION)
    assert np.allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-6)
    expected = np.array([_raw(text) for text in texts])
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    assert np.allclose(out, expected, atol=1e-6)


@pytest.mark.anyio
async def test_no_texts_embed_to_an_empty_matrix(
    fake_library: list[FakeModel], model_folder: Path
) -> None:
    """No texts give shape (0, dimension) without calling the model."""
    embedder = satchel.SentenceTransformerEmbedder(model_folder)
    out = await embedder.embed([])
    assert out.shape == (0, DIMENSION)
    assert out.dtype == np.float32
    assert fake_library[0].log == []


def test_model_loads_offline_from_the_folder(
    fake_library: list[FakeModel], model_folder: Path
) -> None:
    """The model is built from the local folder with local files only and on the device."""
    satchel.SentenceTransformerEmbedder(model_folder, device="cpu")
    [model] = fake_library
    assert model.path == str(model_folder.resolve())
    assert model.options["local_files_only"] is True
    assert model.options["trust_remote_code"] is False
    assert model.options["device"] == "cpu"


def test_fingerprint_is_stable_and_follows_the_weights(
    fake_library: list[FakeModel], model_folder: Path
) -> None:
    """Two loads of one folder share a fingerprint; new weights or configs change it."""
    first = satchel.SentenceTransformerEmbedder(model_folder).fingerprint
    assert first == satchel.SentenceTransformerEmbedder(model_folder).fingerprint
    assert first.startswith("sentence-transformers/mini-model/")
    assert len(first.rsplit("/", 1)[1]) == 16
    (model_folder / "model.safetensors").write_bytes(b"weights v2")
    second = satchel.SentenceTransformerEmbedder(model_folder).fingerprint
    assert second != first
    (model_folder / "1_Pooling" / "config.json").write_text('{"pooling_mode_cls_token": true}')
    assert satchel.SentenceTransformerEmbedder(model_folder).fingerprint not in (first, second)


def test_missing_folder_names_the_path(fake_library: list[FakeModel], tmp_path: Path) -> None:
    """A folder that does not exist raises ModelLoadError naming it; no model is built."""
    missing = tmp_path / "no-such-model"
    with pytest.raises(satchel.ModelLoadError, match="no-such-model"):
        satchel.SentenceTransformerEmbedder(missing)
    assert fake_library == []


def test_folder_without_weights_is_not_a_model(
    fake_library: list[FakeModel], model_folder: Path
) -> None:
    """A folder without model.safetensors or pytorch_model.bin is refused, naming it."""
    (model_folder / "model.safetensors").unlink()
    with pytest.raises(satchel.ModelLoadError, match=r"mini-model.*model\.safetensors"):
        satchel.SentenceTransformerEmbedder(model_folder)
    assert fake_library == []


def test_a_load_failure_is_a_model_load_error(
    fake_library: list[FakeModel], model_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whatever the library raises while loading becomes ModelLoadError naming the folder."""

    def broken(path: str, **options: Any) -> None:
        raise RuntimeError("size mismatch for embeddings.weight")

    monkeypatch.setattr(sys.modules["sentence_transformers"], "SentenceTransformer", broken)
    with pytest.raises(satchel.ModelLoadError, match=r"mini-model: size mismatch") as caught:
        satchel.SentenceTransformerEmbedder(model_folder)
    assert isinstance(caught.value.__cause__, RuntimeError)


def test_missing_library_names_the_extra(
    monkeypatch: pytest.MonkeyPatch, model_folder: Path
) -> None:
    """Without sentence-transformers installed, ModelLoadError says which extra to install."""
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    with pytest.raises(
        satchel.ModelLoadError, match=r'pip install "satchel\[sentence-transformers\]"'
    ):
        satchel.SentenceTransformerEmbedder(model_folder)


def test_calibration_is_the_documented_default(
    fake_library: list[FakeModel], model_folder: Path
) -> None:
    """The embedder brings its own floors (baseline 0.3, expansion 0.3, top 0.4)."""
    calibration = satchel.SentenceTransformerEmbedder(model_folder).calibration
    assert (calibration.baseline, calibration.expansion, calibration.min_top_similarity) == (
        0.3,
        0.3,
        0.4,
    )


@pytest.mark.anyio
async def test_concurrent_embeds_never_overlap_in_encode(
    fake_library: list[FakeModel], model_folder: Path
) -> None:
    """A second embed waits for the first encode to finish before it enters the model."""
    embedder = satchel.SentenceTransformerEmbedder(model_folder)
    [model] = fake_library
    model.hold_first = True
    results: dict[str, npt.NDArray[np.float32]] = {}

    async def embed(key: str, texts: list[str]) -> None:
        results[key] = await embedder.embed(texts)

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(embed, "first", ["first text"])
        await anyio.to_thread.run_sync(model.first_entered.wait)
        tasks.start_soon(embed, "second", ["second text"])
        await anyio.wait_all_tasks_blocked()
        # the second call is queued on the instance's limiter, not inside the model
        assert embedder._limiter.statistics().tasks_waiting == 1
        assert model.log == [("enter", ("first text",))]
        model.release.set()
    assert model.most_active == 1
    assert model.log == [
        ("enter", ("first text",)),
        ("exit", ("first text",)),
        ("enter", ("second text",)),
        ("exit", ("second text",)),
    ]
    assert results["first"].shape == results["second"].shape == (1, DIMENSION)


@pytest.mark.anyio
async def test_runtime_prepares_with_it(fake_library: list[FakeModel], model_folder: Path) -> None:
    """A runtime opened with the embedder writes, searches and prepares as with any other."""
    embedder = satchel.SentenceTransformerEmbedder(model_folder)
    async with satchel.open_runtime(embedder=embedder) as rt:
        await rt.add_memories("s", [satchel.MemoryEntry(text="Backups run nightly at 02:00 UTC")])
        request = satchel.PrepareContextRequest(scope_id="s", query="when are backups taken?")
        assert (await rt.prepare_context(request)).status == "ready"


# ----------------------------------------------------------------------------------- CLI


def test_cli_parses_st_path() -> None:
    """--embedder takes st:PATH beside static and hashing, and refuses a bare st:."""
    parser = build_parser()
    args = parser.parse_args(
        ["prepare", "--db", "g.db", "--scope", "s", "--embedder", "st:/m", "q"]
    )
    assert args.embedder == "st:/m"
    assert parser.parse_args(["reembed", "--db", "g.db", "--embedder", "hashing"]).embedder == (
        "hashing"
    )
    assert parser.parse_args(["ingest", "w", "--db", "g.db"]).embedder == "static"


@pytest.mark.parametrize("bad", ["st:", "bert", "ST:/m"])
def test_cli_refuses_other_embedders(bad: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Anything but static, hashing or st:PATH is a usage error (exit 2)."""
    code, _, err = run(capsys, "reembed", "--db", "g.db", "--embedder", bad)
    assert code == 2
    assert "st:PATH" in err


def test_cli_help_names_st_path(capsys: pytest.CaptureFixture[str]) -> None:
    """prepare --help documents st:PATH and the extra it needs."""
    code, out, _ = run(capsys, "prepare", "--help")
    assert code == 0
    assert "st:PATH" in out
    assert "satchel[sentence-transformers]" in out


def test_cli_ingests_with_st_path(
    fake_library: list[FakeModel],
    model_folder: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """ingest --embedder st:PATH builds the database with that model."""
    workload = write_workload(tmp_path / "w", [{"id": "e1", "scope": "s", "text": "Backups"}])
    db = str(tmp_path / "g.db")
    code, out, _ = run(
        capsys, "ingest", str(workload), "--db", db, "--embedder", f"st:{model_folder}"
    )
    assert code == 0
    assert "ingested 1 entries" in out
    assert fake_library[0].log[0] == ("enter", ("Backups",))


def test_cli_without_the_library_exits_1_naming_the_extra(
    monkeypatch: pytest.MonkeyPatch,
    model_folder: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """st:PATH without sentence-transformers installed exits 1 and says what to install."""
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    workload = write_workload(tmp_path / "w", [{"id": "e1", "scope": "s", "text": "Backups"}])
    db = str(tmp_path / "g.db")
    code, _, err = run(
        capsys, "ingest", str(workload), "--db", db, "--embedder", f"st:{model_folder}"
    )
    assert code == 1
    assert "satchel[sentence-transformers]" in err
