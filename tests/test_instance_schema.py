"""The published JSON Schema of instance format v1 accepts every instance we ship or generate.

It is checked by ``jsonschema`` (draft 2020-12), independently of our reader;
the rejection cases show the schema is not vacuous.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

jsonschema = pytest.importorskip(
    "jsonschema", reason="jsonschema is not installed (the 'test' extra)"
)

from scheduling_opt.io.instance import to_dict  # noqa: E402
from scheduling_opt.io.schema import load_schema  # noqa: E402
from scheduling_opt.registry import get_problem, problem_names  # noqa: E402

INSTANCES = Path(__file__).resolve().parent.parent / "instances"
CURATED = sorted(INSTANCES.glob("*.json"))


@pytest.fixture(scope="module")
def validator() -> Any:
    schema = load_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def _errors(validator: Any, doc: Any) -> list[str]:
    return [
        f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(doc)
    ]


def test_the_schema_ships_inside_the_package() -> None:
    import scheduling_opt.io

    assert (Path(scheduling_opt.io.__file__).parent / "instance-v1.schema.json").is_file()


@pytest.mark.parametrize("path", CURATED, ids=[p.name for p in CURATED])
def test_every_curated_instance_validates(validator: Any, path: Path) -> None:
    assert _errors(validator, json.loads(path.read_text(encoding="utf-8"))) == []


def _sizes(name: str) -> list[str]:
    problem = get_problem(name)
    sizes: list[str] = []
    for suite in ("quick", "standard"):
        sizes += [s for s in problem.sizes.get(suite, ()) if s not in sizes]
    return sizes


def test_every_problem_is_covered() -> None:
    # Every problem of the library has a generator and a curated file.
    for name in problem_names():
        assert get_problem(name).generate is not None, name
        assert _sizes(name), name
    assert {json.loads(p.read_text())["problem"] for p in CURATED} == set(problem_names())


# Problem names only at collection (no import): a package that fails to
# import fails its own case, not the collection.
@pytest.mark.parametrize("problem", problem_names())
def test_every_generated_instance_validates(validator: Any, problem: str) -> None:
    generate = get_problem(problem).generate
    assert generate is not None
    for size in _sizes(problem):
        for seed in (0, 1):
            doc = to_dict(generate(size, seed))
            assert _errors(validator, doc) == [], (size, seed)


def _reclaim() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((INSTANCES / "reclaim-aryl-fig5.json").read_text())
    return doc


def _set(doc: dict[str, Any], path: list[Any], value: Any) -> dict[str, Any]:
    doc = copy.deepcopy(doc)
    node: Any = doc
    for key in path[:-1]:
        node = node[key]
    if value is _DELETE:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return doc


_DELETE = object()


@pytest.mark.parametrize(
    ("path", "value", "where"),
    [
        (["format"], "scheduling-opt/v2", "format"),
        (["format"], _DELETE, ""),
        (["cluster", "servers", 0, "gpus"], 0, "cluster/servers/0/gpus"),
        (["cluster", "servers", 0, "pool"], "batch", "cluster/servers/0/pool"),
        (["jobs", 0, "duration"], _DELETE, "jobs/0"),
        (["jobs", 0, "duration"], -1, "jobs/0/duration"),
        (["jobs", 0, "min_workers"], 0, "jobs/0"),
        (["placement", 0, "workers"], 0, "placement/0/workers"),
        (["params", "servers_to_reclam"], 1, "params"),
        (["params"], _DELETE, ""),
        (["placment"], [], ""),
    ],
)
def test_the_schema_rejects_what_the_reader_rejects(
    validator: Any, path: list[Any], value: Any, where: str
) -> None:
    errors = _errors(validator, _set(_reclaim(), path, value))
    assert errors
    assert any(e.startswith(f"{where}:") for e in errors), errors


def test_per_problem_sections(validator: Any) -> None:
    mckp: dict[str, Any] = json.loads((INSTANCES / "mckp-aryl-figure6.json").read_text())
    assert _errors(validator, _set(mckp, ["capacity"], -1))
    assert _errors(validator, _set(mckp, ["groups", 0, 0, "cost"], 1))
    assert _errors(validator, _set(mckp, ["groups"], _DELETE))
    # A section of another problem is not a section of this one.
    assert _errors(validator, _set(mckp, ["opportunistic"], []))
    lease: dict[str, Any] = json.loads((INSTANCES / "lease-example.json").read_text())
    assert _errors(validator, _set(lease, ["params", "lease_length"], 0))
