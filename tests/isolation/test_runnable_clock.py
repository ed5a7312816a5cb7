"""The bulk encoder's deadline clock (app/schedstat.py): wall time less the time a process
waited for a CPU.

Real processes: a CPU burner at nice 19 pinned to one CPU beside a hog at our own priority
waits on the run queue, and the clock leaves that wait out; a stopped process waits for no
CPU, and its clock is the wall clock. The assertions relate readings to each other (the
clock's wait to the schedstat counters read around it, its time to the wall clock read
around it), never to a duration. The bookkeeping (threads that come and go, /proc that
cannot be read) runs on readings given to it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from app.schedstat import MIN_RATE, NS, RunnableClock, run_queue_waits_ns, thread_times_ns
from tests.isolation.test_encoder_priority import wait_for

needs_schedstat = pytest.mark.skipif(
    not hasattr(os, "sched_setaffinity") or thread_times_ns(os.getpid()) is None,
    reason="no /proc/<pid>/task/<tid>/schedstat here (the clock is the wall clock)",
)


def one_cpu() -> int:
    return min(os.sched_getaffinity(0))


def pin(pid: int, cpus: set[int]) -> None:
    """Every thread of ``pid`` onto ``cpus`` (affinity is per thread)."""
    for tid in os.listdir(f"/proc/{pid}/task"):
        os.sched_setaffinity(int(tid), cpus)


def cpu_ns(pid: int) -> int:
    return sum(cpu for cpu, _wait in (thread_times_ns(pid) or {}).values())


@contextmanager
def burner(cpu: int, *, nice: int = 0) -> Iterator[subprocess.Popen[bytes]]:
    """A process that spins on ``cpu`` at ``nice`` more than ours, running once yielded."""
    process = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        pin(process.pid, {cpu})
        if nice:
            os.setpriority(os.PRIO_PROCESS, process.pid, min(19, os.nice(0) + nice))
        wait_for(lambda: cpu_ns(process.pid) > 0, "the burner to run")
        yield process
    finally:
        process.kill()
        process.wait()


def max_wait_ns(before: dict[int, int] | None, after: dict[int, int] | None) -> int:
    assert before is not None and after is not None
    return max(after[tid] - before.get(tid, 0) for tid in after)


@needs_schedstat
def test_the_clock_leaves_out_the_wait_of_a_process_starved_of_cpu() -> None:
    cpu = one_cpu()
    with burner(cpu), burner(cpu, nice=19) as starved:
        outer_before = run_queue_waits_ns(starved.pid)
        wall_before = time.monotonic()
        clock = RunnableClock(starved.pid)
        elapsed = 0.0

        def waited() -> bool:
            nonlocal elapsed
            elapsed = clock.elapsed()
            return clock.waited_s >= 0.5

        wait_for(waited, "the starved process to wait on the run queue")
        wall = time.monotonic() - wall_before
        outer = max_wait_ns(outer_before, run_queue_waits_ns(starved.pid))
    # the clock counted less than the wall clock by the wait it measured, and that wait is
    # what the kernel counted for the process in between
    assert clock.waited_s > 0
    assert elapsed <= wall - clock.waited_s + 1e-6
    assert clock.waited_s <= outer / NS + 1e-6
    assert elapsed >= 0


@needs_schedstat
def test_a_stopped_process_waits_for_no_cpu_and_its_clock_is_the_wall_clock() -> None:
    cpu = one_cpu()
    with burner(cpu), burner(cpu, nice=19) as stopped:
        os.kill(stopped.pid, signal.SIGSTOP)
        stat = Path(f"/proc/{stopped.pid}/stat")
        wait_for(lambda: stat.read_text().rsplit(")", 1)[1].split()[0] == "T", "the stop")
        clock = RunnableClock(stopped.pid)
        wait_for(lambda: clock.elapsed() >= 0.5, "the clock to run")
        # contended as it is, a stopped process is on no run queue
        assert clock.waited_s == 0.0
        os.kill(stopped.pid, signal.SIGCONT)


class Readings:
    """Schedstat readings given in turn, and a wall clock moved by hand."""

    def __init__(self, *readings: dict[int, int] | None) -> None:
        self.readings = list(readings)
        self.now = 100.0

    def read(self, _pid: int) -> dict[int, int] | None:
        return self.readings.pop(0)

    def clock(self) -> float:
        return self.now


def test_a_thread_that_ends_keeps_its_wait_and_a_new_one_counts_from_zero() -> None:
    s = NS
    readings = Readings(
        {1: 10 * s, 2: 3 * s},
        {1: 11 * s, 2: 6 * s},  # thread 2 waited 3 s
        {1: 12 * s, 3: 1 * s},  # thread 2 ended (its 3 s stay), thread 3 is new
        {1: 12 * s, 3: 5 * s},  # thread 3 waited 5 s since it started
        None,  # /proc could not be read: the last readings stand
    )
    clock = RunnableClock(7, read=readings.read, clock=readings.clock)
    readings.now += 10
    assert clock.elapsed() == 7.0 and clock.waited_s == 3.0
    readings.now += 1
    assert clock.elapsed() == 8.0 and clock.waited_s == 3.0
    readings.now += 1
    # the largest wait of one thread, not the sum (threads waiting at once count once)
    assert clock.elapsed() == 7.0 and clock.waited_s == 5.0
    readings.now += 1
    assert clock.elapsed() == 8.0 and clock.waited_s == 5.0


def test_without_schedstat_the_clock_is_the_wall_clock() -> None:
    readings = Readings(None)
    clock = RunnableClock(7, read=readings.read, clock=readings.clock)
    readings.now += 4
    # unread at the start, a later reading would count waits from before the clock began
    assert clock.elapsed() == 4.0 and clock.waited_s == 0.0
    # a wait never takes the clock below MIN_RATE of the wall clock (nor beyond it): a
    # process that spins while hung on a host that stays busy is still stopped in the end
    readings = Readings({1: 0}, {1: 50 * NS}, {1: 995 * NS})
    clock = RunnableClock(7, read=readings.read, clock=readings.clock)
    readings.now += 4
    assert clock.elapsed() == pytest.approx(4 * MIN_RATE)
    assert clock.waited_s == pytest.approx(4 * (1 - MIN_RATE))
    readings.now += 996  # it waited 995 of 1,000 s: counted 1,000 * MIN_RATE, not 5
    assert clock.elapsed() == pytest.approx(1000 * MIN_RATE)


def test_a_process_that_is_gone_has_no_readings() -> None:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    assert thread_times_ns(process.pid) is None
    assert RunnableClock(process.pid).elapsed() >= 0
