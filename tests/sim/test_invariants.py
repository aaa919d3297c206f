"""Invariants on hypothesis-generated workloads, for every registered policy.

Every policy name the registry knows runs here, the papers' policies and
their baselines included: a new policy is covered the moment it is
declared. ONES' family needs jobs of ONES' tasks (their batch model), so it
draws from ONES' workload generator; every other policy from the kit's
simulator workloads.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduling_opt.reproduce.workloads import ElasticRule
from scheduling_opt.sim import (
    ClusterSpec,
    Decision,
    EngineParams,
    Policy,
    RunConfig,
    SimJob,
    SyntheticSpec,
    View,
    Workload,
    WorkloadSpec,
    make_policy,
    policy_names,
    policy_spec,
    run_config,
    simulate,
    summarize,
)
from scheduling_opt.sim.cli.output import jobs_csv
from scheduling_opt.sim.policies.aryl.load import LoadCurve
from scheduling_opt.sim.registry import run_cluster, run_workload
from scheduling_opt.testing import sim_workloads
from tests.sim.helpers import workloads_for

BASELINES = policy_names("baselines")
#: Policies whose jobs carry ONES' batch model (their speed factors exceed 1).
ONES = policy_names("ones")
#: Policies that share GPUs between two jobs (the engine's opportunistic slot).
SHARING = policy_names("antman")
#: Policies that solve a MILP or search at every call: their long runs are slow.
HEAVY = ("3sigma", "chronus-exact", "ones", "ones-exact", "aryl-plus", "aryl-exact")


_jobs = workloads_for


def _marked(names: tuple[str, ...], slow: tuple[str, ...] = ()) -> list[object]:
    return [pytest.param(n, marks=pytest.mark.slow) if n in slow else n for n in names]


SERVERS, GPUS = 2, 8


class Audited:
    """Wraps a policy; checks the live cluster state the engine shows at every call."""

    def __init__(self, inner: Policy) -> None:
        self.inner = inner
        self.name = inner.name
        # The optional parts the engine reads (sim/protocol.py): the run must be the policy's.
        for part in ("interference", "guests_per_gpu", "period"):
            if hasattr(inner, part):
                setattr(self, part, getattr(inner, part))

    def decide(self, view: View) -> Decision:
        stacked = getattr(self, "guests_per_gpu", 1)
        guests: dict[tuple[int, int], int] = {}
        for st_ in view.running.values():
            if st_.opportunistic:
                for g in st_.gpus:
                    guests[g] = guests.get(g, 0) + 1
        assert all(n <= stacked for n in guests.values())  # at most k guests per GPU
        used = [0] * len(view.capacity)
        for st_ in view.running.values():
            if st_.opportunistic:  # the GPUs' second slot: not in the free map
                continue
            for s, g in st_.placement:
                used[s] += g
        for s, cap in enumerate(view.capacity):
            assert used[s] + view.free[s] == cap
            assert 0 <= used[s] <= cap
        for st_ in view.pending.values():
            assert st_.job.submit <= view.now
        return self.inner.decide(view)


@pytest.mark.parametrize("name", _marked(policy_names(), HEAVY))
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_invariants(name: str, data: st.DataObject) -> None:
    _check(name, _params(name), data.draw(_jobs(name)))


#: ONES' system mechanisms off their defaults (the defaults run above): the
#: update at every event, the prior, no change cost (the policy before them),
#: the convergence option, a large change cost on a tiny history, idle GPUs
#: filled between updates, and a restart cost under the stalls.
ONES_PATHS = (
    ("ones", (("update", "event"), ("progress", "prior"), ("change_cost", 0.0)), 0.0),
    ("ones", (("epoch_limit", 1.0), ("epoch_growth", 0.5)), 0.0),
    ("ones", (("change_cost", 5.0), ("history", 8), ("sigma", 0.0)), 3.0),
    ("ones-exact", (("epoch_limit", 2.0), ("update", "event")), 0.0),
    ("ones", (("update", "epoch-fill"), ("epoch_limit", 1.0)), 2.0),
    ("fixed-batch", (("update", "event"),), 0.0),
    ("fixed-batch", (("update", "epoch-fill"),), 2.0),
    ("fixed-batch", (("progress", "prior"),), 3.0),
)


@pytest.mark.parametrize(
    ("name", "params", "restart"),
    # The search's runs take seconds: in the full suite (the hand-computed
    # schedules of tests/reproduce/test_ones_system.py stay in the default run).
    [pytest.param(*p, marks=pytest.mark.slow) if p[0] in HEAVY else p for p in ONES_PATHS],
)
@settings(max_examples=10, deadline=None)
@given(data=st.data())
def test_invariants_on_ones_system_paths(
    name: str, params: tuple[tuple[str, object], ...], restart: float, data: st.DataObject
) -> None:
    _check(name, dict(params), data.draw(_jobs(name)), EngineParams(restart_cost=restart))


#: EDL's runtime off its defaults, on elastic jobs: stragglers removed or kept
#: (a high rate, and 10 s per time unit so that a detection, 11.7 s, falls
#: within these jobs' few units), Stop-Resume's stops under a restart cost,
#: the plain step with stragglers, migrations under compaction at every wait.
EDL_PATHS = (
    ("elastic-tiresias", (("straggler_rate", 0.5), ("unit_seconds", 10.0)), 0.0),
    ("elastic-tiresias", (("straggler_rate", 0.5), ("mitigate", False)), 0.0),
    ("elastic-tiresias", (("scaling", "stop-resume"), ("straggler_rate", 0.5)), 2.0),
    ("edl-tiresias", (("straggler_rate", 0.5), ("unit_seconds", 10.0)), 0.0),
    ("elastic-tiresias", (("migrate", True), ("compaction", 0), ("straggler_rate", 0.3)), 1.0),
)
ELASTIC = ElasticRule(share=1.0, min_fraction=0.5, max_factor=1.0, serial=0.0)  # as _check assumes


@pytest.mark.parametrize(("name", "params", "restart"), EDL_PATHS)
@settings(max_examples=10, deadline=None)
@given(data=st.data())
def test_invariants_on_edl_system_paths(
    name: str, params: tuple[tuple[str, object], ...], restart: float, data: st.DataObject
) -> None:
    jobs = [ELASTIC.apply(j) for j in data.draw(_jobs(name))]
    _check(name, dict(params), jobs, EngineParams(restart_cost=restart))


def _check(
    name: str, params: dict[str, object], jobs: list[SimJob], engine: EngineParams | None = None
) -> None:
    w = Workload.of(jobs, "h")
    c = ClusterSpec.uniform(SERVERS, GPUS)
    out = simulate(w, c, Audited(make_policy(name, w, c, params)), params=engine or EngineParams())
    for j, start, end, gt in zip(out.jobs, out.first_start, out.end, out.gpu_time, strict=True):
        assert j.submit <= start <= end  # completed once, after its submission
        if name not in ONES:  # a larger batch runs faster than the submitted one
            assert end >= start + j.work - 1e-9  # speed <= 1 here: no job beats its work
            assert gt >= j.gpus * j.work - 1e-6
    if name in SHARING:  # a shared GPU is busy once, held by two jobs
        assert out.busy_area <= sum(out.gpu_time) * (1 + 1e-12)
    else:
        assert out.busy_area == pytest.approx(sum(out.gpu_time))
    m = summarize(out)
    assert 0.0 <= m["utilization"] <= 1.0 + 1e-12
    assert m["jobs"] == len(jobs)


#: Aryl's system paths: on-loan servers, kept groups, heterogeneous training and
#: the scenarios' jobs (every job elastic, imperfect scaling), as ``run_config``
#: makes them (the family's cluster and workload hooks), with a load curve
#: that lends and reclaims (``test_aryl_system.py`` for the hand-computed ones).
ARYL_SYSTEM = [
    # Every job elastic: the Ideal runs take about a second; the others keep the area fast.
    pytest.param(name, loss, marks=pytest.mark.slow) if name == "aryl-ideal" else (name, loss)
    for name in ("aryl", "aryl-no-groups", "aryl-advanced", "aryl-ideal")
    for loss in (0.0, 0.1)
]


@pytest.mark.parametrize(("name", "loss"), ARYL_SYSTEM)
@settings(max_examples=15, deadline=None)
@given(jobs=sim_workloads(), compute=st.sampled_from((1.0, 0.25)))
def test_aryl_system_invariants(name: str, loss: float, jobs: list[SimJob], compute: float) -> None:
    params: dict[str, object] = {
        "inference_servers": 2,
        "inference_gpus": 4,
        "inference_compute": compute,
        "scaling_loss": loss,
        "interval": 5.0,
    }
    w = run_workload(name, Workload.of(jobs, "h"), params)
    c = run_cluster(name, ClusterSpec.uniform(SERVERS, GPUS), params)
    curve = LoadCurve((0.0, 10.0, 20.0, 40.0), (0.0, 1.0, 0.0, 2.0), "servers")
    policy = make_policy(name, w, c, {**params, "curve": None})
    policy.curve = curve  # type: ignore[attr-defined]
    out = simulate(w, c, Audited(policy))
    for j, start, end, gt in zip(out.jobs, out.first_start, out.end, out.gpu_time, strict=True):
        assert j.submit <= start <= end
        # A GPU's speed is at most 1 (compute <= 1, heterogeneous jobs at most
        # their GPUs' summed compute, imperfect scaling below linear), so a
        # job holds at least its nominal GPU-time, elastic or not.
        assert gt >= j.gpus * j.work - 1e-6
    assert out.busy_area == pytest.approx(sum(out.gpu_time))
    m = summarize(out)
    assert 0.0 <= m["utilization"] <= 1.0 + 1e-12
    assert m["jobs"] == len(jobs)


def _params(name: str) -> dict[str, object]:
    # Small thresholds so that Tiresias demotes and promotes on these tiny jobs.
    return {"thresholds": (20.0,), "promote_knob": 2.0} if name == "tiresias" else {}


#: Tiresias' timers fall on the rounds too: a threshold of 240 GPU-minutes is
#: crossed after 240/g minutes (a multiple of 5 for g in 1, 2, 4, 8, 12, 16),
#: and promotions come after an integer knob x a multiple of 5.
ALIGNED = {
    "tiresias": {"thresholds": (240.0,), "promote_knob": 2.0},
    # Themis' rounds and 3Sigma's cycle on the grid too.
    "themis": {"round_length": 5.0},
    "3sigma": {"cycle": 5.0},
}


@pytest.mark.parametrize("name", BASELINES)
@settings(max_examples=30, deadline=None)
@given(jobs=sim_workloads(step=5))
def test_round_mode_equals_event_mode_on_aligned_times(name: str, jobs: list[SimJob]) -> None:
    """Submits and works are multiples of the round (5): every event is on a boundary."""
    w = Workload.of(jobs, "h")
    c = ClusterSpec.uniform(SERVERS, GPUS)
    params = ALIGNED.get(name, {})
    event = simulate(w, c, make_policy(name, w, c, params))
    rounds = simulate(w, c, make_policy(name, w, c, params), params=EngineParams(round_length=5.0))
    assert rounds.first_start == event.first_start
    assert rounds.end == event.end
    assert rounds.preemptions == event.preemptions


# The papers' policies' determinism runs (and 3Sigma's) take seconds each: in
# the full suite; their hand-computed schedules stay in the default run.
@pytest.mark.parametrize(
    "name",
    _marked(
        tuple(n for n in policy_names() if n not in ONES),
        (*(n for n in policy_names() if n not in BASELINES), "3sigma"),
    ),
)
def test_same_seed_gives_byte_identical_jobs_csv(name: str) -> None:
    spec = WorkloadSpec("synthetic", synthetic=SyntheticSpec(jobs=300, rate=0.5))
    config = RunConfig(name, spec, servers=4, gpus_per_server=8, seed=3)
    a, b = run_config(config), run_config(config)
    assert jobs_csv([a]) == jobs_csv([b])
    other = run_config(RunConfig(name, spec, servers=4, gpus_per_server=8, seed=4))
    assert jobs_csv([other]) != jobs_csv([a])


def test_every_declared_policy_is_in_these_tests() -> None:
    # The invariants loop over the registry: each family's names are there.
    families = {policy_spec(n).family for n in policy_names()}
    assert families >= {"baselines", "edl", "chronus", "aryl", "antman", "ones"}
    assert {
        "gandiva",
        "gandiva-pack",
        "gandiva-scale",
        "fixed-batch",
        "afs",
        "fifo-no-loan",
    } <= set(policy_names())


def test_every_policy_has_a_fingerprint_case() -> None:
    # benchmarks/sim_fingerprints.py proves a refactor changed no decision:
    # its fast set must run every registered policy, and each case be recorded.
    import importlib.util
    import json
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    spec = importlib.util.spec_from_file_location(
        "sim_fingerprints", root / "benchmarks" / "sim_fingerprints.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    cases = module.cases("fast")
    assert {c.policy for c in cases.values()} == set(policy_names())
    recorded = json.loads((root / "benchmarks" / "sim-fingerprints.json").read_text())
    assert set(cases) <= set(recorded)
