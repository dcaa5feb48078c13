"""Embedding ``toolreg serve``: a registry's tools offered to MCP clients from your own process.

Needs the ``mcp`` extra (``pip install 'toolreg-core[mcp]'``); importing this
module without it raises ImportError saying so. docs/mcp.md shows it at work.
"""

from ._mcp_serve import DEFAULT_MAX_CALLS, DEFAULT_MAX_CALLS_PER_SESSION

try:
    from ._mcp_serve.event_store import MemoryEventStore
    from ._mcp_serve.server import HTTP_PATH, NotOffered, ToolServer, bind, url_for
except ModuleNotFoundError as exc:
    from ._mcp.api import MCP_MISSING, missing_sdk

    if not missing_sdk(exc):
        raise
    raise ImportError(f"toolreg.serve needs the MCP SDK. {MCP_MISSING}") from exc

__all__ = [
    "DEFAULT_MAX_CALLS",
    "DEFAULT_MAX_CALLS_PER_SESSION",
    "HTTP_PATH",
    "MemoryEventStore",
    "NotOffered",
    "ToolServer",
    "bind",
    "url_for",
]
