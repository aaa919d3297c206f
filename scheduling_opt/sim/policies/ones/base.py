"""What the ONES policies share: job tracks, the §3.3.2 limits, progress prediction, the update gate.

Per job the policy keeps a track (:class:`Track`): its batch model, its
batch-size limit R, its warm-up, the epochs counted, the samples it has
processed. Each call (:meth:`OnesBase.decide`) first books what happened
(jobs that finished feed the progress regression, new jobs get a track,
limits follow the epochs ended), then deploys a new schedule only when the
update gate is open, and returns when to be called again.

Update gate (``update``, ONES §3.2.2 Update): ``"epoch"`` (the paper)
deploys a new schedule only after every running job has finished at least
one epoch since the last deployment, read as: reached an epoch end (every
||D|| samples counted from its first sample) after it; with no job running
the gate is open. Between deployments arrivals wait and freed GPUs stay
idle; the policy wakes itself at the gate's opening (the last of the
running jobs' next epoch ends, computed from the engine's completion time
and speed, so a stall is counted). ``"epoch-fill"`` (ours, not the
paper's): the same gate, and between deployments waiting jobs start on
idle GPUs (each subclass's :meth:`OnesBase.fill`: no running job is
changed, so none of the gate's reasons applies; ONES' §1 promises an
immediate response when GPUs free up); a job so started does not hold the
gate. ``"event"`` (before): a deployment at every arrival, completion and
``interval`` tick. The search runs only at
deployments (its generations there stand for ONES' continuous evolution
between them).

Progress prediction (``progress``): ``"regression"`` (the paper, §3.2.1
Eq. 6): beta from ONES' online regression (:mod:`.predict`), refitted at
every completion; until it has been fitted (fewer than four completed
jobs) the task's prior below. ``"prior"`` (before): beta = the task's prior
mean epochs minus the epochs done, clipped to >= 1.

Samples processed: the job's work done at the throughput it ran at; with
the convergence option (``epoch_limit``,
:func:`~scheduling_opt.sim.ones_workload.epochs_factor`) a job past the
batch-size limit needs more epochs, so its work advances slower than its
samples, and the track integrates samples piecewise between the policy's
batch changes (the only times its batch changes).

Limit policies (§3.3.2, :mod:`~scheduling_opt.batch_size.limits`): on
arrival R = min(B0, m) and the job is in warm-up (one GPU) until it has
run at a call; at each epoch end of a running job R = ceil(2R / ceil(sigma
T + 1)) (scale-up, and scale-down for a job that ran T seconds; sigma = the
arrival rate, 1/30 s); a job still waiting after a deployment halves R
(resume) at the next one. Reading chosen where the paper is silent: R
never drops below the Start limit min(B0, m) (read literally, scale-down
would push a long job to one sample per step) nor rises above
``max_gpus`` x m; limits are updated at the calls, for every epoch ended
since the last one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from scheduling_opt.batch_size import after_epoch, resume_limit, start_limit
from scheduling_opt.sim.ones_workload import JobModel, job_model
from scheduling_opt.sim.policies.ones.predict import OnlineProgress, epochs_done
from scheduling_opt.sim.protocol import Decision, JobView, View

#: The update rules: ONES' (after every running job's epoch) and every event plus a tick.
UPDATES = ("epoch", "epoch-fill", "event")
#: The progress predictors: ONES' online regression and the task's fixed prior.
PROGRESS = ("regression", "prior")


@dataclass(slots=True)
class Track:
    """What the policy keeps per job between calls (ONES' job state)."""

    model: JobModel
    limit: int
    warm: bool = True
    epochs: int = 0  # epochs ended at the last count of the limits
    rejected: bool = False
    total: float = 0.0  # samples to convergence at any batch within the limit (work x X0)
    batch: int = 0  # the global batch in force (0: not running)
    mult: float = 1.0  # epochs_factor of that batch
    samples_base: float = 0.0  # samples and work done when it was set
    attained_base: float = 0.0
    gate: int = -1  # epochs ended when the last deployment left it running


@dataclass(frozen=True, slots=True)
class Deployed:
    """A deployment: the decision (no wake-up yet) and, per job running after it, its samples/s."""

    decision: Decision
    rates: tuple[tuple[JobView, float], ...]


class OnesBase:
    """Shared state of the ONES policies: tracks, limits, the predictor, the update gate.

    Subclasses implement :meth:`deploy` (the schedule of one update).
    """

    name = "ones-base"

    def __init__(
        self,
        *,
        interval: float,
        sigma: float,
        update: str = "epoch",
        progress: str = "regression",
        history: int = 1000,
        epoch_limit: float | None = None,
        epoch_growth: float = 1.0,
        seed: int = 0,
    ) -> None:
        if not interval > 0 or not sigma >= 0:
            raise ValueError("interval must be > 0 and sigma >= 0")
        if update not in UPDATES or progress not in PROGRESS:
            raise ValueError(f"update must be one of {UPDATES}, progress one of {PROGRESS}")
        if epoch_limit is not None and not epoch_limit >= 1:
            raise ValueError(f"epoch_limit must be >= 1, got {epoch_limit!r}")
        self.interval = interval
        #: A nominal call period for the resource model (sim/limits.py): the
        #: tick, or about the gate's epoch ends (the slowest running job's).
        self.period = interval
        self.sigma = sigma
        self.update = update
        self.epoch_limit = epoch_limit
        self.epoch_growth = epoch_growth
        self.predictor = OnlineProgress(history, seed) if progress == "regression" else None
        self.tracks: dict[int, Track] = {}
        self.last = -math.inf
        self.calls = 0
        self.solver_seconds = 0.0
        self.deploys = 0
        self.waits = 0

    # ------------------------------------------------------------------ jobs

    def _tick(self, now: float) -> float:
        return (math.floor(now / self.interval + 1e-9) + 1) * self.interval

    def samples(self, st: JobView, now: float) -> float:
        """Samples ``st`` has processed by ``now``."""
        tr = self.tracks[st.index]
        done = min(st.attained(now), st.job.work)
        if self.epoch_limit is None:
            return tr.total * (done / st.job.work)
        return tr.samples_base + (done - tr.attained_base) * tr.model.reference * tr.mult

    def set_batch(self, st: JobView, batch: int, now: float, mult: float = 1.0) -> None:
        """Record that ``st`` runs at global batch ``batch`` from now (0: stopped)."""
        tr = self.tracks[st.index]
        tr.samples_base = self.samples(st, now)
        tr.attained_base = min(st.attained(now), st.job.work)
        tr.batch, tr.mult = batch, mult

    def prior(self, st: JobView, now: float) -> float:
        """The task's prior mean epochs minus the epochs done (>= 1)."""
        tr = self.tracks[st.index]
        done = self.samples(st, now) / tr.model.epoch_size
        return max(tr.model.task.prior_epochs - done, 1.0)

    def beta(self, st: JobView, now: float) -> float:
        """Predicted epochs to go: the fitted regression's, else the task's prior."""
        if self.predictor is not None:
            tr = self.tracks[st.index]
            fitted = self.predictor.beta(tr.model, self.samples(st, now))
            if fitted is not None:
                return fitted
        return self.prior(st, now)

    def _refresh(self, view: View) -> list[JobView] | None:
        """Book the call; the unfinished jobs, or None for a follow-up call."""
        now = view.now
        for st in view.finished:
            tr = self.tracks.get(st.index)
            if tr is not None and self.predictor is not None:
                self.predictor.add_job(tr.model, self.samples(st, now))
            self.tracks.pop(st.index, None)
        if self.predictor is not None:
            self.predictor.refit()
        if now == self.last and not (view.arrived or view.finished or view.evicted):
            return None  # the follow-up of our own preemptions: nothing new
        self.last = now
        for st in view.arrived:
            model = job_model(st.job)
            limit = start_limit(model.batch0, model.task.max_local)
            self.tracks[st.index] = Track(model, limit, total=model.total_samples(st.job.work))
        live = sorted((*view.pending.values(), *view.running.values()), key=lambda s: s.index)
        for st in live:
            tr = self.tracks[st.index]
            cap = max(st.job.max_gpus * tr.model.task.max_local, tr.model.batch0)
            if tr.warm:
                if st.executed(now) <= 0:
                    continue  # still waiting for its first GPU: one GPU's batch
                tr.warm = False
            if st.placement:
                epochs = epochs_done(self.samples(st, now), tr.model.epoch_size)
                for _ in range(tr.epochs, epochs):
                    tr.limit = after_epoch(tr.limit, st.executed(now), self.sigma, cap)
                tr.epochs = max(tr.epochs, epochs)
            tr.limit = max(tr.limit, tr.model.batch0)
        return live

    def _resume(self, live: list[JobView]) -> None:
        """§3.3.2 Resume: a job still waiting after the last deployment halves R (not below B0)."""
        for st in live:
            tr = self.tracks[st.index]
            if not st.placement and not tr.warm and tr.rejected:
                tr.limit = max(resume_limit(tr.limit, rejected=True), tr.model.batch0)

    # ------------------------------------------------------------------ the gate

    def gate_open(self, view: View) -> bool:
        """Whether a new schedule may be deployed now (``update``; module docstring)."""
        if self.update == "event":
            return True
        now = view.now
        for st in view.running.values():
            tr = self.tracks[st.index]
            if epochs_done(self.samples(st, now), tr.model.epoch_size) <= tr.gate:
                return False
        return True

    def _time_at(self, st: JobView, samples: float, now: float) -> float:
        """When running ``st`` reaches ``samples`` at its speed (its completion if sooner)."""
        tr = self.tracks[st.index]
        if self.epoch_limit is None:
            work = samples / tr.total * st.job.work
        else:
            work = tr.attained_base + (samples - tr.samples_base) / (tr.model.reference * tr.mult)
        left = st.remaining(now) + st.attained(now)  # work + start overheads
        if work >= st.job.work:
            return st.end
        # attained(t) = left - speed (end - t) once any stall is over (sim/state.py).
        return st.end - (left - work) / st.speed

    def gate_time(self, view: View) -> float:
        """When the gate opens: the last of the running jobs' next epoch ends (> now)."""
        now = view.now
        t = now
        for st in view.running.values():
            tr = self.tracks[st.index]
            if epochs_done(self.samples(st, now), tr.model.epoch_size) > tr.gate:
                continue
            t = max(t, self._time_at(st, (tr.gate + 1) * tr.model.epoch_size, now))
        return t if t > now else math.nextafter(now, math.inf)

    def _wake(self, view: View) -> float | None:
        """The wake-up of a call that deploys nothing."""
        if self.update == "event":
            return self._tick(view.now)
        if view.running and not self.gate_open(view):
            return self.gate_time(view)
        return self._tick(view.now) if view.pending else None

    def _deployed(self, view: View, done: Deployed) -> float | None:
        """Mark a deployment; its wake-up: the tick, or the gate's estimated opening."""
        self.deploys += 1
        now = view.now
        if self.update == "event":
            return self._tick(now)
        stalls = dict(done.decision.stall)
        t = -math.inf
        for st, x in done.rates:
            tr = self.tracks[st.index]
            processed = self.samples(st, now)
            tr.gate = epochs_done(processed, tr.model.epoch_size)
            left = (tr.gate + 1) * tr.model.epoch_size - processed
            t = max(t, now + stalls.get(st.index, 0.0) + left / x)
        if t > now:
            return t  # estimated: a restart cost the engine adds makes it early, never late
        return self._tick(now) if view.pending else None

    # ------------------------------------------------------------------ a call

    def deploy(self, view: View, live: list[JobView]) -> Deployed:
        """The schedule of one update (every unfinished job in ``live``)."""
        raise NotImplementedError

    def fill(self, view: View, live: list[JobView]) -> Deployed:
        """Starts of waiting jobs on idle GPUs between updates (``update="epoch-fill"``)."""
        raise NotImplementedError

    def decide(self, view: View) -> Decision:
        live = self._refresh(view)
        if live is None:
            return Decision(wake_at=self._wake(view))
        if not live:
            return Decision()
        if not self.gate_open(view):
            self.waits += 1
            opens = self.gate_time(view)
            if self.update != "epoch-fill" or not view.pending or not view.free_total:
                return Decision(wake_at=opens)
            filled = self.fill(view, live).decision
            for index, _ in filled.starts:
                self.tracks[index].gate = -1  # not in the deployed schedule: holds no gate
            return Decision(starts=filled.starts, rate=filled.rate, wake_at=opens)
        self._resume(live)
        done = self.deploy(view, live)
        d = done.decision
        return Decision(
            starts=d.starts,
            preempt=d.preempt,
            resize=d.resize,
            rate=d.rate,
            stall=d.stall,
            wake_at=self._deployed(view, done),
        )

    def stats(self) -> dict[str, float]:
        """Counters: solver calls and seconds, deployments, calls the gate held, fits."""
        out = {
            "calls": float(self.calls),
            "solver_seconds": self.solver_seconds,
            "deploys": float(self.deploys),
            "gate_waits": float(self.waits),
        }
        if self.predictor is not None:
            out.update(fits=float(self.predictor.fits), fit_seconds=self.predictor.seconds)
        return out
