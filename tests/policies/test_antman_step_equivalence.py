"""The incremental AntMan step decides exactly what the first version decided.

``_reference_step`` is ``antman_step`` as first written (before issue 15's
speed-up): every pending guarantee job listed and sorted every free GPU of
every fitting server (``_free_for``), and every opportunistic worker re-sorted
every server's candidates. The new step keeps per-server free counts, lists
only the chosen servers' GPUs, returns at once when the quota or the free
GPUs cannot cover a worker, and picks opportunistic workers from a heap. The
two must agree on random multi-round states (hypothesis, and seeded larger
clusters): two GPU types, typed and untyped jobs, 1-4 GPUs per worker,
reservations, upgrades, pinned jobs, demotion and utilization around M.
The state's constructor skips the number checks for plain values; the last
tests check that it accepts and refuses exactly what the checks do.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.model import Cluster, GpuType, Job, JobClass, Server
from scheduling_opt.policies import antman as sh
from scheduling_opt.policies._numbers import as_fraction, as_int
from scheduling_opt.policies.antman import Gpu
from scheduling_opt.policies.locality import locality_limit, pick_servers

# ----------------------------------------------------------------- the reference


@dataclass(slots=True)
class _Round:
    state: sh.AntManState
    owner: dict[Gpu, str]
    usage: dict[str, int]
    reserved: dict[str, tuple[Gpu, ...]]
    shared: dict[Gpu, int]
    fresh: set[Gpu]
    rank: dict[str, int]

    def load(self, gpu: Gpu) -> float:
        return self.state.utilization.get(gpu, 0.0)


def _start_round(state: sh.AntManState) -> _Round:
    owner: dict[Gpu, str] = {}
    for alloc in (state.guarantee, state.reserved):
        for job_id, gpus in alloc.items():
            owner.update(dict.fromkeys(gpus, job_id))
    shared: dict[Gpu, int] = {}
    for gpus in state.opportunistic.values():
        for gpu in gpus:
            shared[gpu] = shared.get(gpu, 0) + 1
    rank = {s.id: i for i, s in enumerate(state.cluster.servers)}
    return _Round(state, owner, state.tenant_usage(), dict(state.reserved), shared, set(), rank)


def _quota_left(usage: Mapping[str, int], quotas: Mapping[str, int], tenant: str) -> int:
    return quotas.get(tenant, 0) - usage.get(tenant, 0)


def _upgrade_jobs(r: _Round) -> list[str]:
    state = r.state
    upgraded = []
    for job in state.jobs:
        held = state.opportunistic.get(job.id)
        if held is None or job.id in state.pinned or not state.quotas.get(job.tenant or "", 0):
            continue
        tenant = job.tenant or ""
        if any(g in r.owner for g in held) or _quota_left(r.usage, state.quotas, tenant) < len(
            held
        ):
            continue
        r.owner.update(dict.fromkeys(held, job.id))
        r.usage[tenant] = r.usage.get(tenant, 0) + len(held)
        for g in held:
            r.shared[g] -= 1
        upgraded.append(job.id)
    return upgraded


def _free_for(r: _Round, job: Job, own: frozenset[Gpu]) -> dict[str, list[Gpu]]:
    out: dict[str, list[Gpu]] = {}
    for server in r.state.cluster.servers:
        if not job.fits(server):
            continue
        gpus = [
            (server.id, i)
            for i in range(server.gpus)
            if r.owner.get((server.id, i), job.id) == job.id
        ]
        gpus.sort(key=lambda g: (g not in own, r.shared.get(g, 0) > 0, r.load(g), g))
        out[server.id] = gpus
    return out


def _take(free: Mapping[str, list[Gpu]], servers: list[str], amount: int, d: int) -> list[Gpu]:
    out: list[Gpu] = []
    for s in servers:
        n = min(len(free[s]) // d * d, (amount - len(out)) // d * d)
        out.extend(free[s][:n])
    return out


def _schedule_guarantee(r: _Round, job: Job, may_reserve: bool) -> tuple[Gpu, ...] | None:
    tenant = job.tenant or ""
    own = r.reserved.pop(job.id, ())
    for g in own:
        del r.owner[g]
    r.usage[tenant] = r.usage.get(tenant, 0) - len(own)
    mine = frozenset(own)
    free = _free_for(r, job, mine)
    d = job.gpus_per_worker
    servers = pick_servers(
        {s: len(gpus) // d * d for s, gpus in free.items()},
        job.max_gpus,
        locality_limit(r.state.cluster, job),
        r.rank,
        {s: sum(1 for g in gpus if g in mine) for s, gpus in free.items()},
    )
    quota = _quota_left(r.usage, r.state.quotas, tenant)
    gpus = _take(free, servers, min(job.max_gpus, quota), d)
    if gpus:
        r.owner.update(dict.fromkeys(gpus, job.id))
        r.usage[tenant] = r.usage.get(tenant, 0) + len(gpus)
    if len(gpus) == job.max_gpus:
        r.fresh.update(gpus)
        return tuple(sorted(gpus))
    if not may_reserve:  # the tenant's first waiting job holds its reservation
        for g in gpus:
            del r.owner[g]
        r.usage[tenant] -= len(gpus)
    elif gpus:
        r.reserved[job.id] = tuple(sorted(gpus))
    return None


def _schedule_opportunistic(r: _Round, job: Job, m: float) -> tuple[Gpu, ...] | None:
    d = job.gpus_per_worker
    candidates: dict[str, list[Gpu]] = {}
    for server in r.state.cluster.servers:
        if job.fits(server):
            gpus = [
                (server.id, i)
                for i in range(server.gpus)
                if r.load((server.id, i)) < m and (server.id, i) not in r.fresh
            ]
            candidates[server.id] = gpus
    taken: set[Gpu] = set()
    for _ in range(job.max_workers):
        best: tuple[tuple[float, int], str, list[Gpu]] | None = None
        for s, gpus in candidates.items():
            rest = [g for g in gpus if g not in taken]
            if len(rest) < d:
                continue
            rest.sort(key=lambda g: (r.load(g), r.shared.get(g, 0), g))
            pick = rest[:d]
            key = (sum(r.load(g) for g in pick), sum(r.shared.get(g, 0) for g in pick))
            if best is None or key < best[0]:
                best = (key, s, pick)
        if best is None:
            return None
        taken.update(best[2])
    for g in taken:
        r.shared[g] = r.shared.get(g, 0) + 1
    return tuple(sorted(taken))


def _reference_step(state: sh.AntManState) -> sh.AntManDecision:
    p = state.params
    r = _start_round(state)
    released: dict[str, tuple[Gpu, ...]] = {}
    upgraded = _upgrade_jobs(r)
    launched: dict[str, tuple[Gpu, ...]] = {}
    late: list[Job] = []
    reserving: set[str] = set()
    for job in state.pending():
        if state.job_class(job) != "guarantee":
            continue
        before = r.reserved.get(job.id, ())
        chosen = _schedule_guarantee(r, job, (job.tenant or "") not in reserving)
        if job.id in r.reserved:
            reserving.add(job.tenant or "")
        if chosen is not None:
            launched[job.id] = chosen
        elif p.demote_after is not None and state.now - job.submit_time > p.demote_after:
            late.append(job)
        after = r.reserved.get(job.id, ())
        gone = tuple(sorted(set(before) - set(after)))
        if gone:
            released[job.id] = gone
    started: dict[str, tuple[Gpu, ...]] = {}
    demoted = []
    waiting = [j for j in state.pending() if state.job_class(j) == "opportunistic"]
    position = {j.id: i for i, j in enumerate(state.jobs)}
    late_ids = {j.id for j in late}
    for job in sorted([*waiting, *late], key=lambda j: position[j.id]):
        shared = _schedule_opportunistic(r, job, p.max_utilization)
        if shared is None:
            continue
        started[job.id] = shared
        if job.id in late_ids:
            demoted.append(job.id)
            own = r.reserved.pop(job.id, ())
            for g in own:
                del r.owner[g]
            r.usage[job.tenant or ""] = r.usage.get(job.tenant or "", 0) - len(own)
            released.pop(job.id, None)
            if state.reserved.get(job.id):
                released[job.id] = state.reserved[job.id]
    return sh.AntManDecision(
        launched=launched,
        opportunistic=started,
        upgraded=tuple(upgraded),
        demoted=tuple(demoted),
        reserved=r.reserved,
        released=released,
    )


# ----------------------------------------------------------------- the comparison

TYPES = ("V100", "T4")
UTILS = (0.0, 0.3, 0.5, 0.79, 0.8, 0.9, 1.0)


def _cluster(servers: list[tuple[int, int]]) -> Cluster:
    return Cluster(
        tuple(GpuType(t) for t in TYPES),
        tuple(Server(f"s{i}", TYPES[t], n) for i, (t, n) in enumerate(servers)),
    )


def _job(i: int, workers: int, gpw: int, typed: int, cls: int, tenant: str) -> Job:
    gpu_type = (None, *TYPES)[typed]
    job_class: JobClass | None = (None, "guarantee", "opportunistic")[cls]
    return Job(f"j{i}", workers, workers, 100.0, gpw, float(i), gpu_type, (), job_class, tenant)


def _compare_rounds(
    state: sh.AntManState,
    rounds: list[tuple[int, dict[Gpu, float], frozenset[str]]],
) -> int:
    """Step old and new on each round's state, move on by the new decision; states compared."""
    s = state
    for done, util, pinned in rounds:
        s = sh.AntManState(
            s.cluster,
            s.quotas,
            s.jobs,
            s.guarantee,
            s.opportunistic,
            s.reserved,
            util,
            pinned & {j.id for j in s.jobs},
            s.now + 10.0,
            s.params,
        )
        sol = sh.antman_step(s)
        assert sol.decision == _reference_step(s)
        nxt = sh.apply(s, sol.decision)
        running = sorted([*nxt.guarantee, *nxt.opportunistic])
        gone = [running[k % len(running)] for k in range(done)] if running else []
        s = sh.finish(nxt, set(gone))
    return len(rounds)


