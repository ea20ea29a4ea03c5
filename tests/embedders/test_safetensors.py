"""satchel's safetensors reader: what the safetensors library writes reads back the same,
and a file that does not describe its data is a ModelLoadError naming it."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest

import satchel
from satchel.embedders._safetensors import DTYPES, read_tensor
from satchel.embedders._static import _bundled_folder

if TYPE_CHECKING:
    from pathlib import Path


def safetensors_file(path: Path, header: object, data: bytes = b"") -> Path:
    """A file laid out as safetensors: the header's length, the header, the data."""
    spelled = json.dumps(header).encode()
    path.write_bytes(len(spelled).to_bytes(8, "little") + spelled + data)
    return path


@pytest.mark.parametrize("dtype", sorted(DTYPES))
def test_what_the_library_writes_reads_back_the_same(tmp_path: Path, dtype: str) -> None:
    """Every dtype numpy holds, beside another tensor: the same values, dtype and shape."""
    numpy = pytest.importorskip("safetensors.numpy")
    values = np.arange(24).reshape(2, 3, 4).astype(DTYPES[dtype])
    path = tmp_path / "model.safetensors"
    numpy.save_file({"before": np.ones(5, dtype=np.float32), "embeddings": values}, str(path))
    read = read_tensor(path, "embeddings")
    assert read.dtype == values.dtype
    assert np.array_equal(read, values)


def test_the_bundled_weights_read_as_the_library_reads_them() -> None:
    """The bundled model's float16 matrix, exactly."""
    numpy = pytest.importorskip("safetensors.numpy")
    path = _bundled_folder() / "model.safetensors"
    expected = numpy.load_file(str(path))["embeddings"]
    read = read_tensor(path, "embeddings")
    assert (read.dtype, read.shape) == (np.dtype(np.float16), (29525, 256))
    assert np.array_equal(read, expected)


ENTRY: dict[str, Any] = {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]}
DAMAGES = [
    pytest.param(b"\x05\x00", "too short", id="shorter-than-a-length"),
    pytest.param((1000).to_bytes(8, "little") + b"{}", "too short", id="header-past-the-end"),
    pytest.param((2).to_bytes(8, "little") + b"{x", "not JSON", id="header-not-json"),
    pytest.param((2).to_bytes(8, "little") + b"\xff\xfe", "not JSON", id="header-not-utf8"),
    pytest.param(([], b""), "not a JSON object", id="header-a-list"),
    pytest.param(({"other": ENTRY}, bytes(16)), "no 'embeddings'", id="no-such-tensor"),
    pytest.param(({"embeddings": ENTRY | {"dtype": "BF16"}}, bytes(8)), "BF16", id="bfloat16"),
    pytest.param(({"embeddings": ENTRY | {"shape": [2, -2]}}, bytes(16)), "shape", id="shape"),
    pytest.param(({"embeddings": ENTRY}, bytes(12)), "data_offsets", id="data-cut-short"),
    pytest.param(
        ({"embeddings": ENTRY | {"data_offsets": [0, 12]}}, bytes(16)),
        "data_offsets",
        id="offsets-not-the-shape",
    ),
    pytest.param(
        ({"embeddings": ENTRY | {"data_offsets": [8, 4]}}, bytes(16)),
        "data_offsets",
        id="offsets-backwards",
    ),
]


@pytest.mark.parametrize(("content", "reason"), DAMAGES)
def test_a_file_that_does_not_describe_its_data_is_refused(
    tmp_path: Path, content: bytes | tuple[object, bytes], reason: str
) -> None:
    """ModelLoadError naming the file and what is wrong, never a numpy or JSON error."""
    path = tmp_path / "model.safetensors"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        safetensors_file(path, *content)
    with pytest.raises(satchel.ModelLoadError, match=r"model\.safetensors") as raised:
        read_tensor(path, "embeddings")
    assert reason in str(raised.value)
