"""Sessions people already have (Claude Code, ChatGPT, message lists, text) made into corpus transcripts."""
