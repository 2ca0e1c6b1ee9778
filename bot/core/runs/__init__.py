"""/run: code handed to the runner, its result posted back in the thread."""
