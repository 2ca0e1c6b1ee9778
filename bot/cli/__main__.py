"""`python -m bot.cli`: the same command as the `torchdrill` console script."""

from bot.cli import app

app()
