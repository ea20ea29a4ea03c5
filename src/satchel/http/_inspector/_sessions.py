"""The inspector's browser sessions and CSRF tokens: stateless, signed cookies.

With tokens, the login form exchanges a bearer token for a session cookie
(``HttpOnly``, ``SameSite=Strict``, ``Path=/ui/``): ``s1.EXPIRES.NONCE.MAC``, where the
MAC is an HMAC-SHA256 keyed by a secret derived from that token
(``Tokens.key_for``). The token itself is never in the cookie, a page or a URL. A
cookie names no grant: it is checked against every configured token's key, all of them
compared, so nothing is stored on the server and every ``--workers`` process (and a
restarted service) accepts it; removing a token from the file ends its sessions.

Before a login, and without tokens, a visitor cookie ``a1.NONCE`` stands in, so that
the login form and every write form of a service without tokens carry a CSRF token too
(a page elsewhere may post a form to a loopback service; it cannot read the cookie).

Every write form carries ``csrf``, an HMAC of the cookie's nonce keyed by the session's
secret (by nothing but the nonce for a visitor): a cross-site form has no way to
compute it, and ``SameSite=Strict`` keeps the cookie off a cross-site request anyway.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from typing import TYPE_CHECKING, Final

import attrs

from .._auth import EVERYTHING

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response

    from .._auth import TokenGrant, Tokens

COOKIE: Final = "satchel_ui"
#: How long a login lasts.
SESSION_SECONDS: Final = 8 * 3600
_ANONYMOUS_KEY: Final = b"satchel inspector visitor"


@attrs.frozen
class Session:
    """Who a request's cookie says the browser is.

    Attributes:
        grant: what it may do; None for a visitor who has not logged in (with tokens).
        nonce: the cookie's random part, which its CSRF token signs.
        key: the secret the cookie and its CSRF token are signed with.
        fresh: the cookie is new (the response sets it).
    """

    grant: TokenGrant | None
    nonce: str
    key: bytes
    fresh: bool = False

    @property
    def csrf(self) -> str:
        """The CSRF token every write form of this session carries."""
        return _mac(self.key, f"csrf.{self.nonce}")[:32]

    def csrf_matches(self, presented: object) -> bool:
        return isinstance(presented, str) and hmac.compare_digest(presented, self.csrf)


class Sessions:
    """Reads and issues the session cookie for one service (with or without tokens)."""

    def __init__(self, tokens: Tokens | None) -> None:
        self._tokens = tokens

    @property
    def open(self) -> bool:
        """Whether the service has no tokens (every visitor may do everything)."""
        return self._tokens is None

    def of(self, request: Request) -> Session:
        """The session the request's cookie names; a fresh visitor when it names none
        (or a bad, forged or expired one)."""
        value = request.cookies.get(COOKIE, "")
        visitor = self._visitor(value)
        if visitor is not None:
            return visitor
        signed = self._signed(value)
        if signed is not None:
            return signed
        return self._new_visitor()

    def login(self, token: str) -> Session | None:
        """A new session for ``token``; None when it is no configured token."""
        if self._tokens is None:
            return None
        found = self._tokens.key_for(token.encode())
        if found is None:
            return None
        grant, key = found
        return Session(grant, secrets.token_urlsafe(18), key, fresh=True)

    def set_cookie(self, response: Response, session: Session, *, secure: bool) -> None:
        """Make ``response`` set ``session``'s cookie."""
        if session.grant is None or self._tokens is None:
            value, max_age = f"a1.{session.nonce}", None
        else:
            expires = int(time.time()) + SESSION_SECONDS
            signed = f"s1.{expires}.{session.nonce}"
            value, max_age = f"{signed}.{_mac(session.key, signed)}", SESSION_SECONDS
        response.set_cookie(
            COOKIE, value, max_age=max_age, path="/ui/", httponly=True,
            samesite="strict", secure=secure,
        )  # fmt: skip

    def clear_cookie(self, response: Response, *, secure: bool) -> None:
        response.delete_cookie(COOKIE, path="/ui/", httponly=True, samesite="strict", secure=secure)

    def _new_visitor(self) -> Session:
        nonce = secrets.token_urlsafe(18)
        return Session(self._visitor_grant(), nonce, _visitor_key(nonce), fresh=True)

    def _visitor(self, value: str) -> Session | None:
        kind, _, nonce = value.partition(".")
        if kind != "a1" or not 16 <= len(nonce) <= 64 or not nonce.isascii():
            return None
        return Session(self._visitor_grant(), nonce, _visitor_key(nonce))

    def _visitor_grant(self) -> TokenGrant | None:
        return EVERYTHING if self._tokens is None else None

    def _signed(self, value: str) -> Session | None:
        if self._tokens is None:
            return None
        parts = value.split(".")
        if len(parts) != 4 or parts[0] != "s1" or not parts[1].isdigit():
            return None
        if int(parts[1]) < time.time():
            return None
        signed = ".".join(parts[:3])
        found = None
        for grant, key in self._tokens.session_keys():  # every key compared, no early exit
            if hmac.compare_digest(_mac(key, signed), parts[3]):
                found = Session(grant, parts[2], key)
        return found


def _visitor_key(nonce: str) -> bytes:
    return hmac.new(_ANONYMOUS_KEY, nonce.encode(), hashlib.sha256).digest()


def _mac(key: bytes, message: str) -> str:
    return hmac.new(key, message.encode(), hashlib.sha256).hexdigest()
