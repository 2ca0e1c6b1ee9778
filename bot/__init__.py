"""torchdrill: daily PyTorch interview drills for Discord and Slack."""
