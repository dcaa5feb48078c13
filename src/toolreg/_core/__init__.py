"""The registry: the table, the write gate, ownership, availability, definitions, dispatch."""