@st.composite
def _worlds(
    draw: st.DrawFn,
) -> tuple[sh.AntManState, list[tuple[int, dict[Gpu, float], frozenset[str]]]]:
    servers = draw(
        st.lists(st.tuples(st.integers(0, 1), st.integers(1, 8)), min_size=1, max_size=5)
    )
    cluster = _cluster(servers)
    total = cluster.total_gpus
    qa = draw(st.integers(0, total))
    qb = draw(st.integers(0, total - qa))
    jobs = []
    for i in range(draw(st.integers(1, 16))):
        gpw = draw(st.sampled_from([1, 1, 2, 4]))
        jobs.append(
            _job(
                i,
                draw(st.integers(1, 4)),
                gpw,
                draw(st.integers(0, 2)),
                draw(st.integers(0, 2)),
                draw(st.sampled_from(["A", "B", "C"])),
            )
        )
    params = sh.AntManParams(
        draw(st.sampled_from([0.5, 0.8, 1.0])), draw(st.sampled_from([None, 0.0, 15.0]))
    )
    state = sh.AntManState(cluster, {"A": qa, "B": qb}, tuple(jobs), params=params)
    every = sh.all_gpus(cluster)
    rounds = []
    for _ in range(draw(st.integers(1, 5))):
        util = {g: draw(st.sampled_from(UTILS)) for g in every}
        pinned = frozenset(f"j{k}" for k in draw(st.sets(st.integers(0, 15), max_size=3)))
        rounds.append((draw(st.integers(0, 3)), util, pinned))
    return state, rounds


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(_worlds())
def test_incremental_step_decides_as_the_reference(
    world: tuple[sh.AntManState, list[tuple[int, dict[Gpu, float], frozenset[str]]]],
) -> None:
    _compare_rounds(*world)


