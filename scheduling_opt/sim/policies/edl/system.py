"""EDL's runtime around Elastic-Tiresias: what a resize costs, and stragglers removed.

Scaling costs (EDL (TPDS '22) §6.1, §2.3). A resize stops the job's
training for a while, holding its GPUs (the engine's ``Decision.stall``).
EDL scales in by graceful exit (no stop) and scales out with a stop to
broadcast the model to the new workers, under a second in every case of
Fig. 10 (:data:`EDL_SCALE_OUT`, the bound); Stop-Resume checkpoints and
restarts the job at the new size either way, more than 30 s (§1; §2.3's
worked example takes 30 s, Fig. 4b measures 40 to over 60 s:
:data:`STOP_RESUME`, the lower figure). A migration (the same workers on
other servers, §5) costs a scale-out.

Stragglers (§5.2, §6.2, Fig. 13b). The model: each start of a job on at
least two workers has, with probability ``rate`` (drawn per job and start
from a seeded generator, so a run is reproducible), one worker slowed to
``speed`` of the others (Fig. 13b: 75%); synchronous training waits for
it, so the whole job runs at ``speed`` (``Decision.rate``). EDL's leader
sees each worker's mini-batch time; the workers' times over the last
``window`` mini-batches go to
:func:`~scheduling_opt.policies.edl.stragglers.straggler_scale_in` (slower
than ``factor`` x the median in each: §5.2's 1.2 and 10), and a worker it
names is removed by one scale-in ``removal`` seconds later (§6.2: within
5 s), never below the job's minimum. The job then runs on one worker
fewer at full speed; the scheduler's expansion may give it a worker back
later (§5.2's replacement). A straggler leaves with its job's preemption
(a restart gets new workers). The paper gives no rate of stragglers in a
cluster: ``rate`` is a documented choice (0 by default: the traces record
none).

O(1) per job and call, plus O(window x workers) once per straggler.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from scheduling_opt.model import Job
from scheduling_opt.policies.edl.stragglers import straggler_scale_in

#: EDL §6.1, Fig. 10: a scale-out stops the job for less than a second in every case.
EDL_SCALE_OUT = 1.0
#: EDL §6.1: a scale-in by graceful exit stops nothing.
EDL_SCALE_IN = 0.0
#: EDL §1, §2.3: Stop-Resume stops a job for more than 30 s per adjustment, in or out.
STOP_RESUME = 30.0
#: The scaling mechanisms: (scale-out, scale-in) stop in seconds.
SCALING = {"edl": (EDL_SCALE_OUT, EDL_SCALE_IN), "stop-resume": (STOP_RESUME, STOP_RESUME)}
#: Fig. 13b: the straggler computes at 75% of a normal worker's speed.
STRAGGLER_SPEED = 0.75
#: A normal mini-batch, seconds: §4 says "a few hundred milliseconds" (a documented choice).
MINIBATCH_SECONDS = 0.5
#: §6.2: the straggler removed within 5 s of its detection.
REMOVAL_SECONDS = 5.0


@dataclass(frozen=True, slots=True)
class Costs:
    """Stops of a resize, in trace units: ``out`` to add workers (or migrate), ``inward`` to remove.

    Examples
    --------
    >>> c = Costs.of("stop-resume", 60.0)
    >>> c.stop(4, 6), c.stop(6, 4), c.stop(4, 4), Costs.of("edl", 60.0).stop(6, 4)
    (0.5, 0.5, 0.5, 0.0)
    """

    out: float
    inward: float

    @classmethod
    def of(cls, scaling: str, unit_seconds: float) -> Costs:
        """The costs of ``scaling`` (``edl``, ``stop-resume`` or ``free``) in trace units."""
        out, inward = SCALING.get(scaling, (0.0, 0.0))
        return cls(out / unit_seconds, inward / unit_seconds)

    def stop(self, before: int, after: int) -> float:
        """The stop of a resize from ``before`` to ``after`` workers (a migration when equal)."""
        return self.inward if after < before else self.out


class Stragglers:
    """The straggler model and EDL's detection and removal, per running job.

    Parameters
    ----------
    rate : float
        Probability that a start on >= 2 workers has a slowed worker.
    speed : float
        The slowed worker's speed relative to the others (0 < speed <= 1).
    factor, window : float, int
        The detection rule (§5.2: 1.2 and 10).
    mitigate : bool
        False: stragglers are never removed (the job runs slowed until it
        ends or is preempted).
    unit_seconds : float
        Seconds per trace unit.
    seed : int
        The draws' seed.

    Examples
    --------
    >>> s = Stragglers(1.0, 0.75, 1.2, 10, True, 1.0, 0)
    >>> s.onset(0, Job("a", 8, 16, 60.0), 16, now=0.0)  # slowed, removal due after 10 batches + 5 s
    0.75
    >>> round(s.due[0], 4)  # 10 x 0.5 / 0.75 + 5
    11.6667
    """

    def __init__(
        self,
        rate: float,
        speed: float,
        factor: float,
        window: int,
        mitigate: bool,
        unit_seconds: float,
        seed: int,
    ) -> None:
        self.rate, self.speed, self.factor, self.window = rate, speed, factor, window
        self.mitigate = mitigate
        self.unit = unit_seconds
        self.seed = seed
        self.starts: dict[int, int] = {}  # starts seen per job (the draw's key)
        self.slow: set[int] = set()  # running jobs with a straggler
        self.due: dict[int, float] = {}  # their removal times (mitigated ones)
        self.removed = 0

    def onset(self, i: int, job: Job, workers: int, now: float) -> float | None:
        """A start of job ``i`` on ``workers``: its speed factor when a worker is slowed, else None."""
        n = self.starts.get(i, 0)
        self.starts[i] = n + 1
        if workers < 2 or not random.Random(f"{self.seed}:{i}:{n}").random() < self.rate:
            return None
        self.slow.add(i)
        if self.mitigate and self.removable(job, workers):
            # The straggler's mini-batches are 1 / speed of the others'; the
            # leader judges after `window` of them, then removes it.
            batches = self.window * MINIBATCH_SECONDS / self.speed
            self.due[i] = now + (batches + REMOVAL_SECONDS) / self.unit
        return self.speed

    def removable(self, job: Job, workers: int) -> bool:
        """Whether §5.2's rule names the straggler and the job may lose a worker."""
        t = MINIBATCH_SECONDS
        batch = {f"w{k}": t for k in range(workers - 1)}
        batch["slow"] = t / self.speed
        found = straggler_scale_in(job, workers, [batch] * self.window, self.factor, self.window)
        return bool(found)

    def gone(self, i: int) -> None:
        """Job ``i`` stopped running (preempted or finished): its straggler goes with it."""
        self.slow.discard(i)
        self.due.pop(i, None)

    def ripe(self, now: float) -> list[int]:
        """The jobs whose straggler is removed now, in index order."""
        if not self.due:
            return []
        out = sorted(i for i, t in self.due.items() if t <= now + 1e-9)
        for i in out:
            del self.due[i]
            self.slow.discard(i)
        return out

    def next_due(self) -> float | None:
        """The next removal time (None: none pending)."""
        return min(self.due.values()) if self.due else None


