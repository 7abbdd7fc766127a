"""The retry policy (with a fake clock and sleeper) and the classification of server faults."""

from __future__ import annotations

import random
from typing import Any

import pytest

from stitcher.errors import StitcherError
from stitcher.faults import (
    RequestRefused,
    SchemaChanged,
    ServerFault,
    ServerLost,
    ServerRefusesWrites,
    classify,
    is_transient,
    server_fault,
)
from stitcher.retry import NO_RETRY, RetryPolicy, call_with_retries


class FakeTime:
    """A clock that only moves when slept on."""

    def __init__(self) -> None:
        self.now = 100.0
        self.slept: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds

    def retry(self, action: Any, **options: Any) -> Any:
        """`call_with_retries` on this clock, retrying Transient errors only."""
        return call_with_retries(
            action, is_transient=transient_only, sleep=self.sleep, clock=self.clock, **options
        )


class Flaky:
    """Fails with the given errors in turn, then returns "ok"."""

    def __init__(self, *errors: Exception) -> None:
        self.errors = list(errors)
        self.calls = 0

    def __call__(self) -> str:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return "ok"


class Transient(Exception):
    pass


class Permanent(Exception):
    pass


def transient_only(error: BaseException) -> bool:
    return isinstance(error, Transient)


def test_transient_failures_are_retried_until_success() -> None:
    fake = FakeTime()
    action = Flaky(Transient(), Transient())
    result = fake.retry(action, rng=random.Random(1))
    assert result == "ok" and action.calls == 3 and len(fake.slept) == 2


def test_a_permanent_failure_is_raised_at_once_without_waiting() -> None:
    fake = FakeTime()
    action = Flaky(Permanent("vector length"))
    with pytest.raises(Permanent):
        fake.retry(action)
    assert action.calls == 1 and fake.slept == []


def test_attempts_are_bounded() -> None:
    fake = FakeTime()
    action = Flaky(*[Transient() for _ in range(10)])
    policy = RetryPolicy(attempts=4, base_delay=0.1, max_delay=1.0, total_seconds=100)
    with pytest.raises(Transient):
        fake.retry(action, policy=policy)
    assert action.calls == 4 and len(fake.slept) == 3


def test_total_time_is_bounded_including_slow_attempts() -> None:
    fake = FakeTime()

    def slow_failure() -> str:
        fake.now += 4.0  # each attempt itself takes 4 s (a timeout)
        raise Transient()

    policy = RetryPolicy(attempts=100, base_delay=1.0, max_delay=2.0, total_seconds=15)
    with pytest.raises(Transient):
        fake.retry(slow_failure, policy=policy, rng=random.Random(3))
    # No wait started that would have ended after the bound.
    assert fake.now - 100.0 <= 15 + 4.0
    assert len(fake.slept) < 99


def test_back_off_grows_exponentially_and_is_jittered() -> None:
    policy = RetryPolicy(attempts=8, base_delay=0.5, max_delay=8.0)
    runs = [list(policy.delays(random.Random(seed))) for seed in range(200)]
    for n in range(7):
        cap = min(8.0, 0.5 * 2**n)
        waits = [run[n] for run in runs]
        assert all(0.0 <= w <= cap for w in waits)
        # Full jitter: spread over the whole interval, not a fixed value.
        assert min(waits) < 0.25 * cap and max(waits) > 0.75 * cap
    assert all(len(run) == 7 for run in runs)


def test_no_retry_policy_tries_once() -> None:
    fake = FakeTime()
    action = Flaky(Transient())
    with pytest.raises(Transient):
        fake.retry(action, policy=NO_RETRY)
    assert action.calls == 1


def test_invalid_policies_are_refused() -> None:
    with pytest.raises(ValueError):
        RetryPolicy(attempts=0)
    with pytest.raises(ValueError):
        RetryPolicy(base_delay=-1)


