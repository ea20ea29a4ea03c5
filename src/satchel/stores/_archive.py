"""Archives: a store's records in one file, written by ``export_archive`` and read back
into any store by ``import_archive`` (docs/archives.md describes the format).

An archive is gzip-compressed JSON lines. The first line is the header (the format
version, the satchel that wrote it, the embedder that built the vectors, the scopes
and how many versions they hold); then the tombstones of erased entries; then, scope
by scope and family by family, every version of every record in the order the store
wrote it (vectors included), each scope's profile after its versions; the last line
says the archive is whole. Erased records are never in it.

Records travel the way ``copy_store`` moves them, through the same reader
(``_copy.read_records``) and writer (``_copy.RecordWriter``): an archive is a copy
that stops in a file. So an import is resumable as a copy is (run it again: only what
the target lacks is written), and every citation made before the export resolves
after the import. Both hold one page of records at a time, whatever the store's size.

Files are read and written on worker threads, never on the event loop.
"""

from __future__ import annotations

import base64
import gzip
import json
from contextlib import aclosing
from datetime import datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Final, TypeVar, cast

import anyio
import attrs
import numpy as np

from ..vocabulary._errors import InvalidRequestError
from ..vocabulary._families import FAMILY_RULES
from . import _copy
from ._copy import Batch, CopyReport, RecordWriter, count_versions, read_records
from ._copy_protocol import CopySource, CopyTarget, StoredVersion, VectorOrigin

if TYPE_CHECKING:
    import os
    from collections.abc import Callable, Iterator, Sequence

    from ..embedders import Embedder
    from ..vocabulary._families import Family

T = TypeVar("T")

#: The archive format this satchel writes, and the newest it reads.
FORMAT: Final = 1

#: The header's first member: what says a file is a satchel archive.
MAGIC: Final = "satchel_archive"

#: Columns of a version kept under their own names when set (``StoredVersion``'s).
_COLUMNS: Final = ("key", "text", "kind", "thread", "title", "abstract", "overview", "body")


async def export_archive(
    source: CopySource,
    path: str | os.PathLike[str],
    *,
    scopes: Sequence[str] | None = None,
    progress: Callable[[int, int], object] | None = None,
) -> CopyReport:
    """Write every record of ``source`` (or of ``scopes``) into an archive at ``path``.

    The archive holds every version of every record with its id, version number, key,
    dates, thread, tags, kind, summaries, body, searchability and vector; each scope's
    profile; and every tombstone of an erased entry (so erased stays erased after an
    import). It is written beside ``path`` and renamed into place when whole: an
    interrupted export leaves no archive. Run it while nothing writes to ``source``.

    Args:
        source: the store to read.
        path: the archive to write (replaced if it exists).
        scopes: the scopes to export; every scope of ``source`` when None.
        progress: called after each page as ``progress(done, total)``; an exception it
            raises stops the export.

    Returns:
        What it wrote (``skipped`` is empty: an export writes everything).

    Raises:
        InvalidRequestError: an argument is malformed, or ``scopes`` names a scope the
            source does not hold.
        StoreError: the store failed. OSError: the file could not be written.
    """
    if not isinstance(source, CopySource):
        raise InvalidRequestError("source must be a store that can be copied from (CopySource)")
    if progress is not None and not callable(progress):
        raise InvalidRequestError("progress must be a callable (done, total) or None")
    chosen = await _copy._chosen_scopes(source, scopes)
    built = await source.vectors_built_by()
    file = _ArchiveFile(Path(path))
    writer = _ArchiveWriter(file, _copy._Tally(progress))
    writer.tally.total = await count_versions(source, chosen)
    try:
        await file.open_for_writing()
        await file.write([_header(built, chosen, writer.tally.total)])
        await writer.keep_tombstones(await source.read_tombstones())
        async with aclosing(read_records(source, chosen)) as batches:
            async for batch in batches:
                await writer.write(batch)
        await file.write([{"end": writer.lines}])
        await file.commit()
    finally:
        await file.discard()
    return writer.tally.report(tuple(chosen))


async def import_archive(
    path: str | os.PathLike[str],
    target: CopyTarget,
    *,
    progress: Callable[[int, int], object] | None = None,
    embedder: Embedder | None = None,
) -> CopyReport:
    """Write every record of the archive at ``path`` into ``target``, as ``copy_store``
    would write the store it was exported from: every citation made before the export
    resolves in ``target``. Run it again after an interruption: it writes only what
    ``target`` lacks.

    Args:
        path: the archive (``export_archive``'s).
        target: the store to write; it may hold other scopes.
        progress: called after each page as ``progress(done, total)``, counting
            versions and profiles, those ``target`` held already included. An exception
            it raises stops the import (what was written stays).
        embedder: ``target``'s embedder, needed only when its vectors do not come from
            the embedder that built the archive's (the fingerprints differ): each
            searchable version is then embedded again with it.

    Returns:
        What it wrote and skipped.

    Raises:
        InvalidRequestError: the file is not a satchel archive, is from a newer format,
            is cut short or damaged (what came before stays written), or the vectors
            need embedding again and no ``embedder`` was given.
        StoreError: the store failed; what was written before stays.
    """
    if not isinstance(target, CopyTarget):
        raise InvalidRequestError("target must be a store that can be copied into (CopyTarget)")
    if progress is not None and not callable(progress):
        raise InvalidRequestError("progress must be a callable (done, total) or None")
    file = _ArchiveFile(Path(path))
    await file.open_for_reading()
    try:
        header = _checked_header(file, await file.read(1))
        built = VectorOrigin(header["vectors"]["fingerprint"], header["vectors"]["dimension"])
        writer = await RecordWriter.into(target, built, embedder, progress, origin="the archive")
        writer.expect(int(header["total"]))
        await _import_lines(file, writer)
    finally:
        await file.close()
    return writer.report(tuple(header["scopes"]))


