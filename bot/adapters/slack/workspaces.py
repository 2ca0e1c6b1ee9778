"""Which Web API client serves a workspace: the one SLACK_BOT_TOKEN, or the token the
workspace's OAuth install left in our database.

Everything that calls Slack asks here with the team id (``Where.workspace``), so a post, a
reply or an admin check for one workspace can only ever use that workspace's token. Tokens are
read from the database on every use: a workspace uninstalled through another replica has no
token here either.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from slack_sdk.web.async_client import AsyncWebClient

from bot.adapters.coalesce import CoalescingPublisher
from bot.adapters.slack.publisher import SlackPublisher
from bot.core.domain.identity import Where, Who
from bot.core.domain.messages import Message
from bot.core.publisher import ChatPublisher, Delivery

TokenSource = Callable[[str], Awaitable[str | None]]


class NotInstalledError(LookupError):
    """The workspace has no bot token (never installed, uninstalled or revoked)."""


class SlackClients:
    def __init__(self, make: Callable[[str], AsyncWebClient], tokens: TokenSource,
                 seed: AsyncWebClient | None = None) -> None:
        self.make = make
        self.tokens = tokens
        self._by_token: dict[str, SlackPublisher] = {}
        if seed is not None and seed.token:
            self._by_token[seed.token] = SlackPublisher(seed)

    @classmethod
    def single(cls, client: AsyncWebClient) -> SlackClients:
        """One workspace: the configured token serves every team id."""
        token = client.token

        async def same(_team: str) -> str | None:
            return token

        return cls(lambda _token: client, same, seed=client)

    async def publisher_for(self, team: str) -> SlackPublisher:
        token = await self.tokens(team)
        if not token:
            raise NotInstalledError(f"torchdrill is not installed in Slack workspace {team}")
        found = self._by_token.get(token)
        if found is None:
            found = self._by_token[token] = SlackPublisher(self.make(token))
        return found

    async def client_for(self, team: str) -> AsyncWebClient:
        return (await self.publisher_for(team)).client


class WorkspacePublisher(ChatPublisher):
    """The core's Publisher for Slack: each call goes out with its workspace's token."""

    def __init__(self, clients: SlackClients) -> None:
        self.clients = clients

    async def publish(self, where: Where, message: Message, *, thread_of: str | None = None) -> str:
        publisher = await self.clients.publisher_for(where.workspace)
        return await publisher.publish(where, message, thread_of=thread_of)

    async def publish_once(self, where: Where, message: Message, delivery: Delivery) -> str:
        publisher = await self.clients.publisher_for(where.workspace)
        return await publisher.publish_once(where, message, delivery)

    async def find_sent(self, where: Where, delivery: Delivery) -> str | None:
        return await (await self.clients.publisher_for(where.workspace)).find_sent(where, delivery)

    async def permalink(self, where: Where, ref: str) -> str | None:
        return await (await self.clients.publisher_for(where.workspace)).permalink(where, ref)

    async def tell(self, who: Who, message: Message) -> bool:
        return await (await self.clients.publisher_for(who.workspace)).tell(who, message)

    async def update(self, where: Where, ref: str, message: Message) -> None:
        await (await self.clients.publisher_for(where.workspace)).update(where, ref, message)

    async def delete(self, where: Where, ref: str) -> None:
        await (await self.clients.publisher_for(where.workspace)).delete(where, ref)

    async def upload_to(self, team: str, channel: str, message: Message) -> None:
        await (await self.clients.publisher_for(team)).upload_to(channel, message)


def adapter_publisher(clients: SlackClients) -> CoalescingPublisher:
    """What the Slack adapter registers with the app: per-workspace tokens, refreshes folded."""
    return CoalescingPublisher(WorkspacePublisher(clients))
