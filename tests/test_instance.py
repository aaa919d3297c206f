"""Instance files: round trip, cross-reference errors with JSON paths, fuzzing."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.io.instance import dump, dumps, from_dict, load, loads, to_dict
from scheduling_opt.testing import fuzzed_instances

EXAMPLE: dict[str, Any] = {
    "format": "scheduling-opt/v1",
    "problem": "reclaim",
    "cluster": {
        "gpu_types": [
            {"name": "V100", "compute": 1.0, "memory_gb": 32},
            {"name": "T4", "compute": 0.25, "memory_gb": 16},
        ],
        "servers": [
            {"id": "t1", "gpu_type": "V100", "gpus": 8, "pool": "training"},
            {"id": "i1", "gpu_type": "T4", "gpus": 8, "pool": "inference", "on_loan": True},
        ],
    },
    "jobs": [
        {"id": "a", "gpus_per_worker": 1, "min_workers": 2, "max_workers": 6, "duration": 50.0},
        {
            "id": "b",
            "workers": 2,
            "gpus_per_worker": 2,
            "duration": 10,
            "gpu_type": "V100",
            "deadlines": [{"time": 100, "reward": 10}, {"time": 200, "reward": 5}],
        },
    ],
    "placement": [{"job": "a", "server": "i1", "workers": 4}],
    "params": {"servers_to_reclaim": 1},
}


def test_issue_example_loads_with_its_values() -> None:
    inst = from_dict(EXAMPLE)
    assert inst.problem == "reclaim"
    assert inst.cluster is not None
    assert inst.cluster.server("i1").on_loan
    assert inst.cluster.gpu_type("T4").compute == 0.25
    a, b = inst.jobs
    assert (a.min_workers, a.max_workers, a.elastic) == (2, 6, True)
    assert (b.min_workers, b.max_workers, b.elastic) == (2, 2, False)
    assert [s.reward for s in b.deadlines] == [10, 5]
    assert inst.placement.workers_of("a") == 4
    assert inst.placement.workers_of("b") == 0
    assert inst.params == {"servers_to_reclaim": 1}


def test_file_round_trip(tmp_path: Path) -> None:
    inst = from_dict(EXAMPLE)
    path = tmp_path / "x.json"
    dump(inst, path)
    assert load(path) == inst


def test_problem_data_sections_are_kept() -> None:
    doc = {
        "format": "scheduling-opt/v1",
        "problem": "mckp",
        "capacity": 5,
        "groups": [[{"weight": 1, "value": 2}]],
    }
    inst = from_dict(doc)
    assert inst.cluster is None
    assert inst.data == {"capacity": 5, "groups": [[{"weight": 1, "value": 2}]]}
    assert to_dict(inst) == doc


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fuzzed_instances())
def test_generated_instances_round_trip(inst: Any) -> None:
    assert loads(dumps(inst)) == inst
    assert loads(dumps(inst, indent=None)) == inst


def _with(path: list[Any], value: Any) -> dict[str, Any]:
    doc = copy.deepcopy(EXAMPLE)
    node: Any = doc
    for key in path[:-1]:
        node = node[key]
    if value is _DELETE:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return doc


_DELETE = object()

INVALID = [
    (["format"], "scheduling-opt/v2", "format: expected"),
    (["format"], _DELETE, "format: missing"),
    (["problem"], 3, "problem: must be a string"),
    (["cluster", "servers", 1, "gpus"], 0, "cluster.servers[1].gpus: must be >= 1"),
    (["cluster", "servers", 1, "gpus"], 2.5, "cluster.servers[1].gpus: must be an integer"),
    (
        ["cluster", "servers", 1, "gpu_type"],
        "A100",
        "cluster.servers[1].gpu_type: unknown GPU type",
    ),
    (["cluster", "servers", 1, "id"], "t1", "cluster.servers[1].id: duplicate id 't1'"),
    (["cluster", "servers", 0, "on_loan"], True, "cluster.servers[0].on_loan: only an inference"),
    (["cluster", "servers", 0, "pool"], "batch", "cluster.servers[0].pool: must be one of"),
    (["cluster", "gpu_types", 0, "compute"], -1, "cluster.gpu_types[0].compute: must be > 0"),
    (["cluster", "gpu_types", 1, "name"], "V100", "cluster.gpu_types[1].name: duplicate"),
    (["cluster", "servers", 0, "extra"], 1, "cluster.servers[0].extra: unknown field"),
    (["jobs", 0, "min_workers"], 7, "jobs[0].max_workers: must be >= min_workers"),
    (["jobs", 0, "min_workers"], 0, "jobs[0].min_workers: must be >= 1"),
    (["jobs", 0, "duration"], -5, "jobs[0].duration: must be > 0"),
    (["jobs", 0, "duration"], "long", "jobs[0].duration: must be a number"),
    (["jobs", 0, "duration"], _DELETE, "jobs[0].duration: missing"),
    (["jobs", 1, "id"], "a", "jobs[1].id: duplicate job id 'a'"),
    (["jobs", 1, "workers"], True, "jobs[1].workers: must be an integer"),
    (["jobs", 1, "gpu_type"], "H100", "jobs[1].gpu_type: unknown GPU type"),
    (
        ["jobs", 1, "deadlines", 1, "time"],
        50,
        "jobs[1].deadlines[1].time: deadline times must be strictly increasing",
    ),
    (["jobs", 1, "deadlines", 0, "reward"], -1, "jobs[1].deadlines[0].reward: must be >= 0"),
    (["jobs", 1, "class"], "vip", "jobs[1].class: must be one of"),
    (["jobs", 0, "submit_time"], -1, "jobs[0].submit_time: must be >= 0"),
    (["placement", 0, "server"], "i9", "placement[0].server: unknown server 'i9'"),
    (["placement", 0, "job"], "zz", "placement[0].job: unknown job 'zz'"),
    (["placement", 0, "workers"], 9, "placement[0].workers: server 'i1' is over-full"),
    (["placement", 0, "workers"], 1, "placement[0].workers: job 'a' has 1 workers placed, outside"),
    (["placement", 0, "workers"], 0, "placement[0].workers: must be >= 1"),
    (["params"], [], "params: must be an object"),
    (["jobs"], {}, "jobs: must be an array"),
]


@pytest.mark.parametrize(("path", "value", "message"), INVALID)
def test_invalid_documents_name_the_path(path: list[Any], value: Any, message: str) -> None:
    with pytest.raises(InvalidInstanceError) as info:
        from_dict(_with(path, value))
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_placement_cross_references() -> None:
    doc = copy.deepcopy(EXAMPLE)
    doc["placement"] = [{"job": "b", "server": "i1", "workers": 2}]
    with pytest.raises(
        InvalidInstanceError, match=r"placement\[0\].server: job 'b' needs GPU type 'V100'"
    ):
        from_dict(doc)
    doc["placement"] = [
        {"job": "a", "server": "i1", "workers": 2},
        {"job": "a", "server": "i1", "workers": 1},
    ]
    with pytest.raises(InvalidInstanceError, match=r"placement\[1\]: duplicate row"):
        from_dict(doc)
    doc["cluster"]["servers"][1]["on_loan"] = False
    doc["placement"] = [{"job": "a", "server": "i1", "workers": 2}]
    with pytest.raises(InvalidInstanceError, match="not on loan"):
        from_dict(doc)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{", "not valid JSON"),
        ("[]", "must be an object"),
        (
            '{"format": "scheduling-opt/v1", "problem": "x", "jobs": [{"id": "a", "workers": 1, "duration": NaN}]}',
            "NaN is not allowed",
        ),
        (
            '{"format": "scheduling-opt/v1", "problem": "x", "jobs": [{"id": "a", "workers": 1, "duration": Infinity}]}',
            "Infinity is not allowed",
        ),
        ("[" * 100000, "not valid JSON"),
    ],
)
def test_malformed_text(text: str, message: str) -> None:
    with pytest.raises(InvalidInstanceError, match=message):
        loads(text)


def test_unreadable_file(tmp_path: Path) -> None:
    with pytest.raises(InvalidInstanceError, match="cannot read"):
        load(tmp_path / "missing.json")


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-5, 20)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=4),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)


def _paths(node: Any, prefix: list[Any]) -> list[list[Any]]:
    out = [prefix] if prefix else []
    if isinstance(node, dict):
        for k, v in node.items():
            out += _paths(v, [*prefix, k])
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _paths(v, [*prefix, i])
    return out


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_corrupted_documents_fail_only_with_invalid_instance_error(data: st.DataObject) -> None:
    doc = copy.deepcopy(EXAMPLE)
    for _ in range(data.draw(st.integers(1, 3))):
        paths = _paths(doc, [])
        path = data.draw(st.sampled_from(paths))
        value = data.draw(st.just(_DELETE) | json_values)
        node: Any = doc
        for key in path[:-1]:
            node = node[key]
        if value is _DELETE:
            del node[path[-1]]
        else:
            node[path[-1]] = value
    message = None
    try:
        inst = loads(json.dumps(doc))
    except InvalidInstanceError as e:
        message = str(e)
    if message is None:
        assert loads(dumps(inst)) == inst
    else:
        assert message
        assert "\n" not in message
