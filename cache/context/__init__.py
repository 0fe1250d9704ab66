"""Context assembly: the token-budgeted window of memory an agent starts with, and its HTML page."""
