"""A user's policy from a file (--plugin), its parameters, and caches that notice code changes.

The docs page's example (docs/examples/aged_sjf.py) runs as written. The
cache key covers a policy's code: editing a plug-in, or a built-in
family's module, gives a new key (and a fresh run); a family left alone
keeps its key.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.sim import (
    ClusterSpec,
    RunConfig,
    SimJob,
    SyntheticSpec,
    Workload,
    WorkloadSpec,
    load_plugin,
    make_policy,
    policy_spec,
    provenance,
    register_policy,
    run_config,
    simulate,
)
from scheduling_opt.sim.registry import parse_policy

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "docs" / "examples" / "aged_sjf.py"
SMALL = WorkloadSpec("synthetic", synthetic=SyntheticSpec(jobs=40))


def _copy(tmp_path: Path, name: str = "aged_sjf.py") -> Path:
    path = tmp_path / name
    shutil.copy(EXAMPLE, path)
    return path


def test_the_example_ranks_by_work_less_aging_times_wait() -> None:
    load_plugin(str(EXAMPLE))
    # One 8-GPU server: a runs from 0 to 10; d (work 30, from 1) and c (work
    # 20, from 2) both wait at 10, d for 9 minutes and c for 8. Ranks: d 30 -
    # 9 x aging, c 20 - 8 x aging, so d goes first only when aging > 10:
    # aging 0 -> c (20 < 30); 9 -> c (-52 < -51); 11 -> d (-69 < -68).
    jobs = [
        SimJob("a", 0.0, 8, 10.0),
        SimJob("d", 1.0, 8, 30.0),
        SimJob("c", 2.0, 8, 20.0),
    ]
    w = Workload.of(jobs, "w")
    c = ClusterSpec.uniform(1, 8)
    for aging, first in ((0.0, "c"), (9.0, "c"), (11.0, "d")):
        out = simulate(w, c, make_policy("aged-sjf", w, c, {"aging": aging}))
        start = dict(zip([j.id for j in out.jobs], out.first_start, strict=True))
        assert min(("c", "d"), key=start.__getitem__) == first, aging


def test_the_declaration_checks_the_parameter() -> None:
    load_plugin(str(EXAMPLE))
    assert parse_policy("aged-sjf:aging=0.5") == ("aged-sjf", (("aging", 0.5),))
    with pytest.raises(InvalidInstanceError, match="aged-sjf: aging: must be >= 0"):
        parse_policy("aged-sjf:aging=-1")
    with pytest.raises(InvalidInstanceError, match="did you mean 'aging'"):
        parse_policy("aged-sjf:agin=1")
    assert policy_spec("aged-sjf").summary.startswith("Shortest job first")


def test_a_factory_signature_declares_parameters() -> None:
    def make(workload: object, cluster: object, *, knob: int = 3, on: bool = True) -> object:
        return make_policy("fifo", workload, cluster)  # type: ignore[arg-type]

    spec = register_policy("knob-example", make, replace=True)  # type: ignore[arg-type]
    assert [(p.name, p.kind, p.default) for p in spec.params] == [
        ("knob", "int", 3),
        ("on", "bool", True),
    ]
    assert parse_policy("knob-example:knob=5,on=no")[1] == (("knob", 5), ("on", False))
    with pytest.raises(InvalidInstanceError, match="knob: must be an integer"):
        parse_policy("knob-example:knob=1.5")


def test_a_built_in_name_cannot_be_registered() -> None:
    with pytest.raises(InvalidInstanceError, match="'sjf' is a built-in policy"):
        register_policy("sjf", lambda w, c: None)  # type: ignore[arg-type,return-value]


def test_a_broken_plugin_is_one_error_naming_it(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("raise RuntimeError('boom')\n")
    with pytest.raises(InvalidInstanceError, match=r"--plugin: .*bad.py: RuntimeError: boom"):
        load_plugin(str(bad))
    with pytest.raises(InvalidInstanceError, match="no such file"):
        load_plugin(str(tmp_path / "missing.py"))
    with pytest.raises(InvalidInstanceError, match="No module named"):
        load_plugin("no_such_module_here")


def test_a_plugin_run_through_run_config_names_its_file() -> None:
    config = RunConfig(
        "aged-sjf",
        SMALL,
        servers=2,
        policy_params={"aging": 0.5},
        plugins=(str(EXAMPLE),),
    )
    assert config.plugins == (str(EXAMPLE.resolve()),)
    result = run_config(config)
    assert result.metrics["jobs"] == 40


def test_editing_a_plugin_changes_its_cache_key_and_not_a_built_in_one(tmp_path: Path) -> None:
    path = _copy(tmp_path)
    before = provenance.code_digest(provenance.code_files([path], extra_roots=(tmp_path,)))
    path.write_text(path.read_text().replace("job.index)", "-job.index)"))
    provenance._read.cache_clear()
    after = provenance.code_digest(provenance.code_files([path], extra_roots=(tmp_path,)))
    assert before != after
    # A plug-in's own folder is followed: a helper module it imports counts too.
    helper = tmp_path / "helper_rule.py"
    helper.write_text("WEIGHT = 1.0\n")
    path.write_text("import helper_rule\n" + path.read_text())
    provenance._read.cache_clear()
    with_helper = provenance.code_files([path], extra_roots=(tmp_path,))
    assert helper in with_helper


def _digests(package_root: Path, policies: tuple[str, ...]) -> list[str]:
    code = (
        "import sys\n"
        "from scheduling_opt.sim import RunConfig\n"
        f"print(' '.join(RunConfig(p).digest() for p in {policies!r}))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(package_root)}
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env=env,
        cwd=package_root,
    )
    return out.stdout.split()


@pytest.mark.slow
def test_editing_a_built_in_family_changes_only_its_policies_keys(tmp_path: Path) -> None:
    # A copy of the package, imported first; SJF's sort key is edited there.
    shutil.copytree(
        ROOT / "scheduling_opt",
        tmp_path / "scheduling_opt",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    policies = ("sjf", "fifo", "chronus", "aryl")
    before = _digests(tmp_path, policies)
    module = tmp_path / "scheduling_opt" / "sim" / "policies" / "baselines" / "nonpreemptive.py"
    text = module.read_text()
    assert "class Sjf" in text
    module.write_text(text + "\n# an edit\n")
    after = _digests(tmp_path, policies)
    assert after[0] != before[0]
    assert after[1] != before[1]
    assert after[2:] == before[2:]  # other families keep their cached runs
    engine = tmp_path / "scheduling_opt" / "sim" / "live.py"
    engine.write_text(engine.read_text() + "\n# an edit\n")
    assert all(a != b for a, b in zip(_digests(tmp_path, policies), after, strict=True))


def _simulate(plugin: Path, out: Path) -> str:
    cmd = [
        sys.executable,
        "-m",
        "scheduling_opt.cli",
        "simulate",
        "--plugin",
        str(plugin),
        "--policy",
        "aged-sjf:aging=0.5",
        "--policy",
        "sjf",
        "--workload",
        "synthetic",
        "--synthetic-jobs",
        "60",
        "--servers",
        "3",
        "--out",
        str(out),
        "--quiet",
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, check=True, cwd=ROOT)
    return done.stdout


def _row(stdout: str, name: str) -> str:
    return next(line for line in stdout.splitlines() if line.startswith(f"| {name} |"))


@pytest.mark.slow
def test_an_edited_plugin_runs_again_and_the_other_policy_comes_from_the_cache(
    tmp_path: Path,
) -> None:
    plugin = _copy(tmp_path)
    out = tmp_path / "out"
    first = _simulate(plugin, out)
    assert "(cached)" not in first
    again = _simulate(plugin, out)
    assert "(cached)" in _row(again, "aged-sjf:aging=0.5")
    assert "From the cache (2 of 2 runs" in again
    # Longest job first instead: a different policy, so fresh numbers.
    plugin.write_text(plugin.read_text().replace("(job.job.work -", "(-job.job.work -"))
    edited = _simulate(plugin, out)
    assert "(cached)" not in _row(edited, "aged-sjf:aging=0.5")
    assert "(cached)" in _row(edited, "sjf")
    cells = lambda text: _row(text, "aged-sjf:aging=0.5").split("|")[3:8]  # noqa: E731
    assert cells(edited) != cells(first)


@pytest.mark.slow
def test_a_bad_parameter_on_the_command_line_is_one_line_and_exit_2(tmp_path: Path) -> None:
    cmd = [
        sys.executable,
        "-m",
        "scheduling_opt.cli",
        "simulate",
        "--plugin",
        str(EXAMPLE),
        "--policy",
        "aged-sjf:aging=-1",
        "--out",
        str(tmp_path),
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0
    assert "aged-sjf: aging: must be >= 0" in done.stderr


@pytest.mark.slow
def test_the_docs_page_blocks_run_as_written(monkeypatch: pytest.MonkeyPatch) -> None:
    import re

    text = (ROOT / "docs" / "write-a-policy.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert len(blocks) >= 4
    monkeypatch.chdir(ROOT)
    namespace: dict[str, object] = {}
    for block in blocks:
        exec(compile(block, "docs/write-a-policy.md", "exec"), namespace)
    test = namespace["test_aged_sjf_finishes_every_job_after_its_submission"]
    assert callable(test)
    test()
