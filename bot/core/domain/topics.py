"""The fixed topic list: banks, filters, autocomplete and stats all agree on these slugs."""

from __future__ import annotations

TOPICS: dict[str, str] = {
    "fundamentals": "PyTorch fundamentals",
    "tensors": "Tensors",
    "autograd": "Autograd",
    "nn-modules": "nn.Module and layers",
    "losses": "Loss functions",
    "optimization": "Optimizers and schedulers",
    "training-loop": "The training loop",
    "data": "Datasets and DataLoader",
    "mixed-precision": "Mixed precision",
    "checkpointing": "Checkpointing and saving",
    "gpu-memory": "GPU memory",
    "distributed": "Distributed training",
    "compile-export": "torch.compile and export",
    "performance": "Performance",
    "debugging": "Debugging",
}


class UnknownTopicError(ValueError):
    """Raised with the list of valid topics so every front end can show it."""

    def __init__(self, topic: str) -> None:
        self.topic = topic
        super().__init__(f"unknown topic {topic!r}; choose one of: {', '.join(TOPICS)}")


def normalize_topic(topic: str) -> str:
    """Accept a slug or display name in any case ('Autograd', 'nn modules') and return the slug."""
    wanted = topic.strip().lower().replace("_", "-").replace(" ", "-")
    if wanted in TOPICS:
        return wanted
    for slug, title in TOPICS.items():
        if title.lower().replace(" ", "-") == wanted:
            return slug
    raise UnknownTopicError(topic)
