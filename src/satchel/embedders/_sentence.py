"""``SentenceTransformerEmbedder``: a sentence-transformers model, loaded from a local folder.

The heavy alternative to the bundled static model: a transformer runs for every text, so
it sees word order and context, at the cost of torch and milliseconds per batch. It is an
optional extra (``pip install "satchel[sentence-transformers]"``); satchel never imports it
unless one is built. It must never reach the network: the model loads from a folder on
disk, local files only, and the encode runs in a worker thread, one at a time.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread
import numpy as np

from ..vocabulary._calibration import Calibration
from ..vocabulary._errors import InvalidRequestError, ModelLoadError

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    import numpy.typing as npt

#: The files whose bytes fix what a model computes: weights, then configuration.
WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")
CONFIG_GLOB = "*.json"

_INSTALL_HINT = 'pip install "satchel[sentence-transformers]"'


class SentenceTransformerEmbedder:
    """Embeds with a sentence-transformers model from a local folder.

    Args:
        path: a sentence-transformers model folder (``modules.json``, ``config.json``,
            ``model.safetensors`` or ``pytorch_model.bin``, tokenizer files), e.g. one
            written by ``SentenceTransformer.save``. Never a Hub name: nothing downloads.
        batch_size: texts per forward pass.
        device: the torch device to run on (``"cpu"``, ``"cuda"``, ...).

    Raises:
        ModelLoadError: sentence-transformers is not installed, or the folder is missing,
            holds no model weights, or does not load.
    """

    def __init__(self, path: str | Path, *, batch_size: int = 64, device: str = "cpu") -> None:
        if batch_size < 1:
            raise InvalidRequestError("SentenceTransformerEmbedder.batch_size must be at least 1")
        library = _import_library()
        folder = Path(path).resolve()
        self.checksum = _model_digest(folder)
        try:
            self._model: Any = library.SentenceTransformer(
                str(folder), device=device, local_files_only=True, trust_remote_code=False
            )
        # a load boundary: torch, transformers and tokenizers raise anything from a bad folder
        except Exception as exc:
            message = f"cannot load the sentence-transformers model in {folder}: {exc}"
            raise ModelLoadError(message) from exc
        self.name = folder.name
        self._batch_size = batch_size
        self._dimension = self._model_dimension()
        # one encode at a time: a model is not safe to run from two threads at once, and a
        # second batch waiting here holds no worker thread
        self._limiter = anyio.CapacityLimiter(1)

    @property
    def dimension(self) -> int:
        return self._dimension

    @property
    def fingerprint(self) -> str:
        """The folder's name and the first 16 hex digits of its weights' and configs' digest."""
        return f"sentence-transformers/{self.name}/{self.checksum[:16]}"

    @property
    def calibration(self) -> Calibration:
        """Cosine floors measured for all-MiniLM-L6-v2 on the synthetic workload
        (paraphrase evidence p10 0.45, filler p99.9 0.27): other models may differ.

        ``python -m bench.calibrate --model PATH`` measures a model2vec folder only; for
        this embedder call that module's functions, which take any ``embed_sync``:
        ``suggest(distributions(SentenceTransformerEmbedder(PATH), workload))``.
        """
        return Calibration(baseline=0.3, expansion=0.3, min_top_similarity=0.4)

    async def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        if not texts:
            return np.zeros((0, self._dimension), dtype=np.float32)
        return await anyio.to_thread.run_sync(self.embed_sync, texts, limiter=self._limiter)

    def embed_sync(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Embed in the calling thread, without ``embed``'s one-at-a-time guarantee."""
        if not texts:
            return np.zeros((0, self._dimension), dtype=np.float32)
        raw = self._model.encode(
            list(texts),
            batch_size=self._batch_size,
            show_progress_bar=False,
            convert_to_numpy=True,
            normalize_embeddings=False,
        )
        out = np.array(raw, dtype=np.float32).reshape(len(texts), -1)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out

    def _model_dimension(self) -> int:
        # newer releases rename get_sentence_embedding_dimension, deprecating the old name
        method = getattr(self._model, "get_embedding_dimension", None)
        if method is None:
            method = self._model.get_sentence_embedding_dimension
        dimension = method()
        if dimension is None:  # a custom last module that does not say: measure one text
            dimension = self.embed_sync(["dimension"]).shape[1]
        return int(dimension)


def _import_library() -> Any:
    try:
        import sentence_transformers
    except ImportError as exc:
        raise ModelLoadError(
            f"SentenceTransformerEmbedder needs sentence-transformers ({exc}): {_INSTALL_HINT}"
        ) from exc
    return sentence_transformers


def _model_digest(folder: Path) -> str:
    """SHA-256 over the weight and config files, by relative path: stable across loads."""
    if not folder.is_dir():
        raise ModelLoadError(f"no sentence-transformers model folder at {folder}")
    files = sorted(_model_files(folder))
    if not any(file.name in WEIGHT_FILES for file in files):
        raise ModelLoadError(
            f"{folder} is not a sentence-transformers model: no {' or '.join(WEIGHT_FILES)}"
        )
    digest = hashlib.sha256()
    try:
        for file in files:
            digest.update(file.relative_to(folder).as_posix().encode() + b"\0")
            with file.open("rb") as content:
                digest.update(hashlib.file_digest(content, "sha256").digest())
    except OSError as exc:
        raise ModelLoadError(f"cannot read the model in {folder}: {exc}") from exc
    return digest.hexdigest()


def _model_files(folder: Path) -> Iterator[Path]:
    # module folders (1_Pooling/, 2_Dense/) hold their own configs and weights
    for pattern in (*WEIGHT_FILES, CONFIG_GLOB):
        yield from (file for file in folder.rglob(pattern) if file.is_file())
