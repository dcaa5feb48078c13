"""MCP servers' tools as toolsets: the manager, its links, calls and naming.

Nearly everything here needs the optional ``mcp`` package (``pip install
'toolreg-core[mcp]'``); ``api`` does not. ``import toolreg`` never imports this
package; the lazy wrappers in ``toolreg/__init__.py`` do, on first use.
"""
