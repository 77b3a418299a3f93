"""Front ends for coding agents, beside the command line.

``settings``: install an agent's lifecycle hooks into its settings file;
``hooks``: what those hook commands answer (the Store asked, the answer
shaped as data); ``agents_md``: the AGENTS.md block; ``mcp``: ``git mem
mcp``, the memory as MCP tools. Nothing is imported here: the MCP SDK must
load only when ``git mem mcp`` runs.
"""
