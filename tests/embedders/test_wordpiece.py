"""satchel's own WordPiece gives the bundled model the token ids, and so the vectors, that
the Hugging Face tokenizers library gave it, on every code point and on random text;
any other tokenizer needs that library, and says so."""

from __future__ import annotations

import functools
import hashlib
import json
import shutil
import subprocess
import sys
import unicodedata
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import satchel
from satchel.embedders._static import _bundled_folder
from satchel.embedders._tokenizer import LibraryTokenizer, wordpiece
from satchel.embedders._wordpiece import BertNormalizer, WordPiece, _Patterns

if TYPE_CHECKING:
    from collections.abc import Iterator

#: The bundled model's vectors and ids of 30 texts, as the tokenizers library made them.
REFERENCE: Final = json.loads((Path(__file__).parent / "static_reference.json").read_text())
#: Libraries the core install must do without: a model hub client, and what brings one.
HUB: Final = ("tokenizers", "safetensors", "huggingface_hub", "hf_xet", "httpx2", "httpx")
#: Code points per text when going through all of them.
CHUNK: Final = 4096
NO_LIMIT: Final = 10**9


@pytest.fixture(scope="module")
def embedder() -> satchel.StaticEmbedder:
    return satchel.StaticEmbedder()


def bundled_spec() -> dict[str, Any]:
    spec: dict[str, Any] = json.loads((_bundled_folder() / "tokenizer.json").read_text())
    return spec


# ------------------------------------------------------------ without the library


def test_the_bundled_model_embeds_as_it_did_on_the_tokenizers_library(
    embedder: satchel.StaticEmbedder,
) -> None:
    """Each reference text gets the ids the library gave it and a vector equal to the
    byte: accents, CJK, emoji, controls, special tokens, long words, 512-token cuts."""
    assert embedder.fingerprint == REFERENCE["model"]
    rows = REFERENCE["texts"]
    vectors = embedder.embed_sync([row["text"] for row in rows])
    for row, vector in zip(rows, vectors, strict=True):
        assert list(embedder._tokenizer.encode(row["text"])) == row["ids"], row["text"]
        assert hashlib.sha256(vector.tobytes()).hexdigest() == row["sha256"], row["text"]


