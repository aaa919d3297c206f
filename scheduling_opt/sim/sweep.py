"""One run as a pure function of a frozen configuration; sweeps over processes or dask.

:func:`run_config` takes a :class:`RunConfig` (picklable, hashable) and
returns a :class:`RunResult`: it loads the workload (and the plug-ins that
register a user's policy), makes a fresh policy and runs the engine,
touching no shared state, so runs can go to worker processes or a dask
cluster as they are. :func:`run_sweep` runs many, skips those whose result
is cached in ``cache_dir`` under the run's key (a pickle per run), and
reports progress. The key (:meth:`RunConfig.digest`) covers what decides
the numbers: the configuration, the workload's data, the engine's code and
the policy's code (:mod:`scheduling_opt.sim.provenance`), so an edited
policy or trace is run again, never read stale from the cache.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import pickle
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.jsonpath import read_int, show
from scheduling_opt.sim import limits, provenance, registry
from scheduling_opt.sim.cluster import ClusterSpec
from scheduling_opt.sim.engine import EngineParams, RunOutput, simulate
from scheduling_opt.sim.protocol import Reporting
from scheduling_opt.sim.results import summarize
from scheduling_opt.sim.speed import SpeedModel, bundled_table
from scheduling_opt.sim.synthetic import SyntheticSpec, generate
from scheduling_opt.sim.workload import BUNDLED, Workload, bundled, load_trace

#: The layout of a cached result (bumped when RunResult's fields change).
RESULTS_VERSION = 2


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

    def data_digest(self) -> str:
        """The digest of the data the jobs come from (a trace file's bytes; '' for the others).

        The bundled files are part of the engine's digest; a synthetic
        workload is its specification and the generator's code.
        """
        if self.kind == "trace" and self.path is not None:
            try:
                return provenance.data_digest(self.path)
            except OSError:
                return "missing"  # loading it will say what is wrong
        return ""


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
    """Everything one run depends on besides the code.

    Validated when built, by the model's number rules, the simulator's
    limits (:mod:`scheduling_opt.sim.limits`) and the policy's declaration:
    a known policy (after loading ``plugins``), its parameters checked
    against what it declares, counts within their limits, times on the
    clock, ``skip`` in [0, 1); numpy scalars become Python numbers and a
    mapping of ``policy_params`` its items. An error names the field
    (``servers: must be at most 100,000 ...``).

    ``plugins``: modules or ``.py`` files (absolute paths) that register
    the policy, loaded before it is made, in this process or a worker's.
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
    #: Work owed at each start, x (1 + log2 GPUs), and the arrival step (EngineParams).
    start_overhead: float = 0.0
    arrival_step: float | None = None
    #: The run's name in reports and files when it is not the policy's (one
    #: policy run under several parameter values, e.g. ``gandiva-pack d=0.5``).
    label: str = ""
    plugins: tuple[str, ...] = ()
    #: Stall of a resize or migration (None: ``restart_cost``; EngineParams).
    resize_cost: float | None = None

    @property
    def name(self) -> str:
        """The run's name: ``label``, else the policy's registry name."""
        return self.label or self.policy

    def __post_init__(self) -> None:
        # The model's rules, the simulator's limits (sim/limits.py) and the
        # policy's declaration: a configuration that cannot run is refused
        # here, naming the field, before a sweep hashes, ships or runs it.
        set_ = object.__setattr__
        plugins = self.plugins
        if isinstance(plugins, str) or not isinstance(plugins, (tuple, list)):
            raise InvalidInstanceError("plugins", f"must be a tuple of names, got {show(plugins)}")
        keys = []
        for i, text in enumerate(plugins):
            if type(text) is not str or not text:
                raise InvalidInstanceError(f"plugins[{i}]", f"must be a name, got {show(text)}")
            keys.append(registry.plugin_key(text))
            registry.load_plugin(text, "plugins")
        set_(self, "plugins", tuple(keys))
        spec = registry.policy_spec(self.policy)
        if not isinstance(self.workload, WorkloadSpec):
            raise InvalidInstanceError(
                "workload", f"must be a WorkloadSpec, got {type(self.workload).__name__}"
            )
        servers = limits.count(self.servers, "servers", limits.MAX_SERVERS, why=limits.SERVER_COST)
        k = limits.count(
            self.gpus_per_server, "gpus_per_server", limits.MAX_GPUS_PER_SERVER, why=limits.GPU_SCAN
        )
        limits.check_cluster(servers, servers * k, "servers")
        params = _params(self.policy_params)
        for name, value in (
            ("servers", servers),
            ("gpus_per_server", k),
            ("seed", read_int(self.seed, "seed", 0)),
            ("restart_cost", limits.clock(self.restart_cost, "restart_cost")),
            ("preemption_cost", limits.clock(self.preemption_cost, "preemption_cost")),
            ("start_overhead", limits.clock(self.start_overhead, "start_overhead")),
            ("skip", limits.fraction(self.skip, "skip")),
            ("policy_params", registry.check_params(spec.name, dict(params))),
        ):
            set_(self, name, value)
        if len(dict(params)) != len(params):
            raise InvalidInstanceError("policy_params", "a parameter is given twice")
        if self.resize_cost is not None:
            set_(self, "resize_cost", limits.clock(self.resize_cost, "resize_cost"))
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

    def cluster(self) -> ClusterSpec:
        """The run's cluster: the uniform servers plus what the policy adds (its declaration)."""
        base = ClusterSpec.uniform(self.servers, self.gpus_per_server)
        return registry.run_cluster(self.policy, base, dict(self.policy_params))

    def code_digest(self) -> str:
        """The digest of the code that decides this run's numbers: the engine's and the policy's."""
        spec = registry.policy_spec(self.policy)
        module = inspect.getmodule(spec.factory)
        source = getattr(module, "__file__", None)
        # A user's policy (a plug-in, an installed package's entry point):
        # the modules of its own folder count too.
        outside = source is not None and not Path(source).resolve().is_relative_to(provenance.ROOT)
        folder = str(Path(source).parent) if source is not None and outside else ""
        policy = provenance.module_digest(source, folder) if source else spec.family
        workload = inspect.getfile(type(self.workload))
        return "-".join((provenance.engine_digest(), policy, provenance.module_digest(workload)))

    def digest(self) -> str:
        """The cache key: a stable hash of the configuration, its data and its code."""
        fields = asdict(self)
        spec = registry.policy_spec(self.policy)
        files = {}
        for key, value in self.policy_params:
            param = spec.param(key)
            if param is not None and param.kind == "path" and isinstance(value, str):
                files[key] = provenance.data_digest(value)
        text = json.dumps(
            [
                RESULTS_VERSION,
                fields,
                self.workload.data_digest(),
                files,
                self.code_digest(),
            ],
            sort_keys=True,
            default=repr,
        )
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
    #: Whether :func:`run_sweep` read it from the cache instead of running it.
    from_cache: bool = False


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
    for plugin in config.plugins:  # a worker process loads them too
        registry.load_plugin(plugin, "plugins")
    given = dict(config.policy_params)
    # The policy's scenario may change the jobs (its declared workload hook).
    workload = registry.run_workload(config.policy, config.workload.load(config.seed), given)
    cluster = config.cluster()
    policy = registry.make_policy(config.policy, workload, cluster, given)
    table = bundled_table() if config.placement_table else None
    params = EngineParams(
        config.restart_cost,
        config.preemption_cost,
        config.round_length,
        start_overhead=config.start_overhead,
        arrival_step=config.arrival_step,
        resize_cost=config.resize_cost,
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
    extra = dict(policy.stats()) if isinstance(policy, Reporting) else {}
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
        if not isinstance(result, RunResult) or result.config != config:
            return None
        return replace(result, from_cache=True)
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
    refresh: bool = False,
) -> list[RunResult]:
    """Run ``configs`` (results in the same order), reusing cached results.

    A result read from ``cache_dir`` has ``from_cache`` set; ``refresh``
    runs every configuration again (and caches the new results).

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
    results: list[RunResult | None] = [None if refresh else _cached(cache_dir, c) for c in configs]
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
