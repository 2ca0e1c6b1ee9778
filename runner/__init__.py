"""Sandboxed, queued, GPU-aware execution of /run snippets (deployable without the chat adapters)."""
