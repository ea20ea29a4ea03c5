"""``StaticEmbedder``: a static (model2vec-format) embedding model, loaded from disk.

A static model maps each token to a vector; a text's embedding is the mean of its token
vectors, L2-normalised. No network, no GPU, no model runtime: a tokenizer and one
matrix, read with the standard library and numpy. satchel bundles one distilled from
all-MiniLM-L6-v2 (``satchel/models``); any model2vec folder with ``config.json``,
``tokenizer.json`` and ``model.safetensors`` loads (one whose tokenizer is not BERT's
needs ``satchel[model2vec]``, see ``_tokenizer``).
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
import logging
import re
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..vocabulary._calibration import Calibration
from ..vocabulary._errors import InvalidRequestError, ModelLoadError
from ..vocabulary._turns import let_loop_in
from ._hashing import HashingEmbedder
from ._offload import embed_nearby
from ._safetensors import read_tensor
from ._tokenizer import load_tokenizer

if TYPE_CHECKING:
    import os
    from collections.abc import Iterator, Sequence

    import numpy.typing as npt

    from ._protocol import Embedder
    from ._tokenizer import Tokenizer

logger = logging.getLogger("satchel")

#: The bundled model, inside the package.
BUNDLED = "minilm-static-256"
#: Words of a text kept for a tokenizer that truncates to ``max_length`` tokens: twice
#: as many words as kept tokens (every word gives at least one token, unless it is all
#: control characters, which the tokenizer drops). Tokenising the rest only to drop it
#: took 0.5 s per megabyte, in one call that holds the GIL, so the host's event loop
#: waited on it from another thread.
WORDS_PER_KEPT_TOKEN = 2
_WORD = re.compile(r"\S+")
#: The largest ``max_length`` a config may set: what the tokenizer accepts (a ``usize``)
#: on every platform.
MAX_LENGTH = 2**32 - 1


class StaticEmbedder:
    """Embeds with a static model: tokenise, average token vectors, normalise.

    Args:
        path: a model2vec folder; the bundled model when None.
        verify: check the files against the folder's ``checksums.json`` (required for
            the bundled model; optional for a folder without one).

    Raises:
        InvalidRequestError: ``path`` is not a str, an ``os.PathLike`` of str or None.
        ModelLoadError: files missing, a checksum mismatch, or an unreadable model.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None, *, verify: bool = True) -> None:
        folder = _folder(path)
        with _loading(folder, "checksums.json"):
            checksum = _verify(folder, required=path is None) if verify else None
        with _loading(folder, "config.json"):
            config = _json_object(folder / "config.json")
            name = config.get("name", folder.name)
            self.name = name if isinstance(name, str) else folder.name
        with _loading(folder, "tokenizer.json"):
            self._tokenizer: Tokenizer = load_tokenizer(
                folder / "tokenizer.json", _max_length(folder / "config.json", config)
            )
            kept = self._tokenizer.max_length
            self._kept_words = None if kept is None else WORDS_PER_KEPT_TOKEN * kept
        with _loading(folder, "model.safetensors"):
            self._vectors = _vectors(folder / "model.safetensors")
            self.checksum = checksum or _digest(folder / "model.safetensors")

    @property
    def dimension(self) -> int:
        return int(self._vectors.shape[1])

    @property
    def calibration(self) -> Calibration:
        """The bundled model's thresholds (``python -m bench.calibrate``); the design's
        for any other model until it is calibrated."""
        if self.name == BUNDLED:
            return Calibration(baseline=0.22, expansion=0.2, min_top_similarity=0.45)
        return Calibration()

    @property
    def fingerprint(self) -> str:
        """The model's name and the first 16 hex digits of its weights' SHA-256."""
        return f"static:{self.name}/{self.checksum[:16]}"

    async def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return await embed_nearby(self.embed_sync, texts)

    def embed_sync(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Embed without a worker thread."""
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        if not texts:
            return out
        vectors, unk, encode = self._vectors, self._tokenizer.unk_id, self._tokenizer.encode
        for row, text in enumerate(texts):
            ids = [i for i in encode(_prefix(text, self._kept_words)) if i != unk]
            if ids:  # a per-text gather beats one batch gather: it stays in cache
                _mean_into(out[row], vectors[ids])
            let_loop_in()  # a batch in a worker thread lets a waiting loop in between texts
        # ``np.linalg.norm(out, axis=1, keepdims=True)``'s own steps, without its checks.
        norms = np.sqrt(np.add.reduce(out * out, axis=1, keepdims=True))
        np.divide(out, norms, out=out, where=norms > 0)
        return out


def _mean_into(row: npt.NDArray[np.float32], rows: npt.NDArray[np.float32]) -> None:
    """``row[:] = rows.mean(axis=0, dtype=np.float32)``, bit for bit, by the steps numpy's
    ``mean`` takes (a float32 sum, then a division by the count as an ``intp``) without
    its checks: they were a tenth of embedding a question."""
    np.add.reduce(rows, axis=0, dtype=np.float32, out=row)
    np.true_divide(row, np.intp(len(rows)), out=row, casting="unsafe")


def _prefix(text: str, kept_words: int | None) -> str:
    """The part of ``text`` whose tokens a truncating tokenizer keeps: up to the end of
    its ``kept_words``-th word (all of a text that has no more)."""
    if kept_words is None or len(text) <= kept_words:  # fewer characters than words kept
        return text
    words = list(itertools.islice(_WORD.finditer(text), kept_words))
    return text[: words[-1].end()] if len(words) == kept_words else text


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


@contextmanager
def _loading(folder: Path, name: str) -> Iterator[None]:
    """Any failure reading ``name`` becomes a ModelLoadError naming it (the tokenizers
    library, when a model needs it, raises its own exception types, even a bare
    ``Exception``)."""
    try:
        yield
    except ModelLoadError:
        raise
    except Exception as exc:
        raise ModelLoadError(
            f"cannot load the static model in {folder}: {name}: {type(exc).__name__}: {exc}"
        ) from exc


def _folder(path: str | os.PathLike[str] | None) -> Path:
    if path is None:
        return _bundled_folder()
    try:
        return Path(path)  # a value of any other type is a TypeError
    except TypeError:
        raise InvalidRequestError(
            "StaticEmbedder.path must be a str, an os.PathLike of str or None"
        ) from None


def _bundled_folder() -> Path:
    return Path(str(resources.files("satchel") / "models" / BUNDLED))


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _verify(folder: Path, *, required: bool) -> str | None:
    """Check every file named in ``checksums.json``; returns the model file's digest."""
    listing = folder / "checksums.json"
    if not listing.exists():
        if required:
            raise ModelLoadError(f"{folder} has no checksums.json")
        return None
    expected = _json_object(listing)
    for name, digest in expected.items():
        if not isinstance(digest, str) or _digest(folder / name) != digest:
            raise ModelLoadError(f"{folder / name} does not match its checksum: corrupted?")
    model = expected.get("model.safetensors")
    return model if isinstance(model, str) else None


def _json_object(path: Path) -> dict[str, object]:
    """A JSON file that must hold an object (``config.json``, ``checksums.json``)."""
    value = json.loads(path.read_text())
    if not isinstance(value, dict):
        raise ModelLoadError(f"{path} must hold a JSON object")
    return value


def _max_length(path: Path, config: dict[str, object]) -> int | None:
    """The tokens of a text the model reads: ``config.json``'s ``max_length`` when it
    sets one, else None (``tokenizer.json``'s own truncation)."""
    max_length = config.get("max_length")
    if not isinstance(max_length, int) or isinstance(max_length, bool):
        return None
    if not 1 <= max_length <= MAX_LENGTH:
        raise ModelLoadError(f"{path} max_length must be an integer in 1..{MAX_LENGTH}")
    return max_length


def _vectors(path: Path) -> npt.NDArray[np.float32]:
    embeddings = read_tensor(path, "embeddings")
    if embeddings.ndim != 2 or 0 in embeddings.shape:
        raise ModelLoadError(f"{path}: 'embeddings' must be a non-empty 2-D tensor")
    return np.ascontiguousarray(embeddings, dtype=np.float32)
