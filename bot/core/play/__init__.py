"""Play: see README's architecture section."""
