"""One run as a pure function of a frozen configuration; sweeps over processes or dask.

:func:`run_config` takes a :class:`RunConfig` (picklable, hashable) and
returns a :class:`RunResult`: it loads the workload, makes a fresh policy and
runs the engine, touching no shared state, so runs can go to worker
processes or a dask cluster as they are. :func:`run_sweep` runs many, skips
those whose result is cached in ``cache_dir`` under the configuration's hash
(a pickle per run), and reports progress.
"""

from __future__ import annotations

import hashlib
import json
import pickle
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.jsonpath import read_int, show
from scheduling_opt.sim import limits
from scheduling_opt.sim.cluster import ClusterSpec, ServerSpec
from scheduling_opt.sim.engine import EngineParams, RunOutput, simulate
from scheduling_opt.sim.registry import POLICIES, make_policy
from scheduling_opt.sim.results import summarize
from scheduling_opt.sim.speed import SpeedModel, bundled_table
from scheduling_opt.sim.synthetic import SyntheticSpec, generate
from scheduling_opt.sim.workload import BUNDLED, Workload, bundled, load_trace

#: Bump when a change alters the results of an unchanged configuration.
RESULTS_VERSION = 1
#: Per policy, bumped when a change alters only that policy's results (its
#: cached runs go stale, every other policy's stay): ``ones-exact`` 2 = a
#: deterministic work budget and the pattern model instead of 1 s per call
#: (issue 25).
POLICY_VERSIONS: dict[str, int] = {"ones-exact": 2}


@dataclass(frozen=True, slots=True)
class WorkloadSpec:
    """Where the jobs come from: ``bundled``, a ``trace`` path, or ``synthetic``.

    Validated when built: a known ``kind``, a ``path`` for a trace, a
    :class:`SyntheticSpec` or None for ``synthetic``.
    """

    #: The kinds this class loads (a subclass that loads others extends it).
    KINDS: ClassVar[tuple[str, ...]] = ("bundled", "trace", "synthetic")

    kind: str = "bundled"
    path: str | None = None
    synthetic: SyntheticSpec | None = None

    def __post_init__(self) -> None:
        if type(self.kind) is not str or self.kind not in self.KINDS:
            raise InvalidInstanceError(
                "kind", f"must be one of {list(self.KINDS)}, got {show(self.kind)}"
            )
        if self.kind == "trace" and (type(self.path) is not str or not self.path):
            raise InvalidInstanceError("path", f"a trace needs a file path, got {show(self.path)}")
        if self.synthetic is not None and not isinstance(self.synthetic, SyntheticSpec):
            raise InvalidInstanceError(
                "synthetic", f"must be a SyntheticSpec, got {type(self.synthetic).__name__}"
            )

    def load(self, seed: int) -> Workload:
        """The jobs (a synthetic workload is drawn with ``seed``)."""
        if self.kind == "bundled":
            return bundled()
        if self.kind == "trace" and self.path is not None:
            return load_trace(self.path)
        if self.kind == "synthetic":
            return generate(self.synthetic or SyntheticSpec(), seed)
        raise InvalidInstanceError("kind", f"unknown workload kind {self.kind!r}")

    @property
    def name(self) -> str:
        if self.kind == "trace" and self.path is not None:
            return Path(self.path).stem
        return BUNDLED if self.kind == "bundled" else "synthetic"


def _params(value: object) -> tuple[tuple[str, Any], ...]:
    """``policy_params`` as a tuple of ``(name, value)`` pairs (a mapping's items, in order)."""
    items = value.items() if isinstance(value, Mapping) else value
    if isinstance(items, (str, bytes)) or not isinstance(items, Iterable):
        raise InvalidInstanceError(
            "policy_params", f"must be (name, value) pairs, got {show(value)}"
        )
    out = []
    for i, item in enumerate(items):
        if not isinstance(item, tuple) or len(item) != 2 or type(item[0]) is not str:
            raise InvalidInstanceError(
                f"policy_params[{i}]", f"must be a (name, value) pair, got {show(item)}"
            )
        out.append(item)
    return tuple(out)


