"""The table of tools: its data, the write gate, ownership, callers, availability."""