async def _import_lines(file: _ArchiveFile, writer: RecordWriter) -> None:
    """Every line after the header, a page at a time, until the end line."""
    pending: list[StoredVersion] = []
    at: tuple[str, Family] | None = None
    while lines := await file.read(_copy.PAGE):
        tombstones = [line["tombstone"] for line in lines if "tombstone" in line]
        if tombstones:
            await writer.keep_tombstones(tombstones)
        for line in lines:
            if "tombstone" in line:
                continue
            if "end" in line:
                await _flush(writer, at, pending)
                file.ended(line)
                return
            if "profile" in line:
                await _flush(writer, at, pending)
                await writer.write(Batch(line["scope"], "profile", profile=line["profile"]))
                continue
            version = _version_from(file, line)
            if (line["scope"], version.family) != at or len(pending) >= _copy.PAGE:
                await _flush(writer, at, pending)
                at = (line["scope"], version.family)
            pending.append(version)
    raise file.damaged("it ends before its last line: the file was cut short")


async def _flush(
    writer: RecordWriter, at: tuple[str, Family] | None, pending: list[StoredVersion]
) -> None:
    if at is not None and pending:
        await writer.write(Batch(at[0], at[1], tuple(pending)))
    pending.clear()


@attrs.define
class _ArchiveWriter:
    """Writes batches as archive lines, counting them as a copy counts what it writes."""

    file: _ArchiveFile
    tally: _copy._Tally
    lines: int = 1  # the header

    async def keep_tombstones(self, tombstones: Sequence[str]) -> None:
        await self.file.write([{"tombstone": tombstone} for tombstone in tombstones])
        self.lines += len(tombstones)
        self.tally.tombstones += len(tombstones)

    async def write(self, batch: Batch) -> None:
        if batch.profile is not None:
            await self.file.write([{"scope": batch.scope_id, "profile": batch.profile}])
            self._count(batch.family, 1, 1)
            return
        await self.file.write([_version_line(batch.scope_id, v) for v in batch.versions])
        vectors = sum(version.vector is not None for version in batch.versions)
        self.tally.copied_vectors += vectors
        first = sum(1 for v in batch.versions if v.version == 1)
        self._count(batch.family, len(batch.versions), first)

    def _count(self, family: Family, versions: int, records: int) -> None:
        self.lines += versions
        self.tally.versions[family] += versions
        self.tally.records[family] += records
        self.tally.advance(versions)


def _header(built: VectorOrigin, scopes: list[str], total: int) -> dict[str, Any]:
    return {
        MAGIC: FORMAT,
        "written_by": f"satchel {_satchel_version()}",
        "vectors": {"fingerprint": built.fingerprint, "dimension": built.dimension},
        "scopes": scopes,
        "total": total,
    }


def _checked_header(file: _ArchiveFile, lines: list[dict[str, Any]]) -> dict[str, Any]:
    """The header, once it says the file is an archive this satchel reads."""
    if not lines or MAGIC not in lines[0]:
        raise file.damaged("it is not a satchel archive (no archive header on its first line)")
    header = lines[0]
    found = header[MAGIC]
    if not isinstance(found, int) or found < 1:
        raise file.damaged(f"its format version {found!r} is not one satchel knows")
    if found > FORMAT:
        raise InvalidRequestError(
            f"{file.path}: the archive is of format {found} ({header.get('written_by')});"
            f" this satchel ({_satchel_version()}) reads formats up to {FORMAT}:"
            " import it with a newer satchel"
        )
    return header


def _version_line(scope_id: str, version: StoredVersion) -> dict[str, Any]:
    """One version as an archive line: what is set of it, nothing else."""
    line: dict[str, Any] = {
        "scope": scope_id, "family": version.family, "id": version.record_id,
        "version": version.version, "live": version.live,
    }  # fmt: skip
    line.update({name: getattr(version, name) for name in _COLUMNS if getattr(version, name)})
    if version.tags:
        line["tags"] = list(version.tags)
    if version.created_at is not None:
        line["created_at"] = version.created_at.isoformat()
    if version.vector is not None:
        raw = np.asarray(version.vector, dtype="<f4").tobytes()
        line["vector"] = base64.b64encode(raw).decode("ascii")
    return line


