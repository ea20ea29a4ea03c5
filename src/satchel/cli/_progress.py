"""A small progress bar for long ingests, drawn on stderr so stdout stays parseable.

On a terminal the bar is redrawn in place with ``\\r``; anywhere else (a log file, CI)
it writes one line per 10% instead, since carriage returns would pile up there.
"""

from __future__ import annotations

from typing import TextIO

import attrs

_WIDTH = 30
_LOG_STEP = 10  # percent between lines when stderr is not a terminal


@attrs.define
class ProgressBar:
    """Progress of ``done`` out of ``total`` units, with notes printed above the bar."""

    total: int
    stream: TextIO
    label: str = "progress"
    done: int = 0
    _tty: bool = attrs.field(init=False)
    _drawn: str = attrs.field(init=False, default="")
    _logged_step: int = attrs.field(init=False, default=0)

    def __attrs_post_init__(self) -> None:
        self._tty = self.stream.isatty()

    def update(self, done: int) -> None:
        """Move the bar to ``done``; redraw only when what is shown changes."""
        self.done = done
        if self._tty:
            self._redraw()
        else:
            self._log_step()

    def note(self, line: str) -> None:
        """Print one line (e.g. a skipped input line) without tearing the bar."""
        if self._tty and self._drawn:
            self.stream.write("\r\x1b[2K")  # clear the bar's line, then draw it again below
        self.stream.write(line + "\n")
        if self._tty and self._drawn:
            self.stream.write(self._drawn)
        self.stream.flush()

    def finish(self) -> None:
        """Draw the final state and end the bar's line."""
        if self._tty:
            self._redraw()
            self.stream.write("\n")
        elif self._logged_step < 100 or self.done != self.total:
            self.stream.write(self._text() + "\n")
        self.stream.flush()

    def _redraw(self) -> None:
        text = self._text(bar=True)
        if text != self._drawn:
            self._drawn = text
            self.stream.write("\r" + text)
            self.stream.flush()

    def _log_step(self) -> None:
        step = self._percent() // _LOG_STEP * _LOG_STEP
        if step > self._logged_step:
            self._logged_step = step
            self.stream.write(self._text() + "\n")
            self.stream.flush()

    def _percent(self) -> int:
        if self.total <= 0:
            return 100
        return min(100, self.done * 100 // self.total)

    def _text(self, *, bar: bool = False) -> str:
        percent = self._percent()
        counts = f"{percent:3d}% ({self.done:,}/{self.total:,})"
        if not bar:
            return f"{self.label}: {counts}"
        filled = percent * _WIDTH // 100
        return f"{self.label} [{'#' * filled}{'.' * (_WIDTH - filled)}] {counts}"
