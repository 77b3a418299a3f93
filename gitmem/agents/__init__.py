"""Front ends for coding agents, beside the command line.

``hooks``: an agent's lifecycle hooks (settings it reads, answers the hook
commands print); ``mcp``: ``git mem mcp``, the memory as MCP tools. Nothing is
imported here: the MCP SDK must load only when ``git mem mcp`` runs.
"""
