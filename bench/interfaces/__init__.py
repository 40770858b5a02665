"""How fast the interfaces answer: the command line's start-up, the console's pages and the MCP
tools."""
