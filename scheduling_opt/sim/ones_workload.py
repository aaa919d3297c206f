"""ONES' evaluation workload (§4.1-§4.2, Table 2) as simulator jobs, and each job's batch model.

The paper trains 50 workloads (Table 2: AlexNet, ResNet50, VGG16 and
InceptionV3 on ImageNet subsets of 10k-20k images, ResNet18, VGG16 and
GoogleNet on CIFAR10 subsets of 20k-40k, pre-trained BERT on COLA 5k-8k,
MRPC 3.6k and SST-2 10k-20k), 400 jobs arriving as a Poisson process with
a mean gap of 30 s on 64 V100 GPUs (16 servers x 4), and drops the first 5%
of the jobs from the statistics. Its throughput and convergence numbers are
not published, so each task here gets a documented throughput model in the
library's form (:class:`~scheduling_opt.batch_size.AnalyticThroughput`,
seconds per iteration = overhead + per_sample x local batch + comm x
log2(GPUs) + cross_node x [spans servers]; coefficients chosen to give
V100-like rates: ResNet18/CIFAR about 2,000 images/s on one GPU, ResNet50/
ImageNet about 300, BERT about 145 sequences/s), a largest local batch
(memory), a submitted local batch and a range of epochs to converge.

Draw rule of :func:`generate` (numpy ``Generator`` seeded with ``seed``;
same seed, same jobs): gaps ~ Exponential(mean ``gap``); the task and its
dataset size uniformly among the 50 workloads; the submitted GPU count c0
from P_MIX2's frequencies of 1, 2, 4 and 8 GPUs (28,243 / 219 / 1,246 /
919 jobs; the paper samples GPU times from Microsoft's trace); the global
batch B0 = c0 x the task's local batch (the fixed-local-batch practice of
§2.2); the epochs to converge E ~ Uniform(task range), real-valued. A
job's work is its running time at (B0, c0) consolidated: E x ||D|| /
X(B0, c0), in seconds. The job may run on 1..``max_gpus`` GPUs (ONES
resizes it; baselines keep c0). ``SimJob.model`` is
``"<task>/<dataset>/<size>"`` so a policy finds the batch model again
(:func:`job_model`); the convergence epochs stay hidden in ``work``.

Convergence model (the simulator's truth): by default a job needs E epochs
whatever its batch size (ONES scales the learning rate linearly with the
batch and limits its growth, §3.3.2, Figures 13-14, so that the epochs stay
equivalent); its progress rate is X(B, c, spread) / (E ||D||) per second.
The option of :func:`epochs_factor` (ONES §2.2, §3.3.2): the linear rule
holds up to a batch-size limit, ``limit`` x the submitted batch B0; past
it the job needs E (B / (limit B0))^growth epochs. Our reading of the
paper: Figure 14 shows a ResNet50/CIFAR10 job grown from its batch of 256
to 4,096 (16x) reaching the same training loss in the same epochs, and
Figure 13 and [14, 16] that larger batches need more epochs, without a
law; so the default limit is 16 and, past it, the step count stops
falling (growth 1: E grows with B, the regime where a larger batch no
longer cuts the steps), a choice swept in docs/reproduction.md.

Features of ONES' progress regression (§3.2.1, footnote 1) that a
simulated job has: its epoch size ||D||, its initial loss L_initial
(:attr:`JobModel.initial_loss`: ln of the classes of Table 2, the
cross-entropy of an untrained classifier) and its processed samples; the
loss improvement ratio and the validation accuracy need loss curves,
which the paper does not publish and this workload does not simulate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from scheduling_opt.batch_size import AnalyticThroughput
from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.sim.workload import SimJob, Workload
from scheduling_opt.solution import as_rng

#: GPUs per server of the paper's testbed (16 x 4 V100).
GPUS_PER_SERVER = 4


@dataclass(frozen=True, slots=True)
class Task:
    """One model/dataset pair of Table 2 with its batch and convergence model.

    ``throughput``: the library's analytic model (seconds); ``max_local``:
    the largest local batch that fits a V100; ``local``: the submitted local
    batch; ``sizes``: the dataset sizes of Table 2 (samples per epoch);
    ``epochs``: the range E is drawn from.
    """

    name: str
    dataset: str
    throughput: AnalyticThroughput
    max_local: int
    local: int
    sizes: tuple[int, ...]
    epochs: tuple[float, float]

    @property
    def prior_epochs(self) -> float:
        """The mean of ``epochs``: what a profile of the task predicts before training."""
        return 0.5 * (self.epochs[0] + self.epochs[1])


def _t(overhead: float, per_sample: float, comm: float, cross: float) -> AnalyticThroughput:
    return AnalyticThroughput(overhead, per_sample, comm, cross)


_IMAGENET = (10_000, 12_000, 14_000, 16_000, 18_000, 20_000)
_CIFAR = (20_000, 25_000, 30_000, 35_000, 40_000)
_SST2 = (10_000, 12_000, 14_000, 16_000, 18_000, 20_000)

#: The 50 workloads of Table 2 (4 x 6 + 3 x 5 + 4 + 1 + 6), by task.
TASKS: tuple[Task, ...] = (
    Task("alexnet", "imagenet", _t(0.01, 0.0008, 0.05, 0.15), 256, 256, _IMAGENET, (15.0, 40.0)),
    Task("resnet50", "imagenet", _t(0.02, 0.0030, 0.02, 0.06), 128, 64, _IMAGENET, (10.0, 25.0)),
    Task("vgg16", "imagenet", _t(0.02, 0.0040, 0.06, 0.20), 64, 64, _IMAGENET, (10.0, 25.0)),
    Task(
        "inception_v3", "imagenet", _t(0.02, 0.0035, 0.025, 0.07), 64, 64, _IMAGENET, (10.0, 25.0)
    ),
    Task("resnet18", "cifar10", _t(0.01, 0.0004, 0.01, 0.03), 256, 128, _CIFAR, (10.0, 30.0)),
    Task("vgg16", "cifar10", _t(0.01, 0.0005, 0.03, 0.08), 256, 128, _CIFAR, (10.0, 30.0)),
    Task("googlenet", "cifar10", _t(0.01, 0.0009, 0.01, 0.03), 128, 128, _CIFAR, (10.0, 30.0)),
    Task(
        "bert",
        "cola",
        _t(0.03, 0.006, 0.08, 0.25),
        32,
        32,
        (5_000, 6_000, 7_000, 8_000),
        (3.0, 8.0),
    ),
    Task("bert", "mrpc", _t(0.03, 0.006, 0.08, 0.25), 32, 32, (3_600,), (3.0, 8.0)),
    Task("bert", "sst2", _t(0.03, 0.006, 0.08, 0.25), 32, 32, _SST2, (3.0, 8.0)),
)
_BY_KEY = {(t.name, t.dataset): t for t in TASKS}
#: Every (task, dataset size) pair: the 50 workloads.
WORKLOADS: tuple[tuple[Task, int], ...] = tuple((t, n) for t in TASKS for n in t.sizes)
#: P_MIX2's GPU counts up to 8 and their frequencies (the submitted c0).
GPU_COUNTS = (1, 2, 4, 8)
GPU_WEIGHTS = (28243.0, 219.0, 1246.0, 919.0)


@dataclass(frozen=True, slots=True)
class JobModel:
    """A job's batch model: its task, epoch size ||D||, submitted (B0, c0) and X0.

    ``reference``: samples per second at (B0, c0) consolidated, the speed-1
    of the simulator's ``work`` (so speed = X / ``reference``).
    """

    task: Task
    epoch_size: int
    batch0: int
    gpus0: int
    reference: float

    @property
    def initial_loss(self) -> float:
        """L_initial: ln(classes), the cross-entropy of an untrained classifier (Table 2).

        ImageNet subsets of k x 1,000 images hold k classes, CIFAR10 10, the
        GLUE tasks (COLA, MRPC, SST-2) 2.

        Examples
        --------
        >>> m = job_model(SimJob("0", 0.0, 1, 10.0, model="resnet50/imagenet/12000"))
        >>> round(m.initial_loss, 4), round(job_model(SimJob("1", 0.0, 1, 1.0,
        ...     model="bert/mrpc/3600")).initial_loss, 4)
        (2.4849, 0.6931)
        """
        return math.log(classes_of(self.task, self.epoch_size))

    def throughput(self, batch: int, gpus: int, spread: bool) -> float:
        """Samples per second at global batch ``batch`` split evenly on ``gpus`` GPUs.

        Examples
        --------
        >>> m = job_model(SimJob("0", 0.0, 1, 10.0, model="resnet18/cifar10/20000"))
        >>> round(m.throughput(128, 1, False), 1), round(m.reference, 1)  # 128 / 0.0612 s
        (2091.5, 2091.5)
        """
        local = -(-batch // gpus)
        one = np.ones(1)
        x = self.task.throughput.throughput(
            batch * one, local * one, gpus * one, float(spread) * one
        )
        return float(x[0])

    def total_samples(self, work: float) -> float:
        """Samples to convergence of a job whose ``work`` is seconds at (B0, c0)."""
        return work * self.reference


def classes_of(task: Task, size: int) -> int:
    """Classes of a Table 2 workload: one per 1,000 ImageNet images, 10 for CIFAR10, else 2.

    Examples
    --------
    >>> classes_of(TASKS[0], 14_000), classes_of(TASKS[4], 20_000), classes_of(TASKS[7], 5_000)
    (14, 10, 2)
    """
    if task.dataset == "imagenet":
        return max(2, size // 1000)
    return 10 if task.dataset == "cifar10" else 2


def epochs_factor(batch: float, batch0: float, limit: float | None, growth: float = 1.0) -> float:
    """E(B) / E: the epochs a job needs at global batch ``batch``, relative to its own.

    1 up to ``limit`` x the submitted batch ``batch0`` (None: no limit, the
    linear learning-rate rule everywhere), (B / (limit B0))^growth past it.
    ONES §2.2 and §3.3.2; the reading is in the module's docstring.

    Examples
    --------
    >>> epochs_factor(2048, 128, 16.0), epochs_factor(4096, 128, 16.0), epochs_factor(4096, 128, None)
    (1.0, 2.0, 1.0)
    >>> epochs_factor(8192, 128, 16.0, growth=0.5)
    2.0
    """
    if limit is None:
        return 1.0
    over = batch / (limit * batch0)
    return over**growth if over > 1.0 else 1.0


def job_model(job: SimJob) -> JobModel:
    """The batch model of a job of this workload (from ``job.model`` and ``job.gpus``).

    Raises
    ------
    InvalidInstanceError
        ``job.model`` is not ``"<task>/<dataset>/<size>"`` of a known task.

    Examples
    --------
    >>> m = job_model(SimJob("0", 0.0, 4, 10.0, model="bert/mrpc/3600"))
    >>> m.batch0, m.epoch_size, m.task.max_local
    (128, 3600, 32)
    """
    parts = (job.model or "").split("/")
    task = _BY_KEY.get((parts[0], parts[1])) if len(parts) == 3 else None
    if task is None or not parts[2].isdigit() or int(parts[2]) < 1:
        raise InvalidInstanceError(
            f"job {job.id!r}.model", f"{job.model!r} is not <task>/<dataset>/<size> of ONES' tasks"
        )
    c0 = job.gpus
    b0 = c0 * task.local
    spread = c0 > GPUS_PER_SERVER
    one = np.ones(1)
    ref = task.throughput.throughput(b0 * one, task.local * one, c0 * one, float(spread) * one)
    return JobModel(task, int(parts[2]), b0, c0, float(ref[0]))


@dataclass(frozen=True, slots=True)
class OnesSpec:
    """Size and shape of ONES' workload (§4.2): jobs, mean gap (s), ONES' GPU cap per job."""

    jobs: int = 400
    gap: float = 30.0
    max_gpus: int = 16

    def __post_init__(self) -> None:
        if self.jobs < 1 or not self.gap > 0 or not math.isfinite(self.gap) or self.max_gpus < 8:
            raise InvalidInstanceError("ones workload", "needs jobs >= 1, gap > 0, max_gpus >= 8")


def generate(spec: OnesSpec = OnesSpec(), seed: int | None = 0) -> Workload:
    """``spec.jobs`` jobs of ONES' evaluation drawn with ``seed`` (times in seconds).

    Examples
    --------
    >>> w = generate(OnesSpec(jobs=5), seed=1)
    >>> len(w.jobs), w.jobs == generate(OnesSpec(jobs=5), seed=1).jobs
    (5, True)
    >>> all(1 <= j.gpus <= 8 and j.min_gpus == 1 and j.max_gpus == 16 for j in w.jobs)
    True
    """
    rng = as_rng(seed)
    n = spec.jobs
    submits = np.cumsum(rng.exponential(spec.gap, n))
    kinds = rng.integers(0, len(WORKLOADS), n)
    weights = np.array(GPU_WEIGHTS) / sum(GPU_WEIGHTS)
    gpus = rng.choice(np.array(GPU_COUNTS), size=n, p=weights)
    u = rng.uniform(0.0, 1.0, n)
    jobs = []
    for i in range(n):
        task, size = WORKLOADS[int(kinds[i])]
        lo, hi = task.epochs
        epochs = lo + (hi - lo) * float(u[i])
        job = SimJob(
            id=str(i),
            submit=round(float(submits[i]), 3),
            gpus=int(gpus[i]),
            work=1.0,
            model=f"{task.name}/{task.dataset}/{size}",
            min_gpus=1,
            max_gpus=spec.max_gpus,
        )
        model = job_model(job)
        work = epochs * size / model.reference
        jobs.append(
            SimJob(
                id=job.id,
                submit=job.submit,
                gpus=job.gpus,
                work=round(work, 6),
                model=job.model,
                min_gpus=1,
                max_gpus=spec.max_gpus,
            )
        )
    return Workload.of(jobs, f"ones-{n}-s{seed}")
