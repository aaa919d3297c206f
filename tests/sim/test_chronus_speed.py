"""Chronus' speed-ups in the simulator change no decision.

- The Placer's trusted :class:`~scheduling_opt.placement.PlacementInput`
  equals the one the public (checking) constructor builds from the same values.
- ``may_consolidate`` says no only where giving the job's GPUs back,
  placing it and taking them back finds no placement on its fewest servers
  (brute force: the free map itself).
- The placement input's spans and reward tables, computed once per kind of
  job, are each job's own (span_of and reward_table called per job).
- The lease model's remembered lease jobs equal the ones built afresh with
  no memo (the reference below), at every call of a whole run.
"""

from __future__ import annotations

from dataclasses import fields

import numpy as np
import pytest

from scheduling_opt.model import Placement
from scheduling_opt.placement import PlacementInput
from scheduling_opt.scaling import TableModel
from scheduling_opt.sim import SimJob
from scheduling_opt.sim.cluster import FreeMap
from scheduling_opt.sim.policies.chronus.placement import Placer, may_consolidate
from scheduling_opt.sim.speed import bundled_table


@pytest.mark.parametrize("seed", range(6))
def test_trusted_placement_input_equals_the_checked_one(seed: int) -> None:
    rng = np.random.default_rng(seed)
    servers = int(rng.integers(1, 12))
    capacity = [int(c) for c in rng.choice([0, 4, 8], size=servers, p=[0.1, 0.2, 0.7])]
    free = [int(rng.integers(0, c + 1)) for c in capacity]
    table: TableModel | None = bundled_table() if seed % 2 else None
    names = sorted(table.table) if table is not None else ["x"]
    jobs = [
        SimJob(
            f"j{k}",
            0.0,
            int(rng.choice([1, 2, 4, 8, 16])),
            float(rng.uniform(1, 100)),
            model=str(rng.choice([*names, "unknown"])),
        )
        for k in range(int(rng.integers(1, 8)))
    ]
    placer = Placer()
    got, _ = placer.input(capacity, free, jobs, table, 1000)
    checked = PlacementInput(
        got.cluster,
        list(got.jobs),
        Placement(got.placement.rows),
        models=dict(got.models),
        speed=got.speed,
        search_space=1000,
    )
    # PlacementInput compares by identity (eq=False): field by field.
    differ = [
        f.name for f in fields(PlacementInput) if getattr(got, f.name) != getattr(checked, f.name)
    ]
    assert differ == []
    assert got.n_jobs == len(jobs)


@pytest.mark.parametrize("uniform", [True, False])
def test_may_consolidate_says_no_only_when_no_fewest_placement_exists(uniform: bool) -> None:
    rng = np.random.default_rng(7 if uniform else 8)
    said_no = 0
    for _ in range(3000):
        n = int(rng.integers(1, 6))
        capacity = [8] * n if uniform else [int(c) for c in rng.choice([0, 4, 8], size=n)]
        plan = FreeMap(capacity)
        for s, c in enumerate(capacity):  # some GPUs busy on each server
            used = int(rng.integers(0, c + 1))
            if used:
                plan.take(((s, used),))
        # A spread job on some servers' free GPUs.
        placement = tuple(
            (s, int(rng.integers(1, plan.free[s] + 1))) for s in range(n) if plan.free[s] > 0
        )[: int(rng.integers(1, n + 1))]
        if not placement:
            continue
        plan.take(placement)
        gpus = sum(g for _, g in placement)
        fewest = -(-gpus // max(capacity))
        before = (plan.free[:], [lv[:] for lv in plan.levels], plan.total_free)
        maybe = may_consolidate(plan, placement, gpus)
        plan.give(placement)
        target = plan.place(gpus)
        plan.take(placement)
        assert (plan.free, plan.levels, plan.total_free) == before  # give + take restored it
        if not maybe:
            said_no += 1
            assert target is None or len(target) > fewest
    assert said_no > 100


@pytest.mark.parametrize("seed", range(4))
def test_placement_tables_shared_per_kind_equal_the_per_job_ones(seed: int) -> None:
    """The input's spans and reward tables, computed once per (type, workers, model),
    are each job's own: span_of and reward_table called per job."""
    from scheduling_opt.model import Cluster, GpuType, Job, Server
    from scheduling_opt.placement.reward import reward_table, span_of

    rng = np.random.default_rng(seed)
    types = (GpuType("V100"), GpuType("T4", compute=0.5))
    servers = tuple(
        Server(f"s{k}", str(rng.choice(["V100", "T4"])), int(rng.choice([4, 8])))
        for k in range(int(rng.integers(2, 8)))
    )
    names = sorted(bundled_table().table)
    jobs, models = [], {}
    for k in range(12):
        gtype = None if k % 3 else str(rng.choice(["V100", "T4"]))
        if gtype is not None and not any(s.gpu_type == gtype for s in servers):
            gtype = None
        workers, gpw = int(rng.choice([1, 2, 3])), int(rng.choice([1, 2]))
        jobs.append(Job(f"j{k}", workers, workers, 10.0, gpus_per_worker=gpw, gpu_type=gtype))
        if k % 2:
            models[f"j{k}"] = str(rng.choice(names))
    inp = PlacementInput(
        Cluster(types, servers), jobs, Placement(()), models=models, speed=bundled_table()
    )
    for j, job in enumerate(jobs):
        elig = inp.eligible[j]
        k = span_of(job.max_workers, job.gpus_per_worker, [servers[s].gpus for s in elig])
        assert inp.k_star[j] == k
        last = min(job.max_workers, len(elig))
        model = models.get(job.id)
        want = reward_table(inp.speed, model, job.max_workers, job.gpus_per_worker, k, last)
        assert inp.rw[j] == want


def _fresh_lease_job(model, st, now, origin):  # type: ignore[no-untyped-def]
    """The lease job of ``st`` built afresh, with no memo: the reference."""
    import math

    from scheduling_opt.model import Job, RewardStep

    length = model.options.lease_length
    steps = [(t - origin, v) for t, v in st.job.deadlines if t > origin]
    remaining = model.remaining(st, now)
    need = math.ceil(remaining / length)
    if not steps or model.options.cap(math.floor(steps[-1][0] / length)) < need:
        return None
    return Job(
        str(st.index),
        st.job.gpus,
        st.job.gpus,
        remaining,
        deadlines=tuple(RewardStep(t, v) for t, v in steps),
    )


def test_remembered_lease_jobs_equal_fresh_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every lease job the memo returns equals the one built afresh, over a whole run."""
    from scheduling_opt.sim import ClusterSpec, simulate
    from scheduling_opt.sim.policies.chronus.lease_model import LeaseModel
    from scheduling_opt.sim.policies.chronus.policy import Chronus
    from scheduling_opt.sim.synthetic import SyntheticSpec, generate

    memo = LeaseModel.lease_job
    calls = {"n": 0, "hits": 0}

    def checked(self, st, now, origin):  # type: ignore[no-untyped-def]
        before = self.jobs.get(st.index)
        got = memo(self, st, now, origin)
        calls["n"] += 1
        calls["hits"] += before is not None and before[2] is got and got is not None
        assert got == _fresh_lease_job(self, st, now, origin)
        return got

    monkeypatch.setattr(LeaseModel, "lease_job", checked)
    workload = generate(SyntheticSpec(jobs=120, max_gpus=8), 3)
    simulate(workload, ClusterSpec.uniform(2, 8), Chronus(mode="greedy"))
    assert calls["n"] > 100
    assert calls["hits"] > 0  # the memo is exercised, not only filled
