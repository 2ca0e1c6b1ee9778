"""Content: see README's architecture section."""
