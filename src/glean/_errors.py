"""The domain errors glean raises. Every public failure is one of these."""

from __future__ import annotations


class GleanError(Exception):
    """Base class of every error glean raises on purpose."""


class InvalidRequestError(GleanError, ValueError):
    """A request or a record is malformed; the message names the offending field."""


class NotFoundError(GleanError, LookupError):
    """The memory entry or version a reference names does not exist."""


class PrepareTimeoutError(GleanError, TimeoutError):
    """Round 0 of a prepare did not finish before its deadline."""


class PrepareFailedError(GleanError):
    """Round 0 of a prepare failed; the cause is the exception group it is raised from."""


class StoreError(GleanError):
    """A store cannot serve a call (closed, wrong schema, mismatched configuration)."""


class InvariantError(GleanError, AssertionError):
    """An internal invariant broke. Never reachable from input; always a bug."""
