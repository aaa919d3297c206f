"""docs/glossary.md defines every column and term the outputs print, and every report links it.

The terms are taken from the code that writes the outputs (the simulator's
table and metric keys, ``jobs.csv``'s fields, the benchmark's columns and
statuses, the verdicts), so a new column without a definition fails here.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from scheduling_opt.bench.report import TABLE_HEAD, TIE_COLUMN, markdown_report
from scheduling_opt.metrics import GLOSSARY_LINE
from scheduling_opt.reproduce import PAPERS
from scheduling_opt.reproduce.report import write_report
from scheduling_opt.reproduce.verdict import Verdict
from scheduling_opt.sim.cli.output import TABLE, report
from scheduling_opt.sim.results import METRIC_KEYS, JobRecord
from scheduling_opt.solution import Status

ROOT = Path(__file__).resolve().parent.parent
GLOSSARY = (ROOT / "docs" / "glossary.md").read_text(encoding="utf-8")
TEXT = " ".join(GLOSSARY.split()).lower()

#: The simulator's keys the glossary need not define: identities of a row, not terms.
NOT_TERMS = {"job_id", "first_submit"}


def _column(header: str) -> str:
    """A header without its unit: ``avg JCT ({unit})`` -> ``avg jct``."""
    return re.sub(r"\s*\(.*\)$", "", header).strip().lower()


def test_every_column_of_the_simulators_table_is_defined() -> None:
    columns = [_column(h) for _, h, _ in TABLE]
    assert "wdmr" in columns
    assert "be jct" in columns
    assert [c for c in columns if c not in TEXT] == []


def test_every_metric_key_and_job_field_is_defined() -> None:
    keys = [*METRIC_KEYS, *(f.name for f in dataclasses.fields(JobRecord))]
    keys += ["busy_gpus", "pending", "running", "config_hash", "workload_hash"]
    missing = [k for k in keys if k not in NOT_TERMS and f"`{k}`" not in GLOSSARY]
    assert missing == []


def test_every_benchmark_column_and_status_is_defined() -> None:
    columns = [c.strip().lower() for c in TABLE_HEAD.strip("|").split("|")]
    columns.append(TIE_COLUMN.lower())
    assert "time limit" in columns
    assert "dominated by" in columns
    assert [c for c in columns if c != "size" and c != "method" and c not in TEXT] == []
    statuses = [s.value for s in Status] + ["skipped", "error"]
    assert [s for s in statuses if f"`{s}`" not in GLOSSARY] == []


def test_every_verdict_and_the_terms_of_the_issue_are_defined() -> None:
    assert [v.value for v in Verdict if v.value not in TEXT] == []
    terms = [
        "jct",
        "slo",
        "wdmr",
        "be jct",
        "rw",
        "on loan",
        "makespan",
        "utilization",
        "preemption",
        "queueing delay",
        "guarantee / opportunistic",
        "lease, term",
        "offered load",
        "judged load",
    ]
    assert [t for t in terms if f"**{t}" not in TEXT] == []


def test_the_formulas_are_written_out() -> None:
    assert "wDMR = (1 / |J|) x sum over j in J of (RW_max - RW_j) / (RW_max - RW_min)" in GLOSSARY
    assert "JCT = end - submit" in GLOSSARY
    assert "queueing = first start - submit" in GLOSSARY
    assert "gap = (objective - optimum) / max(|optimum|, 1)" in GLOSSARY


def test_every_report_header_links_the_glossary(tmp_path: Path) -> None:
    assert "docs/glossary.md" in GLOSSARY_LINE
    assert report([], []).splitlines()[2] == GLOSSARY_LINE
    assert (
        markdown_report([], [], suite="quick", interrupted=False).splitlines()[2] == GLOSSARY_LINE
    )
    path = write_report(tmp_path, PAPERS["edl"], [], quick=True, today="x")
    assert path.read_text(encoding="utf-8").splitlines()[2] == GLOSSARY_LINE


def test_the_readme_and_the_site_link_the_glossary() -> None:
    assert "(docs/glossary.md)" in (ROOT / "README.md").read_text(encoding="utf-8")
    assert "glossary.md" in (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