@dataclass(frozen=True, slots=True)
class RunConfig:
    """Everything one run depends on.

    Validated when built, by the model's number rules and the simulator's
    limits (:mod:`scheduling_opt.sim.limits`): a known policy, counts within
    their limits (the cluster with its inference servers included), times on
    the clock, ``skip`` in [0, 1); numpy scalars become Python numbers and a
    mapping of ``policy_params`` its items. An error names the field
    (``servers: must be at most 100,000 ...``).
    """

    policy: str
    workload: WorkloadSpec = WorkloadSpec()
    servers: int = 120
    gpus_per_server: int = 8
    seed: int = 0
    policy_params: tuple[tuple[str, Any], ...] = ()
    restart_cost: float = 0.0
    preemption_cost: float = 0.0
    round_length: float | None = None
    placement_table: bool = True
    skip: float = 0.0
    #: Aryl's inference cluster: servers not available at the start (the
    #: policy lends them) of ``inference_gpus`` GPUs at ``inference_compute``.
    #: Default: Aryl §5.2 normalizes on-loan GPUs to training GPUs, so an
    #: 8-T4 server (T4 = 0.25 V100, Appendix A) is 2 V100-equivalents.
    inference_servers: int = 0
    inference_gpus: int = 2
    inference_compute: float = 1.0
    #: The Chronus artifact's start overhead and arrival step (EngineParams).
    start_overhead: float = 0.0
    arrival_step: float | None = None

    #: The run's name in reports and files when it is not the policy's (one
    #: policy run under several parameter values, e.g. ``gandiva-pack d=0.5``).
    label: str = ""

    @property
    def name(self) -> str:
        """The run's name: ``label``, else the policy's registry name."""
        return self.label or self.policy

    def __post_init__(self) -> None:
        # The model's rules, the simulator's limits (sim/limits.py): a
        # configuration that cannot run is refused here, naming the field,
        # before a sweep hashes, ships or runs it.
        set_ = object.__setattr__
        if type(self.policy) is not str or self.policy not in POLICIES:
            raise InvalidInstanceError(
                "policy", f"unknown policy {show(self.policy)}; known: {sorted(POLICIES)}"
            )
        if not isinstance(self.workload, WorkloadSpec):
            raise InvalidInstanceError(
                "workload", f"must be a WorkloadSpec, got {type(self.workload).__name__}"
            )
        servers = limits.count(self.servers, "servers", limits.MAX_SERVERS, why=limits.SERVER_COST)
        k = limits.count(
            self.gpus_per_server, "gpus_per_server", limits.MAX_GPUS_PER_SERVER, why=limits.GPU_SCAN
        )
        extra = limits.count(
            self.inference_servers, "inference_servers", limits.MAX_SERVERS, minimum=0
        )
        k_extra = limits.count(
            self.inference_gpus, "inference_gpus", limits.MAX_GPUS_PER_SERVER, why=limits.GPU_SCAN
        )
        limits.check_cluster(servers + extra, servers * k + extra * k_extra, "servers")
        for name, value in (
            ("servers", servers),
            ("gpus_per_server", k),
            ("inference_servers", extra),
            ("inference_gpus", k_extra),
            ("seed", read_int(self.seed, "seed", 0)),
            ("inference_compute", limits.compute(self.inference_compute, "inference_compute")),
            ("restart_cost", limits.clock(self.restart_cost, "restart_cost")),
            ("preemption_cost", limits.clock(self.preemption_cost, "preemption_cost")),
            ("start_overhead", limits.clock(self.start_overhead, "start_overhead")),
            ("skip", limits.fraction(self.skip, "skip")),
            ("policy_params", _params(self.policy_params)),
        ):
            set_(self, name, value)
        for name in ("round_length", "arrival_step"):
            value = getattr(self, name)
            if value is not None:
                set_(self, name, limits.clock(value, name, positive=True))
        if type(self.label) is not str:
            raise InvalidInstanceError("label", f"must be a string, got {show(self.label)}")
        if type(self.placement_table) is not bool:
            raise InvalidInstanceError(
                "placement_table", f"must be true or false, got {show(self.placement_table)}"
            )

    def digest(self) -> str:
        """A stable hash of the configuration (the cache key)."""
        fields = asdict(self)
        if not self.inference_servers:  # keeps the keys of runs without one
            for key in ("inference_servers", "inference_gpus", "inference_compute"):
                del fields[key]
        for key, default in (("start_overhead", 0.0), ("arrival_step", None)):
            if fields[key] == default:  # the keys of runs without them stay
                del fields[key]
        if not self.label:  # likewise for runs without a label
            del fields["label"]
        if self.policy in POLICY_VERSIONS:  # only that policy's keys change
            fields["policy_version"] = POLICY_VERSIONS[self.policy]
        text = json.dumps([RESULTS_VERSION, fields], sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()[:20]


@dataclass(frozen=True, slots=True)
class RunResult:
    """A run's configuration, raw output, metrics and provenance."""

    config: RunConfig
    output: RunOutput
    metrics: dict[str, float]
    workload_name: str
    workload_digest: str
    extra: dict[str, Any] = field(default_factory=dict)


def run_config(config: RunConfig, progress: Callable[[int, int], None] | None = None) -> RunResult:
    """Run one configuration (pure: same configuration, same result but for times).

    ``progress(jobs done, jobs)`` is called now and then during the run.

    Examples
    --------
    >>> r = run_config(RunConfig("fifo", WorkloadSpec("synthetic", synthetic=SyntheticSpec(jobs=20)),
    ...                          servers=2, gpus_per_server=8))
    >>> r.metrics["jobs"], r.output.policy
    (20.0, 'fifo')
    """
    workload = config.workload.load(config.seed)
    cluster = ClusterSpec.uniform(config.servers, config.gpus_per_server)
    if config.inference_servers:
        lendable = ServerSpec(config.inference_gpus, "T4", config.inference_compute, False)
        cluster = ClusterSpec(cluster.servers + (lendable,) * config.inference_servers)
    policy = make_policy(config.policy, workload, cluster, dict(config.policy_params))
    table = bundled_table() if config.placement_table else None
    params = EngineParams(
        config.restart_cost,
        config.preemption_cost,
        config.round_length,
        start_overhead=config.start_overhead,
        arrival_step=config.arrival_step,
    )
    out = simulate(
        workload,
        cluster,
        policy,
        speed=SpeedModel(table, cluster.gpus_per_server),
        params=params,
        progress=progress,
    )
    metrics = summarize(out, skip=config.skip)
    # A policy may report its own counters (solver time, terms, fallbacks).
    stats = getattr(policy, "stats", None)
    extra = dict(stats()) if callable(stats) else {}
    return RunResult(config, out, metrics, workload.name, workload.digest, extra)


def _cached(cache_dir: Path | None, config: RunConfig) -> RunResult | None:
    if cache_dir is None:
        return None
    path = cache_dir / f"{config.digest()}.pkl"
    if not path.exists():
        return None
    try:
        with path.open("rb") as f:
            result = pickle.load(f)
        # An entry pickled by an older version may lack a field added since
        # (a slots dataclass then fails on comparison, not on loading).
        return result if isinstance(result, RunResult) and result.config == config else None
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, TypeError):
        return None  # a damaged or outdated cache entry is simply recomputed


