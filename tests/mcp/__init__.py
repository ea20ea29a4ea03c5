"""The MCP server (``glean.mcp``, ``glean mcp``), driven by the MCP SDK's own client."""
