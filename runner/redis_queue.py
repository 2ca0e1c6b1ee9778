"""Scale-out backend: jobs queued in Redis with arq, run by `torchdrill runner worker` hosts.

Keys (all under `key_prefix`, except arq's own `arq:job:*` / `arq:in-progress:*`):
  {p}:queue            arq's queue (sorted set of job ids by enqueue time)
  {p}:req:{id}         the request (code, requester, reply_to) until its result is delivered
  {p}:results:{bot}    results for the bot replica that submitted the job (list);
                       {p}:delivering:{bot} while it hands one over; {p}:bot:{bot} its heartbeat
  {p}:results          results whose replica is gone (any replica delivers them)
  {p}:owner:{id}       the replica that submitted the job
  {p}:active:{member}  the member's unfinished job id; {p}:rate:{member} recent submissions
  {p}:cancel:{id}      a cancel request for a running job, watched by its worker
  {p}:published:{id}   set with the result, so a retried arq job never answers twice

Results go through Redis lists rather than a callback so that a bot restarted in the
middle of a job still delivers it. Each bot replica reads only its own list (it alone holds
the job's /run acknowledgement and coalescing state); the worker routes a result there while
that replica's heartbeat lives, otherwise to the shared list, and replicas move the lists of
replicas whose heartbeat expired to the shared list.
Payloads are JSON (not arq's default pickle): nothing from Redis is ever unpickled.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
import uuid
from datetime import UTC, datetime
from typing import Any

from arq import ArqRedis, Worker, create_pool
from arq.connections import RedisSettings
from arq.constants import in_progress_key_prefix, job_key_prefix
from arq.worker import func

from runner import judging
from runner.fairness import already_active, check_code_size, queue_full, rate_limited
from runner.jobs import JobRejected, JobRequest, JobResult, JobState, Submitted, interrupted_result
from runner.pool import LocalPool
from runner.service import RunnerService
from runner.settings import RunnerSettings

log = logging.getLogger(__name__)
ACTIVE_TTL_S = 3600  # a lost job cannot block its member for longer than this
REQUEST_TTL_S = 86_400
ALIVE_TTL_S = 15  # a replica silent this long is gone: its results go to the shared list
SWEEP_EVERY_S = 10.0
DELIVERED = b"delivered"  # the tries key of a job whose result reached the bot
DELIVERY_TRIES = 3  # a result whose delivery keeps failing is dropped (logged) after this many
_RELEASE = """
if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end
return 0
"""


def _dumps(data: dict[str, Any]) -> bytes:
    return json.dumps(data).encode()


NEXT_SCORE_LUA = """
local last = tonumber(redis.call('GET', KEYS[1]) or '0')
local score = math.max(tonumber(ARGV[1]), last + 1)
redis.call('SET', KEYS[1], score)
return score
"""


class Keys:
    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.queue = f"{prefix}:queue"
        self.results = f"{prefix}:results"
        self.delivering = f"{prefix}:delivering"
        self.health = f"{prefix}:health"
        self.last_score = f"{prefix}:last-score"

    def request(self, job_id: str) -> str:
        return f"{self.prefix}:req:{job_id}"

    def active(self, requester: str) -> str:
        return f"{self.prefix}:active:{requester}"

    def rate(self, requester: str) -> str:
        return f"{self.prefix}:rate:{requester}"

    def cancel(self, job_id: str) -> str:
        return f"{self.prefix}:cancel:{job_id}"

    def published(self, job_id: str) -> str:
        return f"{self.prefix}:published:{job_id}"

    def tries(self, job_id: str) -> str:
        return f"{self.prefix}:tries:{job_id}"

    def owner(self, job_id: str) -> str:
        return f"{self.prefix}:owner:{job_id}"

    def results_of(self, replica: str) -> str:
        return f"{self.prefix}:results:{replica}"

    def delivering_of(self, replica: str) -> str:
        return f"{self.prefix}:delivering:{replica}"

    def alive(self, replica: str) -> str:
        return f"{self.prefix}:bot:{replica}"


def redis_settings(url: str) -> RedisSettings:
    return RedisSettings.from_dsn(url)


async def result_list(redis: ArqRedis, keys: Keys, job_id: str) -> str:
    """The submitting replica's list while it is alive, else the shared one."""
    owner = await redis.get(keys.owner(job_id))
    if owner is not None and await redis.exists(keys.alive(owner.decode())):
        return keys.results_of(owner.decode())
    return keys.results


