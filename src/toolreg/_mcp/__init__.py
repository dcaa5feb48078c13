"""MCP: servers' tools as toolsets (``client``), and toolreg's tools as a server.

Everything here needs the optional ``mcp`` package (``pip install 'toolreg-core[mcp]'``).
``import toolreg`` never imports this package; the lazy wrappers in
``toolreg/__init__.py`` do, on first use.
"""
