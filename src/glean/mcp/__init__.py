"""The Model Context Protocol server over the public API (``glean mcp``)."""
