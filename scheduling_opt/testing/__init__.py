"""A property-based testing kit for schedulers: strategies, checkers as assertions, optima.

For a scheduler's authors who test their own placement, reclaim or lease
code against this library: hypothesis strategies for the model
(:mod:`.model`: GPU types, servers in training and inference pools or on
loan, heterogeneous clusters; :mod:`.workload`: jobs, placements), one
strategy per problem drawing valid typed inputs (:mod:`.problems`,
:mod:`.knapsack`, :mod:`.policies`), invalid instance documents
(:mod:`.invalid`), and assertions (:mod:`.assertions`):
:func:`assert_valid` runs the problem's independent checker and names the
rule, job and server broken; :func:`assert_within` compares with the proven
optimum. Needs hypothesis: ``pip install "scheduling-opt[testing]"``.
Guide: docs/testing.md.

Examples
--------
>>> from hypothesis import given, settings
>>> from scheduling_opt.reclaim import aryl
>>> from scheduling_opt.testing import assert_valid, reclaim_inputs
>>> @settings(max_examples=20, database=None)
... @given(reclaim_inputs())
... def test_aryl_is_valid(inp):
...     assert_valid(inp, aryl(inp))
>>> test_aryl_is_valid()
"""

from __future__ import annotations

try:
    import hypothesis  # noqa: F401
except ImportError as error:  # pragma: no cover  (exercised in a subprocess by the tests)
    raise ImportError(
        'scheduling_opt.testing needs hypothesis: pip install "scheduling-opt[testing]"'
    ) from error

from scheduling_opt.testing.assertions import (
    InvalidSolutionError,
    NotProvenError,
    NotWithinGapError,
    assert_valid,
    assert_within,
    problem_of,
)
from scheduling_opt.testing.documents import read_document, to_instance
from scheduling_opt.testing.fuzz import (
    ID_TEXT,
    REALS,
    fuzzed_clusters,
    fuzzed_instances,
    fuzzed_jobs,
    greedy_placement,
)
from scheduling_opt.testing.invalid import InvalidDocument, invalid_documents
from scheduling_opt.testing.knapsack import curves, mckp_inputs, memory_split_inputs, mmkp_inputs
from scheduling_opt.testing.model import (
    GPU_CATALOG,
    KINDS,
    ServerKind,
    clusters,
    gpu_types,
    servers,
)
from scheduling_opt.testing.ones import batch_size_cases, cluster_of, seeded_batch_size_input
from scheduling_opt.testing.policies import antman_states, antman_worlds, edl_jobs, edl_states
from scheduling_opt.testing.problems import (
    PROBLEMS,
    allocation_inputs,
    batch_size_inputs,
    inputs,
    instances,
    lease_inputs,
    placement_inputs,
    reclaim_inputs,
)
from scheduling_opt.testing.shapes import (
    TWO_TYPES,
    appendix_c_pairs,
    brute_force_reclaim_instances,
    pooled_placement_instances,
    tiny_lease_cases,
    tiny_placement_instances,
)
from scheduling_opt.testing.simulation import sim_workloads
from scheduling_opt.testing.workload import batch_infos, free_gpus, jobs, placements, reward_steps

__all__ = [
    "GPU_CATALOG",
    "ID_TEXT",
    "KINDS",
    "PROBLEMS",
    "REALS",
    "TWO_TYPES",
    "InvalidDocument",
    "InvalidSolutionError",
    "NotProvenError",
    "NotWithinGapError",
    "ServerKind",
    "allocation_inputs",
    "antman_states",
    "antman_worlds",
    "appendix_c_pairs",
    "assert_valid",
    "assert_within",
    "batch_infos",
    "batch_size_cases",
    "batch_size_inputs",
    "brute_force_reclaim_instances",
    "cluster_of",
    "clusters",
    "curves",
    "edl_jobs",
    "edl_states",
    "free_gpus",
    "fuzzed_clusters",
    "fuzzed_instances",
    "fuzzed_jobs",
    "gpu_types",
    "greedy_placement",
    "inputs",
    "instances",
    "invalid_documents",
    "jobs",
    "lease_inputs",
    "mckp_inputs",
    "memory_split_inputs",
    "mmkp_inputs",
    "placement_inputs",
    "placements",
    "pooled_placement_instances",
    "problem_of",
    "read_document",
    "reclaim_inputs",
    "reward_steps",
    "seeded_batch_size_input",
    "servers",
    "sim_workloads",
    "tiny_lease_cases",
    "tiny_placement_instances",
    "to_instance",
]
