"""A paper's microbenchmarks (:class:`~scheduling_opt.reproduce.papers.Scenario`): run, measure, judge.

Each scenario's jobs run on one server under each of its policies, once
(no seeds: nothing is drawn). A probe around the policy records every
running job's work done at each call, so a measure can read a job's
progress at another job's end (:class:`~scheduling_opt.reproduce.papers.JobTimes`).
Each claim is judged by the rule of every claim
(:func:`~scheduling_opt.reproduce.verdict.judge`). :func:`scenario_section`
writes the report's section: per scenario, the setup, every run's job
times beside the paper's, and the verdicts. Milliseconds per scenario.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from scheduling_opt.reproduce.papers import Claim, JobTimes, PaperSet, Scenario
from scheduling_opt.reproduce.verdict import Verdict, judge
from scheduling_opt.sim.cluster import ClusterSpec
from scheduling_opt.sim.engine import simulate
from scheduling_opt.sim.protocol import Decision, Policy, View
from scheduling_opt.sim.registry import make_policy
from scheduling_opt.sim.workload import Workload

__all__ = ["ScenarioResult", "run_scenario", "scenario_section", "verdict_rows"]

#: The optional parts of a policy the engine looks for (sim/protocol.py), kept by the probe.
_PARTS = ("interference", "guests_per_gpu", "period")


class _Probe:
    """``inner`` with every running job's work done recorded at each call."""

    def __init__(self, inner: Policy) -> None:
        self.inner = inner
        self.name = inner.name
        for part in _PARTS:
            if hasattr(inner, part):
                setattr(self, part, getattr(inner, part))
        self.samples: dict[int, list[tuple[float, float]]] = {}

    def decide(self, view: View) -> Decision:
        for i, st in view.running.items():
            self.samples.setdefault(i, []).append((view.now, st.attained(view.now)))
        return self.inner.decide(view)


@dataclass(frozen=True, slots=True)
class ScenarioResult:
    """One scenario's runs: each label's :class:`JobTimes` and measures."""

    scenario: Scenario
    times: Mapping[str, JobTimes]
    metrics: Mapping[str, Mapping[str, float]]


def run_scenario(scenario: Scenario) -> ScenarioResult:
    """Run every policy of ``scenario`` on its jobs and take its measures.

    Examples
    --------
    >>> from scheduling_opt.reproduce.papers import PAPERS
    >>> res = run_scenario(PAPERS["antman"].scenarios[0])
    >>> round(res.times["fifo"].jct("B"), 1)  # B waits for A (43.0), then 91.1
    108.1
    """
    workload = Workload.of(list(scenario.jobs), scenario.name)
    cluster = ClusterSpec.uniform(1, scenario.gpus)
    times: dict[str, JobTimes] = {}
    metrics: dict[str, dict[str, float]] = {}
    for run in scenario.runs:
        probe = _Probe(make_policy(run.policy, workload, cluster, dict(run.params)))
        out = simulate(workload, cluster, probe)
        jobs = out.jobs
        t = JobTimes(
            submit={j.id: j.submit for j in jobs},
            start={j.id: s for j, s in zip(jobs, out.first_start, strict=True)},
            end={j.id: e for j, e in zip(jobs, out.end, strict=True)},
            work={j.id: j.work for j in jobs},
            progress={jobs[i].id: tuple(v) for i, v in probe.samples.items()},
        )
        times[run.name] = t
        metrics[run.name] = {m.name: m.fn(t) for m in scenario.measures}
    return ScenarioResult(scenario, times, metrics)


def verdict_rows(result: ScenarioResult) -> list[tuple[Claim, float | None, Verdict]]:
    """Each claim of the scenario with our number and its verdict."""
    rows = []
    for c in result.scenario.claims:
        ours = c.ours(result.metrics)
        rows.append((c, ours, judge(c.kind, c.paper, ours)))
    return rows


def _claims_table(rows: Sequence[tuple[Claim, float | None, Verdict]]) -> str:
    lines = ["| claim | paper | ours | verdict |", "|---|---|---|---|"]
    for c, ours, verdict in rows:
        note = f" ({c.note})" if c.note else ""
        lines.append(f"| {c.what} | {c.show(c.paper)} | {c.show(ours)} | {verdict.value}{note} |")
    return "\n".join(lines) + "\n"


def _times_table(result: ScenarioResult) -> str:
    s = result.scenario
    paper = {(label, job): text for label, job, text in s.table}
    ids = [j.id for j in s.jobs]
    head = "| run | " + " | ".join(f"{i}: JCT (paper)" for i in ids) + " |"
    lines = [head, "|---|" + "---|" * len(ids)]
    for label, t in result.times.items():
        cells = []
        for i in ids:
            ref = paper.get((label, i))
            cells.append(f"{t.jct(i):.2f}" + (f" ({ref})" if ref else ""))
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def scenario_section(paper: PaperSet) -> str:
    """The report's microbenchmark section of ``paper`` ("" without scenarios): runs them."""
    if not paper.scenarios:
        return ""
    parts = [
        "\n## Microbenchmarks\n\nEach scenario's jobs on one server, each policy once; the "
        "claims judged by the same rule as the trace's (a level claim within 2x of the "
        "paper's level).\n"
    ]
    for s in paper.scenarios:
        result = run_scenario(s)
        parts.append(f"\n### {s.name} ({s.source})\n")
        parts.append(f"\n**Paper's setup.** {s.setup}\n")
        parts.append(f"\n**Ours.** {s.differences}\n\n")
        parts.append(_times_table(result))
        parts.append("\n")
        parts.append(_claims_table(verdict_rows(result)))
    return "".join(parts)
