"""The daily question: per-channel schedules and the daily post as a posting policy."""
