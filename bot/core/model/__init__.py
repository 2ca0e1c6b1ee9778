"""Model: see README's architecture section."""
