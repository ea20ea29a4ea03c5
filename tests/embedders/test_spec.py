"""from_spec: the one-word embedder choice of the CLI and the benchmarks."""

from __future__ import annotations

import pytest

import satchel
from satchel.embedders import check_spec, fingerprint_of, from_spec


def test_named_specs_build_their_embedders() -> None:
    """ "hashing" and "static" build the hashing embedder and the bundled model."""
    assert isinstance(from_spec("hashing"), satchel.HashingEmbedder)
    assert isinstance(from_spec("static"), satchel.StaticEmbedder)


def test_a_sentence_transformers_spec_loads_its_folder(tmp_path: object) -> None:
    """ "st:PATH" builds a SentenceTransformerEmbedder from PATH (here: no such model)."""
    with pytest.raises(satchel.ModelLoadError):
        from_spec("st:/no/such/folder")


@pytest.mark.parametrize("spec", ["", "st:", "Static", "hash", "sentence-transformers"])
def test_unknown_specs_are_refused_by_name(spec: str) -> None:
    """A spec that names no embedder is an InvalidRequestError naming the choices."""
    with pytest.raises(satchel.InvalidRequestError, match=r"static\|hashing\|st:PATH"):
        check_spec(spec)
    with pytest.raises(satchel.InvalidRequestError):
        from_spec(spec)


def test_fingerprints_tell_embedders_apart() -> None:
    """An embedder's fingerprint names what built a store's vectors; one without its own
    is named by its class and dimension."""

    class Bare:
        dimension = 4

        async def embed(self, texts: object) -> object:
            raise NotImplementedError

    assert fingerprint_of(satchel.HashingEmbedder(64)) == "hashing-v1/64"
    assert fingerprint_of(satchel.HashingEmbedder(64)) != fingerprint_of(satchel.HashingEmbedder())
    assert fingerprint_of(Bare()).endswith("Bare/4")  # type: ignore[arg-type]
