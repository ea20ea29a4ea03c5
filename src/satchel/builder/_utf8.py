"""UTF-8 byte arithmetic on text: lengths and character-safe prefixes.

Pure. Budgets are counted in UTF-8 bytes, but text is cut in code points, so a cut can
never split a multi-byte sequence.
"""

from __future__ import annotations


def utf8_len(text: str) -> int:
    """The UTF-8 length of ``text`` in bytes."""
    return len(text) if text.isascii() else len(text.encode())


def utf8_prefix(text: str, max_bytes: int) -> str:
    """The longest prefix of ``text`` whose UTF-8 encoding is at most ``max_bytes`` bytes.

    Cutting the encoded bytes and dropping the partial sequence left at the end keeps
    the cut on a character boundary; the bytes came from valid text, so the trailing
    partial sequence is the only thing ``"ignore"`` can drop.
    """
    if max_bytes <= 0:
        return ""
    if text.isascii():
        return text[:max_bytes]
    encoded = text.encode()
    if len(encoded) <= max_bytes:
        return text
    return encoded[:max_bytes].decode("utf-8", "ignore")
