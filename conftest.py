"""Marks the slow docstring examples (the test files mark their own tests).

Most examples of ``scheduling_opt.testing`` call ``hypothesis.find``, which
draws and then shrinks to the smallest example: 1-5 s each on a quiet 2-core
machine. Those below are marked ``slow`` (the full suite and CI run them;
``python -m pytest`` leaves them out, as it does every ``slow`` test); the
kit's strategies are still drawn by ``tests/testing/`` in the default run.
"""

from __future__ import annotations

import pytest

#: Doctest item names (``module.qualified name``) that take a second or more.
SLOW_DOCTESTS = frozenset(
    {
        "scheduling_opt.testing.fuzz.fuzzed_clusters",
        "scheduling_opt.testing.fuzz.fuzzed_instances",
        "scheduling_opt.testing.fuzz.fuzzed_jobs",
        "scheduling_opt.testing.invalid.invalid_documents",
        "scheduling_opt.testing.model.clusters",
        "scheduling_opt.testing.ones.batch_size_cases",
        "scheduling_opt.testing.policies.antman_states",
        "scheduling_opt.testing.policies.antman_worlds",
        "scheduling_opt.testing.policies.edl_jobs",
        "scheduling_opt.testing.problems.batch_size_inputs",
        "scheduling_opt.testing.problems.inputs",
        "scheduling_opt.testing.problems.placement_inputs",
        "scheduling_opt.testing.shapes.pooled_placement_instances",
        "scheduling_opt.testing.shapes.tiny_lease_cases",
        "scheduling_opt.testing.workload.jobs",
    }
)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Add the ``slow`` marker to the doctests of :data:`SLOW_DOCTESTS` (before ``-m`` selects)."""
    for item in items:
        if item.name in SLOW_DOCTESTS:
            item.add_marker(pytest.mark.slow)
