"""``StaticEmbedder``: a static (model2vec-format) embedding model, loaded from disk.

A static model maps each token to a vector; a text's embedding is the mean of its token
vectors, L2-normalised. No network, no GPU, no model runtime: a tokenizer and one
matrix. glean bundles one distilled from all-MiniLM-L6-v2 (``glean/models``); any
model2vec folder with ``config.json``, ``tokenizer.json`` and ``model.safetensors`` loads.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

import anyio.to_thread
import numpy as np

from ..vocabulary._calibration import Calibration
from ..vocabulary._errors import ModelLoadError
from ._hashing import HashingEmbedder

if TYPE_CHECKING:
    from collections.abc import Sequence

    import numpy.typing as npt

    from ._protocol import Embedder

logger = logging.getLogger("glean")

#: The bundled model, inside the package.
BUNDLED = "minilm-static-256"
#: Batches at least this large are embedded in a worker thread, off the event loop.
THREAD_BATCH = 64


class StaticEmbedder:
    """Embeds with a static model: tokenise, average token vectors, normalise.

    Args:
        path: a model2vec folder; the bundled model when None.
        verify: check the files against the folder's ``checksums.json`` (required for
            the bundled model; optional for a folder without one).

    Raises:
        ModelLoadError: files missing, a checksum mismatch, or an unreadable model.
    """

    def __init__(self, path: str | Path | None = None, *, verify: bool = True) -> None:
        folder = Path(path) if path is not None else _bundled_folder()
        try:
            checksum = _verify(folder, required=path is None) if verify else None
            config = json.loads((folder / "config.json").read_text())
            self._tokenizer = _tokenizer(folder / "tokenizer.json", config)
            self._vectors = _vectors(folder / "model.safetensors")
        except (OSError, ValueError, KeyError) as exc:
            raise ModelLoadError(f"cannot load the static model in {folder}: {exc}") from exc
        self._unk = self._tokenizer.token_to_id("[UNK]")
        self.name = config.get("name", folder.name)
        self.checksum = checksum or _digest(folder / "model.safetensors")

    @property
    def dimension(self) -> int:
        return int(self._vectors.shape[1])

    @property
    def calibration(self) -> Calibration:
        """The bundled model's thresholds (``python -m bench.calibrate``); the design's
        for any other model until it is calibrated."""
        if self.name == BUNDLED:
            return Calibration(baseline=0.25, expansion=0.2, min_top_similarity=0.5)
        return Calibration()

    @property
    def fingerprint(self) -> str:
        """The model's name and the first 16 hex digits of its weights' SHA-256."""
        return f"static:{self.name}/{self.checksum[:16]}"

    async def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        if len(texts) >= THREAD_BATCH:
            return await anyio.to_thread.run_sync(self.embed_sync, texts)
        return self.embed_sync(texts)

    def embed_sync(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Embed without a worker thread."""
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        if not texts:
            return out
        encodings = self._tokenizer.encode_batch_fast(list(texts), add_special_tokens=False)
        vectors, unk = self._vectors, self._unk
        for row, encoding in enumerate(encodings):
            ids = [i for i in encoding.ids if i != unk]
            if ids:  # a per-text gather beats one batch gather: it stays in cache
                out[row] = vectors[ids].mean(axis=0, dtype=np.float32)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out


@functools.lru_cache(maxsize=1)
def bundled() -> StaticEmbedder:
    """The bundled model, loaded and verified once per process."""
    return StaticEmbedder()


def default_embedder() -> Embedder:
    """The bundled semantic model, or the hashing embedder when it cannot load."""
    try:
        return bundled()
    except ModelLoadError:
        logger.warning(
            "the bundled static model did not load; using HashingEmbedder", exc_info=True
        )
        return HashingEmbedder()


def _bundled_folder() -> Path:
    return Path(str(resources.files("glean") / "models" / BUNDLED))


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _verify(folder: Path, *, required: bool) -> str | None:
    """Check every file named in ``checksums.json``; returns the model file's digest."""
    listing = folder / "checksums.json"
    if not listing.exists():
        if required:
            raise ModelLoadError(f"{folder} has no checksums.json")
        return None
    expected: dict[str, str] = json.loads(listing.read_text())
    for name, digest in expected.items():
        if _digest(folder / name) != digest:
            raise ModelLoadError(f"{folder / name} does not match its checksum: corrupted?")
    return expected.get("model.safetensors")


def _tokenizer(path: Path, config: dict[str, object]) -> Tokenizer:
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(path))
    max_length = config.get("max_length")
    if isinstance(max_length, int):
        tokenizer.enable_truncation(max_length)
    tokenizer.no_padding()
    return tokenizer


def _vectors(path: Path) -> npt.NDArray[np.float32]:
    from safetensors.numpy import load_file

    tensors = load_file(str(path))
    if "embeddings" not in tensors:
        raise ModelLoadError(f"{path} holds no 'embeddings' tensor")
    return np.ascontiguousarray(tensors["embeddings"], dtype=np.float32)


if TYPE_CHECKING:
    from tokenizers import Tokenizer