async def publish(redis: ArqRedis, keys: Keys, result: JobResult) -> None:
    """Hand a finished job to the bot that submitted it and free its member for the next one."""
    target = await result_list(redis, keys, result.job_id)
    async with redis.pipeline(transaction=True) as pipe:
        pipe.lpush(target, json.dumps(result.to_dict()))
        pipe.set(keys.published(result.job_id), "1", ex=REQUEST_TTL_S)
        await pipe.execute()
    await redis.eval(_RELEASE, 1, keys.active(result.request.requester), result.job_id)  # type: ignore[misc]  # redis-py types every command as Awaitable | value


class RedisRunner(RunnerService):
    def __init__(self, settings: RunnerSettings) -> None:
        super().__init__()
        self.settings = settings
        self.keys = Keys(settings.key_prefix)
        self.replica = uuid.uuid4().hex[:12]
        self._redis: ArqRedis | None = None
        self._consumer: asyncio.Task[None] | None = None

    @property
    def redis(self) -> ArqRedis:
        if self._redis is None:
            raise JobRejected("the runner is not running right now; try again shortly")
        return self._redis

    async def start(self) -> None:
        self._redis = await create_pool(redis_settings(self.settings.redis_url),
                                        default_queue_name=self.keys.queue,
                                        job_serializer=_dumps, job_deserializer=json.loads)
        await self._redis.set(self.keys.alive(self.replica), "1", ex=ALIVE_TTL_S)
        # an older version's single hand-over list: its results are anyone's now
        await _drain(self._redis, self.keys.delivering, self.keys.results)
        await self.sweep()
        self._consumer = asyncio.create_task(self._consume(), name="runner-results")

    async def close(self) -> None:
        if self._consumer:
            self._consumer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._consumer
        if self._redis is not None:
            with contextlib.suppress(OSError, ConnectionError):  # others deliver what was ours
                await self._redis.delete(self.keys.alive(self.replica))
                await self._hand_over(self.replica)
            await self._redis.aclose()
            self._redis = None

    async def _hand_over(self, replica: str) -> None:
        await _drain(self.redis, self.keys.delivering_of(replica), self.keys.results)
        await _drain(self.redis, self.keys.results_of(replica), self.keys.results)

    async def sweep(self) -> None:
        """Move the lists of replicas whose heartbeat expired to the shared list."""
        redis, prefix = self.redis, self.keys.prefix
        gone: set[str] = set()
        for pattern in (f"{prefix}:results:*", f"{prefix}:delivering:*"):
            async for key in redis.scan_iter(pattern):
                replica = key.decode().rsplit(":", 1)[1]
                if replica != self.replica and not await redis.exists(self.keys.alive(replica)):
                    gone.add(replica)
        for replica in gone:
            log.info("runner results of gone bot replica %s handed to the others", replica)
            await self._hand_over(replica)

    async def _consume(self) -> None:
        redis, keys = self.redis, self.keys
        mine, delivering = keys.results_of(self.replica), keys.delivering_of(self.replica)
        last_sweep = time.monotonic()
        while True:
            try:
                await redis.set(keys.alive(self.replica), "1", ex=ALIVE_TTL_S)
                raw = await redis.blmove(mine, delivering, 1, "RIGHT", "LEFT")
                if raw is None:  # nothing of ours: one orphan, if any
                    raw = await redis.lmove(keys.results, delivering, "RIGHT", "LEFT")
                if time.monotonic() - last_sweep > SWEEP_EVERY_S:
                    last_sweep = time.monotonic()
                    await self.sweep()
            except (OSError, ConnectionError) as exc:
                log.warning("redis unavailable while waiting for results: %s", exc)
                await asyncio.sleep(1)
                continue
            if raw is None:
                continue
            try:
                result = JobResult.from_dict(json.loads(raw))
            except (ValueError, KeyError, TypeError, AttributeError) as exc:
                log.error("dropping an unreadable runner result: %s", exc)
                await redis.lrem(delivering, 1, raw)  # type: ignore[misc]  # redis-py types every command as Awaitable | value
                continue
            # the tries key outlives a drop or a delivery, so a copy that a hand-over put back
            # while it was being delivered is not delivered again (nor counted from zero)
            state = await redis.get(keys.tries(result.job_id))
            if state == DELIVERED or (state is not None and int(state) >= DELIVERY_TRIES):
                await redis.lrem(delivering, 1, raw)  # type: ignore[misc]  # redis-py types every command as Awaitable | value
                continue
            if await self._deliver(result):
                await redis.set(keys.tries(result.job_id), DELIVERED, ex=REQUEST_TTL_S)
                await redis.lrem(delivering, 1, raw)  # type: ignore[misc]  # redis-py types every command as Awaitable | value
                await redis.delete(keys.request(result.job_id), keys.owner(result.job_id))
                continue
            tries = await redis.incr(keys.tries(result.job_id))
            await redis.expire(keys.tries(result.job_id), REQUEST_TTL_S)
            if tries >= DELIVERY_TRIES:  # it would be redelivered at every hand-over otherwise
                log.error("dropping the result of job %s after %d failed deliveries",
                          result.job_id, tries)
                await redis.lrem(delivering, 1, raw)  # type: ignore[misc]  # redis-py types every command as Awaitable | value
                await redis.delete(keys.request(result.job_id), keys.owner(result.job_id))

    async def submit(self, request: JobRequest) -> Submitted:
        check_code_size(request.code, self.settings.max_code_bytes)
        redis, keys = self.redis, self.keys
        job_id = uuid.uuid4().hex[:12]
        active = keys.active(request.requester)
        if not await redis.set(active, job_id, nx=True, ex=ACTIVE_TTL_S):
            current = await redis.get(active)
            raise already_active(current.decode() if current else "unknown")
        try:
            if await redis.zcard(keys.queue) >= self.settings.queue_cap:
                raise queue_full(self.settings.queue_cap)
            await self._count_rate(request.requester)
        except JobRejected:
            await redis.delete(active)
            raise
        await redis.set(keys.request(job_id), json.dumps(request.to_dict()), ex=REQUEST_TTL_S)
        await redis.set(keys.owner(job_id), self.replica, ex=REQUEST_TTL_S)
        # arq orders its queue by millisecond score, and ties by job id: strictly increasing
        # scores keep it first-come, first-served even for jobs submitted in the same ms
        score_ms = await redis.eval(  # type: ignore[misc]  # redis-py types every command as Awaitable | value
            NEXT_SCORE_LUA, 1, keys.last_score, str(int(time.time() * 1000)))
        await redis.enqueue_job("run_snippet", job_id, request.to_dict(), _job_id=job_id,
                                _queue_name=keys.queue,
                                _defer_until=datetime.fromtimestamp(int(score_ms) / 1000, UTC))
        position = await self.position(job_id)
        return Submitted(job_id, 1 if position is None else position)

    async def _count_rate(self, requester: str) -> None:
        redis, key, now = self.redis, self.keys.rate(requester), time.time()
        await redis.zremrangebyscore(key, 0, now - 60)
        if await redis.zcard(key) >= self.settings.rate_per_minute:
            oldest = await redis.zrange(key, 0, 0, withscores=True)
            raise rate_limited(self.settings.rate_per_minute, oldest[0][1] + 60 - now)
        await redis.zadd(key, {uuid.uuid4().hex: now})
        await redis.expire(key, 61)

    async def position(self, job_id: str) -> int | None:
        redis = self.redis
        ids = [i.decode() for i in await redis.zrange(self.keys.queue, 0, -1)]
        if job_id not in ids:
            return None
        async with redis.pipeline(transaction=False) as pipe:
            for i in ids:
                pipe.exists(in_progress_key_prefix + i)
            running = await pipe.execute()
        waiting = [i for i, r in zip(ids, running, strict=True) if not r]
        return waiting.index(job_id) + 1 if job_id in waiting else 0

    async def active_job(self, requester: str) -> str | None:
        current = await self.redis.get(self.keys.active(requester))
        return current.decode() if current is not None else None

    async def cancel(self, job_id: str) -> bool:
        redis, keys = self.redis, self.keys
        raw = await redis.get(keys.request(job_id))
        if raw is None:
            return False
        await redis.set(keys.cancel(job_id), "1", ex=ACTIVE_TTL_S)
        if await redis.exists(in_progress_key_prefix + job_id):
            return True  # its worker sees the flag and stops the sandbox
        if await redis.zrem(keys.queue, job_id):
            await redis.delete(job_key_prefix + job_id)
            request = JobRequest.from_dict(json.loads(raw))
            await publish(redis, keys, JobResult(job_id=job_id, request=request,
                                                 state=JobState.CANCELLED,
                                                 error_message="cancelled before it started"))
            return True
        return await redis.exists(in_progress_key_prefix + job_id) > 0


