"""The domain: the vocabulary and rules every feature shares; pure (no I/O, no storage)."""
