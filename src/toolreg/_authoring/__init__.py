"""Writing tools: ``@tool``, and JSON Schema from Python signatures and types."""