def _seeded_world(
    seed: int,
) -> tuple[sh.AntManState, list[tuple[int, dict[Gpu, float], frozenset[str]]]]:
    rng = random.Random(seed)
    servers = [(int(rng.random() < 0.25), rng.choice([4, 8, 8, 8])) for _ in range(16)]
    cluster = _cluster(servers)
    q = [rng.randint(0, cluster.total_gpus // 3) for _ in range(3)]
    jobs = [
        _job(
            i,
            rng.choice([1, 1, 1, 2, 4]),
            rng.choice([1, 1, 2, 4, 8]),
            rng.choice([0, 0, 0, 1, 2]),
            rng.choice([0, 0, 1, 2]),
            rng.choice(["A", "B", "C", "D"]),
        )
        for i in range(rng.randint(20, 120))
    ]
    params = sh.AntManParams(0.8, rng.choice([None, 30.0]))
    state = sh.AntManState(cluster, {"A": q[0], "B": q[1], "C": q[2]}, tuple(jobs), params=params)
    every = sh.all_gpus(cluster)
    rounds = []
    for _ in range(8):
        util = {g: rng.choice(UTILS) for g in every if rng.random() < 0.7}
        pinned = frozenset(f"j{k}" for k in rng.sample(range(len(jobs)), 3))
        rounds.append((rng.randint(0, 6), util, pinned))
    return state, rounds


def test_incremental_step_decides_as_the_reference_on_larger_seeded_clusters() -> None:
    # 40 seeds x 8 rounds = 320 states of 16 mixed servers and 20-120 jobs.
    assert sum(_compare_rounds(*_seeded_world(seed)) for seed in range(40)) == 320


# ----------------------------------------------------------------- the state's fast paths


def _outcome(make: Callable[[], object]) -> object:
    try:
        return make()
    except InvalidInstanceError as e:
        return ("refused", str(e))


@pytest.mark.parametrize(
    "u",
    [0.0, -0.0, 0.5, 1.0, 5e-324, 1.0000001, -0.1, math.nan, math.inf, 1, True, np.float64(0.3)],
)
def test_state_utilization_fast_path_keeps_the_checks(u: object) -> None:
    # The constructor skips as_fraction for a plain float in [0, 1] (not subnormal):
    # every value must come out (or be refused) exactly as as_fraction says.
    c = _cluster([(0, 4)])
    g = ("s0", 1)
    expected = _outcome(lambda: {g: as_fraction(u, f"utilization[{g!r}]")})
    util = {g: u}  # any object: the constructor must check it
    got = _outcome(lambda: dict(sh.AntManState(c, {}, (), utilization=util).utilization))  # type: ignore[arg-type]
    assert got == expected
    if not isinstance(got, tuple):
        assert [type(v) for v in got.values()] == [float]  # type: ignore[attr-defined]


@pytest.mark.parametrize("index", [0, 3, True, np.int64(2), -1, 2**60, 1.0, "1"])
def test_state_gpu_fast_path_keeps_the_checks(index: object) -> None:
    c = _cluster([(0, 4)])
    jobs = (_job(0, 1, 1, 0, 2, "C"),)
    expected = _outcome(lambda: {"j0": (("s0", as_int(index, "opportunistic.j0", 0)),)})
    held = {"j0": [("s0", index)]}  # any object: the constructor must check it
    got = _outcome(lambda: dict(sh.AntManState(c, {}, jobs, opportunistic=held).opportunistic))  # type: ignore[arg-type]
    assert got == expected
