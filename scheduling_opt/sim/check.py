"""Checking and applying a policy's decision against the cluster.

Every rule is checked before anything of that step changes, and a breach
raises :class:`~scheduling_opt.sim.policy.PolicyError` naming the policy,
the time and the job: a start of a job that is not pending (not yet
submitted, running, or done: so each job completes once, after its
submission), a placement on servers that do not exist or lack the free
GPUs, a gang broken (not all of the job's GPUs, or more), a preemption or
resize of a job that is not running, a speed factor that is not finite and
positive or set on a job neither pending nor running. GPU sharing
(sim/sharing.py): an opportunistic start (``share``) beyond the free
opportunistic slots, a resize of an opportunistic job, an upgrade of a job
that is not a running opportunistic job or whose GPUs an exclusive job
holds, exact GPUs (``gpus``) that are taken in the job's slot, off its
placement, or named for a job this decision does not start.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from scheduling_opt.sim.cluster import FreeMap, Placement
from scheduling_opt.sim.policy import PENDING, RUNNING, Decision
from scheduling_opt.sim.sharing import EXCLUSIVE, OPPORTUNISTIC, Gpu
from scheduling_opt.sim.state import JobState

if TYPE_CHECKING:
    from scheduling_opt.sim.engine import Engine


def _size(
    engine: Engine, st: JobState, placement: Placement, what: str, free: FreeMap | None = None
) -> None:
    n = 0
    last = -1
    for s, g in placement:
        if s <= last:
            raise engine.fail(st, f"{what}: servers must be distinct and ascending")
        last = s
        n += g
    job = st.job
    if not job.min_gpus <= n <= job.max_gpus:
        want = f"{job.gpus}" if job.min_gpus == job.max_gpus else f"{job.min_gpus}..{job.max_gpus}"
        raise engine.fail(st, f"{what}: gang of {want} GPUs broken, placement {placement} has {n}")
    if not (free or engine.freemap).fits(placement):
        raise engine.fail(st, f"{what}: placement {placement} exceeds the free GPUs")


def _state(engine: Engine, index: object, what: str) -> JobState:
    if not isinstance(index, int) or not 0 <= index < len(engine.states):
        raise engine.fail(None, f"{what}: no job with index {index!r}")
    return engine.states[index]


def apply_decision(engine: Engine, decision: Decision) -> None:
    """Apply ``decision``: preemptions, capacity changes, resizes, starts, each checked."""
    for index in decision.preempt:
        st = _state(engine, index, "preempt")
        if st.status != RUNNING:
            raise engine.fail(st, "preempted but not running")
        engine.stop(st)
    for server, gpus in decision.capacity:
        if not 0 <= server < len(engine.cluster.servers) or gpus < 0:
            raise engine.fail(None, f"capacity change ({server}, {gpus}): no such server or < 0")
        engine.set_capacity(server, gpus)
    for index, factor in decision.rate:
        st = _state(engine, index, "rate")
        if st.status not in (PENDING, RUNNING):
            raise engine.fail(st, "speed factor set but not pending or running")
        if not (isinstance(factor, (int, float)) and 0.0 < factor < math.inf):
            raise engine.fail(st, f"speed factor {factor!r} is not finite and > 0")
        engine.set_factor(st, float(factor))
    for index in decision.upgrade:
        st = _state(engine, index, "upgrade")
        why = engine.sharing.upgrade(engine, st)
        if why is not None:
            raise engine.fail(st, why)
    exact = _exact(engine, decision)
    for index, placement in decision.resize:
        st = _state(engine, index, "resize")
        if st.status != RUNNING:
            raise engine.fail(st, "resized but not running")
        if st.layer == OPPORTUNISTIC:
            raise engine.fail(st, "resized but opportunistic (stop and share it again)")
        # Its own GPUs count as free for the new placement (a job may grow in
        # place); a failed check aborts the run, so nothing is restored.
        st.settle(engine.now)
        engine.release(st)
        del engine.running[st.index]
        _size(engine, st, placement, "resize")
        engine.freemap.take(placement)
        engine.launch(st, placement, resumed=True)
    for index, placement in decision.starts:
        st = _state(engine, index, "start")
        if st.status != PENDING:
            state = {0: "not submitted yet", RUNNING: "already running"}.get(st.status, "done")
            raise engine.fail(st, f"started but {state}")
        _size(engine, st, placement, "start")
        chosen = _gpus(engine, st, EXCLUSIVE, placement, exact)
        engine.freemap.take(placement)
        del engine.pending[st.index]
        engine.launch(st, placement, resumed=st.first_start == st.first_start, gpus=chosen)
    for index, placement in decision.share:
        st = _state(engine, index, "share")
        if st.status != PENDING:
            state = {0: "not submitted yet", RUNNING: "already running"}.get(st.status, "done")
            raise engine.fail(st, f"shared but {state}")
        _size(engine, st, placement, "share", engine.sharing.guests)
        chosen = _gpus(engine, st, OPPORTUNISTIC, placement, exact)
        engine.sharing.guests.take(placement)
        del engine.pending[st.index]
        st.layer = OPPORTUNISTIC
        engine.launch(st, placement, resumed=st.first_start == st.first_start, gpus=chosen)
    if exact:
        index = next(iter(exact))
        raise engine.fail(_state(engine, index, "gpus"), "gpus: named but not started or shared")


def _exact(engine: Engine, decision: Decision) -> dict[int, tuple[Gpu, ...]]:
    out: dict[int, tuple[Gpu, ...]] = {}
    for index, gpus in decision.gpus:
        st = _state(engine, index, "gpus")
        if index in out:
            raise engine.fail(st, "gpus: named twice")
        out[index] = tuple(gpus)
    return out


def _gpus(
    engine: Engine,
    st: JobState,
    layer: int,
    placement: Placement,
    exact: dict[int, tuple[Gpu, ...]],
) -> tuple[Gpu, ...] | None:
    """The exact GPUs named for ``st`` (checked and consumed), or None."""
    gpus = exact.pop(st.index, None)
    if gpus is None:
        return None
    why = engine.sharing.valid(layer, placement, gpus)
    if why is not None:
        raise engine.fail(st, f"gpus: {why}")
    return gpus
