"""A scripted runner and a channel that records what the run desk posts."""

from __future__ import annotations

from dataclasses import dataclass

from bot.core.domain.identity import Where
from bot.core.domain.messages import Message
from runner.jobs import JobRejected, JobRequest, Submitted


@dataclass
class Limits:
    max_code_bytes: int = 40


class Runner:
    def __init__(self, position: int = 2, refuse: str | None = None) -> None:
        self.requests: list[JobRequest] = []
        self.position, self.refuse = position, refuse
        self.settings = Limits()
        self.deliver = None

    def on_result(self, deliver) -> None:
        self.deliver = deliver

    async def submit(self, request: JobRequest) -> Submitted:
        if self.refuse:
            raise JobRejected(self.refuse)
        self.requests.append(request)
        return Submitted("abcdef1234567890", self.position)


class Channel:
    def __init__(self) -> None:
        self.posts: list[tuple[Where, Message, str | None]] = []

    async def publish(self, where: Where, message: Message, *, thread_of: str | None = None) -> str:
        self.posts.append((where, message, thread_of))
        return "m1"