async def _drain(redis: ArqRedis, source: str, target: str) -> None:
    while await redis.lmove(source, target, "LEFT", "RIGHT"):
        pass


async def _watch_cancel(redis: ArqRedis, key: str, pool_slot: Any, job_id: str) -> None:
    while not await redis.exists(key):
        await asyncio.sleep(0.2)
    judging.request_cancel(job_id)  # a judge job between two of its case jobs
    await pool_slot.cancel()


async def run_snippet(ctx: dict[str, Any], job_id: str, request_data: dict[str, Any]) -> str:
    """The arq task on a worker host: run one job on a local slot and publish the result."""
    redis: ArqRedis = ctx["redis"]
    keys: Keys = ctx["keys"]
    pool: LocalPool = ctx["pool"]
    request = JobRequest.from_dict(request_data)
    if await redis.exists(keys.published(job_id)):
        return "already published"  # stopped between publishing and arq's bookkeeping
    if ctx.get("job_try", 1) > 1:  # a worker died mid-job; untrusted code is not re-run
        result = interrupted_result(job_id, request, was_running=True)
    elif await redis.exists(keys.cancel(job_id)):
        result = JobResult(job_id=job_id, request=request, state=JobState.CANCELLED,
                           error_message="cancelled before it started")
    else:
        slot, note = await pool.acquire(request.device)
        watcher = asyncio.create_task(_watch_cancel(redis, keys.cancel(job_id), slot, job_id))
        try:
            result = await judging.execute(pool, job_id, request, slot, note, ctx["limits"])
        finally:
            watcher.cancel()
    await publish(redis, keys, result)
    await redis.delete(keys.cancel(job_id))
    return result.state.value


