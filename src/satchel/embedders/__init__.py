"""Embedders: text to unit-length vectors for the vector channel.

``StaticEmbedder`` (the bundled semantic model, the default), ``HashingEmbedder`` (no
model, spelling only) and ``SentenceTransformerEmbedder`` (a transformer from a local
folder), each with the :class:`satchel.Calibration` that suits it; :func:`from_spec`
builds one from ``"static"``, ``"hashing"`` or ``"st:PATH"``. Embedders use only the
vocabulary below them.
"""

from ._hashing import HashingEmbedder as HashingEmbedder
from ._offload import embed_checked as embed_checked
from ._protocol import Embedder as Embedder
from ._protocol import calibration_of as calibration_of
from ._protocol import check_embedder as check_embedder
from ._protocol import checked_vectors as checked_vectors
from ._protocol import fingerprint_of as fingerprint_of
from ._sentence import SentenceTransformerEmbedder as SentenceTransformerEmbedder
from ._spec import SPEC_HELP as SPEC_HELP
from ._spec import check_spec as check_spec
from ._spec import from_spec as from_spec
from ._static import StaticEmbedder as StaticEmbedder
from ._static import default_embedder as default_embedder

__all__ = [
    "SPEC_HELP",
    "Embedder",
    "HashingEmbedder",
    "SentenceTransformerEmbedder",
    "StaticEmbedder",
    "calibration_of",
    "check_embedder",
    "check_spec",
    "default_embedder",
    "fingerprint_of",
    "from_spec",
]
