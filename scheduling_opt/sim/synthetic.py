"""A seeded synthetic workload in the shape of Chronus-Philly (for tests and scaling studies).

Arrivals are Poisson (exponential gaps of mean ``1 / rate`` minutes). GPU
counts follow P_MIX2's frequencies; durations follow its quantiles
(interpolated in log space between the 0, 5, 10, ..., 100th percentiles);
SLO kinds follow its shares (30% strict, 60% soft, 10% best effort); the
first deadline is ``uniform(1.1, 5) x duration`` after the submission (the
released trace's range), soft jobs get three more steps 30, 70 and 130
minutes later (the trace's common pattern) with rewards 100-80-50-20; the
tenant is one of ``tenants`` virtual clusters, the model one of the five of
``model_info.json``. Same spec and seed, same jobs (numpy ``Generator``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.jsonpath import read_number
from scheduling_opt.sim import limits
from scheduling_opt.sim.workload import SimJob, Workload
from scheduling_opt.solution import as_rng

#: P_MIX2 GPU counts (zero-GPU rows left out) and their frequencies.
GPU_COUNTS = (1, 2, 4, 8, 12, 16, 20, 32)
GPU_WEIGHTS = (28243, 219, 1246, 919, 3, 105, 2, 9)
#: P_MIX2 duration percentiles 0, 5, 10, 20, ..., 90, 95, 99, 100 (minutes).
DURATION_Q = (0.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 100.0)
DURATION_V = (
    20.0,
    21.0,
    23.0,
    29.0,
    34.0,
    41.0,
    60.0,
    89.0,
    134.0,
    227.0,
    695.0,
    1448.0,
    3249.0,
    4317.0,
)
MODELS = ("alexnet", "inception_v3", "mobilenet_v2", "resnet101", "vgg16")
SOFT_OFFSETS = (0.0, 30.0, 70.0, 130.0)
SOFT_REWARDS = (100.0, 80.0, 50.0, 20.0)


@dataclass(frozen=True, slots=True)
class SyntheticSpec:
    """Size and shape of a synthetic workload (times in minutes).

    Validated when built: ``jobs`` 1 to ``limits.MAX_JOBS``, ``rate`` > 0 and
    large enough to keep the arrivals on the clock, the shares in [0, 1]
    with a sum <= 1; an error names the field.
    """

    jobs: int = 1000
    rate: float = 1.5
    tenants: int = 11
    strict_share: float = 0.3
    best_share: float = 0.1
    max_gpus: int = 32

    def __post_init__(self) -> None:
        # The limits of sim/limits.py; an error names the field.
        set_ = object.__setattr__
        set_(self, "jobs", limits.count(self.jobs, "jobs", limits.MAX_JOBS))
        set_(self, "tenants", limits.count(self.tenants, "tenants", limits.MAX_JOBS))
        set_(self, "max_gpus", limits.count(self.max_gpus, "max_gpus", limits.MAX_GPUS))
        rate = read_number(self.rate, "rate")
        if not rate > 0 or rate * limits.MAX_TIME < self.jobs:
            # mean gap 1 / rate: the last submission must stay on the clock
            raise InvalidInstanceError(
                "rate",
                f"must be > 0 and leave {self.jobs:,} arrivals on the clock "
                f"(at least jobs / {limits.MAX_TIME:g}), got {rate!r}",
            )
        set_(self, "rate", rate)
        for name in ("strict_share", "best_share"):
            set_(self, name, limits.fraction(getattr(self, name), name, closed=True))
        if self.strict_share + self.best_share > 1.0:
            raise InvalidInstanceError("best_share", "strict_share + best_share must be <= 1")


def generate(spec: SyntheticSpec, seed: int | None = 0) -> Workload:
    """``spec.jobs`` jobs drawn with ``seed``.

    Examples
    --------
    >>> w = generate(SyntheticSpec(jobs=5), seed=1)
    >>> len(w.jobs), w.jobs == generate(SyntheticSpec(jobs=5), seed=1).jobs
    (5, True)
    """
    rng = as_rng(seed)
    n = spec.jobs
    submits = np.cumsum(rng.exponential(1.0 / spec.rate, n))
    weights = np.array(
        [w if g <= spec.max_gpus else 0 for g, w in zip(GPU_COUNTS, GPU_WEIGHTS, strict=True)],
        dtype=float,
    )
    gpus = rng.choice(np.array(GPU_COUNTS), size=n, p=weights / weights.sum())
    u = rng.uniform(0.0, 100.0, n)
    durations = np.round(np.exp(np.interp(u, DURATION_Q, np.log(DURATION_V))))
    kinds = rng.uniform(0.0, 1.0, n)
    factors = rng.uniform(1.1, 5.0, n)
    tenants = rng.integers(0, spec.tenants, n)
    models = rng.integers(0, len(MODELS), n)
    jobs = []
    for i in range(n):
        submit = float(np.round(submits[i]))
        work = float(max(durations[i], 1.0))
        first = submit + float(np.ceil(factors[i] * work))
        steps: tuple[tuple[float, float], ...]
        if kinds[i] < spec.best_share:
            kind, steps = "best", ()
        elif kinds[i] < spec.best_share + spec.strict_share:
            kind, steps = "strict", ((first, 100.0),)
        else:
            kind = "soft"
            steps = tuple(
                (first + off, r) for off, r in zip(SOFT_OFFSETS, SOFT_REWARDS, strict=True)
            )
        jobs.append(
            SimJob(
                id=str(i),
                submit=submit,
                gpus=int(gpus[i]),
                work=work,
                model=MODELS[int(models[i])],
                tenant=f"vc{int(tenants[i])}",
                deadlines=steps,
                job_type=kind,
            )
        )
    return Workload.of(jobs, f"synthetic-{n}-s{seed}")
