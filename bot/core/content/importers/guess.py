"""Keyword guesses for a draft question's topic. A curator confirms them; a wrong guess is cheap."""

from __future__ import annotations

import re

from bot.core.domain.topics import TOPICS

DEFAULT_TOPIC = "fundamentals"

# Patterns are matched case-insensitively against the prompt (weight 3) and answer (weight 1).
_KEYWORDS: dict[str, tuple[str, ...]] = {
    "tensors": (r"torch\.tensor\b", r"what is a pytorch tensor", r"\bdtypes?\b", r"broadcast", r"\bview\(|\.view\b", r"reshape",
                r"stride", r"contiguous", r"numpy", r"indexing", r"slicing"),
    "autograd": (r"autograd", r"requires_grad", r"\.backward\(|\bbackward\(\)", r"grad_fn",
                 r"no_grad", r"detach", r"computation(al)? graph", r"leaf tensor", r"in-?place"),
    "nn-modules": (r"nn\.module", r"\blayers?\b", r"nn\.sequential", r"activation function",
                   r"initiali[sz]", r"nn\.parameter", r"register_buffer", r"batch ?norm",
                   r"dropout", r"nn\.linear"),
    "losses": (r"loss functions?", r"crossentropy", r"mseloss", r"bce", r"nllloss", r"logits"),
    "optimization": (r"optimi[sz]ers?\b", r"\bsgd\b", r"\badamw?\b", r"learning[- ]rate",
                     r"scheduler", r"momentum", r"weight[ _]decay"),
    "training-loop": (r"training loop", r"zero_grad", r"model\.eval\(\)", r"model\.train\(\)",
                      r"validation", r"overfitting", r"\bepochs?\b", r"accuracy"),
    "data": (r"\bdataset\b", r"dataloader", r"collate_fn", r"num_workers", r"pin_memory",
             r"sampler", r"random_split"),
    "mixed-precision": (r"mixed[- ]precision", r"autocast", r"gradscaler", r"float16",
                        r"bfloat16", r"\bamp\b"),
    "checkpointing": (r"state_dict", r"torch\.save", r"torch\.load", r"resum", r"save and load"),
    "gpu-memory": (r"out[- ]of[- ]memory", r"\boom\b", r"memory_(allocated|reserved|summary)",
                   r"empty_cache", r"vram", r"(gradient|activation) checkpointing",
                   r"fragmentation"),
    "distributed": (r"distributeddataparallel", r"dataparallel", r"\bddp\b", r"\bfsdp\b",
                    r"all-?reduce", r"multi-?gpu", r"multiple gpus"),
    "compile-export": (r"torch\.compile", r"torchscript", r"torch\.jit", r"torch\.export",
                       r"\bonnx\b", r"quantiz", r"deploy"),
    "performance": (r"profil", r"bottleneck", r"throughput", r"synchroni[sz]e", r"speed ?up"),
    "debugging": (r"\bdebug", r"\bnan\b", r"set_detect_anomaly", r"device[- ]mismatch",
                  r"reproducib", r"manual_seed"),
}
_COMPILED = {
    topic: [re.compile(p, re.IGNORECASE) for p in patterns] for topic, patterns in _KEYWORDS.items()
}
assert set(_COMPILED) <= set(TOPICS), "guess keywords name a topic that does not exist"


def guess_topic(prompt: str, answer: str = "") -> str:
    """The topic whose keywords weigh most; ties go to the earlier topic in TOPICS."""
    scores: dict[str, int] = {}
    for topic, patterns in _COMPILED.items():
        score = sum(3 * len(p.findall(prompt)) + len(p.findall(answer)) for p in patterns)
        if score:
            scores[topic] = score
    if not scores:
        return DEFAULT_TOPIC
    order = list(TOPICS)
    return max(scores, key=lambda t: (scores[t], -order.index(t)))
