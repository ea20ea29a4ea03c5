"""One tensor of a ``.safetensors`` file, read with numpy alone.

The format: the header's length (8 bytes, little-endian), the header (a JSON object
giving each tensor's ``dtype``, ``shape`` and ``data_offsets`` into the data), then
the data, little-endian and row-major. A static model needs one tensor and this much
of the format; the ``safetensors`` package would be a compiled dependency for it.
Reads the file it is given and nothing else; never writes.
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Final

import numpy as np

from ..vocabulary._errors import ModelLoadError

if TYPE_CHECKING:
    from pathlib import Path

    import numpy.typing as npt

#: The format's dtypes that numpy holds as they are (little-endian).
DTYPES: Final = {
    "F64": "<f8", "F32": "<f4", "F16": "<f2",
    "I64": "<i8", "I32": "<i4", "I16": "<i2", "I8": "i1",
    "U64": "<u8", "U32": "<u4", "U16": "<u2", "U8": "u1",
}  # fmt: skip
#: The header's length, the first thing in the file.
LENGTH_BYTES: Final = 8


def read_tensor(path: Path, name: str) -> npt.NDArray[np.generic]:
    """The tensor ``name`` of the file ``path``, as its dtype and shape say.

    Raises:
        ModelLoadError: the file is not safetensors, holds no ``name``, or describes it
            in a way that does not fit its data (the message names the file).
        OSError: the file cannot be read.
    """
    try:
        return _tensor(path.read_bytes(), name)
    except ValueError as exc:
        raise ModelLoadError(f"{path}: {exc}") from None


def _tensor(data: bytes, name: str) -> npt.NDArray[np.generic]:
    header = _header(data)
    entry = header.get(name)
    if not isinstance(entry, dict):
        raise ValueError(f"it holds no {name!r} tensor")
    dtype, shape = _dtype(entry.get("dtype")), _shape(entry.get("shape"))
    start = LENGTH_BYTES + _int(data[:LENGTH_BYTES])
    offsets = entry.get("data_offsets")
    if (
        not isinstance(offsets, list)
        or len(offsets) != 2
        or not all(type(offset) is int for offset in offsets)
        or not 0 <= offsets[0] <= offsets[1] <= len(data) - start
        or offsets[1] - offsets[0] != math.prod(shape) * dtype.itemsize
    ):
        raise ValueError(f"the data_offsets of {name!r} do not fit its dtype and shape")
    return np.frombuffer(
        data, dtype=dtype, count=math.prod(shape), offset=start + offsets[0]
    ).reshape(shape)


def _int(raw: bytes) -> int:
    return int.from_bytes(raw, "little")


def _header(data: bytes) -> dict[str, object]:
    length = _int(data[:LENGTH_BYTES])
    if len(data) < LENGTH_BYTES or length > len(data) - LENGTH_BYTES:
        raise ValueError("not a safetensors file: too short for its header")
    try:
        header = json.loads(data[LENGTH_BYTES : LENGTH_BYTES + length])
    except ValueError:
        raise ValueError("not a safetensors file: its header is not JSON") from None
    if not isinstance(header, dict):
        raise ValueError("not a safetensors file: its header is not a JSON object")
    return header


def _dtype(spelled: object) -> np.dtype[np.generic]:
    if not isinstance(spelled, str) or spelled not in DTYPES:
        raise ValueError(f"a tensor of dtype {spelled!r}, not one of {', '.join(DTYPES)}")
    return np.dtype(DTYPES[spelled])


def _shape(shape: object) -> tuple[int, ...]:
    if not isinstance(shape, list) or not all(type(n) is int and n >= 0 for n in shape):
        raise ValueError(f"a tensor of shape {shape!r}")
    return tuple(shape)