def _version_from(file: _ArchiveFile, line: dict[str, Any]) -> StoredVersion:
    """A version line read back, exactly as it was written."""
    try:
        if line["family"] not in FAMILY_RULES or line["family"] == "profile":
            raise ValueError(f"no versioned family {line['family']!r}")
        vector = line.get("vector")
        return StoredVersion(
            family=line["family"], record_id=str(line["id"]), version=int(line["version"]),
            live=bool(line["live"]), position=file.line_number,
            **{name: line.get(name) for name in _COLUMNS},
            tags=tuple(line.get("tags", ())),
            created_at=_when(line.get("created_at")),
            vector=None if vector is None else np.frombuffer(base64.b64decode(vector), dtype="<f4"),
        )  # fmt: skip
    except (KeyError, TypeError, ValueError) as exc:
        raise file.damaged(f"a version line is malformed ({exc})") from None


def _when(text: str | None) -> datetime | None:
    return None if text is None else datetime.fromisoformat(text)


def _satchel_version() -> str:
    from importlib import metadata  # on first use: importing it costs ~15 ms

    try:
        return metadata.version("satchel")
    except metadata.PackageNotFoundError:  # run from a source tree
        return "(not installed)"


@attrs.define
class _ArchiveFile:
    """The archive's file, read or written a page of lines per worker-thread call."""

    path: Path
    line_number: int = 0
    _stream: IO[bytes] | None = None
    _partial: Path | None = None

    async def open_for_writing(self) -> None:
        self._partial = self.path.with_name(self.path.name + ".partial")
        self._stream = await _in_thread(self._open_partial, self._partial)

    @staticmethod
    def _open_partial(partial: Path) -> IO[bytes]:
        return cast("IO[bytes]", gzip.open(partial, "wb", compresslevel=6))

    async def write(self, lines: list[dict[str, Any]]) -> None:
        encoded = b"".join(_encoded(line) for line in lines)
        assert self._stream is not None
        await _in_thread(self._stream.write, encoded)

    async def commit(self) -> None:
        """Close the file and put it in place: the archive is whole."""
        assert self._stream is not None
        assert self._partial is not None
        stream, partial, self._stream, self._partial = self._stream, self._partial, None, None
        await _in_thread(_closed_and_moved, stream, partial, self.path)

    async def discard(self) -> None:
        """Remove what an export that did not finish wrote."""
        stream, partial, self._stream, self._partial = self._stream, self._partial, None, None
        with anyio.CancelScope(shield=True):
            await _in_thread(_closed_and_removed, stream, partial)

    async def open_for_reading(self) -> None:
        try:
            self._stream = await _in_thread(_opened, self.path)
        except FileNotFoundError:
            raise InvalidRequestError(f"{self.path}: no such archive") from None

    async def read(self, count: int) -> list[dict[str, Any]]:
        """Up to ``count`` lines, decoded; an empty list at the end of the file."""
        assert self._stream is not None
        try:
            raw = await _in_thread(_read_lines, self._stream, count)
        except (OSError, EOFError) as exc:  # gzip.BadGzipFile is an OSError
            raise self.damaged(f"it is not a whole gzip file ({exc})") from None
        decoded = []
        for text in raw:
            self.line_number += 1
            try:
                decoded.append(json.loads(text))
            except ValueError:
                raise self.damaged("a line is not JSON") from None
            if not isinstance(decoded[-1], dict):
                raise self.damaged("a line is not a JSON object")
        return decoded

    def ended(self, line: dict[str, Any]) -> None:
        """Check the end line: it counts every line before it."""
        if line["end"] != self.line_number - 1:
            raise self.damaged(
                f"its end line counts {line['end']} lines, not {self.line_number - 1}"
            )

    def damaged(self, why: str) -> InvalidRequestError:
        where = f" (line {self.line_number})" if self.line_number > 1 else ""
        return InvalidRequestError(f"{self.path}: not a readable satchel archive{where}: {why}")

    async def close(self) -> None:
        stream, self._stream = self._stream, None
        if stream is not None:
            with anyio.CancelScope(shield=True):
                await _in_thread(stream.close)


async def _in_thread(call: Callable[..., T], *args: Any) -> T:
    """``call(*args)`` on a worker thread: every read and write of the file (gzip,
    blocking) goes through here, never on the event loop."""
    return await anyio.to_thread.run_sync(call, *args)


def _opened(path: Path) -> IO[bytes]:
    return cast("IO[bytes]", gzip.open(path, "rb"))


def _encoded(line: dict[str, Any]) -> bytes:
    return json.dumps(line, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def _read_lines(stream: IO[bytes], count: int) -> list[bytes]:
    lines: Iterator[bytes] = iter(stream.readline, b"")
    return [line for _, line in zip(range(count), lines, strict=False)]


def _closed_and_moved(stream: IO[bytes], partial: Path, path: Path) -> None:
    stream.close()
    partial.replace(path)


def _closed_and_removed(stream: IO[bytes] | None, partial: Path | None) -> None:
    if stream is not None:
        stream.close()
    if partial is not None:
        partial.unlink(missing_ok=True)