def test_the_bundled_model_loads_and_embeds_without_any_hub_library() -> None:
    """With tokenizers, safetensors and every hub client unimportable, the bundled model
    loads and embeds the reference texts to the same bytes, and imports none of them."""
    blocked = "; ".join(f"sys.modules[{name!r}] = None" for name in HUB)
    script = f"""
import hashlib, json, sys
{blocked}
import satchel
rows = json.loads(sys.stdin.read())["texts"]
vectors = satchel.StaticEmbedder().embed_sync([row["text"] for row in rows])
assert [hashlib.sha256(v.tobytes()).hexdigest() for v in vectors] == [r["sha256"] for r in rows]
print(sorted(name for name in sys.modules if name.split(".")[0] in {HUB!r} and sys.modules[name]))
"""
    done = subprocess.run(
        [sys.executable, "-c", script],
        input=json.dumps(REFERENCE), capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout == "[]\n"


def other_tokenizer(tmp_path: Path) -> Path:
    """A copy of the bundled model whose tokenizer splits on whitespace only: not BERT's."""
    copy = tmp_path / "model"
    shutil.copytree(_bundled_folder(), copy)
    (copy / "checksums.json").unlink()
    spec = bundled_spec() | {"pre_tokenizer": {"type": "WhitespaceSplit"}}
    (copy / "tokenizer.json").write_text(json.dumps(spec))
    return copy


def test_another_tokenizer_without_the_library_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tokenizer satchel does not run itself, with tokenizers not installed, is a
    ModelLoadError naming the file, what is not BERT's, and the extra to install."""
    monkeypatch.setitem(sys.modules, "tokenizers", None)
    with pytest.raises(satchel.ModelLoadError) as raised:
        satchel.StaticEmbedder(other_tokenizer(tmp_path))
    message = str(raised.value)
    assert "tokenizer.json" in message
    assert "its pre_tokenizer is 'WhitespaceSplit', not BertPreTokenizer" in message
    assert 'pip install "satchel[model2vec]"' in message


# ------------------------------------------------------------------ against it


@functools.cache
def reference(options: tuple[tuple[str, Any], ...] = ()) -> Any:
    """The tokenizers library's tokenizer for the bundled tokenizer.json, its normaliser
    given ``options``, keeping every token."""
    tokenizers = pytest.importorskip("tokenizers")
    spec = bundled_spec()
    spec["normalizer"] |= dict(options)
    library = tokenizers.Tokenizer.from_str(json.dumps(spec))
    library.no_truncation()
    return library


@functools.cache
def ours(options: tuple[tuple[str, Any], ...] = ()) -> WordPiece:
    spec = bundled_spec()
    spec["normalizer"] |= dict(options)
    return wordpiece(spec, NO_LIMIT)


def reference_ids(text: str, options: tuple[tuple[str, Any], ...] = ()) -> list[int]:
    ids: list[int] = reference(options).encode(text, add_special_tokens=False).ids
    return ids


def chunks() -> Iterator[list[str]]:
    """Every code point but the surrogates (which are not UTF-8), CHUNK at a time."""
    points = [chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c < 0xE000]
    for start in range(0, len(points), CHUNK):
        yield points[start : start + CHUNK]


def python_tables_differ(char: str) -> bool:
    """Whether Python's decomposition or lower-casing of ``char`` is not the library's:
    Unicode data newer or older than the library's (satchel uses Python's for both)."""
    from tokenizers.normalizers import NFD, Lowercase

    return bool(
        NFD().normalize_str(char) != unicodedata.normalize("NFD", char)
        or Lowercase().normalize_str(char) != char.lower()
    )


def test_every_code_point_normalises_as_the_library_does() -> None:
    """Cleaning, CJK spacing, accent stripping and lower-casing agree on every code point,
    but those whose Unicode data Python and the library read differently."""
    normalize = reference().normalizer.normalize_str
    bert = BertNormalizer(clean=True, cjk=True, strip_accents=True, lowercase=True)
    differ = []
    for chunk in chunks():
        # "x", a starter, keeps NFD from reordering marks across code points
        if bert("x".join(chunk)) != normalize("x".join(chunk)):
            differ += [char for char in chunk if bert(char) != normalize(char)]
    assert [char for char in differ if not python_tables_differ(char)] == []
    assert len(differ) < 100  # on Python 3.11: 56, all assigned after Unicode 14


def test_every_code_point_splits_into_the_words_the_library_makes() -> None:
    """The pre-tokenizer drops the same whitespace and isolates the same punctuation."""
    split = reference().pre_tokenizer.pre_tokenize_str
    for chunk in chunks():
        text = "x".join(chunk)
        assert _Patterns.of(text).word.findall(text) == [word for word, _ in split(text)]


def test_every_token_of_the_vocabulary_gets_the_ids_the_library_gives() -> None:
    """Each token as a word, continuing one, and in capitals: the same pieces. (Every
    code point's classes are pinned above; this pins the vocabulary's lookups.)"""
    words = [
        spelled
        for token in bundled_spec()["model"]["vocab"]
        for bare in [token.removeprefix("##")]
        for spelled in (bare, f"x{bare}", bare.upper())
    ]
    for start in range(0, len(words), CHUNK):
        text = " ".join(words[start : start + CHUNK])
        assert ours().encode(text) == reference_ids(text)


#: Pieces of text the tokenizer treats specially, mixed into random text.
FRAGMENTS: Final = [
    "[UNK]", "[PAD]", "[unk]", "##", "Σ", "ΑΣ", "İ", "ẞ", "e\u0301", "\u0301", "数据",
    "\u3000", "\x0b", "\x85", "\u200b", "\ufeff", "\ufffd", "\x00", "🚀", "👨\u200d👩",
    "x" * 101, "supercalifragilistic", "pneumonoultramicroscopic", "don't", "e-mail",
]  # fmt: skip
texts = st.lists(
    st.one_of(
        st.text(st.characters(exclude_categories=["Cs"]), max_size=20),
        st.text("abcdefghij XYZ.,!?'-", max_size=20),
        st.sampled_from(FRAGMENTS),
    ),
    max_size=12,
).map("".join)
normalizer_options = st.tuples(
    st.tuples(st.just("clean_text"), st.booleans()),
    st.tuples(st.just("handle_chinese_chars"), st.booleans()),
    st.tuples(st.just("strip_accents"), st.sampled_from([None, True, False])),
    st.tuples(st.just("lowercase"), st.booleans()),
)


@settings(max_examples=300, deadline=None)
@given(text=texts, options=normalizer_options)
def test_random_text_gets_the_ids_the_library_gives(
    text: str, options: tuple[tuple[str, Any], ...]
) -> None:
    """Any text, under any BertNormalizer settings, gets the library's ids."""
    pytest.importorskip("tokenizers")
    assert ours(options).encode(text) == reference_ids(text, options)


def test_truncation_keeps_the_first_max_length_ids() -> None:
    """The file's truncation (512), or the one config.json sets, keeps the ids the
    library keeps: the first ones, special tokens counted."""
    tokenizers = pytest.importorskip("tokenizers")
    text = "[UNK] backups run nightly, restores take twenty minutes. " * 80
    library = tokenizers.Tokenizer.from_file(str(_bundled_folder() / "tokenizer.json"))
    for max_length in (None, 7, 100):
        if max_length is not None:
            library.enable_truncation(max_length)
        expected = library.encode(text, add_special_tokens=False).ids
        assert wordpiece(bundled_spec(), max_length).encode(text) == expected
        assert len(expected) == (max_length or 512)


def test_another_tokenizer_runs_on_the_library_when_installed(tmp_path: Path) -> None:
    """A tokenizer.json that is not BERT's loads through the library, as before."""
    tokenizers = pytest.importorskip("tokenizers")
    folder = other_tokenizer(tmp_path)
    embedder = satchel.StaticEmbedder(folder)
    assert isinstance(embedder._tokenizer, LibraryTokenizer)
    library = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
    text = "Backups, run nightly!"
    assert list(embedder._tokenizer.encode(text)) == library.encode(text).ids
    assert embedder.embed_sync([text]).shape == (1, 256)
