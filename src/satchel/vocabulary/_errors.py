"""Every error satchel raises on purpose, in one tree.

::

    SatchelError
    ├── InvalidRequestError (ValueError)   a request, record or option is malformed;
    │                                      the message names the field
    ├── NotFoundError (LookupError)        the entry or version a reference names is absent
    ├── PrepareTimeoutError (TimeoutError) round 0 of a prepare overran its deadline
    ├── PrepareFailedError                 round 0 of a prepare failed (raised from the group)
    ├── StoreError                         a store cannot serve a call
    │   └── StoreUnavailableError          its database cannot be reached now; retry
    ├── ModelLoadError                     an embedding model is missing or does not load
    ├── MalformedLineError (ValueError)    a workload line cannot become a record
    └── InvariantError (AssertionError)    an internal invariant broke: always a bug

A caller catches :class:`SatchelError` for everything satchel means to raise; anything else
escaping a public call is a defect.
"""

from __future__ import annotations


class SatchelError(Exception):
    """Base class of every error satchel raises on purpose."""


class InvalidRequestError(SatchelError, ValueError):
    """A request, a record or an option is malformed; the message names the field."""


class NotFoundError(SatchelError, LookupError):
    """The memory entry or version a reference names does not exist."""


class PrepareTimeoutError(SatchelError, TimeoutError):
    """Round 0 of a prepare did not finish before its deadline."""


class PrepareFailedError(SatchelError):
    """Round 0 of a prepare failed; the cause is the exception group it is raised from."""


class StoreError(SatchelError):
    """A store cannot serve a call (closed, wrong schema, mismatched configuration)."""


class StoreUnavailableError(StoreError):
    """The store's database cannot be reached (the engine stopped, the connection
    dropped). Nothing half-written stays; the next call connects again."""


class ModelLoadError(SatchelError):
    """An embedding model is missing, incomplete, fails its checksums or does not load."""


class MalformedLineError(SatchelError, ValueError):
    """A workload line cannot become a record; the message names the field."""


class InvariantError(SatchelError, AssertionError):
    """An internal invariant broke. Never reachable from input; always a bug."""
