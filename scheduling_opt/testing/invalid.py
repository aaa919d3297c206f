"""Invalid instance documents: one flaw each, all refused by the file reader.

:func:`invalid_documents` draws a valid instance of a problem (the kit's
strategies), writes it as a JSON object and breaks it once, in one of the
ways docs/instance-format.md forbids, for testing a caller's own
validation. Linear in the document size.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from scheduling_opt.io.instance import to_dict
from scheduling_opt.testing.problems import PROBLEMS, instances

__all__ = ["InvalidDocument", "invalid_documents"]


@dataclass(frozen=True, slots=True)
class InvalidDocument:
    """An instance document with one flaw the file reader refuses.

    Attributes
    ----------
    document : dict
        The JSON object (``json.dumps`` it to write the file).
    flaw : str
        What was broken, e.g. ``"cluster.servers[0].gpus = 0"``.
    """

    document: dict[str, Any]
    flaw: str


Mutation = Callable[[dict[str, Any], st.DrawFn], str | None]


def _format(doc: dict[str, Any], draw: st.DrawFn) -> str:
    doc["format"] = draw(st.sampled_from(["scheduling-opt/v2", "", 1]))
    return f"format = {doc['format']!r}"


def _missing_problem(doc: dict[str, Any], draw: st.DrawFn) -> str:
    del doc["problem"]
    return "no problem field"


def _section(doc: dict[str, Any], draw: st.DrawFn) -> str:
    key = draw(st.sampled_from(["placment", "notes", "Jobs"]))
    doc[key] = []
    return f"unknown section {key!r}"


def _server_gpus(doc: dict[str, Any], draw: st.DrawFn) -> str | None:
    servers = doc.get("cluster", {}).get("servers")
    if not servers:
        return None
    value = draw(st.sampled_from([0, -1, 1.5, True, "8", None, 2**60]))
    servers[0]["gpus"] = value
    return f"cluster.servers[0].gpus = {value!r}"


def _duplicate_server(doc: dict[str, Any], draw: st.DrawFn) -> str | None:
    servers = doc.get("cluster", {}).get("servers")
    if not servers:
        return None
    servers.append(dict(servers[0]))
    return f"server id {servers[0]['id']!r} twice"


def _server_type(doc: dict[str, Any], draw: st.DrawFn) -> str | None:
    servers = doc.get("cluster", {}).get("servers")
    if not servers:
        return None
    servers[0]["gpu_type"] = "no-such-gpu"
    return "cluster.servers[0].gpu_type unknown"


def _loan_flag(doc: dict[str, Any], draw: st.DrawFn) -> str | None:
    servers = doc.get("cluster", {}).get("servers")
    if not servers:
        return None
    servers[0]["pool"], servers[0]["on_loan"] = "training", True
    return "a training server on loan"


def _job_range(doc: dict[str, Any], draw: st.DrawFn) -> str | None:
    if not doc.get("jobs"):
        return None
    job = doc["jobs"][0]
    top = job.pop("workers", None) or job["max_workers"]
    job["min_workers"], job["max_workers"] = top + 1, top
    return "jobs[0].min_workers > max_workers"


def _job_duration(doc: dict[str, Any], draw: st.DrawFn) -> str | None:
    if not doc.get("jobs"):
        return None
    value = draw(st.sampled_from([0.0, -1.0, float("nan"), float("inf"), "60", 1e300]))
    doc["jobs"][0]["duration"] = value
    return f"jobs[0].duration = {value!r}"


def _duplicate_job(doc: dict[str, Any], draw: st.DrawFn) -> str | None:
    if not doc.get("jobs"):
        return None
    doc["jobs"].append(copy.deepcopy(doc["jobs"][0]))
    return f"job id {doc['jobs'][0]['id']!r} twice"


def _job_key(doc: dict[str, Any], draw: st.DrawFn) -> str | None:
    if not doc.get("jobs"):
        return None
    doc["jobs"][0]["priority"] = 1
    return "unknown job field 'priority'"


def _deadlines(doc: dict[str, Any], draw: st.DrawFn) -> str | None:
    if not doc.get("jobs"):
        return None
    doc["jobs"][0]["deadlines"] = [{"time": 10, "reward": 1}, {"time": 10, "reward": 1}]
    return "jobs[0].deadlines not strictly increasing"


def _row(doc: dict[str, Any], draw: st.DrawFn) -> str | None:
    if not doc.get("placement"):
        return None
    row = doc["placement"][0]
    what = draw(st.sampled_from(["server", "job", "workers", "over-full"]))
    if what == "over-full":
        row["workers"] = 10**6
    else:
        row[what] = 0 if what == "workers" else "no-such-id"
    return f"placement[0]: {what}"


def _param(doc: dict[str, Any], draw: st.DrawFn) -> str | None:
    if doc["problem"] in ("mckp", "mmkp", "memory-split"):
        return None
    doc.setdefault("params", {})["speed_of_light"] = 1
    return "unknown parameter 'speed_of_light'"


def _problem_value(doc: dict[str, Any], draw: st.DrawFn) -> str | None:
    name = doc["problem"]
    if name == "reclaim":
        doc["params"]["servers_to_reclaim"] = draw(st.sampled_from([-1, 10**6, 1.5]))
        return "params.servers_to_reclaim out of range"
    if name == "lease":
        doc["params"]["lease_length"] = draw(st.sampled_from([0, -600.0]))
        return "params.lease_length <= 0"
    if name == "mckp":
        doc["capacity"] = -1
        return "capacity = -1"
    if name == "mmkp":
        doc["capacity"] = [-1] * len(doc["capacity"])
        return "capacity[0] = -1"
    if name == "memory-split":
        doc["gpu"]["memory_gb"] = -1
        return "gpu.memory_gb = -1"
    if name == "allocation":
        doc.setdefault("params", {})["capacity"] = -3
        return "params.capacity = -3"
    if name == "batch-size":
        doc["params"]["population"] = 1
        return "params.population = 1"
    return None


_MUTATIONS: tuple[Mutation, ...] = (
    _format,
    _missing_problem,
    _section,
    _server_gpus,
    _duplicate_server,
    _server_type,
    _loan_flag,
    _job_range,
    _job_duration,
    _duplicate_job,
    _job_key,
    _deadlines,
    _row,
    _param,
    _problem_value,
)


@st.composite
def invalid_documents(draw: st.DrawFn, problems: tuple[str, ...] | None = None) -> InvalidDocument:
    """Instance documents with one flaw each, all refused by :func:`read_document`.

    A valid instance of one of ``problems`` is drawn, written as a JSON
    object, and broken once: a wrong format, a missing or unknown field or
    section, an out-of-range or non-finite number, a duplicate id, an
    unknown reference, an over-full server, a bad parameter.

    Parameters
    ----------
    problems : tuple of str, optional
        Registry problem names to start from (default: every problem the
        kit draws, see :data:`~scheduling_opt.testing.problems.PROBLEMS`).

    Returns
    -------
    SearchStrategy of InvalidDocument

    Examples
    --------
    >>> from hypothesis import find
    >>> from scheduling_opt.testing import read_document
    >>> bad = find(invalid_documents(), lambda d: "gpus" in d.flaw)
    >>> bad.flaw
    'cluster.servers[0].gpus = 0'
    >>> read_document(bad.document)
    Traceback (most recent call last):
    ...
    scheduling_opt.errors.InvalidInstanceError: cluster.servers[0].gpus: must be >= 1, got 0
    """
    problem = draw(st.sampled_from(sorted(PROBLEMS) if problems is None else list(problems)))
    document = to_dict(draw(instances(problem)))
    while True:
        mutation = draw(st.sampled_from(_MUTATIONS))
        doc = copy.deepcopy(document)
        flaw = mutation(doc, draw)
        if flaw is not None:
            return InvalidDocument(doc, flaw)
