"""What tools and hosts agree on: entries, results, schema checks, validation, formats."""