def cached_results(
    configs: Sequence[RunConfig], cache_dir: Path
) -> tuple[list[RunResult], list[RunConfig]]:
    """The results of ``configs`` found in ``cache_dir`` (in order) and the configs not there.

    Computes nothing: for a report on a sweep that is still running elsewhere
    or was stopped. A damaged or outdated entry counts as missing.

    Parameters
    ----------
    configs : sequence of RunConfig
        The sweep's configurations.
    cache_dir : Path
        The folder :func:`run_sweep` caches into.

    Returns
    -------
    tuple of (list of RunResult, list of RunConfig)
        The cached results and the missing configurations, each in ``configs``' order.

    Examples
    --------
    >>> import tempfile
    >>> found, missing = cached_results([RunConfig("fifo")], Path(tempfile.mkdtemp()))
    >>> found, [c.name for c in missing]
    ([], ['fifo'])
    """
    found: list[RunResult] = []
    missing: list[RunConfig] = []
    for config in configs:
        result = _cached(cache_dir, config)
        if result is None:
            missing.append(config)
        else:
            found.append(result)
    return found, missing


def _store(cache_dir: Path | None, result: RunResult) -> None:
    if cache_dir is None:
        return
    cache_dir.mkdir(parents=True, exist_ok=True)
    tmp = cache_dir / f"{result.config.digest()}.tmp"
    with tmp.open("wb") as f:
        pickle.dump(result, f)
    tmp.replace(cache_dir / f"{result.config.digest()}.pkl")


