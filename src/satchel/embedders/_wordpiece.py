"""``WordPiece``: BERT's tokenizer, read from a ``tokenizer.json``, in pure Python.

The bundled model's ``tokenizer.json`` (and that of most model2vec models) describes
BERT's tokenizer: special tokens matched in the raw text, a ``BertNormalizer``, the
``BertPreTokenizer`` and a ``WordPiece`` vocabulary. This module gives, for such a
description, the token ids the Hugging Face ``tokenizers`` library gives, without it:
that library brings a model hub client (and its HTTP stack) with it, and satchel never
downloads anything. ``_tokenizer`` reads the description.

Character classes are the library's own (``_unicode_classes``); decomposition (NFD) and
lower-casing are Python's. The two agree on every character whose Unicode data has not
changed since the library's tables were made: ``tests/embedders/test_wordpiece.py``
checks every code point. Pure: no I/O.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from typing import TYPE_CHECKING, Final

from ._unicode_classes import CONTROL, MARK, PUNCTUATION, SPACE, WHITESPACE

if TYPE_CHECKING:
    from collections.abc import Mapping

#: The blocks ``BertNormalizer`` puts spaces around (CJK ideographs): its own list.
CJK: Final = (
    r"\u4e00-\u9fff\u3400-\u4dbf\uf900-\ufaff",
    r"\U00020000-\U0002a6df\U0002a700-\U0002b73f\U0002b740-\U0002b81f"
    r"\U0002b920-\U0002ceaf\U0002f800-\U0002fa1f",
)
_ABOVE_BMP = re.compile("[\U00010000-\U0010ffff]")


class _Patterns:
    """The normaliser's and the pre-tokenizer's patterns, for texts within the Basic
    Multilingual Plane (``above_bmp=False``: quicker, see ``_unicode_classes``) or any."""

    def __init__(self, *, above_bmp: bool) -> None:
        def ranges(*classes: tuple[str, str]) -> str:
            return "".join(bmp + above if above_bmp else bmp for bmp, above in classes)

        self.control = re.compile(f"[{ranges(CONTROL)}]+")
        self.space = re.compile(f"[{ranges(SPACE)}]")
        self.cjk = re.compile(f"[{ranges(CJK)}]")
        self.mark = re.compile(f"[{ranges(MARK)}]+")
        self.word = re.compile(f"[{ranges(PUNCTUATION)}]|[^{ranges(PUNCTUATION, WHITESPACE)}]+")

    @staticmethod
    def of(text: str) -> _Patterns:
        return _compiled(above_bmp=_ABOVE_BMP.search(text) is not None)


@functools.cache
def _compiled(*, above_bmp: bool) -> _Patterns:
    """Compiled once, when first needed: the classes are large (tens of milliseconds)."""
    return _Patterns(above_bmp=above_bmp)


@functools.cache
def _ascii_cleaning() -> dict[int, str | None]:
    """Cleaning of an ASCII text: its controls removed, tab and line ends made spaces."""
    patterns = _compiled(above_bmp=False)
    return {
        code: None if patterns.control.match(chr(code)) else " "
        for code in range(128)
        if patterns.control.match(chr(code)) or patterns.space.match(chr(code))
    }


#: Words whose ids are remembered; past this many the memory starts again.
CACHED_WORDS: Final = 1 << 16


class BertNormalizer:
    """``tokenizers``' ``BertNormalizer``: clean, space out CJK, strip accents, lowercase."""

    def __init__(self, *, clean: bool, cjk: bool, strip_accents: bool, lowercase: bool) -> None:
        self.clean, self.cjk = clean, cjk
        self.strip_accents, self.lowercase = strip_accents, lowercase
        self._ascii_cleaning = _ascii_cleaning()

    def __call__(self, text: str) -> str:
        if text.isascii():  # nothing to decompose or space out: one pass in C
            if self.clean:
                text = text.translate(self._ascii_cleaning)
            return text.lower() if self.lowercase else text
        patterns = _Patterns.of(text)
        if self.clean:
            text = patterns.space.sub(" ", patterns.control.sub("", text))
        if self.cjk:
            text = patterns.cjk.sub(r" \g<0> ", text)
        if self.strip_accents:
            text = patterns.mark.sub("", unicodedata.normalize("NFD", text))
        if self.lowercase:
            # character by character, as the library does: no final sigma
            text = text.replace("\u03a3", "\u03c3").lower()
        return text


class WordPiece:
    """BERT's tokenizer: a text's token ids, as ``tokenizers`` gives them for the same
    ``tokenizer.json`` with ``add_special_tokens=False``.

    Args:
        vocab: each token's id; a word's pieces after the first carry ``prefix``.
        unk_token: the token of a word that cannot be spelled from the vocabulary.
        prefix: marks a piece that continues a word (``##``).
        max_word_chars: a longer word is ``unk_token`` whole.
        normalizer: applied to the text between special tokens, if any.
        special: tokens matched in the raw text before anything else, with their ids.
        max_length: the number of ids kept (the first ones), or None for all.
    """

    def __init__(
        self,
        vocab: Mapping[str, int],
        *,
        unk_token: str,
        prefix: str = "##",
        max_word_chars: int = 100,
        normalizer: BertNormalizer | None = None,
        special: Mapping[str, int] | None = None,
        max_length: int | None = None,
    ) -> None:
        self._vocab = dict(vocab)
        self.unk_id = self._vocab[unk_token]
        self._prefix = prefix
        self._max_word_chars = max_word_chars
        # no piece is longer than the longest token: longer candidates need no lookup
        self._longest = max(map(len, self._vocab))
        self._normalizer = normalizer
        self._special = dict(special or {})
        self._specials = (
            re.compile("(" + "|".join(map(re.escape, sorted(self._special, key=len)[::-1])) + ")")
            if self._special
            else None
        )
        self.max_length = max_length
        self._words: dict[str, list[int]] = {}

    def encode(self, text: str) -> list[int]:
        """The ids of ``text``'s tokens, the first ``max_length`` of them."""
        ids: list[int] = []
        pieces = [text] if self._specials is None else self._specials.split(text)
        for index, piece in enumerate(pieces):
            if index % 2:  # split() puts each special token between two stretches of text
                ids.append(self._special[piece])
            elif piece:
                normalized = piece if self._normalizer is None else self._normalizer(piece)
                for word in _Patterns.of(normalized).word.findall(normalized):
                    ids += self._word_ids(word)
            if self.max_length is not None and len(ids) >= self.max_length:
                return ids[: self.max_length]
        return ids

    def _word_ids(self, word: str) -> list[int]:
        whole = self._vocab.get(word)
        if whole is not None and len(word) <= self._max_word_chars:
            return [whole]
        ids = self._words.get(word)
        if ids is None:
            if len(self._words) >= CACHED_WORDS:
                self._words.clear()
            ids = self._words[word] = self._pieces(word)
        return ids

    def _pieces(self, word: str) -> list[int]:
        """Longest-first greedy matching from the start; one piece that cannot be spelled
        makes the whole word unknown."""
        if len(word) > self._max_word_chars:
            return [self.unk_id]
        ids, start = [], 0
        while start < len(word):
            end = min(len(word), start + self._longest)
            while end > start:
                piece = word[start:end] if start == 0 else self._prefix + word[start:end]
                found = self._vocab.get(piece)
                if found is not None:
                    ids.append(found)
                    break
                end -= 1
            else:
                return [self.unk_id]
            start = end
        return ids
