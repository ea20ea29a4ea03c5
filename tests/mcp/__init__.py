"""The MCP server (``satchel.mcp``, ``satchel mcp``), driven by the MCP SDK's own client."""
