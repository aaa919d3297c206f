"""The speed envelope: the most any covered schedule can get out of a GPU, per job and per GPU.

Every bound of :mod:`scheduling_opt.sim.bounds` solves a relaxation in
which each job is a quantity of *GPU area* processed on one pooled machine
(docs/bounds.md). This module turns a workload, a cluster and the
policies to cover into that relaxation's numbers, and states which
schedules they cover.

The engine's speed of a running job (sim/speed.py, sim/live.py) is
``compute x spread x size x factor x slow``: the slowest server's compute
factor, the placement table's spread ratio, the elastic size ratio (the
job's scaling curve, linear without one), ``Decision.rate``'s factor and
the sharing interference. For job j on n GPUs, :func:`relax` takes an
upper bound ``S_j(n)`` on that speed: the largest compute factor of the
cluster, the size ratio at n, and the largest ratio the placement table
gives between two spreads of n GPUs (the table is not monotone: a 2-GPU
inception_v3 on two servers runs 1.0025x its consolidated speed). The
factor and the interference depend on the policy, which declares them
(``PolicySpec.throughput`` and ``batch_speeds``; :func:`gpu_throughput`):

- ``plain`` policies never set ``Decision.rate`` nor share a GPU: factor
  1, interference 1;
- ``antman`` shares GPUs with the engine's interference (each job of a
  shared GPU slowed, ``1 - host_slowdown`` and ``1 - share_slowdown``) and
  sets factors <= 1 (its memory split's speeds): a GPU carries at most
  ``(1 - host) + (1 - share)`` of speed-1 work (1.536 by default);
- ``gandiva`` and ``gandiva-pack`` turn the engine's interference off and
  set every shared job's factor to its pair's speed: a GPU carries at most
  ``max(1, 2 (1 - pack_slowdown), 1 - slice_overhead)``;
- ``ones``, ``ones-exact`` and ``fixed-batch`` set factors that make a
  job's speed its batch model's throughput ratio, which exceeds the GPU
  count's share with a larger batch: ``S_j(n)`` then also takes the
  throughput at the largest batch n GPUs hold (``n x`` the task's largest
  local batch, consolidated), over the job's reference throughput;
- ``chronus*`` with ``start_credit`` (the Chronus artifact's semantics)
  credits progress a job did not run (``Decision.credit``): not covered.

From ``S_j`` come the relaxation's numbers: the top speed ``R_j =
max_n S_j(n)``, the GPU area per unit of work ``a_j = min_n n / S_j(n)``,
so the job's area ``p_j = a_j w_j`` and its area rate cap ``delta_j =
a_j R_j`` (n over ``min_gpus..max_gpus``, at most the cluster's GPUs).
The pooled capacity is ``theta x`` every GPU of the cluster, available at
the start or not (Aryl lends its inference servers at their spec size).
Cost: O(jobs x sizes) speed evaluations, cached per distinct job shape.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.metrics import RW_MAX, RW_MIN
from scheduling_opt.scaling import TableModel
from scheduling_opt.sim import registry
from scheduling_opt.sim.cluster import ClusterSpec
from scheduling_opt.sim.speed import SpeedModel, bundled_table
from scheduling_opt.sim.workload import SimJob, Workload

FloatArray = NDArray[np.float64]

#: The engine's interference defaults (EngineParams: AntMan §5.1).
SHARE_SLOWDOWN = 0.43
HOST_SLOWDOWN = 0.034


def gpu_throughput(
    name: str,
    params: Mapping[str, Any] | None = None,
    *,
    share_slowdown: float = SHARE_SLOWDOWN,
    host_slowdown: float = HOST_SLOWDOWN,
) -> float | str:
    """The most speed-1 work one GPU carries under policy ``name``, or why it is not covered.

    Read from the policy's declaration (``PolicySpec.throughput``): each
    family states its own envelope, so a new family or a user's policy
    states whether and how the bounds cover it; a policy that declares none
    is not covered.

    Parameters
    ----------
    name : str
        A registered policy name.
    params : mapping, optional
        Its ``policy_params`` (Gandiva's ``pack_slowdown`` and
        ``slice_overhead``; Chronus' ``start_credit``).
    share_slowdown, host_slowdown : float
        The engine's interference (EngineParams), for ``antman``.

    Returns
    -------
    float or str
        ``theta >= 1``, or a sentence saying why the policy's runs are not covered.

    Examples
    --------
    >>> gpu_throughput("fifo"), round(gpu_throughput("antman"), 3)
    (1.0, 1.536)
    >>> gpu_throughput("gandiva-pack", {"pack_slowdown": 0.2})
    1.6
    >>> gpu_throughput("chronus", {"start_credit": True})
    'credits work a job did not run (start_credit: the artifact semantics)'
    >>> gpu_throughput("no-such-policy")
    'not a registered policy'
    """
    try:
        spec = registry.policy_spec(name)
    except InvalidInstanceError:
        return "not a registered policy"
    if spec.throughput is None:
        return "its declaration states no speed envelope (PolicySpec.throughput)"
    return spec.throughput(dict(params or {}), share_slowdown, host_slowdown)


def batch_speeds(name: str) -> bool:
    """Whether policy ``name`` sets speeds from the jobs' batch model (ONES).

    Examples
    --------
    >>> batch_speeds("ones"), batch_speeds("srtf")
    (True, False)
    """
    try:
        return registry.policy_spec(name).batch_speeds
    except InvalidInstanceError:
        return False


def one_job_per_gpu(names: Iterable[str]) -> list[str]:
    """The policies of ``names`` the default bound covers: one job per GPU at speed <= 1.

    Examples
    --------
    >>> one_job_per_gpu(["fifo", "antman", "ones", "chronus"])
    ['fifo', 'chronus']
    """
    return [n for n in names if gpu_throughput(n) == 1.0 and not batch_speeds(n)]


@dataclass(frozen=True, slots=True)
class Envelope:
    """The speeds a bound allows: per-GPU throughput, batch speeds, placement table.

    ``covered``: the policies whose runs the bound holds for; ``excluded``:
    ``(policy, why)`` of those it does not.

    Examples
    --------
    >>> env = envelope_of([("fifo", {}), ("antman", {})])
    >>> round(env.gpu_throughput, 3), env.covered, env.excluded
    (1.536, ('fifo', 'antman'), ())
    """

    gpu_throughput: float = 1.0
    batch_speeds: bool = False
    placement_table: bool = True
    covered: tuple[str, ...] = ()
    excluded: tuple[tuple[str, str], ...] = ()

    def describe(self) -> str:
        """One sentence: what the bound covers and what it leaves out.

        Examples
        --------
        >>> Envelope(covered=("fifo",)).describe()
        'covers fifo (one job per GPU at speed <= 1 per GPU)'
        """
        parts = []
        if self.covered:
            how = (
                "one job per GPU at speed <= 1 per GPU"
                if self.gpu_throughput == 1.0
                else f"a GPU carrying up to {self.gpu_throughput:.3g} of speed-1 work"
            )
            if self.batch_speeds:
                how += ", batch-model speeds"
            parts.append(f"covers {', '.join(self.covered)} ({how})")
        for name, why in self.excluded:
            parts.append(f"not {name}: {why}")
        return "; ".join(parts) if parts else "covers no policy"


def envelope_of(
    runs: Iterable[tuple[str, Mapping[str, Any]]],
    *,
    placement_table: bool = True,
    share_slowdown: float = SHARE_SLOWDOWN,
    host_slowdown: float = HOST_SLOWDOWN,
) -> Envelope:
    """The envelope that covers every run of ``runs`` (``(policy, params)`` pairs) it can.

    Parameters
    ----------
    runs : iterable of (str, mapping)
        Each run's policy name and parameters.
    placement_table : bool
        Whether the runs use the placement table (its spread speed-ups).
    share_slowdown, host_slowdown : float
        The engine's interference (for ``antman``).

    Returns
    -------
    Envelope
        The largest per-GPU throughput of the covered runs, batch speeds if
        any needs them; the runs it cannot cover in ``excluded``.

    Examples
    --------
    >>> env = envelope_of([("srtf", {}), ("chronus", {"start_credit": True})])
    >>> env.covered, env.excluded[0][0]
    (('srtf',), 'chronus')
    """
    theta = 1.0
    batch = False
    covered: list[str] = []
    excluded: list[tuple[str, str]] = []
    for name, params in runs:
        value = gpu_throughput(
            name, params, share_slowdown=share_slowdown, host_slowdown=host_slowdown
        )
        if isinstance(value, str):
            if (name, value) not in excluded:
                excluded.append((name, value))
            continue
        theta = max(theta, value)
        batch = batch or batch_speeds(name)
        if name not in covered:
            covered.append(name)
    return Envelope(theta, batch, placement_table, tuple(covered), tuple(excluded))


@dataclass(frozen=True, slots=True)
class Relaxation:
    """A workload as the pooled relaxation sees it (arrays in workload order).

    ``release`` r_j, ``work`` w_j, ``speed`` R_j (top speed), ``area`` p_j
    (GPU area at the best size), ``rate`` delta_j (area per unit time, at
    most), ``weight`` (1 for a job the metrics count, 0 for one ``skip``
    leaves out), ``capacity`` (pooled GPU area per unit time), ``gpus``
    (every GPU of the cluster), ``available`` (GPUs available at the
    start), ``nominal`` (sum of g_j w_j: the GPU time at speed 1),
    ``steps``: each job's deadline steps as (time, clamped reward).
    """

    release: FloatArray
    work: FloatArray
    speed: FloatArray
    area: FloatArray
    rate: FloatArray
    weight: FloatArray
    capacity: float
    gpus: int
    available: int
    nominal: float
    steps: tuple[tuple[tuple[float, float], ...], ...]

    @property
    def jobs(self) -> int:
        """The number of jobs."""
        return int(self.release.size)

    @property
    def min_time(self) -> FloatArray:
        """Each job's shortest possible run, w_j / R_j = p_j / delta_j."""
        return self.work / self.speed


def spread_ratio(table: TableModel | None, model: str | None, gpus: int) -> float:
    """The largest factor a placement of ``gpus`` GPUs may gain over its consolidated speed.

    The engine multiplies a spread job's speed by ``table(m, n, k) /
    table(m, n, k_min)`` for ``k > k_min >= 1`` servers; this is the largest
    such ratio over every ``1 <= k_min < k <= n`` (at least 1).

    Examples
    --------
    >>> round(spread_ratio(bundled_table(), "inception_v3", 2), 4)
    1.0025
    >>> spread_ratio(bundled_table(), "vgg16", 8), spread_ratio(None, "vgg16", 8)
    (1.0, 1.0)
    """
    if table is None or model is None or gpus < 2 or not table.knows(model):
        return 1.0
    speeds = [table.speed(model, gpus, k) for k in range(1, gpus + 1)]
    best = 1.0
    low = speeds[0]
    for s in speeds[1:]:
        if low > 0:
            best = max(best, s / low)
        low = min(low, s)
    return best


def _batch_speed(job: SimJob, gpus: int) -> float | None:
    """ONES' speed of ``job`` on ``gpus`` GPUs at its largest batch, consolidated (None: no model)."""
    from scheduling_opt.sim.ones_workload import job_model

    try:
        model = job_model(job)
    except InvalidInstanceError:
        return None
    batch = gpus * model.task.max_local
    return model.throughput(batch, gpus, False) / model.reference


def job_envelope(
    job: SimJob,
    env: Envelope,
    table: TableModel | None,
    compute: float,
    limit: int,
    spreads: dict[tuple[str | None, int], float] | None = None,
) -> tuple[float, float]:
    """``(R_j, a_j)``: job's top speed and its least GPU area per unit of work.

    ``compute``: the cluster's largest compute factor; ``limit``: the
    cluster's GPUs (no job runs on more); ``spreads``: a memo of
    :func:`spread_ratio` by (model, GPUs) for ``table``.

    Examples
    --------
    >>> job_envelope(SimJob("a", 0.0, 4, 10.0), Envelope(), None, 1.0, 8)
    (1.0, 4.0)
    >>> job = SimJob("e", 0.0, 2, 10.0, min_gpus=1, max_gpus=4)
    >>> job_envelope(job, Envelope(), None, 1.0, 8)  # linear: 2x at 4 GPUs, 2 GPU-units a unit
    (2.0, 2.0)
    """
    model = SpeedModel(None, max(1, limit))
    memo = {} if spreads is None else spreads
    top = 0.0
    area = float("inf")
    for n in range(job.min_gpus, min(job.max_gpus, limit) + 1):
        spread = memo.get((job.model, n))
        if spread is None:
            spread = memo[(job.model, n)] = spread_ratio(table, job.model, n)
        s = model.speed(job, ((0, n),), (compute,)) * spread
        if env.batch_speeds:
            b = _batch_speed(job, n)
            if b is not None:
                s = max(s, b)
        top = max(top, s)
        area = min(area, n / s)
    return top, area


def _clamped(steps: tuple[tuple[float, float], ...]) -> tuple[tuple[float, float], ...]:
    return tuple((t, min(max(v, RW_MIN), RW_MAX)) for t, v in steps)


def relax(
    workload: Workload, cluster: ClusterSpec, env: Envelope, *, skip: float = 0.0
) -> Relaxation:
    """The relaxation's numbers for ``workload`` on ``cluster`` under ``env``.

    Parameters
    ----------
    workload : Workload
        The jobs.
    cluster : ClusterSpec
        The servers: every GPU counts in the capacity, the largest compute
        factor in the speeds.
    env : Envelope
        The speeds to allow (:func:`envelope_of`).
    skip : float
        The fraction of first jobs (workload order) the metrics leave out
        (``summarize``'s ``skip``): weight 0.

    Returns
    -------
    Relaxation

    Raises
    ------
    InvalidInstanceError
        ``skip`` outside [0, 1); a job that needs more GPUs than the
        cluster has (it can never run: the engine refuses it too).

    Examples
    --------
    >>> from scheduling_opt.sim.workload import Workload
    >>> w = Workload.of([SimJob("0", 0.0, 2, 10.0), SimJob("1", 5.0, 1, 4.0)], "demo")
    >>> rel = relax(w, ClusterSpec.uniform(1, 4), Envelope(placement_table=False))
    >>> rel.area.tolist(), rel.rate.tolist(), rel.capacity, rel.nominal
    ([20.0, 4.0], [2.0, 1.0], 4.0, 24.0)
    """
    if not 0.0 <= skip < 1.0:
        raise InvalidInstanceError("skip", f"must be in [0, 1), got {skip!r}")
    jobs = workload.jobs
    n = len(jobs)
    gpus = cluster.total_gpus
    available = sum(s.gpus for s in cluster.servers if s.available)
    compute = max(s.compute for s in cluster.servers)
    table = bundled_table() if env.placement_table else None
    cache: dict[tuple[Any, ...], tuple[float, float]] = {}
    spreads: dict[tuple[str | None, int], float] = {}
    speed = np.empty(n)
    area = np.empty(n)
    for i, job in enumerate(jobs):
        if job.min_gpus > gpus:
            raise InvalidInstanceError(
                f"jobs[{i}]",
                f"job {job.id!r} needs {job.min_gpus} GPUs, the cluster has {gpus}",
            )
        key = (job.gpus, job.min_gpus, job.max_gpus, job.scaling, job.model)
        got = cache.get(key)
        if got is None:
            got = cache[key] = job_envelope(job, env, table, compute, gpus, spreads)
        speed[i], area[i] = got
    work = np.array([j.work for j in jobs], dtype=np.float64)
    weight = np.ones(n)
    weight[: int(np.floor(n * skip))] = 0.0
    return Relaxation(
        release=np.array([j.submit for j in jobs], dtype=np.float64),
        work=work,
        speed=speed,
        area=area * work,
        rate=area * speed,
        weight=weight,
        capacity=env.gpu_throughput * gpus,
        gpus=gpus,
        available=available,
        nominal=float(sum(j.gpus * j.work for j in jobs)),
        steps=tuple(_clamped(j.deadlines) for j in jobs),
    )
