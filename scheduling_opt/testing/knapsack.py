"""Strategies for the knapsack-shaped problems: MCKP, MMKP and AntMan's GPU-memory split.

:func:`mckp_inputs` draws multiple-choice knapsacks with small integer
weights and values (Aryl §5.2, Appendix D); :func:`mmkp_inputs` the same
with a weight and a capacity per resource (GPU type) and a ``none`` value
per group (Sia §3.3); :func:`memory_split_inputs`
draws opportunistic jobs sharing one GPU, with slowdown :func:`curves`
(AntMan §3.3, Figure 10). Both are built with the typed constructors and
shrink to empty groups and single jobs. Drawing is linear in the size.
"""

from __future__ import annotations

from hypothesis import strategies as st

from scheduling_opt.mckp import Mckp
from scheduling_opt.memory_split import MemorySplitInput, OpportunisticJob
from scheduling_opt.mmkp import Mmkp

__all__ = ["curves", "mckp_inputs", "memory_split_inputs", "mmkp_inputs"]


@st.composite
def mckp_inputs(
    draw: st.DrawFn,
    *,
    max_groups: int = 4,
    max_items: int = 3,
    max_weight: int = 10,
    max_value: int = 100,
) -> Mckp:
    """Multiple-choice knapsacks with integer weights and values.

    Parameters
    ----------
    max_groups, max_items : int, optional
        Groups, and items per group, at most.
    max_weight, max_value : int, optional
        The largest item weight and value (the capacity is at most
        ``max_groups * max_weight``).

    Returns
    -------
    SearchStrategy of Mckp

    Examples
    --------
    >>> from hypothesis import find
    >>> inp = find(mckp_inputs(), lambda m: m.n_groups == 1)
    >>> inp.capacity, inp.group(0)[0].tolist()
    (0, [])

    References
    ----------
    Aryl (EuroSys '22) §5.2, Appendix D.
    """
    groups = draw(
        st.lists(
            st.lists(
                st.tuples(st.integers(0, max_weight), st.integers(0, max_value)),
                max_size=max_items,
            ),
            max_size=max_groups,
        )
    )
    capacity = draw(st.integers(0, max(0, max_groups * max_weight)))
    return Mckp.from_groups([[(w, float(v)) for w, v in g] for g in groups], capacity)


@st.composite
def mmkp_inputs(
    draw: st.DrawFn,
    *,
    max_groups: int = 4,
    max_items: int = 3,
    max_resources: int = 3,
    max_weight: int = 10,
    max_value: int = 100,
) -> Mmkp:
    """Multiple-choice knapsacks with a capacity per resource, integer weights and values.

    Parameters
    ----------
    max_groups, max_items, max_resources : int, optional
        Groups, items per group and resources at most (at least one resource).
    max_weight, max_value : int, optional
        The largest weight and value; ``none`` values lie in
        ``-max_value..0`` (Sia's penalty for a job left out).

    Returns
    -------
    SearchStrategy of Mmkp

    Examples
    --------
    >>> from hypothesis import find
    >>> inp = find(mmkp_inputs(), lambda m: m.n_resources == 2)
    >>> inp.capacity.tolist(), inp.n_groups
    ([0, 0], 0)

    References
    ----------
    Sia (SOSP '23) §3.3.
    """
    r = draw(st.integers(1, max(1, max_resources)))
    weight = st.tuples(*[st.integers(0, max_weight)] * r)
    groups = draw(
        st.lists(
            st.lists(st.tuples(weight, st.integers(0, max_value)), max_size=max_items),
            max_size=max_groups,
        )
    )
    capacity = draw(st.tuples(*[st.integers(0, max(0, max_groups * max_weight))] * r))
    none = draw(st.lists(st.integers(-max_value, 0), min_size=len(groups), max_size=len(groups)))
    return Mmkp.from_groups(
        [[(w, float(v)) for w, v in g] for g in groups], capacity, [float(x) for x in none]
    )


@st.composite
def curves(draw: st.DrawFn, *, max_points: int = 2) -> tuple[tuple[float, float], ...]:
    """AntMan slowdown curves: increasing memory fractions, non-decreasing speeds, then (1, 1).

    Parameters
    ----------
    max_points : int, optional
        Inner points at most.

    Returns
    -------
    SearchStrategy of tuple of (float, float)

    Examples
    --------
    >>> from hypothesis import find
    >>> find(curves(), lambda c: len(c) == 2)
    ((0.05, 0.0), (1.0, 1.0))

    References
    ----------
    AntMan (OSDI '20) §3.3, Figure 10.
    """
    fractions = sorted(set(draw(st.lists(st.integers(5, 95), max_size=max_points))))
    speeds = sorted(
        draw(st.lists(st.integers(0, 1000), min_size=len(fractions), max_size=len(fractions)))
    )
    inner = tuple((f / 100, s / 1000) for f, s in zip(fractions, speeds, strict=True))
    return (*inner, (1.0, 1.0))


@st.composite
def memory_split_inputs(
    draw: st.DrawFn, *, max_jobs: int = 4, max_peak_gb: int = 6, max_spare_gb: int = 16
) -> MemorySplitInput:
    """GPU-memory splits: opportunistic jobs on one 64 GB GPU, 1 GB chunks.

    Parameters
    ----------
    max_jobs : int, optional
        Opportunistic jobs at most (at least one).
    max_peak_gb : int, optional
        A job's peak memory at most.
    max_spare_gb : int, optional
        The memory the guarantee job leaves at most.

    Returns
    -------
    SearchStrategy of MemorySplitInput

    Examples
    --------
    >>> from hypothesis import find
    >>> inp = find(memory_split_inputs(), lambda i: True)
    >>> inp.memory_gb, inp.guarantee_gb, [j.id for j in inp.jobs]
    (64.0, 64.0, ['j0'])

    References
    ----------
    AntMan (OSDI '20) §3.3.
    """
    n = draw(st.integers(1, max(1, max_jobs)))
    job_list = tuple(
        OpportunisticJob(f"j{k}", float(draw(st.integers(1, max_peak_gb))), draw(curves()))
        for k in range(n)
    )
    spare = draw(st.integers(0, max_spare_gb))
    return MemorySplitInput(64.0, job_list, 64.0 - spare, 1.0)
