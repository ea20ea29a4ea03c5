"""A deterministic synthetic corpus for latency benchmarks: Zipf-distributed pseudo-words.

Texts look like short notes (8-30 words); queries take a few words of a random entry,
so every query has lexical matches, as a real turn mostly does.
"""

from __future__ import annotations

import itertools

import numpy as np

SYLLABLES = [c + v for c in "bdfgklmnprstvz" for v in ("a", "e", "i", "o", "u", "ai", "ou")]


# The head of a natural language's Zipf curve is its function words; the analyser drops
# them, as it does in real text, so the searchable vocabulary has a realistic head.
FUNCTION_WORDS = [
    "the",
    "of",
    "and",
    "to",
    "a",
    "in",
    "is",
    "that",
    "it",
    "was",
    "for",
    "on",
    "are",
    "as",
    "with",
    "his",
    "they",
    "at",
    "be",
    "this",
    "from",
    "have",
    "or",
    "by",
    "one",
    "had",
    "not",
    "but",
    "what",
    "all",
    "were",
    "when",
    "we",
    "there",
    "can",
    "an",
    "your",
    "which",
    "their",
    "said",
    "if",
    "do",
    "will",
    "each",
    "about",
    "how",
    "up",
    "out",
    "them",
    "then",
    "she",
    "many",
    "some",
    "so",
    "these",
    "would",
    "other",
    "into",
    "has",
    "more",
    "her",
    "two",
    "like",
    "him",
    "see",
    "time",
    "could",
    "no",
    "make",
    "than",
    "first",
    "been",
    "its",
    "who",
    "now",
    "people",
    "my",
    "made",
    "over",
    "did",
    "down",
    "only",
    "way",
    "find",
    "use",
    "may",
    "water",
    "long",
    "little",
    "very",
    "after",
    "words",
    "called",
    "just",
    "where",
    "most",
    "know",
    "get",
    "through",
    "back",
    "much",
    "go",
    "good",
    "new",
    "write",
    "our",
    "me",
    "man",
    "too",
    "any",
    "day",
    "same",
    "right",
    "look",
    "think",
    "also",
    "around",
    "another",
    "came",
    "come",
    "work",
    "three",
    "must",
    "because",
    "does",
    "part",
    "even",
    "place",
    "well",
    "such",
    "here",
    "take",
    "why",
    "help",
    "put",
    "different",
    "away",
    "again",
    "off",
    "went",
    "old",
    "number",
]


def vocabulary(size: int, seed: int = 7) -> list[str]:
    """``size`` distinct words: function words first, then pronounceable pseudo-words."""
    rng = np.random.default_rng(seed)
    words: dict[str, None] = dict.fromkeys(FUNCTION_WORDS)
    for length in itertools.cycle((2, 3, 2, 4)):
        if len(words) >= size:
            break
        picks = rng.integers(0, len(SYLLABLES), size=length)
        words["".join(SYLLABLES[p] for p in picks)] = None
    return list(words)


def texts(count: int, *, vocab_size: int = 20000, seed: int = 11) -> list[str]:
    """``count`` note-like texts drawn from a Zipf distribution over the vocabulary."""
    return _zipf_notes(vocabulary(vocab_size), np.random.default_rng(seed), count, longest=31)


def _zipf_notes(
    words: list[str], rng: np.random.Generator, count: int, *, longest: int
) -> list[str]:
    """``count`` sentences of 8 to ``longest - 1`` words, Zipf-distributed by list rank."""
    ranks = np.arange(1, len(words) + 1)
    weights = 1.0 / ranks**1.07
    weights /= weights.sum()
    lengths = rng.integers(8, longest, size=count)
    picks = rng.choice(len(words), size=int(lengths.sum()), p=weights)
    out: list[str] = []
    start = 0
    for length in lengths:
        out.append(" ".join(words[p] for p in picks[start : start + length]).capitalize() + ".")
        start += length
    return out


def queries(corpus: list[str], count: int, *, seed: int = 13) -> list[str]:
    """Queries of 3-6 words taken from random entries, shuffled."""
    rng = np.random.default_rng(seed)
    out: list[str] = []
    for index in rng.integers(0, len(corpus), size=count):
        words = corpus[index].rstrip(".").lower().split()
        size = min(len(words), int(rng.integers(3, 7)))
        chosen = rng.choice(len(words), size=size, replace=False)
        out.append(" ".join(words[i] for i in sorted(chosen)))
    return out


def english_words() -> list[str]:
    """Real English words: the whole-word entries of the bundled model's tokenizer vocabulary."""
    import json
    from importlib import resources

    path = resources.files("satchel") / "models" / "minilm-static-256" / "tokenizer.json"
    vocab = json.loads(path.read_text(encoding="utf-8"))["model"]["vocab"]
    return sorted(w for w in vocab if w.isascii() and w.isalpha() and len(w) > 2)


def english_texts(count: int, *, seed: int = 11, function_head: bool = False) -> list[str]:
    """``count`` notes of real words in random order, Zipf-distributed: unrelated to any
    query in meaning, as the filler of a real memory mostly is (a semantic embedder scores
    pseudo-words as alike, which real filler is not). With ``function_head`` the most
    frequent words are English function words, as in real text (the analyser drops them)."""
    rng = np.random.default_rng(seed)
    words = english_words()
    rng.shuffle(words)  # frequency must not follow alphabetical order
    if function_head:
        head = set(FUNCTION_WORDS)
        words = [*FUNCTION_WORDS, *(w for w in words if w not in head)]
    return _zipf_notes(words, rng, count, longest=25)
