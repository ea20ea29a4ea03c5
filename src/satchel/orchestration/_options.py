"""The keyword options of :func:`satchel.open_runtime`, validated with errors naming them.

Defined once, here: :func:`~satchel.open_runtime` hands its ``**options`` to
:meth:`RuntimeOptions.of`, and the runtime passes the one checked value down to the
parts that read it (the coordinator, the preparer, the session ledger). A new option is
a field here and the line that reads it. This value checks them and must never do
anything else.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Final

import attrs

from ..recall import FusionWeights
from ..vocabulary import InvalidRequestError

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping


#: Round 0's default fusion weights (frozen, so one value serves every runtime).
ROUND_ZERO_FUSION: Final = FusionWeights()


def _seconds(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise InvalidRequestError(f"{attribute.name} must be a positive number of seconds")


#: The most turns a session may hold an item back: beyond any conversation, and far
#: inside the 64-bit integers a store's session table counts turns in (a larger value
#: overflowed there, failing every session prepare after the runtime had started).
MAX_DEDUP_TURNS: Final = 1_000_000


def _count(
    *, minimum: int, maximum: int | None = None, none: bool = False
) -> Callable[[object, Any, object], None]:
    def check(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
        if value is None and none:
            return
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise InvalidRequestError(f"{attribute.name} must be an integer >= {minimum}")
        if maximum is not None and value > maximum:
            raise InvalidRequestError(
                f"{attribute.name} must be an integer from {minimum} to {maximum}"
            )

    return check


def _fusion(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if not isinstance(value, FusionWeights):
        raise InvalidRequestError("fusion must be a satchel.FusionWeights")


def _flag(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if not isinstance(value, bool):
        raise InvalidRequestError(f"{attribute.name} must be True or False")


def _callable(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if not callable(value):
        raise InvalidRequestError(f"{attribute.name} must be a callable")


@attrs.frozen(kw_only=True)
class RuntimeOptions:
    """The tuning keyword options of :func:`open_runtime`, checked."""

    round_timeout: float | None = attrs.field(default=None, validator=_seconds)
    prepare_timeout: float | None = attrs.field(default=None, validator=_seconds)
    #: The host stages' fuses: a stage that overruns falls back to satchel's own result.
    planner_timeout: float = attrs.field(default=5.0, validator=_seconds)
    digest_timeout: float = attrs.field(default=30.0, validator=_seconds)
    #: Rank positions a references scope's candidates give way to the request's own
    #: scope's (0: all scopes interleave alike).
    reference_penalty: int = attrs.field(default=0, validator=_count(minimum=0))
    dedup_turns: int = attrs.field(default=0, validator=_count(minimum=0, maximum=MAX_DEDUP_TURNS))
    #: Keep the session ledger in the store, shared by every runtime over it.
    shared_sessions: bool = attrs.field(default=False, validator=_flag)
    readers: int = attrs.field(default=4, validator=_count(minimum=1))
    #: Round 0's fusion weights (and the neighbour channel's share): the runtime's, not
    #: the policy's, so turning the gate on never changes round 0.
    fusion: FusionWeights = attrs.field(default=ROUND_ZERO_FUSION, validator=_fusion)
    #: Threads BLAS may use while the runtime is open (None leaves BLAS alone). One is
    #: fastest for satchel's products: with more, every search pays a thread wake-up.
    blas_threads: int | None = attrs.field(default=1, validator=_count(minimum=1, none=True))
    #: The wall clock, in UTC epoch seconds, read once per prepare: a query's relative
    #: dates ("last week") are seen from today when the scope is live. A host replaying
    #: a stored conversation as if live gives its own. Shared sessions are dated by it.
    clock: Callable[[], float] = attrs.field(default=time.time, validator=_callable)
    #: Whether spans may carry scope names (``gen_ai.memory.store.id`` on each
    #: ``search_memory``). Off by default: a scope name is often a user's identifier.
    trace_identifiers: bool = attrs.field(default=False, validator=_flag)

    @classmethod
    def of(cls, options: Mapping[str, object]) -> RuntimeOptions:
        """The options ``open_runtime`` was given by keyword, checked.

        Raises:
            InvalidRequestError: an unknown option, or a malformed value (naming it).
        """
        cls.refuse_unknown(options)
        return cls(**options)  # type: ignore[arg-type]  # each field's validator checks it

    @classmethod
    def refuse_unknown(cls, names: Iterable[str]) -> None:
        """Refuse the first of ``names`` that is no option, naming it.

        Raises:
            InvalidRequestError: a name is not one of the options.
        """
        known = {field.name for field in attrs.fields(cls)}
        for name in names:
            if name not in known:
                raise InvalidRequestError(
                    f"unknown runtime option {name!r}; expected one of {', '.join(sorted(known))}"
                )
