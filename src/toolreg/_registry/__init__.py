"""``ToolRegistry``: the table, definitions and dispatch composed into one object."""
