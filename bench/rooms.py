"""Rooms benchmark: a lecture hall on loopback.

1. One room, FOLLOWERS followers connected by Server-Sent Events, the presenter advancing
   STEPS steps: the delay from the start of the presenter's PUT to each follower's receipt
   of that step (p50, p99), and the servers' memory; first one process with the in-process
   backend, then two processes sharing a redis-server (the presenter on one, the followers
   split over both), where redis-server is installed.
2. The burst: BURST clients each posting a different small program (the presets with
   changed numbers) within BURST_S seconds while the room is live and the presenter steps:
   the time to each full trace (p50, p99), the room's delay meanwhile, errors, memory
   before and after.

Counts and durations are bounded; the followers' client runs in this process and shares
the machine's cores with the servers, so the delays it measures include its own work.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

from bench.hall import (
    STEP_GAP_S,
    Hall,
    Presenter,
    Server,
    follow,
    percentile,
    post_trace,
    programs,
    redis_server,
    rss_mb,
    servers,
    steps,
)

FOLLOWERS = 500
STEPS = 50
BURST = 300
BURST_S = 3.0
TARGET_P99_MS = 250.0


# -- the runs ------------------------------------------------------------------------------

@dataclass
class HallResult:
    connected: int
    p50: float
    p99: float
    receipts: int
    missing: int
    rss_mb: float


@dataclass
class BurstResult:
    trace_p50: float
    trace_p99: float
    ok: int
    busy: int
    errors: list[str]
    room_p50: float
    room_p99: float
    room_missing: int
    rss_before: float
    rss_after: float
    rss_settled: float


async def _hall(servers_: list[Server], followers: int, step_count: int,
                burst: int) -> tuple[HallResult, BurstResult | None]:
    from app.presets import PRESETS

    presenter = await asyncio.to_thread(Presenter, servers_[0], PRESETS[2].source)
    hall = Hall()
    stop = asyncio.Event()
    tasks = []
    for i in range(followers):
        got: dict[int, float] = {}
        hall.receipts.append(got)
        server = servers_[i % len(servers_)]
        tasks.append(asyncio.ensure_future(follow(server, presenter.code, got, hall, stop)))
    deadline = time.monotonic() + 60
    while hall.connected < followers and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    await asyncio.sleep(0.5)
    memory = sum(rss_mb(s.pid) for s in servers_)
    ids = await steps(presenter, hall, step_count)
    await asyncio.sleep(1.0)
    delays, missing = hall.delays_ms(ids)
    result = HallResult(hall.connected, percentile(delays, 0.5), percentile(delays, 0.99),
                        len(delays), missing, memory)
    bursted = await _burst(servers_, presenter, hall, burst) if burst else None
    stop.set()
    await asyncio.gather(*tasks, return_exceptions=True)
    return result, bursted


async def _burst(servers_: list[Server], presenter: Presenter, hall: Hall,
                 burst: int) -> BurstResult:
    before = sum(rss_mb(s.pid) for s in servers_)
    start = time.perf_counter() + 0.2
    posts = [asyncio.ensure_future(post_trace(servers_[i % len(servers_)], source,
                                              start + BURST_S * i / burst))
             for i, source in enumerate(programs(burst))]
    room = asyncio.ensure_future(steps(presenter, hall, int(BURST_S / STEP_GAP_S)))
    outcomes = await asyncio.gather(*posts)
    ids = await room
    await asyncio.sleep(1.0)
    delays, missing = hall.delays_ms(ids)
    after = sum(rss_mb(s.pid) for s in servers_)
    await asyncio.sleep(3.0)
    times = [t * 1000 for t, outcome in outcomes if outcome == "ok"]
    return BurstResult(
        percentile(times, 0.5), percentile(times, 0.99), len(times),
        sum(outcome == "busy" for _, outcome in outcomes),
        [outcome for _, outcome in outcomes if outcome not in ("ok", "busy")],
        percentile(delays, 0.5), percentile(delays, 0.99), missing, before, after,
        sum(rss_mb(s.pid) for s in servers_))


def run(count: int, redis_url: str | None, followers: int = FOLLOWERS, step_count: int = STEPS,
        burst: int = BURST) -> tuple[HallResult, BurstResult | None]:
    with servers(count, redis_url) as started:
        return asyncio.run(_hall(started, followers, step_count, burst))


def _line(label: str, r: HallResult) -> str:
    return (f"  {label}: PUT→receipt p50 {r.p50:.0f} ms, p99 {r.p99:.0f} ms ({r.receipts:,} "
            f"receipts of {r.connected} followers, {r.missing} missing); servers' memory "
            f"{r.rss_mb:.0f} MB")


def main(followers: int = FOLLOWERS, step_count: int = STEPS, burst: int = BURST) -> bool:
    """Print the report; whether the p99 target is met with no receipt missing."""
    print(f"Rooms: one room, {followers} followers by SSE, the presenter advancing "
          f"{step_count} steps ({STEP_GAP_S * 1000:.0f} ms apart), on loopback")
    one, b = run(1, None, followers, step_count, burst)
    print(_line("in-process, 1 server", one))
    results = [one]
    with redis_server() as redis_url:
        if redis_url is None:
            print("  Redis, 2 servers: not measured (redis-server is not installed)")
        else:
            two, _ = run(2, redis_url, followers, step_count, 0)
            print(_line("Redis, 2 servers    ", two))
            results.append(two)
    met = all(r.p99 < TARGET_P99_MS and not r.missing for r in results)
    print(f"  p99 under {TARGET_P99_MS:.0f} ms, nothing missing? {'yes' if met else 'NO'}")
    if b is not None:
        print(f"Burst: {burst} different programs posted within {BURST_S:.0f} s while the room "
              f"is live ({followers} followers, the presenter stepping)")
        print(f"  to the full trace: p50 {b.trace_p50:.0f} ms, p99 {b.trace_p99:.0f} ms; {b.ok} "
              f"traced, {b.busy} told busy, {len(b.errors)} errors {sorted(set(b.errors))[:3]}")
        print(f"  the room meanwhile: PUT→receipt p50 {b.room_p50:.0f} ms, p99 "
              f"{b.room_p99:.0f} ms, {b.room_missing} missing")
        print(f"  servers' memory: {b.rss_before:.0f} MB before, {b.rss_after:.0f} MB after, "
              f"{b.rss_settled:.0f} MB 3 s later")
    print()
    return met


if __name__ == "__main__":
    main()
