"""Rewrite ``tests/embedders/static_reference.json`` for the bundled model, with the
libraries satchel's own reading of it is tested against.

Run after ``scripts/distill_model.py`` has written a new model, in an environment that
has ``tokenizers`` and ``safetensors`` (``pip install -e ".[dev,model2vec]"``)::

    python scripts/static_reference.py

Each reference text keeps its place; its ids are what the ``tokenizers`` library gives
(the file's own truncation, no special tokens) and its SHA-256 that of the float32
vector made from them and the weights ``safetensors`` reads: the unknown token left
out, the mean as satchel takes it (``_mean_into``), divided by its L2 norm.
``tests/embedders/test_wordpiece.py`` holds satchel's tokenizer and model reader to
these bytes.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import safetensors
import tokenizers
from safetensors.numpy import load_file

from satchel.embedders._static import _mean_into

ROOT = Path(__file__).resolve().parent.parent
MODEL = ROOT / "src" / "satchel" / "models" / "minilm-static-256"
REFERENCE = ROOT / "tests" / "embedders" / "static_reference.json"


def vector(ids: list[int], weights: np.ndarray, unk: int) -> np.ndarray:
    out = np.zeros(weights.shape[1], dtype=np.float32)
    kept = [i for i in ids if i != unk]
    if kept:
        _mean_into(out, weights[kept])
    norm = np.sqrt(np.add.reduce(out * out, keepdims=True))
    np.divide(out, norm, out=out, where=norm > 0)
    return out


def main() -> None:
    library = tokenizers.Tokenizer.from_file(str(MODEL / "tokenizer.json"))
    weights = np.ascontiguousarray(
        load_file(str(MODEL / "model.safetensors"))["embeddings"], dtype=np.float32
    )
    unk = library.token_to_id("[UNK]")
    checksum = json.loads((MODEL / "checksums.json").read_text())["model.safetensors"]
    reference = json.loads(REFERENCE.read_text())
    for row in reference["texts"]:
        ids = library.encode(row["text"], add_special_tokens=False).ids
        row["ids"] = ids
        row["sha256"] = hashlib.sha256(vector(ids, weights, unk).tobytes()).hexdigest()
    reference["model"] = f"static:minilm-static-256/{checksum[:16]}"
    reference["about"] = (
        f"The bundled model's vectors of these texts, when the tokenizers library"
        f" ({tokenizers.__version__}) tokenised them and safetensors ({safetensors.__version__})"
        " read the weights (scripts/static_reference.py): each text's token ids and the"
        " SHA-256 of its float32 vector's bytes."
    )
    lines = ",\n".join(
        f'  {{"text": {json.dumps(row["text"])}, "sha256": {json.dumps(row["sha256"])},\n'
        f'   "ids": {json.dumps(row["ids"])}}}'
        for row in reference["texts"]
    )
    REFERENCE.write_text(
        "{\n"
        f' "about": {json.dumps(reference["about"])},\n'
        f' "model": {json.dumps(reference["model"])},\n'
        f' "texts": [\n{lines}\n ]\n}}\n'
    )
    print(f"wrote {REFERENCE.relative_to(ROOT)} ({len(reference['texts'])} texts)")


if __name__ == "__main__":
    main()
