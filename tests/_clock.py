"""The trio backend with a mock clock, for the tests of timeouts and fuses: virtual time
stands still while anything runs and jumps to the next deadline once every task waits."""

from __future__ import annotations

from typing import Final

import pytest
import trio.testing

#: Real seconds every task must have waited before the mock clock jumps. Not zero: at
#: zero, trio's loop polls without blocking for as long as a worker thread runs (the
#: SQLite store, an embedder's batch), a million turns of the loop in one test, and the
#: thread it waits for crawls for the GIL; one test took 23 s of CPU at zero and 1 s at
#: this threshold. Jumps still land exactly on the deadline.
AUTOJUMP_SECONDS: Final = 0.005

#: ``anyio_backend`` for a test run only on trio with the mock clock.
MOCK_CLOCK: Final = [
    pytest.param(
        ("trio", {"clock": trio.testing.MockClock(autojump_threshold=AUTOJUMP_SECONDS)}),
        id="trio-mock-clock",
    )
]
