"""What tools and hosts agree on: names, entries, results, schema checks, contexts."""
