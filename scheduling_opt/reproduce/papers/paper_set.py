"""A paper's set, as types: its policies x workloads x seeds as simulator runs, and its claims.

A :class:`PaperSet` names the policies (registry names with parameters), the
full workloads (the Chronus-Philly traces by path, used only when present)
and the ``--quick`` workload (the bundled excerpt), the cluster, and the
paper's headline numbers as :class:`Claim` objects, each of which knows how
to compute our number from the runs' metrics. A set may also hold
microbenchmarks (:class:`Scenario`: a few jobs on one server, each policy
run once, claims on the jobs' times, :class:`Measure`). Each paper's set is
a module of :mod:`scheduling_opt.reproduce.papers`.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.reproduce.costs import NO_COSTS, Costs
from scheduling_opt.reproduce.workloads import (
    MAX_DENSITY,
    DensityRule,
    ElasticRule,
    PaperWorkload,
)
from scheduling_opt.sim.registry import policy_spec
from scheduling_opt.sim.sweep import RunConfig
from scheduling_opt.sim.workload import SimJob

#: The Chronus-Philly workloads by file stem (P_SLO, P_MIX1, P_MIX2).
TRACE_FILES = {
    "P_SLO": "trace_job_Philly_SLO.csv",
    "P_MIX1": "trace_job_Philly_MIX1.csv",
    "P_MIX2": "trace_job_Philly_MIX2.csv",
}

Kind = Literal["reduction", "ratio", "value"]


@dataclass(frozen=True, slots=True)
class Claim:
    """One published number and how to compute ours.

    ``kind``: ``reduction`` = (baseline - policy) / baseline in percent;
    ``ratio`` = baseline / policy (the paper's "x times lower"); ``value`` =
    the policy's metric itself. ``among``: when given, the baseline is one
    of these runs, chosen by ``pick``: ``"best"`` the one that gives the
    smallest number (the best baseline: the strictest reading), ``"max"``
    the one that gives the largest (the paper's "up to ... compared to
    existing schedulers"). ``scope``: ``"point"`` judges the claim at the
    paper's own load on each workload; ``"grid"`` takes the largest number
    over every workload and density of the run (an "up to" claim), naming
    where it occurs. ``note``: a cause we know, printed beside a verdict
    that is not "reproduced". ``over``: labels of the same baseline run
    under other values of a parameter the paper does not pin down (e.g.
    Gandiva's packing interference): the report gives the claim against
    each of them too, as a range, beside the verdict against ``baseline``.
    ``skip_on``: base workloads the claim does not speak of (their runs
    have none of the jobs its metric counts, e.g. best-effort JCT on an
    SLO-only trace): no row there, and not in an "up to" maximum.
    ``paper_baseline``: a ``value`` claim's baseline level in the paper
    (Aryl's usage 0.86 against the Baseline's 0.72): the claim is then
    also judged by its side of ``baseline``'s level.
    The verdict rule is :func:`scheduling_opt.reproduce.verdict.judge`.

    Examples
    --------
    >>> c = Claim("mean JCT", "jct_mean", "reduction", 89.5, "tiresias", "elastic-tiresias")
    >>> c.ours({"tiresias": {"jct_mean": 200.0}, "elastic-tiresias": {"jct_mean": 50.0}})
    75.0
    >>> c.show(75.0)
    '-75.0%'
    >>> up = Claim("wDMR", "wdmr", "ratio", 14.7, "any", "chronus", ("edf", "fifo"), pick="max")
    >>> m = {"edf": {"wdmr": 0.1}, "fifo": {"wdmr": 0.4}, "chronus": {"wdmr": 0.05}}
    >>> up.base_of(m), up.ours(m)
    ('fifo', 8.0)
    """

    what: str
    metric: str
    kind: Kind
    paper: float
    baseline: str
    policy: str
    among: tuple[str, ...] = ()
    pick: Literal["best", "max"] = "best"
    scope: Literal["point", "grid"] = "point"
    note: str = ""
    over: tuple[str, ...] = ()
    skip_on: tuple[str, ...] = ()
    paper_baseline: float | None = None

    def against(self, metrics: Mapping[str, Mapping[str, float]], baseline: str) -> float | None:
        """Our number against ``baseline`` (None when a run is missing or 0 divides)."""
        if self.policy not in metrics or (self.kind != "value" and baseline not in metrics):
            return None
        ours = metrics[self.policy][self.metric]
        if self.kind == "value":
            return ours
        base = metrics[baseline][self.metric]
        if self.kind == "reduction":
            return 100.0 * (base - ours) / base if base else None
        if ours == 0:
            return math.inf if base > 0 else None
        return base / ours

    def base_of(self, metrics: Mapping[str, Mapping[str, float]]) -> str:
        """The baseline's label: ``baseline``, or the one of ``among`` that ``pick`` chooses.

        Examples
        --------
        >>> c = Claim("wDMR", "wdmr", "ratio", 14.7, "best baseline", "chronus", ("edf", "fifo"))
        >>> c.base_of({"edf": {"wdmr": 0.1}, "fifo": {"wdmr": 0.4}})
        'edf'
        """
        ran = [b for b in self.among if b in metrics]
        if not ran:
            return self.baseline
        if self.policy not in metrics or self.kind == "value":
            return min(ran, key=lambda b: (metrics[b][self.metric], self.among.index(b)))
        sign = 1.0 if self.pick == "best" else -1.0
        scored = [(self.against(metrics, b), self.among.index(b), b) for b in ran]
        valued = [(sign * v, k, b) for v, k, b in scored if v is not None]
        return min(valued)[2] if valued else ran[0]

    def ours(self, metrics: Mapping[str, Mapping[str, float]]) -> float | None:
        """Our number from ``label -> metrics`` (None when a run is missing or 0 divides)."""
        return self.against(metrics, self.base_of(metrics))

    def show(self, value: float | None) -> str:
        """``value`` written the way the paper writes it."""
        if value is None:
            return "n/a"
        if self.kind == "reduction":
            return f"{-value:+.1f}%"
        if self.kind == "ratio":
            return "inf (ours 0)" if math.isinf(value) else f"{value:.2f}x"
        return f"{value:.3g}"


@dataclass(frozen=True, slots=True)
class PolicyRun:
    """A registry policy name, its parameters, and its name in the report.

    ``label`` names the run when one policy runs under several parameter
    values (``RunConfig.label``; default: the policy's name); ``everywhere``
    False runs it only at the judged density; ``quick`` False leaves it out
    of ``--quick``.
    """

    policy: str
    params: tuple[tuple[str, Any], ...] = ()
    label: str = ""
    #: False: run only at the judged density (an expensive policy that the
    #: load sweep leaves out; :meth:`PaperSet.configs`).
    everywhere: bool = True
    #: False: left out of ``--quick`` (too slow for its two-minute budget).
    quick: bool = True
    #: Made only on the set's study workload (:class:`Study`), not on the others.
    study: bool = False

    @property
    def name(self) -> str:
        """The run's name in the report: ``label``, else the policy."""
        return self.label or self.policy


@dataclass(frozen=True, slots=True)
class LoadTarget:
    """The paper's load, stated as a statistic of one of its runs.

    The statistic is ``policy``'s ``metric`` (divided by its ``per`` metric
    when given), from the mean metrics over seeds. The judged density of a
    workload is the density of the grid whose statistic is nearest
    ``value`` on a log scale (ties: the lower density): a rule evaluated on
    the results, for a paper that states its load only through what its
    baseline measured (EDL: Tiresias' mean JCT 218x its median; ONES: the
    queueing share of Tiresias' JCT). ``what`` names the statistic for the
    report. Cost: O(points).

    Examples
    --------
    >>> t = LoadTarget("tiresias", "jct_mean", 217.7, per="jct_median", what="mean/median")
    >>> t.statistic({"tiresias": {"jct_mean": 600.0, "jct_median": 60.0}})
    10.0
    >>> t.nearest([(1.0, 6.5), (2.0, 80.0), (4.0, 500.0)])
    4.0
    """

    policy: str
    metric: str
    value: float
    per: str | None = None
    what: str = ""

    def __post_init__(self) -> None:
        if not (math.isfinite(self.value) and self.value > 0):
            raise InvalidInstanceError("sweep.target.value", f"must be > 0, got {self.value!r}")

    def statistic(self, metrics: Mapping[str, Mapping[str, float]]) -> float | None:
        """The statistic from ``label -> metrics`` (None: the run is missing or 0 divides)."""
        m = metrics.get(self.policy)
        if m is None or self.metric not in m:
            return None
        if self.per is None:
            return m[self.metric]
        den = m.get(self.per, 0.0)
        return m[self.metric] / den if den else None

    def nearest(self, stats: Sequence[tuple[float, float | None]]) -> float | None:
        """The density of ``(density, statistic)`` pairs nearest ``value`` (log scale)."""
        known = [(abs(math.log(v / self.value)), d) for d, v in stats if v is not None and v > 0]
        return min(known)[1] if known else None


@dataclass(frozen=True, slots=True)
class Sweep:
    """A paper's load axis: the job densities to run, and the one its claims are judged at.

    ``densities`` (full mode) and ``quick_densities`` (``--quick``) are the
    grid; ``at`` and ``quick_at`` the density of the paper's own conditions,
    where each ``point`` claim gets its verdict (each is also run), or None
    when the paper does not state its load: every density is judged, and
    the report gives the verdicts at each and their range; ``target``, when
    given, chooses the judged density from the results instead
    (:class:`LoadTarget`; ``at`` is then used only when the target's run is
    missing); ``rule`` how a density is made
    (:func:`~scheduling_opt.reproduce.workloads.scale_density`); ``why``
    how the judged density was chosen, for the report. A set without a
    sweep runs each workload as it is (density 1).

    Examples
    --------
    >>> Sweep((0.8, 1.0, 1.2), at=1.0).values(quick=False)
    (0.8, 1.0, 1.2)
    >>> Sweep((0.8, 1.0), quick_densities=(2.0,), quick_at=2.0).values(quick=True)
    (2.0,)
    >>> Sweep((0.5, 1.5), at=None).judged(quick=False) is None
    True
    """

    densities: tuple[float, ...] = (1.0,)
    quick_densities: tuple[float, ...] = (1.0,)
    at: float | None = 1.0
    quick_at: float | None = 1.0
    rule: DensityRule = "sample"
    why: str = ""
    target: LoadTarget | None = None

    def __post_init__(self) -> None:
        for name, grid, at in (
            ("densities", self.densities, self.at),
            ("quick_densities", self.quick_densities, self.quick_at),
        ):
            if not grid or any(not 0 < d <= MAX_DENSITY for d in grid):
                raise InvalidInstanceError(f"sweep.{name}", f"must be in (0, {MAX_DENSITY:g}]")
            if at is not None and at not in grid:
                raise InvalidInstanceError(f"sweep.{name}", f"must include the judged density {at}")

    def values(self, quick: bool) -> tuple[float, ...]:
        """The densities of the grid (``quick`` or full)."""
        return self.quick_densities if quick else self.densities

    def judged(self, quick: bool) -> float | None:
        """The density at which ``point`` claims are judged (None: every density)."""
        return self.quick_at if quick else self.at


@dataclass(frozen=True, slots=True)
class JobTimes:
    """One microbenchmark run's jobs by id: submission, first start, end, work, progress.

    ``progress``: each job's ``(time, work done)`` at every policy call while
    it ran (a call comes at every completion, so a job's progress at another
    job's end is exact).

    Examples
    --------
    >>> t = JobTimes({"a": 0.0}, {"a": 0.0}, {"a": 12.5}, {"a": 10.0}, {"a": ((1.0, 0.0), (6.0, 4.0))})
    >>> t.jct("a"), t.slowdown("a"), t.done("a", 7.0)
    (12.5, 25.0, 4.0)
    """

    submit: Mapping[str, float]
    start: Mapping[str, float]
    end: Mapping[str, float]
    work: Mapping[str, float]
    progress: Mapping[str, tuple[tuple[float, float], ...]]

    def jct(self, job: str) -> float:
        """End minus submission."""
        return self.end[job] - self.submit[job]

    def slowdown(self, job: str) -> float:
        """Percent by which its JCT exceeds its work (its time alone, started at once)."""
        return 100.0 * (self.jct(job) / self.work[job] - 1.0)

    def done(self, job: str, at: float) -> float:
        """Work done by the last call at or before ``at`` (0 before its first)."""
        samples = self.progress.get(job, ())
        k = bisect.bisect_right([t for t, _ in samples], at)
        return samples[k - 1][1] if k else 0.0


@dataclass(frozen=True, slots=True)
class Measure:
    """A number of one microbenchmark run: ``name`` (a claim's metric) from its :class:`JobTimes`."""

    name: str
    fn: Callable[[JobTimes], float]


@dataclass(frozen=True, slots=True)
class Scenario:
    """A paper's microbenchmark: a few jobs on one server, each policy run once.

    ``runs``: the policies (``PolicyRun``, each label a column); ``measures``:
    the numbers taken from each run (:class:`Measure`); ``claims``: the
    paper's numbers as :class:`Claim` objects over those measures (their
    ``baseline`` and ``policy`` are run labels); ``table``: the paper's
    per-job numbers to print beside ours, ``(run label, job id, as printed)``.
    Run by :mod:`scheduling_opt.reproduce.microbench` in every mode
    (milliseconds each).
    """

    name: str
    source: str
    setup: str
    differences: str
    jobs: tuple[SimJob, ...]
    gpus: int
    runs: tuple[PolicyRun, ...]
    measures: tuple[Measure, ...]
    claims: tuple[Claim, ...]
    table: tuple[tuple[str, str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class Study:
    """A workload of its own for some claims: a base workload with Short jobs added.

    ``label`` names it in the report; ``base`` is the full-mode base
    workload it derives from (``--quick``: the quick workload); ``short``
    the Short jobs added per job
    (:func:`~scheduling_opt.reproduce.workloads.add_short`). It runs at the
    judged density only, and only the policy runs marked ``study``.
    """

    label: str
    base: str
    short: float


@dataclass(frozen=True, slots=True)
class PaperSet:
    """A paper's policies, workloads, cluster and published numbers."""

    name: str
    title: str
    source: str
    setup: str
    differences: str
    policies: tuple[PolicyRun, ...]
    claims: tuple[Claim, ...]
    full: tuple[tuple[str, str], ...]  # (label, trace file name under the traces dir)
    quick: str = "excerpt"
    #: The ``--quick`` workload (default: the bundled excerpt under ``elastic``).
    quick_spec: PaperWorkload | None = None
    #: The full workloads when not the traces of ``full`` (a synthetic mix).
    full_specs: tuple[PaperWorkload, ...] = ()
    elastic: ElasticRule | None = None
    servers: int = 120
    gpus_per_server: int = 8
    seeds: int = 1
    #: The paper's restart costs, on every policy of the set (reproduce/costs.py).
    costs: Costs = NO_COSTS
    #: Other costs the claims are re-judged at (a paper that states no value,
    #: or a range): the report's cost table, at the judged points.
    cost_sweep: tuple[Costs, ...] = ()
    metrics: tuple[str, ...] = ("jct_mean", "jct_median", "jct_p95", "utilization")
    #: Fraction of first jobs (submit order) left out of the metrics (ONES: 5%).
    skip: float = 0.0
    #: The workloads' time unit (the report's header).
    unit: str = "minutes"
    #: Aryl's inference servers (lent by the policy: its ``inference_servers`` parameter).
    inference_servers: int = 0
    #: ``(training, inference)`` servers of ``--quick`` (None: ``servers``, ``inference_servers``).
    quick_sizes: tuple[int, int] | None = None
    #: The load axis (None: each workload at density 1 only).
    sweep: Sweep | None = None
    #: The paper's microbenchmarks (run in every mode: a few jobs each).
    scenarios: tuple[Scenario, ...] = ()
    #: A workload of its own for the runs marked ``study`` (None: none).
    study: Study | None = None

    @property
    def needs_traces(self) -> bool:
        """Whether the full workloads are trace files (``--traces DIR`` is then required)."""
        return bool(self.full) and not self.full_specs

    def workloads(
        self, quick: bool, traces: Path | None = None
    ) -> tuple[list[PaperWorkload], list[str]]:
        """The workloads to run and notes on the full ones missing from ``traces``.

        Raises
        ------
        InvalidInstanceError
            When the full workloads are trace files and ``traces`` is None.
        """
        if quick:
            spec = self.quick_spec or PaperWorkload(
                "bundled", elastic=self.elastic, label=self.quick
            )
            return [spec], []
        if self.full_specs:
            return list(self.full_specs), []
        if traces is None:
            raise InvalidInstanceError(
                "traces",
                f"full mode of {self.name} replays the Chronus-Philly trace files: "
                "give the folder holding them, or run the quick set",
            )
        found, missing = [], []
        for label, file in self.full:
            path = traces / file
            if path.is_file():
                found.append(
                    PaperWorkload("trace", str(path.resolve()), elastic=self.elastic, label=label)
                )
            else:
                missing.append(f"{label}: {path} not found, skipped")
        return found, missing

    def densities(self, quick: bool) -> tuple[float, ...]:
        """The densities every workload runs at (the sweep's grid, or 1)."""
        return self.sweep.values(quick) if self.sweep is not None else (1.0,)

    def judged(self, quick: bool) -> float | None:
        """The density at which ``point`` claims are judged (None: every density)."""
        return self.sweep.judged(quick) if self.sweep is not None else 1.0

    def configs(
        self,
        quick: bool,
        traces: Path | None = None,
        densities: tuple[float, ...] | None = None,
        seeds: int | None = None,
        judged: Mapping[str, float] | None = None,
    ) -> list[RunConfig]:
        """Every run of the set: workloads x densities x policies x seeds.

        ``densities`` and ``seeds`` override the set's own (the command's
        ``--density`` and ``--seeds``). Under the ``cluster`` rule a
        density d runs on round(servers / d) servers (at least 1), the
        inference servers of Aryl's set likewise (their ratio kept). A
        policy run with ``everywhere=False`` is made only at the judged density: the
        sweep's ``at`` (every density when it is None or not in the grid),
        or, with a :class:`LoadTarget`, the density ``judged`` gives for
        each workload (base name -> density; None: not yet known, so only
        the other runs, from which the command then finds it).

        Examples
        --------
        >>> from scheduling_opt.reproduce.papers import PAPERS
        >>> [(c.policy, c.servers) for c in PAPERS["edl"].configs(quick=True)][:3]
        [('tiresias', 120), ('elastic-tiresias', 120), ('tiresias', 80)]
        >>> judged = PAPERS["edl"].configs(quick=True, judged={"excerpt": 2.0})
        >>> [(c.policy, c.servers) for c in judged if c.policy == "edl-tiresias"]
        [('edl-tiresias', 60)]
        """
        base, _ = self.workloads(quick, traces)
        grid = densities if densities is not None else self.densities(quick)
        rule = self.sweep.rule if self.sweep else "sample"
        workloads = [replace(w, density=d, density_rule=rule) for w in base for d in grid]
        servers, inference = (self.servers, self.inference_servers)
        if quick and self.quick_sizes is not None:
            servers, inference = self.quick_sizes
        at = self.judged(quick)
        target = self.sweep.target if self.sweep is not None else None

        def wanted(p: PolicyRun, w: PaperWorkload) -> bool:
            if quick and not p.quick:
                return False
            if p.everywhere:
                return True
            if target is not None:
                return judged is not None and judged.get(w.base_name) == w.density
            return at is None or at not in grid or w.density == at

        study = self.study
        made = [(w, p) for w in workloads for p in self.policies if not p.study and wanted(p, w)]
        if study is not None and at is not None:
            source = [w for w in base if quick or w.base_name == study.base][:1]
            for w in source:
                s = replace(w, label=study.label, short=study.short, density=at, density_rule=rule)
                made += [(s, p) for p in self.policies if p.study and (p.quick or not quick)]
        return [
            RunConfig(
                policy=p.policy,
                workload=w,
                servers=_scaled(servers, w.density, rule),
                gpus_per_server=self.gpus_per_server,
                seed=seed,
                policy_params=_with_inference(
                    p.policy, p.params, _scaled(inference, w.density, rule)
                ),
                restart_cost=self.costs.restart,
                resize_cost=self.costs.resize,
                preemption_cost=self.costs.preemption,
                start_overhead=self.costs.start,
                skip=self.skip,
                label=p.label,
            )
            for w, p in made
            for seed in range(self.seeds if seeds is None else seeds)
        ]


def _with_inference(
    policy: str, params: tuple[tuple[str, Any], ...], servers: int
) -> tuple[tuple[str, Any], ...]:
    """``params`` with the inference servers of Aryl's set, for a policy that declares them."""
    if not servers or policy_spec(policy).param("inference_servers") is None:
        return params
    return (*params, ("inference_servers", servers))


def _scaled(servers: int, density: float, rule: DensityRule) -> int:
    """Servers at ``density``: round(servers / density) (at least 1) under ``cluster``."""
    if rule != "cluster" or servers == 0:
        return servers
    return max(1, round(servers / density))
