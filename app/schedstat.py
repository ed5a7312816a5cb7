"""How long a process could have run: wall time less the time it waited for a CPU (Linux).

The bulk encoder process runs at ``nice`` 19 so that searches get the CPU first
(app/embeddings.py). On a host kept busy by searches it then spends most of its wall-clock
time waiting on a run queue, and a deadline in wall-clock time would take a slow but healthy
batch for a hung one. ``RunnableClock`` measures instead the time the process was not held
off the CPU: wall time less its run-queue wait.

The wait comes from ``/proc/<pid>/task/<tid>/schedstat``: per thread, "time on a CPU (ns),
time waiting on a run queue (ns), time slices". A process that is stopped (SIGSTOP), asleep
or deadlocked is on no run queue, so it accrues no wait and its clock runs as fast as the
wall clock: hang detection still fires for it.

Of the threads' waits, the largest is taken, not their sum: two threads waiting at the same
moment would count that moment twice, and a sum could exceed the wall time (a spinning,
starved process with several threads would then never look hung). With one busy thread
(the bulk process's default, one torch thread) the largest wait is that thread's own.

Where schedstat cannot be read (not Linux, /proc not readable, the process is gone), the
clock is the wall clock, as before. A thread that ends keeps its last reading. The kernel
adds a wait to the counter when the thread gets the CPU, so a wait in progress is not yet
counted and the clock is a little ahead until then (towards the wall clock: on the side of
calling a process hung). It never runs faster than the wall clock, nor slower than MIN_RATE
of it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

NS = 1_000_000_000
# However starved, the clock runs at least this share of the wall clock: a child that spins
# while hung on a host that stays busy gets a little CPU now and then, and its clock would
# otherwise hardly move; so it is stopped after at most 1 / MIN_RATE times its timeout (50:
# about 4 hours at the default 300 s). A healthy nice-19 child beside one busy nice-0 task
# gets about 1.4 % of a CPU, so at this floor it is stopped only for a batch that needs
# about 0.7 times the timeout in CPU time, which a healthy batch is far from.
MIN_RATE = 0.02


def thread_times_ns(pid: int) -> dict[int, tuple[int, int]] | None:
    """Per thread of process ``pid``: (ns on a CPU, ns waiting on a run queue), or None
    where nothing can be read. Threads that end while they are read are left out."""
    task_dir = f"/proc/{pid}/task"
    try:
        tids = os.listdir(task_dir)
    except OSError:  # not Linux, /proc not mounted or not ours to read, or pid gone
        return None
    times: dict[int, tuple[int, int]] = {}
    for tid in tids:
        try:
            with open(f"{task_dir}/{tid}/schedstat", encoding="ascii") as handle:
                fields = handle.read().split()
            times[int(tid)] = (int(fields[0]), int(fields[1]))
        except (OSError, ValueError, IndexError):  # the thread ended, or no schedstat
            continue
    return times or None


def run_queue_waits_ns(pid: int) -> dict[int, int] | None:
    """Per thread of process ``pid``: ns it waited on a run queue, or None (unreadable)."""
    times = thread_times_ns(pid)
    return None if times is None else {tid: wait for tid, (_cpu, wait) in times.items()}


class RunnableClock:
    """Seconds since it was made that process ``pid`` was not waiting for a CPU.

    ``elapsed()`` reads the process's threads; ``waited_s`` is the wait it took off at that
    reading. ``read`` and ``clock`` are for tests."""

    def __init__(
        self,
        pid: int,
        *,
        read: Callable[[int], dict[int, int] | None] = run_queue_waits_ns,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.pid = pid
        self._read = read
        self._clock = clock
        self._started = clock()
        # Unreadable at the start: a later reading would include waits from before this
        # clock began, so the clock stays the wall clock.
        self._baseline = read(pid)
        self._latest: dict[int, int] = dict(self._baseline or {})
        self.waited_s = 0.0

    def elapsed(self) -> float:
        wall = self._clock() - self._started
        if self._baseline is None:
            return wall
        waits = self._read(self.pid)
        if waits is not None:
            self._latest.update(waits)  # a thread that ended keeps its last reading
        # a thread that started after the baseline waited only since then
        waited_ns = max(
            (wait - self._baseline.get(tid, 0) for tid, wait in self._latest.items()),
            default=0,
        )
        self.waited_s = min(wall * (1.0 - MIN_RATE), max(0.0, waited_ns / NS))
        return wall - self.waited_s
