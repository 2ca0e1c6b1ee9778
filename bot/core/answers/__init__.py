"""Answering: a member's click on a posted question, counted exactly once."""
