"""Retrying what may succeed the next time: exponential back-off with full jitter, bounded in
attempts and in total time.

Pure: the clock, the sleep and the random source are parameters, so the policy is tested without
waiting. What counts as worth retrying is decided by the caller (stitcher.faults.classify).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to retry a transient failure.

    The n-th wait (n = 0, 1, ...) is drawn uniformly from [0, min(max_delay, base_delay * 2**n)]
    ("full jitter"): several clients that lost the same server do not come back in lock-step.
    No wait starts that would end after `total_seconds` from the first attempt.
    """

    attempts: int = 6
    base_delay: float = 0.5
    max_delay: float = 8.0
    total_seconds: float = 20.0
    #: Attempts made even when `total_seconds` has run out (and even above `attempts`). One
    #: attempt can use up the whole budget by waiting out a server-side timeout; see
    #: stitcher.faults.past_a_dead_replica.
    minimum_attempts: int = 1

    def __post_init__(self) -> None:
        if self.attempts < 1 or self.minimum_attempts < 1:
            raise ValueError("attempts must be at least 1")
        if self.base_delay < 0 or self.max_delay < 0 or self.total_seconds < 0:
            raise ValueError("delays must not be negative")

    def delays(self, rng: random.Random) -> Iterator[float]:
        """The waits before attempts 2, 3, ... (at most attempts - 1 of them, and at least
        minimum_attempts - 1)."""
        for n in range(max(self.attempts, self.minimum_attempts) - 1):
            yield rng.uniform(0.0, min(self.max_delay, self.base_delay * 2**n))


#: No retrying at all (tests, or callers that retry at a higher level).
NO_RETRY = RetryPolicy(attempts=1)


def call_with_retries(
    action: Callable[[], T],
    *,
    is_transient: Callable[[BaseException], bool],
    policy: RetryPolicy = RetryPolicy(),
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
    rng: random.Random | None = None,
) -> T:
    """Run `action`, retrying it while it fails transiently and the policy allows.

    Args:
        action: What to run; must be safe to run again (idempotent).
        is_transient: Whether an exception may go away by itself (connection refused or reset,
            UNAVAILABLE, 5xx, timeouts). Anything else is raised at once.
        policy: Attempts, back-off and the bound on total time.
        sleep, clock, rng: Injected for tests.

    Returns:
        What `action` returned.

    Raises:
        The last exception: a permanent one at once, a transient one when attempts or time run
        out.
    """
    rng = rng or random.Random()
    started = clock()
    delays = policy.delays(rng)
    attempted = 0
    while True:
        try:
            attempted += 1
            return action()
        except Exception as error:
            if not is_transient(error):
                raise
            delay = next(delays, None)
            if delay is None:
                raise
            if attempted >= policy.minimum_attempts and (
                clock() - started + delay > policy.total_seconds
            ):
                raise
        sleep(delay)
