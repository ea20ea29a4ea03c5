"""Bearer tokens: which scopes a caller may read, and whether it may write them.

A token file is one JSON object::

    {"tokens": [
        {"name": "support-agent", "token": "<at least 16 characters>",
         "scopes": ["project:*", "chat-1"], "write": true},
        {"name": "dashboard", "token": "<another>", "scopes": ["*"]}
    ]}

``scopes`` are the scopes the token may read: a pattern is a scope's exact name, or a
prefix followed by ``*`` (``project:*`` is every scope starting ``project:``; ``*`` is
every scope). ``write`` (default false) lets it write and forget in those same scopes.
``name`` (optional) is a label for the operator; the token itself is never printed. It
is also the caller's identity: a prepare's ``session_id`` is a session of the token's
name, never of another name's, so tokens sharing a name share their sessions. A token
without a name is a caller of its own, labelled by its place (``unnamed token 2``).

The token a request presents is compared with every configured token in constant time
(``hmac.compare_digest`` of SHA-256 digests, so neither a token's content nor its length
shows in the timing), and all of them are compared whichever matches.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Final

import attrs

import satchel

if TYPE_CHECKING:
    from collections.abc import Iterable

#: The shortest token a file may configure: a secret, not a password.
MIN_TOKEN_CHARS: Final = 16
_GRANT_FIELDS: Final = ("name", "token", "scopes", "write")


def _scope_patterns(value: Iterable[str]) -> tuple[str, ...]:
    return (value,) if isinstance(value, str) else tuple(value)


@attrs.frozen
class TokenGrant:
    """What one bearer token may do.

    Attributes:
        scopes: the scopes it may read: exact names, or prefixes ending in ``*``.
        write: whether it may also write and forget in those scopes.
        name: a label for logs and the operator (never the token), and the identity
            the caller's sessions belong to.
    """

    scopes: tuple[str, ...] = attrs.field(converter=_scope_patterns)
    write: bool = False
    name: str | None = None

    def may_read(self, scope: str) -> bool:
        """Whether a pattern of this grant covers ``scope``."""
        return any(_covers(pattern, scope) for pattern in self.scopes)

    def may_write(self, scope: str) -> bool:
        return self.write and self.may_read(scope)


def _covers(pattern: str, scope: str) -> bool:
    if pattern.endswith("*"):
        return scope.startswith(pattern[:-1])
    return scope == pattern


#: The grant of every request when no tokens are configured.
EVERYTHING: Final = TokenGrant(scopes=("*",), write=True, name="(no authentication)")


class Tokens:
    """The configured tokens, checked in constant time; every grant has a name."""

    def __init__(self, tokens: Mapping[str, TokenGrant]) -> None:
        grants = _named(list(tokens.values()))
        self._digests = [
            (_digest(token.encode()), grant) for token, grant in zip(tokens, grants, strict=True)
        ]

    def __len__(self) -> int:
        return len(self._digests)

    def grant_for(self, authorization: bytes | None) -> TokenGrant | None:
        """The grant of the bearer token an ``Authorization`` header presents; None when
        it presents none or an unknown one. Every configured token is compared."""
        presented = _bearer(authorization)
        if presented is None:
            return None
        digest = _digest(presented)
        found = None
        for secret, grant in self._digests:
            if hmac.compare_digest(digest, secret):  # no early exit: every token is compared
                found = grant
        return found

    def key_for(self, presented: bytes) -> tuple[TokenGrant, bytes] | None:
        """The grant of the token ``presented`` (the token itself, not a header) and a
        secret derived from it, for signing what the inspector's session cookie holds;
        None for an unknown token. Every configured token is compared."""
        digest = _digest(presented)
        found = None
        for secret, grant in self._digests:
            if hmac.compare_digest(digest, secret):
                found = (grant, _session_key(secret))
        return found

    def session_keys(self) -> list[tuple[TokenGrant, bytes]]:
        """Each configured grant with its session-signing secret (:meth:`key_for`)."""
        return [(grant, _session_key(secret)) for secret, grant in self._digests]


def _session_key(digest: bytes) -> bytes:
    # A secret of its own, so that nothing signed for a session is a token's digest.
    return hmac.new(digest, b"satchel inspector session", hashlib.sha256).digest()


def _named(grants: list[TokenGrant]) -> list[TokenGrant]:
    """``grants`` with a name each: an unnamed one is labelled by its place, with a label
    no other grant has, so that its caller's sessions are its own."""
    taken = {grant.name for grant in grants}
    named = []
    for place, grant in enumerate(grants, start=1):
        if grant.name is None:
            label = f"unnamed token {place}"
            while label in taken:  # a configured name says the same: set this one apart
                label += "'"
            taken.add(label)
            grant = attrs.evolve(grant, name=label)
        named.append(grant)
    return named


