"""What the inspector's pages read from a request and check before they act: the
grant's reach, the record a form names, the prepare the playground spells. A refusal is
a :class:`PageError`, shown as a page with its status.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import satchel

from ..._wire import full_id
from . import _views as views

if TYPE_CHECKING:
    from .._auth import TokenGrant
    from ._sessions import Session


class PageError(Exception):
    """A page's refusal: its status and what it tells the user."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def not_found() -> PageError:
    # One answer whether the scope does not exist or the session may not read it.
    return PageError(404, "No such scope or record (or this login may not read it).")


def grant_of(session: Session) -> TokenGrant:
    assert session.grant is not None  # ``Inspector.page`` lets no visitor through
    return session.grant


def readable(grant: TokenGrant, scope: str) -> str:
    if not scope or not grant.may_read(scope):
        raise not_found()
    return scope


def writable(grant: TokenGrant, scope: str) -> None:
    if not grant.may_read(scope):
        raise not_found()
    if not grant.may_write(scope):
        raise PageError(403, "This login may read this scope but not change it.")


def citation_of(fields: dict[str, str]) -> satchel.Citation:
    """The record a confirmation or write form names (``scope``, ``family``, ``id`` as a
    pack spells it, ``v``)."""
    version = fields.get("v", "")
    if version and not (version.isascii() and version.isdigit() and len(version) < 19):
        raise PageError(422, "v must be a version number.")
    record_id = fields.get("id") or None
    try:
        return satchel.Citation(
            fields.get("family", ""),
            fields.get("scope", ""),
            None if record_id is None else full_id(record_id),
            int(version) if version else None,
        )
    except satchel.InvalidRequestError as exc:
        raise PageError(422, str(exc)) from None


def prepare_request(form: dict[str, str]) -> satchel.PrepareContextRequest:
    """The request the playground's form spells; satchel validates every field (its
    message names the one at fault)."""
    max_bytes = form.get("max_bytes", "").strip()
    if not max_bytes.isdigit() or len(max_bytes) > 6:
        raise satchel.InvalidRequestError("max_bytes must be an integer 512..32768")
    sections = []
    for family in views.FAMILIES:
        if f"family-{family}" not in form:
            continue
        limit = form.get(f"limit-{family}", "").strip() or "1"
        if not limit.isdigit() or len(limit) > 3:
            raise satchel.InvalidRequestError(f"the {family} limit must be an integer 1..8")
        sections.append(satchel.Section(family, int(limit)))
    return satchel.PrepareContextRequest(
        scope_id=form.get("scope", ""),
        query=form.get("query", ""),
        max_bytes=int(max_bytes),
        assembly=satchel.Assembly(tuple(sections)) if sections else None,
        session_id=form.get("session_id", "").strip() or None,
    )
