"""A static model's tokenizer, from its folder's ``tokenizer.json``.

BERT's tokenizer (the bundled model's) runs as satchel's own :class:`WordPiece`, with
nothing beyond the standard library. Any other tokenizer a model2vec folder may hold
(BPE, Unigram, other normalisers) runs on the Hugging Face ``tokenizers`` library, an
optional extra (``pip install "satchel[model2vec]"``): it brings a model hub client with
it, which satchel never uses. Reads one file; never reaches the network.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Final, Protocol

from ..vocabulary._errors import ModelLoadError
from ._wordpiece import BertNormalizer, WordPiece

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from pathlib import Path

INSTALL_HINT: Final = 'pip install "satchel[model2vec]"'
#: The flags of a special token that satchel's WordPiece matches as the library does:
#: anywhere in the raw text, as it is. Any other value is the library's to handle.
PLAIN_SPECIAL: Final = {"single_word": False, "lstrip": False, "rstrip": False, "normalized": False}


class Tokenizer(Protocol):
    """What ``StaticEmbedder`` asks of a tokenizer."""

    @property
    def unk_id(self) -> int | None:
        """The id of the unknown token, which carries no meaning and is left out."""

    @property
    def max_length(self) -> int | None:
        """How many ids of a text are kept (the first ones); None: all."""

    def encode(self, text: str) -> Sequence[int]:
        """The ids of ``text``'s tokens, without special tokens added."""


class UnsupportedTokenizerError(Exception):
    """A ``tokenizer.json`` satchel's WordPiece does not implement: the message says what."""


def load_tokenizer(path: Path, max_length: int | None) -> Tokenizer:
    """The tokenizer ``path`` describes, keeping ``max_length`` ids of a text (the
    file's own truncation when None).

    Raises:
        ModelLoadError: the file is not a tokenizer satchel runs, and the ``tokenizers``
            library is not installed. Anything the file's parsing raises goes through.
    """
    spec = json.loads(path.read_text(encoding="utf-8"))
    try:
        return wordpiece(spec, max_length)
    except UnsupportedTokenizerError as exc:
        try:
            return LibraryTokenizer(path, max_length)
        except ImportError:
            message = f"{path}: {exc}: such a tokenizer runs on the tokenizers library"
            raise ModelLoadError(f"{message} ({INSTALL_HINT})") from None


def wordpiece(spec: object, max_length: int | None) -> WordPiece:
    """satchel's WordPiece for a parsed ``tokenizer.json``.

    Args:
        spec: the file's JSON.
        max_length: the ids of a text kept; None: as the file's ``truncation`` says.

    Raises:
        UnsupportedTokenizerError: ``spec`` describes another tokenizer.
    """
    if not isinstance(spec, dict):
        raise UnsupportedTokenizerError("it does not hold a JSON object")
    model = _part(spec, "model", "WordPiece")
    normalizer = spec.get("normalizer")
    if normalizer is not None:
        normalizer = _bert_normalizer(_part(spec, "normalizer", "BertNormalizer"))
    _part(spec, "pre_tokenizer", "BertPreTokenizer")
    vocab = model.get("vocab")
    if not isinstance(vocab, dict) or not all(isinstance(i, int) for i in vocab.values()):
        raise UnsupportedTokenizerError("its WordPiece vocab is not a map of tokens to ids")
    if model.get("unk_token") not in vocab:
        raise UnsupportedTokenizerError("its WordPiece unk_token is not in its vocab")
    return WordPiece(
        vocab,
        unk_token=model["unk_token"],
        prefix=_typed(model, "continuing_subword_prefix", str, "##"),
        max_word_chars=_typed(model, "max_input_chars_per_word", int, 100),
        normalizer=normalizer,
        special=_special(spec.get("added_tokens")),
        max_length=_truncation(spec.get("truncation")) if max_length is None else max_length,
    )


def _part(spec: Mapping[str, Any], key: str, kind: str) -> Mapping[str, Any]:
    part = spec.get(key)
    if not isinstance(part, dict) or part.get("type") != kind:
        shown = part.get("type") if isinstance(part, dict) else part
        raise UnsupportedTokenizerError(f"its {key} is {shown!r}, not {kind}")
    return part


def _typed(spec: Mapping[str, Any], key: str, kind: type, default: Any) -> Any:
    value = spec.get(key, default)
    if type(value) is not kind:
        raise UnsupportedTokenizerError(f"its {key} is {value!r}")
    return value


def _bert_normalizer(spec: Mapping[str, Any]) -> BertNormalizer:
    lowercase = _typed(spec, "lowercase", bool, True)
    strip = spec.get("strip_accents")
    return BertNormalizer(
        clean=_typed(spec, "clean_text", bool, True),
        cjk=_typed(spec, "handle_chinese_chars", bool, True),
        strip_accents=lowercase if strip is None else _typed(spec, "strip_accents", bool, False),
        lowercase=lowercase,
    )


def _special(tokens: object) -> dict[str, int]:
    """The added tokens, each matched in the raw text as it is."""
    if tokens is None:
        return {}
    if not isinstance(tokens, list):
        raise UnsupportedTokenizerError("its added_tokens is not a list")
    special = {}
    for token in tokens:
        if not isinstance(token, dict) or any(
            token.get(flag, default) != default for flag, default in PLAIN_SPECIAL.items()
        ):
            raise UnsupportedTokenizerError(f"its added token {token!r} is matched otherwise")
        content = _typed(token, "content", str, None)
        if not content:
            raise UnsupportedTokenizerError("it has an empty added token")
        special[content] = _typed(token, "id", int, None)
    return special


def _truncation(truncation: object) -> int | None:
    if truncation is None:
        return None
    if not isinstance(truncation, dict) or truncation.get("direction", "Right") != "Right":
        raise UnsupportedTokenizerError(f"its truncation {truncation!r} keeps other tokens")
    max_length = truncation.get("max_length")
    if type(max_length) is not int or max_length < 1:
        raise UnsupportedTokenizerError(f"its truncation {truncation!r} keeps other tokens")
    return max_length


class LibraryTokenizer:
    """A ``tokenizer.json`` run by the Hugging Face ``tokenizers`` library.

    Raises:
        ImportError: the library is not installed.
    """

    def __init__(self, path: Path, max_length: int | None) -> None:
        from tokenizers import Tokenizer as Library

        self._library = Library.from_file(str(path))
        if max_length is not None:
            self._library.enable_truncation(max_length)
        self._library.no_padding()
        truncation = self._library.truncation
        self.max_length: int | None = None if truncation is None else truncation["max_length"]
        self.unk_id: int | None = self._library.token_to_id("[UNK]")

    def encode(self, text: str) -> Sequence[int]:
        ids: list[int] = self._library.encode(text, add_special_tokens=False).ids
        return ids
