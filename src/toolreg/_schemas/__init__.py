"""What is done with a tool's JSON Schema: argument validation and provider formats."""
