"""Searching the table's tools by a question: words, tool documents, a BM25F index."""
