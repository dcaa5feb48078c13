"""toolreg's tools served over MCP (``toolreg serve``), over stdio and HTTP.

The server modules need the optional ``mcp`` package (``pip install
'toolreg-core[mcp]'``); ``http_guard``, ``probes`` and the defaults below do not,
so the CLI can name them without it.
"""

#: ``toolreg serve``: tool calls running at once, over all clients (anyio's default pool size).
DEFAULT_MAX_CALLS = 40
#: ``toolreg serve``: tool calls one MCP session may run at once; more wait their turn.
DEFAULT_MAX_CALLS_PER_SESSION = 8
#: ``toolreg serve``: the environment variable holding the bearer token for HTTP clients.
TOKEN_ENV = "TOOLREG_SERVE_TOKEN"
#: Seconds a call an ``ask`` rule stops waits for its client's user to answer.
DEFAULT_APPROVAL_TIMEOUT = 120.0
