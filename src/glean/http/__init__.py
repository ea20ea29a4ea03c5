"""The HTTP service: an ASGI app over the public API (``glean serve``)."""
