"""``from_spec``: an embedder from the one-word choice the CLI and the benchmarks take."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from ..vocabulary._errors import InvalidRequestError
from ._hashing import HashingEmbedder
from ._sentence import SentenceTransformerEmbedder
from ._static import StaticEmbedder

if TYPE_CHECKING:
    from ._protocol import Embedder

#: The choices besides ``st:PATH``: the bundled semantic model, and spelling-only hashing.
NAMED: Final = ("static", "hashing")
#: ``st:PATH``: the sentence-transformers model in folder PATH (satchel[sentence-transformers]).
SENTENCE_TRANSFORMERS: Final = "st:"
SPEC_HELP: Final = "static|hashing|st:PATH"


def check_spec(spec: str) -> str:
    """``spec`` if it names an embedder :func:`from_spec` can build, without building it.

    Raises:
        InvalidRequestError: ``spec`` is none of ``static``, ``hashing``, ``st:PATH``.
    """
    if spec in NAMED or (spec.startswith(SENTENCE_TRANSFORMERS) and len(spec) > 3):
        return spec
    raise InvalidRequestError(f"embedder must be one of {SPEC_HELP}, not {spec!r}")


def from_spec(spec: str) -> Embedder:
    """The embedder ``spec`` names.

    Args:
        spec: ``"static"`` (the bundled semantic model), ``"hashing"`` (no model) or
            ``"st:PATH"`` (the sentence-transformers model in the folder PATH).

    Raises:
        InvalidRequestError: ``spec`` names no embedder.
        ModelLoadError: the model it names does not load.
    """
    check_spec(spec)
    if spec == "hashing":
        return HashingEmbedder()
    if spec == "static":
        return StaticEmbedder()
    return SentenceTransformerEmbedder(spec.removeprefix(SENTENCE_TRANSFORMERS))