def build_worker(settings: RunnerSettings, *, pool: LocalPool | None = None,
                 handle_signals: bool = True) -> Worker:
    """An arq worker serving this host's slots (one per GPU plus the CPU slots)."""
    pool = pool or LocalPool(settings)
    keys = Keys(settings.key_prefix)
    limits = settings.limits()

    async def startup(ctx: dict[str, Any]) -> None:
        await pool.start()
        ctx.update(pool=pool, keys=keys, limits=limits)
        log.info("runner worker ready: %s", ", ".join(s.device_label for s in pool.slots))

    async def shutdown(ctx: dict[str, Any]) -> None:
        await pool.close()

    return Worker(
        functions=[func(run_snippet, name="run_snippet", max_tries=2,
                        timeout=limits.timeout_s + 300)],
        queue_name=keys.queue, redis_settings=redis_settings(settings.redis_url),
        max_jobs=max(1, len(pool.slots)), on_startup=startup, on_shutdown=shutdown,
        handle_signals=handle_signals, keep_result=0, poll_delay=0.1,  # results: our list
        # on SIGTERM stop taking jobs and let running ones finish (and report) before exiting
        job_completion_wait=int(limits.timeout_s) + 10,
        health_check_key=keys.health, job_serializer=_dumps, job_deserializer=json.loads)
