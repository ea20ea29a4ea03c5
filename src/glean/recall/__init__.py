"""The recall core: analysis, admission, fusion and allocation. Pure: no I/O, no anyio,
no store, no clock; tested with plain values."""
