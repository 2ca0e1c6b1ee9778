"""Reveals: a post's public view, its closing results and streaks."""
