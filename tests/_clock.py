"""The trio backend with a mock clock, for the tests of timeouts and fuses: virtual time
stands still while anything runs and jumps to the next deadline once every task waits."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

import pytest
import trio.testing

if TYPE_CHECKING:
    from collections.abc import Iterator

#: Real seconds every task must have waited before the mock clock jumps. Not zero: at
#: zero, trio's loop polls without blocking for as long as a worker thread runs (the
#: SQLite store, an embedder's batch), a million turns of the loop in one test, and the
#: thread it waits for crawls for the GIL; one test took 23 s of CPU at zero and 1 s at
#: 5 ms. Not 5 ms either: on a loaded machine a worker thread's read of round 0 took
#: longer than that, every task waited, and the clock jumped to the prepare's deadline
#: mid-round (a deadline test failed as "round 0 did not finish"). Jumps still land
#: exactly on the deadline.
AUTOJUMP_SECONDS: Final = 0.02


class _FreshMockClock(dict[str, object]):
    """Trio's backend options with a new mock clock each time a test's trio run is made
    of them (anyio unpacks them once per run, ``TestRunner(**options)``), so virtual
    time starts at 0 in every test. One clock for them all went on from where the
    tests before had left it, which depends on how xdist deals the tests out, and made
    a test's exact sums of virtual times inexact (3.3 - 1.3 is not 2.0). A dict, as
    anyio asks; its own ``__iter__`` makes ``**`` read it through ``__getitem__``."""

    def __init__(self) -> None:
        super().__init__(clock=None)

    def __getitem__(self, key: str) -> object:
        if key != "clock":
            raise KeyError(key)
        return trio.testing.MockClock(autojump_threshold=AUTOJUMP_SECONDS)

    def __iter__(self) -> Iterator[str]:
        return iter(("clock",))

    def keys(self) -> Any:
        return ("clock",)


#: ``anyio_backend`` for a test run only on trio with the mock clock.
MOCK_CLOCK: Final = [pytest.param(("trio", _FreshMockClock()), id="trio-mock-clock")]
