"""Provider definitions of the table's tools, built once per entry and format."""
