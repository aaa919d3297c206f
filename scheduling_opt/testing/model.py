"""Hypothesis strategies for the shared model's hardware: GPU types, servers, clusters.

Every strategy draws values the model's constructors (and so the instance
file reader) accept, sized by keyword arguments (servers, GPUs per server,
GPU types), and shrinks towards small readable examples: ids ``s0, s1,
...``, GPU types to ``V100``, pools to ``training``, GPU counts to 1. Jobs
and placements are in :mod:`scheduling_opt.testing.workload`. Papers: Aryl
§3-§4 and Appendix E (training and inference pools, servers on loan, V100 =
1.0 and T4 = 0.25 compute). Drawing is linear in the drawn size.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Literal

from hypothesis import strategies as st

from scheduling_opt.model import (
    Cluster,
    GpuType,
    Server,
)

__all__ = ["GPU_CATALOG", "KINDS", "ServerKind", "clusters", "gpu_types", "servers"]

#: GPU types drawn by default, most readable first (V100 = 1.0 relative compute, Aryl App. E).
GPU_CATALOG: tuple[GpuType, ...] = (
    GpuType("V100", 1.0, 32.0),
    GpuType("T4", 0.25, 16.0),
    GpuType("A100", 2.0, 80.0),
)

#: A server's role: a training server, an inference server lent to training, or one kept.
ServerKind = Literal["training", "on_loan", "inference"]
KINDS: tuple[ServerKind, ...] = ("training", "on_loan", "inference")

_REALS = st.floats(min_value=0.001, max_value=1e6, allow_nan=False, allow_infinity=False)


def gpu_types(
    *, max_types: int = 2, names: st.SearchStrategy[str] | None = None
) -> st.SearchStrategy[tuple[GpuType, ...]]:
    """Distinct GPU types: a prefix of :data:`GPU_CATALOG`, or random ones.

    Parameters
    ----------
    max_types : int, optional
        The most types (1..3 from the catalog; any number with ``names``).
    names : SearchStrategy of str, optional
        Draw the type names from it, with random compute and memory (for
        round-trip fuzzing); default: the catalog's readable types.

    Returns
    -------
    SearchStrategy of tuple of GpuType
        At least one type; shrinks to ``(V100,)``.

    Examples
    --------
    >>> from hypothesis import find
    >>> find(gpu_types(), lambda t: True)
    (GpuType(name='V100', compute=1.0, memory_gb=32.0),)
    """
    if names is None:
        top = max(1, min(max_types, len(GPU_CATALOG)))
        return st.integers(1, top).map(lambda n: GPU_CATALOG[:n])

    @st.composite
    def drawn(draw: st.DrawFn) -> tuple[GpuType, ...]:
        chosen = draw(st.lists(names, min_size=1, max_size=max(1, max_types), unique=True))
        return tuple(GpuType(n, draw(_REALS), draw(_REALS)) for n in chosen)

    return drawn()


def servers(
    server_id: str,
    type_names: Sequence[str] = ("V100",),
    *,
    max_gpus: int = 8,
    kinds: Sequence[ServerKind] = KINDS,
    gpus: st.SearchStrategy[int] | None = None,
) -> st.SearchStrategy[Server]:
    """One server called ``server_id``: a GPU type, a GPU count and a pool.

    Parameters
    ----------
    server_id : str
        Its id.
    type_names : sequence of str
        The GPU type names to pick from (the first is the shrink target).
    max_gpus : int, optional
        GPUs at most (at least 1).
    kinds : sequence of ServerKind, optional
        Allowed roles: ``training``, ``on_loan`` (an inference server lent to
        training) and ``inference`` (kept by inference: training may not use it).
    gpus : SearchStrategy of int, optional
        Draw the GPU count from it instead (values >= 1).

    Returns
    -------
    SearchStrategy of Server

    Examples
    --------
    >>> from hypothesis import find
    >>> find(servers("s0"), lambda s: s.on_loan)
    Server(id='s0', gpu_type='V100', gpus=1, pool='inference', on_loan=True)
    """
    counts = gpus if gpus is not None else st.integers(1, max(1, max_gpus))

    @st.composite
    def server(draw: st.DrawFn) -> Server:
        kind = draw(st.sampled_from(list(kinds)))
        gpu_type, n = draw(st.sampled_from(list(type_names))), draw(counts)
        if kind == "training":
            return Server(server_id, gpu_type, n)
        return Server(server_id, gpu_type, n, "inference", kind == "on_loan")

    return server()


@st.composite
def clusters(
    draw: st.DrawFn,
    *,
    min_servers: int = 1,
    max_servers: int = 4,
    max_gpus: int = 8,
    max_types: int = 2,
    kinds: Sequence[ServerKind] = KINDS,
    min_on_loan: int = 0,
    gpus: st.SearchStrategy[int] | None = None,
    ids: st.SearchStrategy[str] | None = None,
    types: st.SearchStrategy[tuple[GpuType, ...]] | None = None,
) -> Cluster:
    """A heterogeneous cluster: training servers, servers on loan, inference servers.

    Parameters
    ----------
    min_servers, max_servers : int, optional
        How many servers (before the ``min_on_loan`` ones).
    max_gpus : int, optional
        GPUs per server at most.
    max_types : int, optional
        GPU types at most.
    kinds : sequence of ServerKind, optional
        Roles the servers may take (see :func:`servers`).
    min_on_loan : int, optional
        Servers on loan the cluster has at least (appended as ``s<k>``).
    gpus : SearchStrategy of int, optional
        GPU counts (default ``1..max_gpus``).
    ids : SearchStrategy of str, optional
        Draw unique server ids from it (default ``s0, s1, ...``).
    types : SearchStrategy of tuple of GpuType, optional
        The GPU types (default :func:`gpu_types` with ``max_types``).

    Returns
    -------
    SearchStrategy of Cluster

    Examples
    --------
    >>> from hypothesis import find
    >>> c = find(clusters(min_on_loan=1), lambda c: True)
    >>> [(s.id, s.gpus, s.pool, s.on_loan) for s in c.servers]
    [('s0', 1, 'training', False), ('s1', 1, 'inference', True)]
    """
    type_tuple = draw(types if types is not None else gpu_types(max_types=max_types))
    names = [t.name for t in type_tuple]
    # Lists, not a drawn count: hypothesis shrinks a list by deleting elements.
    kept = draw(
        st.lists(
            servers("s", names, max_gpus=max_gpus, kinds=kinds, gpus=gpus),
            min_size=min_servers,
            max_size=max(min_servers, max_servers),
        )
    )
    lent = [
        draw(servers("s", names, max_gpus=max_gpus, kinds=("on_loan",), gpus=gpus))
        for _ in range(min_on_loan)
    ]
    n = len(kept) + len(lent)
    if ids is None:
        server_ids = [f"s{k}" for k in range(n)]
    else:
        server_ids = draw(st.lists(ids, min_size=n, max_size=n, unique=True))
    out = [replace(s, id=sid) for s, sid in zip([*kept, *lent], server_ids, strict=True)]
    return Cluster(type_tuple, tuple(out))
