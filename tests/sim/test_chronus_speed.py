"""Chronus' speed-ups in the simulator (issue 25) change no decision.

- The Placer's trusted :class:`~scheduling_opt.placement.PlacementInput`
  equals the one the public (checking) constructor builds from the same values.
- ``_may_consolidate`` says no only where the former give / place / take
  back found no placement on the job's fewest servers (brute force: the
  free map itself).
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
from scheduling_opt.sim.policies.chronus import _may_consolidate
from scheduling_opt.sim.policies.chronus_placement import Placer
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
        maybe = _may_consolidate(plan, placement, gpus)
        plan.give(placement)
        target = plan.place(gpus)
        plan.take(placement)
        assert (plan.free, plan.levels, plan.total_free) == before  # give + take restored it
        if not maybe:
            said_no += 1
            assert target is None or len(target) > fewest
    assert said_no > 100
