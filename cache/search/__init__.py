"""The search index and recall: chunking, embedding, the SQLite index, hybrid retrieval and the forget requests that keep redacted text out of it. Never imports the working set."""