# --- classification ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        (ConnectionRefusedError(111, "Connection refused"), "connection"),
        (ConnectionResetError(104, "Connection reset by peer"), "connection"),
        (TimeoutError("timed out"), "timeout"),
        (Exception("write /data/x: no space left on device"), "read_only"),
        (Exception("shard Stitcher_abc is READONLY"), "read_only"),
        (Exception("vector lengths don't match: 384 vs 3"), "refused"),
        (
            Exception("invalid integer property 'start' on class 'T': requires an integer"),
            "schema",
        ),
        (Exception("no such prop with name 'chunk_hash' found in class 'T'"), "schema"),
    ],
)
def test_classification(error: Exception, kind: str) -> None:
    assert classify(error).kind == kind


def test_only_connection_timeout_and_5xx_are_transient() -> None:
    """By type and status (tests/test_fault_types.py has the client's classes)."""
    from stitcher.store.weaviate.faults import kind_of_client_error
    from tests.test_fault_types import status_error

    assert is_transient(ConnectionResetError())
    assert is_transient(status_error(500, "oops"), kind_of_client_error)
    assert not is_transient(status_error(422, "validation"), kind_of_client_error)
    assert not is_transient(Exception("no space left on device"))
    assert not is_transient(Exception("invalid text property 'start' on class 'T'"))


def test_per_object_messages_are_classified_too() -> None:
    assert classify("shard is read-only").kind == "read_only"
    assert classify("context deadline exceeded (timeout)").kind == "timeout"
    assert classify("vector lengths don't match").kind == "refused"


def test_faults_are_one_line_stitcher_errors_naming_server_and_progress() -> None:
    multi_line = Exception("first line of the reason\n  second line\n  third")
    fault = server_fault(
        classify(ConnectionRefusedError("Connection refused")),
        url="http://127.0.0.1:8080",
        doing="writing",
        collection="Docs",
    )
    assert isinstance(fault, ServerLost) and isinstance(fault, StitcherError)
    assert fault.exit_status == 1
    done = fault.with_progress(12, 5, 2)
    assert isinstance(done, ServerLost)
    text = str(done)
    assert "\n" not in text
    assert text.startswith("lost the connection to Weaviate at http://127.0.0.1:8080 while writing")
    assert "12 document(s) stored, 5 not stored, 2 not yet checked" in text
    assert text.endswith("run again to finish")

    disk = server_fault(
        classify(Exception("no space left on device")),
        url="http://h:1",
        doing="writing",
        collection="Docs",
    )
    assert isinstance(disk, ServerRefusesWrites)
    assert "free disk space" in str(disk.with_progress(0, 3))

    schema = server_fault(classify(multi_line), url="http://h:1", doing="x", collection="Docs")
    assert isinstance(schema, RequestRefused) and "\n" not in str(schema)
    changed = server_fault(
        classify(Exception("invalid text property 'start' on class 'Docs'")),
        url="http://h:1",
        doing="writing",
        collection="Docs",
    )
    assert isinstance(changed, SchemaChanged) and isinstance(changed, ServerFault)


def test_an_aggregation_gets_one_more_attempt_after_a_timeout_spent_the_budget() -> None:
    """A request that waited out a dead replica's timeout spent the whole budget in one attempt;
    aggregations (no consistency level) try once more, where a live replica answers."""
    from stitcher.faults import past_a_dead_replica

    def timing_out_then_answering(fake: FakeTime, action: Flaky) -> Any:
        def attempt() -> str:
            if action.errors:
                fake.now += 60.0  # the server's query timeout
            return action()

        return attempt

    policy = RetryPolicy(attempts=6, base_delay=0.5, max_delay=8.0, total_seconds=20)
    for chosen, calls in ((policy, 1), (past_a_dead_replica(policy), 2)):
        fake, action = FakeTime(), Flaky(Transient())
        run = timing_out_then_answering(fake, action)
        if calls == 1:
            with pytest.raises(Transient):
                fake.retry(run, policy=chosen)
        else:
            assert fake.retry(run, policy=chosen) == "ok"
        assert action.calls == calls
    # Even a policy that never retries gives an aggregation its second attempt.
    assert len(list(past_a_dead_replica(NO_RETRY).delays(random.Random(0)))) == 1