def run_sweep(
    configs: Sequence[RunConfig],
    *,
    workers: int = 1,
    executor: str = "local",
    cache_dir: Path | None = None,
    progress: Callable[[int, int], None] | None = None,
    dask_client: Any = None,
    job_progress: Callable[[int, int], None] | None = None,
) -> list[RunResult]:
    """Run ``configs`` (results in the same order), reusing cached results.

    ``executor`` ``"local"`` runs in this process (``workers`` 1) or a process
    pool; ``"dask"`` submits to ``dask_client`` or a local
    ``distributed.Client`` of ``workers`` processes (needs the dask extra).
    ``workers`` (>= 1) is capped at the runs to do and the usable cores;
    at most ``limits.MAX_RUNS`` configurations.
    ``progress(runs done, runs)`` follows the sweep; ``job_progress(jobs done,
    jobs)`` follows each run when they run in this process.
    """
    limits.check_sweep(len(configs), 0, "configs")
    requested = limits.count(workers, "workers", 2**53)
    results: list[RunResult | None] = [_cached(cache_dir, c) for c in configs]
    todo = [i for i, r in enumerate(results) if r is None]
    # More processes than runs or cores only cost forks (1,000 took 23 s).
    workers = limits.usable_workers(requested, len(todo))
    done = len(configs) - len(todo)
    if progress is not None:
        progress(done, len(configs))

    def record(i: int, result: RunResult) -> None:
        nonlocal done
        results[i] = result
        _store(cache_dir, result)
        done += 1
        if progress is not None:
            progress(done, len(configs))

    if executor == "dask":
        _run_dask(configs, todo, workers, dask_client, record)
    elif executor != "local":
        raise InvalidInstanceError("executor", f"must be local or dask, got {executor!r}")
    elif workers <= 1:
        for i in todo:
            record(i, run_config(configs[i], job_progress))
    else:
        from concurrent.futures import ProcessPoolExecutor, as_completed

        with ProcessPoolExecutor(max_workers=workers) as pool:
            futures = {pool.submit(run_config, configs[i]): i for i in todo}
            for fut in as_completed(futures):
                record(futures[fut], fut.result())
    return [r for r in results if r is not None]


def _run_dask(
    configs: Sequence[RunConfig],
    todo: list[int],
    workers: int,
    client: Any,
    record: Callable[[int, RunResult], None],
) -> None:
    try:
        from distributed import Client, as_completed
    except ImportError:
        raise InvalidInstanceError(
            "executor", "dask needs the 'dask' extra: pip install 'scheduling-opt[dask]'"
        ) from None
    own = client is None
    if own:
        # No dashboard: two sweeps side by side need no hand-assigned ports.
        client = Client(
            n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None
        )
    try:
        futures = {client.submit(run_config, configs[i], pure=False): i for i in todo}
        for fut in as_completed(list(futures)):
            record(futures[fut], fut.result())
    finally:
        if own:
            client.close()
