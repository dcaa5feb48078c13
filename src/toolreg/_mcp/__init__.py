"""MCP: servers' tools as toolsets (``client``), and toolreg's tools as a server.

Nearly everything here needs the optional ``mcp`` package (``pip install
'toolreg-core[mcp]'``); ``http_guard`` and the defaults below do not, so the CLI
can name them without it. ``import toolreg`` never imports this package; the
lazy wrappers in ``toolreg/__init__.py`` do, on first use.
"""

#: ``toolreg serve``: tool calls running at once, over all clients (anyio's default pool size).
DEFAULT_MAX_CALLS = 40
#: ``toolreg serve``: tool calls one MCP session may run at once; more wait their turn.
DEFAULT_MAX_CALLS_PER_SESSION = 8
#: ``toolreg serve``: the environment variable holding the bearer token for HTTP clients.
TOKEN_ENV = "TOOLREG_SERVE_TOKEN"
