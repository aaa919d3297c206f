"""One hypothesis strategy per problem: valid typed inputs by construction.

Each strategy draws the parts with :mod:`scheduling_opt.testing.model`,
sized by keyword arguments, and builds the problem's typed input from model
objects with its constructor, which applies the file reader's rules (the
kit's tests write every drawn input as a file and read it back).
:func:`inputs` and :func:`instances` pick a problem by its registry name.
Drawing costs the input's construction, linear in its size.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st

from scheduling_opt.allocation import AllocationInput
from scheduling_opt.batch_size import BatchSizeInput, JobState, OnesConfig
from scheduling_opt.io.instance import Instance
from scheduling_opt.lease import LeaseInput
from scheduling_opt.model import Job, RewardStep
from scheduling_opt.placement import PlacementInput
from scheduling_opt.reclaim import ReclaimInput
from scheduling_opt.testing.documents import to_instance
from scheduling_opt.testing.knapsack import mckp_inputs, memory_split_inputs, mmkp_inputs
from scheduling_opt.testing.model import clusters
from scheduling_opt.testing.workload import fitting_jobs, jobs, placements, reward_steps

__all__ = [
    "PROBLEMS",
    "allocation_inputs",
    "batch_size_inputs",
    "inputs",
    "instances",
    "lease_inputs",
    "placement_inputs",
    "reclaim_inputs",
]


@st.composite
def _reclaim_inputs(
    draw: st.DrawFn,
    *,
    max_servers: int = 3,
    max_jobs: int = 4,
    max_gpus: int = 8,
    max_workers: int = 4,
) -> ReclaimInput:
    cluster = draw(
        clusters(
            min_servers=0,
            max_servers=max_servers,
            max_gpus=max_gpus,
            min_on_loan=1,
            # On loan first: most servers are candidates (and shrink to candidates).
            kinds=("on_loan", "training", "inference"),
        )
    )
    job_list = draw(
        jobs(cluster, max_jobs=max_jobs, max_workers=max_workers, deadlines=False, batch=False)
    )
    placement = draw(placements(cluster, job_list, place=True))
    n = draw(st.integers(0, len(cluster.on_loan_servers())))
    return ReclaimInput(cluster, job_list, placement, n)


def reclaim_inputs(
    *, max_servers: int = 3, max_jobs: int = 4, max_gpus: int = 8, max_workers: int = 4
) -> st.SearchStrategy[ReclaimInput]:
    """Reclaim inputs: a cluster with servers on loan, placed jobs, N_R.

    Parameters
    ----------
    max_servers : int, optional
        Servers besides the one on loan the cluster always has.
    max_jobs, max_gpus, max_workers : int, optional
        Jobs, GPUs per server and workers per job at most.

    Returns
    -------
    SearchStrategy of ReclaimInput

    Examples
    --------
    >>> from hypothesis import find
    >>> inp = find(reclaim_inputs(), lambda i: i.n_reclaim == 1 and i.n_jobs == 1)
    >>> inp.n_reclaim, inp.placement.as_mapping()
    (1, {'j0': {'s0': 1}})

    References
    ----------
    Aryl (EuroSys '22) §4.
    """
    return _reclaim_inputs(
        max_servers=max_servers, max_jobs=max_jobs, max_gpus=max_gpus, max_workers=max_workers
    )


@st.composite
def _placement_inputs(
    draw: st.DrawFn,
    *,
    max_servers: int = 3,
    max_jobs: int = 4,
    max_gpus: int = 8,
    max_workers: int = 4,
) -> PlacementInput:
    cluster = draw(clusters(max_servers=max_servers, max_gpus=max_gpus))
    job_list = fitting_jobs(
        cluster,
        draw(
            jobs(cluster, max_jobs=max_jobs, max_workers=max_workers, deadlines=False, batch=False)
        ),
    )
    running = draw(placements(cluster, job_list[: draw(st.integers(0, len(job_list)))]))
    workers = {}
    for job in job_list:
        if job.elastic and job.id not in running.jobs() and draw(st.booleans()):
            workers[job.id] = draw(st.integers(job.min_workers, job.max_workers))
    return PlacementInput(cluster, job_list, running, workers=workers)


def placement_inputs(
    *, max_servers: int = 3, max_jobs: int = 4, max_gpus: int = 8, max_workers: int = 4
) -> st.SearchStrategy[PlacementInput]:
    """Placement inputs: a heterogeneous cluster, running jobs, jobs to place.

    Parameters
    ----------
    max_servers, max_jobs, max_gpus, max_workers : int, optional
        Servers, jobs, GPUs per server and workers per job at most.

    Returns
    -------
    SearchStrategy of PlacementInput

    Examples
    --------
    >>> from hypothesis import find
    >>> inp = find(placement_inputs(), lambda i: i.n_jobs == 2)
    >>> inp.server_ids, inp.job_ids, inp.job_workers
    (('s0',), ('j0', 'j1'), (1, 1))

    References
    ----------
    Chronus (SoCC '21) §3.4; Aryl (EuroSys '22) §5.3.
    """
    return _placement_inputs(
        max_servers=max_servers, max_jobs=max_jobs, max_gpus=max_gpus, max_workers=max_workers
    )


@st.composite
def _lease_inputs(
    draw: st.DrawFn, *, max_jobs: int = 4, max_gpus: int = 4, max_terms: int = 6
) -> LeaseInput:
    capacity = draw(st.integers(1, max(1, max_gpus)))
    length = draw(st.sampled_from([1.0, 600.0]))
    job_list = []
    for k in range(draw(st.integers(0, max_jobs))):
        gpus = draw(st.integers(1, capacity))
        need = draw(st.integers(1, max(1, max_terms)))
        steps = draw(reward_steps(max_time=max_terms, non_increasing=True))
        steps = tuple(RewardStep(s.time * length, s.reward) for s in steps)
        early = draw(st.sampled_from([0.0, 0.5]))
        job_list.append(Job(f"j{k}", gpus, gpus, (need - early) * length, deadlines=steps))
    return LeaseInput(tuple(job_list), capacity, length)


def lease_inputs(
    *, max_jobs: int = 4, max_gpus: int = 4, max_terms: int = 6
) -> st.SearchStrategy[LeaseInput]:
    """Lease inputs: SLO jobs with reward steps, a GPU budget and a lease length.

    Parameters
    ----------
    max_jobs : int, optional
        Jobs at most.
    max_gpus : int, optional
        The lease cluster's GPUs at most (every job fits it alone).
    max_terms : int, optional
        Lease terms a job needs, and the latest deadline in terms, at most.

    Returns
    -------
    SearchStrategy of LeaseInput

    Examples
    --------
    >>> from hypothesis import find
    >>> inp = find(lease_inputs(), lambda i: len(i.jobs) == 1)
    >>> inp.capacity, inp.lease_length, inp.jobs[0].max_gpus
    (1, 1.0, 1)

    References
    ----------
    Chronus (SoCC '21) §3.3.
    """
    return _lease_inputs(max_jobs=max_jobs, max_gpus=max_gpus, max_terms=max_terms)


@st.composite
def _batch_size_inputs(
    draw: st.DrawFn, *, max_servers: int = 2, max_gpus: int = 4, max_jobs: int = 3
) -> BatchSizeInput:
    cluster = draw(
        clusters(max_servers=max_servers, max_gpus=max_gpus, kinds=("training",), max_types=1)
    )
    job_list = draw(
        jobs(
            max_jobs=max_jobs,
            max_workers=max_gpus,
            gpus_per_worker=(1,),
            elastic=None,
            deadlines=False,
            batch=True,
        )
    )
    # ONES runs a job on 1..max_workers single-GPU workers.
    job_list = tuple(
        Job(j.id, 1, j.max_workers, j.duration, batch=j.batch, submit_time=j.submit_time)
        for j in job_list
    )
    states = {j.id: JobState(beta=float(draw(st.integers(1, 30)))) for j in job_list}
    return BatchSizeInput(cluster, job_list, states, config=OnesConfig(population=4, generations=3))


def batch_size_inputs(
    *, max_servers: int = 2, max_gpus: int = 4, max_jobs: int = 3
) -> st.SearchStrategy[BatchSizeInput]:
    """ONES inputs: a homogeneous cluster and jobs with batch information.

    The search is configured small (population 4, 3 generations) so that
    a property test can afford many examples.

    Parameters
    ----------
    max_servers, max_gpus, max_jobs : int, optional
        Servers, GPUs per server and jobs at most.

    Returns
    -------
    SearchStrategy of BatchSizeInput

    Examples
    --------
    >>> from hypothesis import find
    >>> inp = find(batch_size_inputs(max_jobs=1), lambda i: True)
    >>> inp.n_gpus, inp.job_ids
    (1, ())

    References
    ----------
    ONES (SC '21) §3.2.
    """
    return _batch_size_inputs(max_servers=max_servers, max_gpus=max_gpus, max_jobs=max_jobs)


@st.composite
def allocation_inputs(
    draw: st.DrawFn, *, max_jobs: int = 4, max_workers: int = 4, max_capacity: int = 8
) -> AllocationInput:
    """Aryl allocation inputs: queued jobs, running elastic jobs, free GPUs.

    The capacity is drawn independently of the running jobs, so it is
    sometimes smaller than the flexible GPUs they hold: a valid input
    (flexible workers on slower on-loan GPUs count for less, Aryl §5.2;
    :class:`~scheduling_opt.allocation.AllocationInput`), in which every
    method must scale those jobs in.

    Parameters
    ----------
    max_jobs, max_workers : int, optional
        Jobs, and workers per job, at most.
    max_capacity : int, optional
        Free GPUs at most (at least 1).

    Returns
    -------
    SearchStrategy of AllocationInput

    Examples
    --------
    >>> from hypothesis import find
    >>> inp = find(allocation_inputs(), lambda i: len(i.jobs) == 1)
    >>> inp.capacity, inp.jobs[0].min_gpus, dict(inp.running)
    (1, 1, {})

    References
    ----------
    Aryl (EuroSys '22) §5.1-§5.2.
    """
    capacity = draw(st.integers(1, max(1, max_capacity)))
    job_list = draw(
        jobs(min_jobs=1, max_jobs=max_jobs, max_workers=max_workers, deadlines=False, batch=False)
    )
    running: dict[str, int] = {}
    for job in job_list:
        if job.elastic and draw(st.booleans()):
            running[job.id] = draw(st.integers(job.min_workers, job.max_workers))
    total = capacity + sum(j.min_gpus for j in job_list if j.id in running)
    kept = tuple(j for j in job_list if j.id in running or j.min_gpus <= total)
    return AllocationInput(kept, capacity, running)


#: Registry problem name -> its input strategy.
PROBLEMS: dict[str, Callable[..., st.SearchStrategy[Any]]] = {
    "allocation": allocation_inputs,
    "batch-size": batch_size_inputs,
    "lease": lease_inputs,
    "mckp": mckp_inputs,
    "memory-split": memory_split_inputs,
    "mmkp": mmkp_inputs,
    "placement": placement_inputs,
    "reclaim": reclaim_inputs,
}


def _known(problem: str) -> None:
    if problem not in PROBLEMS:
        raise ValueError(
            f"no strategy for problem {problem!r} (known: {', '.join(sorted(PROBLEMS))})"
        )


def inputs(problem: str, **sizes: int) -> st.SearchStrategy[Any]:
    """Valid typed inputs of a problem, by its registry name.

    Parameters
    ----------
    problem : str
        ``allocation``, ``batch-size``, ``lease``, ``mckp``, ``memory-split``, ``mmkp``,
        ``placement`` or ``reclaim``.
    **sizes : int
        The sizing keywords of that problem's strategy (``max_jobs`` ...).

    Returns
    -------
    SearchStrategy
        The problem's typed input.

    Raises
    ------
    ValueError
        For an unknown problem name.

    Examples
    --------
    >>> from hypothesis import find
    >>> type(find(inputs("reclaim", max_jobs=1), lambda i: True)).__name__
    'ReclaimInput'
    """
    _known(problem)
    return PROBLEMS[problem](**sizes)


def instances(problem: str, **sizes: int) -> st.SearchStrategy[Instance]:
    """Valid instances (the file's in-memory form) of a problem, by its registry name.

    Parameters
    ----------
    problem : str
        A registry problem name (see :func:`inputs`).
    **sizes : int
        The sizing keywords of that problem's strategy.

    Returns
    -------
    SearchStrategy of Instance
        Instances ``get_problem(problem).parse`` accepts.

    Raises
    ------
    ValueError
        For an unknown problem name.

    Examples
    --------
    >>> from hypothesis import find
    >>> from scheduling_opt.io.instance import dumps
    >>> print(dumps(find(instances("mckp"), lambda i: True), indent=None).strip())
    {"format": "scheduling-opt/v1", "problem": "mckp", "capacity": 0, "groups": []}
    """
    _known(problem)
    return PROBLEMS[problem](**sizes).map(to_instance)
