"""Community banks through the command desk: bank files (YAML built from questions), an admin who
uploads them, and the `world` fixture (a desk built by `build_services`, with a recording
publisher; registered in tests/conftest.py).
"""

from __future__ import annotations

import random

import pytest
import yaml

from bot.app import build_daily, build_drill, build_services
from bot.core.commands.dispatch import Caller, CommandDesk
from bot.core.content.bank import Library
from bot.core.domain.clock import FakeClock
from bot.core.domain.identity import Where, Who
from bot.core.domain.messages import Message, Upload
from bot.storage.db import Database

ADMIN = Who("test", "ws-a", "u-admin", "ada")
HERE = Where("test", "ws-a", "c-a", "general")


class Publisher:
    def __init__(self) -> None:
        self.posts: list[tuple[Where, Message]] = []
        self.told: list[tuple[Who, Message]] = []

    async def publish(self, where: Where, message: Message, *, thread_of: str | None = None) -> str:
        self.posts.append((where, message))
        return f"m{len(self.posts)}"

    async def update(self, where: Where, ref: str, message: Message) -> None:
        pass

    async def tell(self, who: Who, message: Message) -> bool:
        self.told.append((who, message))
        return True


class NoRunner:
    def desk(self) -> None:
        return None

    def unavailable(self) -> str:
        return "no runner"


def mcq(qid: str, prompt: str, key: str, others: list[str], topic: str = "autograd") -> dict[str, object]:
    return {"id": qid, "kind": "mcq", "topic": topic, "difficulty": 2, "prompt": prompt,
            "choices": [{"text": key}, *({"text": o, "why_not": f"{o} is not it."} for o in others)],
            "answer": key, "explanation": f"{key} is right."}


def bank_yaml(slug: str, questions: list[dict[str, object]], title: str = "Our loop") -> bytes:
    return yaml.safe_dump({"bank": slug, "title": title, "questions": questions}, sort_keys=False).encode()


GOOD = bank_yaml("our-loop", [
    mcq("ours-zero-grad", "When does our team call `zero_grad`?", "Before backward", ["After step", "Never", "Twice"]),
    mcq("ours-eval", "What does `model.eval()` switch?", "Dropout and norm", ["Grad mode", "Device", "Dtype"]),
])


@pytest.fixture
def world(db: Database, library: Library, clock: FakeClock) -> tuple[CommandDesk, Publisher]:
    publisher = Publisher()
    drill = build_drill(db, library, clock, rng=random.Random(3))
    desk = CommandDesk(build_services(drill, build_daily(drill, publisher), publisher, NoRunner()))
    return desk, publisher


def admin(who: Who = ADMIN, where: Where = HERE) -> Caller:
    return Caller(who, where, is_admin=True)


async def upload(desk: CommandDesk, data: bytes, name: str = "our-loop.yaml", who: Who = ADMIN,
                 where: Where = HERE) -> Message:
    return await desk.execute_values(admin(who, where), ("bank", "upload"), {"file": Upload(name, data)})


SUGGESTION = ("prompt:\"What does `loss.backward()` accumulate into?\" "
              "choices:\"*`.grad` of each leaf; `.data` of each leaf | backward never writes data; "
              "The optimizer state | the optimizer reads grads later; The loss itself | a loss holds no grads\" "
              "explanation:\"Gradients accumulate in `.grad` of leaf tensors.\" topic:autograd difficulty:1")
