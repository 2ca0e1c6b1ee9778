"""Progress: see README's architecture section."""