def _digest(token: bytes) -> bytes:
    return hashlib.sha256(token).digest()


def _bearer(header: bytes | None) -> bytes | None:
    if header is None:
        return None
    scheme, _, token = header.strip().partition(b" ")
    token = token.strip()
    if scheme.lower() != b"bearer" or not token:
        return None
    return token


def check_tokens(tokens: object) -> Mapping[str, TokenGrant]:
    """``create_app``'s ``tokens``: a mapping of non-empty token strings to grants.

    Raises:
        InvalidRequestError: naming what is wrong.
    """
    if not isinstance(tokens, Mapping):
        raise satchel.InvalidRequestError(
            "tokens must be a mapping of token to satchel.http.TokenGrant"
        )
    for token, grant in tokens.items():
        if not isinstance(token, str) or not token.strip():
            raise satchel.InvalidRequestError("tokens keys must be non-empty strings")
        if not isinstance(grant, TokenGrant):
            raise satchel.InvalidRequestError("tokens values must be satchel.http.TokenGrant")
    return tokens


# ------------------------------------------------------------------------ token files


def load_tokens(path: str | Path) -> dict[str, TokenGrant]:
    """The tokens a token file configures (the format is in this module's docstring).

    Raises:
        InvalidRequestError: the file is not a valid token file (the message names the
            field, never a token's value).
        OSError: the file cannot be read.
    """
    text = Path(path).read_text(encoding="utf-8")
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise satchel.InvalidRequestError(f"the token file is not JSON: {exc}") from None
    return parse_tokens(data)


def parse_tokens(data: object) -> dict[str, TokenGrant]:
    """The tokens a token file's parsed JSON configures.

    Raises:
        InvalidRequestError: naming the field at fault (never a token's value).
    """
    if not isinstance(data, dict) or set(data) != {"tokens"}:
        raise satchel.InvalidRequestError('a token file is one object: {"tokens": [...]}')
    entries = data["tokens"]
    if not isinstance(entries, list) or not entries:
        raise satchel.InvalidRequestError("tokens must be a non-empty list of token objects")
    tokens: dict[str, TokenGrant] = {}
    for index, entry in enumerate(entries):
        token, grant = _grant(entry, f"tokens[{index}]")
        if token in tokens:
            raise satchel.InvalidRequestError(f"tokens[{index}].token repeats an earlier token")
        tokens[token] = grant
    return tokens


def _grant(entry: object, field: str) -> tuple[str, TokenGrant]:
    if not isinstance(entry, dict):
        raise satchel.InvalidRequestError(f"{field} must be an object ({', '.join(_GRANT_FIELDS)})")
    for name in entry:
        if name not in _GRANT_FIELDS:
            raise satchel.InvalidRequestError(
                f"{field}.{name} is not a field (expected: {', '.join(_GRANT_FIELDS)})"
            )
    token = entry.get("token")
    if not isinstance(token, str) or len(token.strip()) < MIN_TOKEN_CHARS:
        raise satchel.InvalidRequestError(
            f"{field}.token must be a string of at least {MIN_TOKEN_CHARS} characters"
        )
    if token != token.strip() or not token.isprintable() or not token.isascii():
        raise satchel.InvalidRequestError(
            f"{field}.token must be printable ASCII without surrounding spaces"
        )
    scopes = entry.get("scopes")
    if not isinstance(scopes, list) or not scopes:
        raise satchel.InvalidRequestError(f"{field}.scopes must be a non-empty list of scopes")
    for position, scope in enumerate(scopes):
        if not isinstance(scope, str) or not scope.strip():
            raise satchel.InvalidRequestError(
                f"{field}.scopes[{position}] must be a non-empty string"
            )
    write = entry.get("write", False)
    if not isinstance(write, bool):
        raise satchel.InvalidRequestError(f"{field}.write must be true or false")
    name = entry.get("name")
    if name is not None and (not isinstance(name, str) or not name.strip()):
        raise satchel.InvalidRequestError(f"{field}.name must be a non-empty string")
    return token, TokenGrant(scopes=tuple(scopes), write=write, name=name)


def describe(grants: Iterable[TokenGrant]) -> str:
    """``2 tokens, 1 may write``: how a start line describes the configured grants."""
    listed = list(grants)
    writers = sum(1 for grant in listed if grant.write)
    noun = "token" if len(listed) == 1 else "tokens"
    return f"{len(listed)} {noun}, {writers} may write"
