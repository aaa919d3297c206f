"""Every strategy of the kit draws what the file reader accepts; the invalid one what it refuses.

Few examples by default; the ``slow`` tests draw 1,000 of each (the
``kit-thousand`` hypothesis profile).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scheduling_opt.allocation import AllocationInput
from scheduling_opt.errors import InvalidInstanceError, SchedulingOptError
from scheduling_opt.io.instance import Instance, dumps, loads, to_dict
from scheduling_opt.lease import LeaseInput
from scheduling_opt.model import Placement
from scheduling_opt.policies.antman import AntManState
from scheduling_opt.policies.edl import EdlState
from scheduling_opt.testing import (
    PROBLEMS,
    InvalidDocument,
    antman_states,
    antman_worlds,
    appendix_c_pairs,
    batch_size_cases,
    brute_force_reclaim_instances,
    clusters,
    edl_jobs,
    edl_states,
    fuzzed_instances,
    inputs,
    instances,
    invalid_documents,
    jobs,
    placements,
    pooled_placement_instances,
    read_document,
    sim_workloads,
    tiny_lease_cases,
    tiny_placement_instances,
    to_instance,
)

settings.register_profile(
    "kit-thousand",
    parent=settings.default,
    max_examples=1000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
FEW = settings(
    parent=settings.default,
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
THOUSAND = settings.get_profile("kit-thousand")


def _run(
    strategy: st.SearchStrategy[Any], prop: Callable[[Any], object], profile: settings
) -> None:
    @profile
    @given(strategy)
    def run(value: Any) -> None:
        prop(value)

    run()


def _round_trips(problem: str) -> Callable[[Any], None]:
    def prop(inp: Any) -> None:
        written = to_dict(to_instance(inp))
        again = read_document(dumps(to_instance(inp)))  # JSON text -> the problem's reader
        assert type(again) is type(inp)
        assert to_dict(to_instance(again)) == written
        assert written["problem"] == problem

    return prop


def _model_round_trip(inst: Instance) -> None:
    assert loads(dumps(inst)) == inst


@st.composite
def _model_instances(draw: st.DrawFn) -> Instance:
    cluster = draw(clusters(max_servers=5))
    job_list = draw(
        jobs(cluster, max_jobs=5, tenants=("A", "B"), classes=True, submit_times=(0.0, 5.0))
    )
    return Instance("placement", cluster, job_list, draw(placements(cluster, job_list)))


def _refused(bad: InvalidDocument) -> None:
    with pytest.raises(SchedulingOptError):
        read_document(bad.document)


ALL = tuple(sorted(PROBLEMS))


@pytest.mark.parametrize("problem", ALL)
def test_problem_inputs_pass_the_file_reader(problem: str) -> None:
    _run(inputs(problem), _round_trips(problem), FEW)


@pytest.mark.slow
@pytest.mark.parametrize("problem", ALL)
def test_problem_inputs_pass_the_file_reader_1000(problem: str) -> None:
    _run(inputs(problem), _round_trips(problem), THOUSAND)


@pytest.mark.parametrize("problem", ALL)
def test_problem_instances_parse(problem: str) -> None:
    _run(instances(problem), lambda i: read_document(dumps(i)), FEW)


def test_model_strategies_pass_the_common_reader() -> None:
    _run(_model_instances(), _model_round_trip, FEW)


@pytest.mark.slow
def test_model_strategies_pass_the_common_reader_1000() -> None:
    _run(_model_instances(), _model_round_trip, THOUSAND)


@pytest.mark.slow
def test_policy_states_are_valid_by_construction() -> None:
    def is_antman(state: Any) -> None:
        assert isinstance(state, AntManState)
        assert sum(state.quotas.values()) <= state.cluster.total_gpus

    def is_edl(state: Any) -> None:
        assert isinstance(state, EdlState)

    _run(antman_states(), is_antman, FEW)
    _run(edl_states(), is_edl, FEW)


def test_invalid_documents_are_refused() -> None:
    _run(invalid_documents(problems=ALL), _refused, FEW)


@pytest.mark.slow
def test_invalid_documents_are_refused_1000() -> None:
    _run(invalid_documents(problems=ALL), _refused, THOUSAND)


def test_a_valid_document_before_its_flaw_is_accepted() -> None:
    # The refusals above come from the flaw, not from a broken starting document.
    _run(instances("reclaim"), lambda i: read_document(to_dict(i)), FEW)
    with pytest.raises(InvalidInstanceError, match="servers_to_reclaim"):
        read_document(
            {
                "format": "scheduling-opt/v1",
                "problem": "reclaim",
                "cluster": {
                    "gpu_types": [{"name": "V100"}],
                    "servers": [{"id": "s0", "gpu_type": "V100", "gpus": 1}],
                },
                "params": {"servers_to_reclaim": 1},
            }
        )


def test_unknown_problem_name_is_refused() -> None:
    with pytest.raises(ValueError, match="no strategy for problem 'nope'"):
        inputs("nope")


def test_import_without_hypothesis_says_how_to_install() -> None:
    code = "import sys; sys.modules['hypothesis'] = None; import scheduling_opt.testing"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert out.returncode != 0
    assert "ImportError" in out.stderr
    assert 'pip install "scheduling-opt[testing]"' in out.stderr


def _reads(inst: Instance) -> None:
    again = read_document(dumps(inst))
    assert to_dict(to_instance(again))["problem"] == inst.problem


def _lease_case(case: tuple[list[Any], int]) -> None:
    jobs_, gpus = case
    inp = LeaseInput(tuple(jobs_), gpus, 1.0)
    assert read_document(dumps(to_instance(inp))).capacity == gpus


def _pair(case: tuple[Any, Any, int]) -> None:
    p, q, c = case
    assert AllocationInput((p, q), c).capacity == c


def _world(world: tuple[Any, Any]) -> None:
    state, rounds = world
    assert isinstance(state, AntManState)
    assert rounds


def _edl(job_list: list[Any]) -> None:
    from scheduling_opt.model import Cluster, GpuType, Server

    cluster = Cluster((GpuType("V100"),), (Server("s0", "V100", 8),))
    assert len(EdlState(cluster, tuple(job_list), Placement()).jobs) == len(job_list)


def _sim(job_list: list[Any]) -> None:
    from scheduling_opt.sim import Workload

    assert len(Workload.of(job_list, "h").jobs) == len(job_list)


SHAPES: dict[str, tuple[st.SearchStrategy[Any], Callable[[Any], object]]] = {
    "fuzzed": (fuzzed_instances(), _model_round_trip),
    "reclaim-brute-force": (brute_force_reclaim_instances(), _reads),
    "placement-pooled": (pooled_placement_instances(), _reads),
    "placement-tiny": (tiny_placement_instances(), _reads),
    "lease-tiny": (tiny_lease_cases(), _lease_case),
    "appendix-c": (appendix_c_pairs(), _pair),
    "batch-size": (batch_size_cases(), _round_trips("batch-size")),
    "antman-worlds": (antman_worlds(), _world),
    "edl-jobs": (edl_jobs(), _edl),
    "sim-workloads": (sim_workloads(step=5), _sim),
}


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_shaped_strategies_draw_valid_inputs(name: str) -> None:
    strategy, prop = SHAPES[name]
    _run(strategy, prop, FEW)