def make_room(
    free: Sequence[int],
    running: Iterable[tuple[int, Sequence[tuple[int, int]]]],
    fits: Callable[[list[int]], list[tuple[int, int]] | None],
) -> tuple[int, int, list[int], list[tuple[int, int]]] | None:
    """§5's worker migration to reduce fragmentation: move a spread job onto one server so a gang fits.

    The running jobs spread over several servers are tried with the fewest
    GPUs first (ties by index); each moves, if any server can hold all its
    workers, onto the one that holds most of them already (then the one
    with the fewest free GPUs), and the first move after which ``fits``
    places the waiting gang is taken. EDL names the mechanism (a scale-in
    and a scale-out merged into one migration, §5; its cost is a
    scale-out's, §6.2), not when a scheduler should use it: this rule is
    ours. O(R log R + R (S + G)) for R running jobs, S servers and a gang
    test of cost G.

    Parameters
    ----------
    free : sequence of int
        Free GPUs per server after the call's other decisions.
    running : iterable of (int, placement)
        The jobs that may move, with their ``(server, GPUs)`` rows.
    fits : callable
        ``fits(free)``: where the waiting gang goes on ``free`` (None: it
        does not fit); may change the list it is given.

    Returns
    -------
    tuple or None
        ``(job, server, free after the move, the gang's rows)``, or None.

    Examples
    --------
    >>> # Two 4-GPU servers, job 7 on 2 + 2: moved onto server 0, a 4-GPU gang fits on server 1.
    >>> fit4 = lambda f: [(1, 4)] if f[1] >= 4 else None
    >>> make_room([2, 2], [(7, ((0, 2), (1, 2)))], fit4)
    (7, 0, [0, 4], [(1, 4)])
    """
    if not sum(free):
        return None
    spread = sorted((sum(g for _, g in p), i, p) for i, p in running if len(p) > 1)
    for n, i, place in spread:
        own = dict(place)
        fitting = [s for s in range(len(free)) if free[s] + own.get(s, 0) >= n]
        if not fitting:
            continue
        t = min(fitting, key=lambda s: (-own.get(s, 0), free[s], s))
        after = list(free)
        for s, g in place:
            after[s] += g
        after[t] -= n
        where = fits(list(after))
        if where is not None:
            return i, t, after, where
    return None
