"""ONES' system around its search, hand-computed: the update gate, the scaling cost, the
convergence option and the online progress regression."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize, stats

from scheduling_opt.batch_size import BatchSizeInput
from scheduling_opt.sim import ClusterSpec, SimJob, View, Workload, simulate
from scheduling_opt.sim.policies.ones.fixed import FixedBatch
from scheduling_opt.sim.policies.ones.policy import Ones
from scheduling_opt.sim.registry import make_policy

D = 20_000  # samples per epoch of resnet18/cifar10/20000


def _x(overhead: float, per_sample: float, comm: float, batch: int, gpus: int) -> float:
    """Samples/s of the analytic model on one server (written out, not the library's)."""
    local = -(-batch // gpus)
    return batch / (overhead + per_sample * local + comm * math.log2(gpus))


#: ResNet18/CIFAR10 (iteration 0.01 + 0.0004 b + 0.01 log2 c s), submitted batch 128 on 1 GPU.
X0 = _x(0.01, 0.0004, 0.01, 128, 1)  # 2,091.5 samples/s


def _resnet(name: str, submit: float, work: float, max_gpus: int = 4) -> SimJob:
    return SimJob(
        name, submit, 1, work, model="resnet18/cifar10/20000", min_gpus=1, max_gpus=max_gpus
    )


# ---------------------------------------------------------------- the update gate (§3.2.2)


@pytest.mark.parametrize("update", ["epoch", "epoch-fill", "event"])
def test_an_arrival_waits_for_the_running_job_epoch(update: str) -> None:
    # One server of 2 GPUs. A arrives at 0 and runs in warm-up on one GPU at
    # its batch 128: X0 samples/s, its first epoch ends at D / X0 = 9.5625 s.
    # B arrives at 5 with a GPU idle. ONES (update=epoch) deploys the next
    # schedule only once every running job has finished an epoch: B starts
    # at 9.5625, on the second GPU (A keeps one: B needs its GPU, and A at
    # batch 128 would gain from more). Updating at every event, or filling
    # idle GPUs between updates (epoch-fill), B starts at 5.
    w = Workload.of([_resnet("a", 0.0, 100.0), _resnet("b", 5.0, 100.0)], "t")
    policy = Ones(generations=5, update=update, progress="prior")
    out = simulate(w, ClusterSpec.uniform(1, 2), policy)
    first_epoch = D / X0
    assert first_epoch == pytest.approx(9.5625)
    assert out.first_start[0] == 0.0
    assert out.first_start[1] == (
        pytest.approx(first_epoch, rel=1e-12) if update == "epoch" else 5.0
    )
    if update != "event":
        assert policy.stats()["gate_waits"] >= 1  # B's arrival found the gate closed


def test_a_job_filled_between_updates_holds_no_gate() -> None:
    # epoch-fill, 2 GPUs: A (ResNet18, 9.5625-s epochs) from 0, then a BERT/MRPC
    # job M at 5 on the idle GPU (its epochs take 24.98 s). M was not in the
    # deployed schedule, so the gate opens at A's epoch end, 9.5625, not M's.
    jobs = [
        _resnet("a", 0.0, 200.0),
        SimJob("m", 5.0, 1, 200.0, model="bert/mrpc/3600", min_gpus=1, max_gpus=4),
    ]
    deploys: list[float] = []

    class Spy(Ones):
        def deploy(self, view: View, live: list):  # type: ignore[no-untyped-def,type-arg]
            deploys.append(view.now)
            return super().deploy(view, live)

    out = simulate(
        Workload.of(jobs, "t"), ClusterSpec.uniform(1, 2), Spy(generations=3, update="epoch-fill")
    )
    assert out.first_start == (0.0, 5.0)
    assert deploys[:2] == [0.0, pytest.approx(D / X0, rel=1e-12)]


def test_fixed_batch_waits_for_the_gate_too() -> None:
    # The same arrivals under the fixed-batch contrast: B (1 GPU) waits for A's epoch end.
    w = Workload.of([_resnet("a", 0.0, 100.0), _resnet("b", 5.0, 100.0)], "t")
    out = simulate(w, ClusterSpec.uniform(1, 2), FixedBatch(progress="prior"))
    assert out.first_start == (0.0, pytest.approx(D / X0, rel=1e-12))
    assert out.end[0] == pytest.approx(100.0)  # A never changes: its work at speed 1


def test_the_gate_waits_for_the_slowest_running_job() -> None:
    # Two running jobs on 2 GPUs (fixed batches): A's epochs take 9.5625 s, a
    # BERT/MRPC job's 3,600 / 144.14 = 24.98 s (iteration 0.03 + 0.006 x 32).
    # C arrives at 3 with no GPU free; the next update is at the later epoch
    # end, 24.98 s, whatever A's two epoch ends before it.
    jobs = [
        _resnet("a", 0.0, 200.0),
        SimJob("m", 0.0, 1, 200.0, model="bert/mrpc/3600", min_gpus=1, max_gpus=4),
        _resnet("c", 3.0, 50.0),
    ]
    deploys: list[float] = []

    class Spy(FixedBatch):
        def deploy(self, view: View, live: list):  # type: ignore[no-untyped-def,type-arg]
            deploys.append(view.now)
            return super().deploy(view, live)

    w = Workload.of(jobs, "t")
    out = simulate(w, ClusterSpec.uniform(1, 2), Spy(progress="prior"))
    mrpc_epoch = 3_600 / _x(0.03, 0.006, 0.08, 32, 1)
    # A's epoch ends at 9.56 and 19.1 and C's arrival at 3 deploy nothing.
    assert deploys[:2] == [0.0, pytest.approx(mrpc_epoch, rel=1e-12)]
    assert out.first_start[2] >= mrpc_epoch - 1e-9


# ---------------------------------------------------------------- the scaling cost (§4.3)


@pytest.mark.parametrize("cost", [0.0, 1.0, 2.5])
def test_a_growth_pays_the_change_cost(cost: float) -> None:
    # One 4-GPU server, A alone. Warm-up: one GPU at 128 until its first epoch
    # ends at T1 = D / X0. There its limit stays 128 (ceil(2 x 128 /
    # ceil(T1 / 30 + 1)) = 128) and at 128 three GPUs are within 1% of the best
    # throughput: A grows to 3 GPUs (local 43), a change of its GPUs, so it
    # stalls `cost` seconds; every later update keeps 3 GPUs and 128 (nothing
    # charged). Work W = 6 D / X0 (6 epochs at speed 1): after T1, W - T1 is
    # left at X3 / X0 with X3 = 128 / (0.01 + 0.0004 x 43 + 0.01 log2 3).
    work = 6 * D / X0
    w = Workload.of([_resnet("a", 0.0, work)], "t")
    policy = Ones(generations=5, progress="prior", change_cost=cost)
    out = simulate(w, ClusterSpec.uniform(1, 4), policy)
    t1 = D / X0
    x3 = _x(0.01, 0.0004, 0.01, 128, 3)
    assert out.end[0] == pytest.approx(t1 + cost + (work - t1) * X0 / x3, rel=1e-12)
    assert policy.stats()["changes"] == 1
    assert out.gpu_time[0] == pytest.approx(t1 + 3 * (out.end[0] - t1), rel=1e-12)


def test_a_batch_change_on_the_same_gpus_pays_the_cost() -> None:
    # One GPU, sigma 0 (limits only double): A runs its first epoch at 128;
    # at T1 R = 256 and on one GPU B = min(R, m = 256) = 256: a batch change
    # on the same GPU, stalled 1 s; R stays at its cap 256 (1 GPU x m), so
    # nothing changes again. W = 5 D / X0; after T1 it runs at X(256, 1).
    work = 5 * D / X0
    w = Workload.of([_resnet("a", 0.0, work, max_gpus=1)], "t")
    policy = Ones(generations=3, progress="prior", sigma=0.0)
    out = simulate(w, ClusterSpec.uniform(1, 1), policy)
    t1 = D / X0
    x256 = _x(0.01, 0.0004, 0.01, 256, 1)
    assert out.end[0] == pytest.approx(t1 + 1.0 + (work - t1) * X0 / x256, rel=1e-12)
    assert policy.stats()["changes"] == 1


# ---------------------------------------------------------------- the convergence option (§2.2)


@pytest.mark.parametrize(("limit", "growth"), [(None, 1.0), (1.0, 1.0), (1.5, 1.0), (1.0, 0.5)])
def test_epochs_grow_past_the_batch_limit(limit: float | None, growth: float) -> None:
    # As above (one GPU, sigma 0, no change cost): batch 128 = B0 in the first
    # epoch, then 256 = 2 B0. With a limit of L x B0, past it the job needs
    # (256 / (L 128))^growth times the epochs: its work advances that much
    # slower than its samples. L = 1: x2 (growth 1), x sqrt(2) (growth 0.5);
    # L = 1.5: x 4/3; no limit: x1.
    work = 5 * D / X0
    w = Workload.of([_resnet("a", 0.0, work, max_gpus=1)], "t")
    policy = Ones(
        generations=3,
        progress="prior",
        sigma=0.0,
        change_cost=0.0,
        epoch_limit=limit,
        epoch_growth=growth,
    )
    out = simulate(w, ClusterSpec.uniform(1, 1), policy)
    t1 = D / X0
    x256 = _x(0.01, 0.0004, 0.01, 256, 1)
    mult = 1.0 if limit is None else max(1.0, 2.0 / limit) ** growth
    assert out.end[0] == pytest.approx(t1 + (work - t1) * mult * X0 / x256, rel=1e-12)


def test_with_the_convergence_option_the_gate_counts_samples_not_work() -> None:
    # Limit 1 (x2 epochs at 256): the job processes D in T1, then X(256, 1)
    # samples/s; its epoch ends (the updates) come every D / X(256, 1) s
    # after T1, twice as many as its work would say.
    work = 5 * D / X0
    w = Workload.of([_resnet("a", 0.0, work, max_gpus=1)], "t")
    seen: list[float] = []

    class Spy(Ones):
        def deploy(self, view: View, live: list):  # type: ignore[no-untyped-def,type-arg]
            seen.append(view.now)
            return super().deploy(view, live)

    policy = Spy(generations=3, progress="prior", sigma=0.0, change_cost=0.0, epoch_limit=1.0)
    out = simulate(w, ClusterSpec.uniform(1, 1), policy)
    t1 = D / X0
    x256 = _x(0.01, 0.0004, 0.01, 256, 1)
    want = [0.0] + [t1 + k * D / x256 for k in range(int((out.end[0] - t1) * x256 / D) + 1)]
    assert seen == pytest.approx(want[: len(seen)], rel=1e-12)
    # 1 epoch at 128, then 2 x 4 epochs' worth of samples at 256: 8 more ends.
    assert len(seen) == 1 + 8


# ---------------------------------------------------------------- the progress regression (§3.2.1)


def _log_likelihood(theta: np.ndarray, x: np.ndarray, alpha: np.ndarray, rho: np.ndarray) -> float:
    beta = np.maximum(x @ theta[:-1] + theta[-1], 1.0)
    return float(stats.beta.logpdf(rho, alpha, beta).sum())


def test_regression_estimate_after_k_epochs_matches_a_hand_fit() -> None:
    # One GPU; five jobs one after the other, each alone (the next arrives
    # after the last has converged). A job of E epochs logs the points
    # k = 1..floor(E): features (k, ||D|| / 10^4, ln classes) and progress
    # rho = k / E; E = work x X0 / ||D|| (the epochs at the submitted batch,
    # equal at any batch). After four completions the policy fits Eq. 6; the
    # fifth job's beta at its epoch ends must be the Beta MLE of those points,
    # found here independently (scipy.stats' log-density, Nelder-Mead). The
    # four jobs' E lie on a plane of the features, E = 1 + 2 ||D|| / 10^4 +
    # 1.5 ln classes, so the likelihood has one maximum (with the clip
    # beta >= 1 a history whose early points the fit clips has flat parts and
    # several: docs/reproduction.md).
    tasks = [
        ("resnet18/cifar10/20000", 20_000, 10, 128, (0.01, 0.0004, 0.01)),
        ("bert/mrpc/3600", 3_600, 2, 32, (0.03, 0.006, 0.08)),
        ("vgg16/imagenet/10000", 10_000, 10, 64, (0.02, 0.004, 0.06)),
        ("bert/sst2/10000", 10_000, 2, 32, (0.03, 0.006, 0.08)),
        ("resnet18/cifar10/20000", 20_000, 10, 128, (0.01, 0.0004, 0.01)),
    ]
    epochs = [1 + 2 * size / 1e4 + 1.5 * math.log(classes) for _, size, classes, *_ in tasks]
    epochs[4] = 8.0
    jobs, submit = [], 0.0
    rows: list[tuple[list[float], float, float]] = []
    for i, ((name, size, classes, b0, (o, p, c)), e) in enumerate(zip(tasks, epochs, strict=True)):
        x0 = _x(o, p, c, b0, 1)
        work = e * size / x0
        jobs.append(SimJob(str(i), submit, 1, work, model=name, min_gpus=1, max_gpus=1))
        submit += 3 * work + 10.0  # after it converged, whatever its batch
        if i < 4:
            for k in range(1, math.floor(e) + 1):
                rows.append(([k, size / 1e4, math.log(classes)], k, k / e))
    x = np.array([r[0] for r in rows])
    alpha = np.array([r[1] for r in rows])
    rho = np.array([r[2] for r in rows])
    design = np.column_stack([x, np.ones(len(rho))])
    start = np.linalg.lstsq(design, np.maximum(alpha * (1 - rho) / rho, 1.0), rcond=None)[0]
    hand = optimize.minimize(
        lambda t: -_log_likelihood(t, x, alpha, rho),
        start,
        method="Nelder-Mead",
        options={"xatol": 1e-10, "fatol": 1e-12, "maxiter": 40_000, "maxfev": 40_000},
    )
    betas: dict[int, float] = {}
    models = []

    class Spy(Ones):
        def input_of(self, view: View, live: object) -> BatchSizeInput:  # type: ignore[override]
            inp = super().input_of(view, live)  # type: ignore[arg-type]
            for j, key in enumerate(inp.job_ids):
                if key == "4":
                    betas[round(int(inp.processed[j]) / 20_000)] = float(inp.beta[j])
                    models.append(self.predictor.model)  # type: ignore[union-attr]
            return inp

    policy = Spy(generations=2, update="epoch")
    simulate(Workload.of(jobs, "t"), ClusterSpec.uniform(1, 1), policy)
    # Fitted when the fourth job completed, and again after the fifth.
    assert policy.stats()["fits"] == 2
    fitted = models[0]
    assert fitted is not None
    assert all(m is fitted for m in models)
    theta = np.append(fitted.weights, fitted.bias)
    # The policy's fit is the maximum: no better than it found by hand.
    assert _log_likelihood(theta, x, alpha, rho) >= -hand.fun - 1e-6
    for k in (1, 3, 6):
        want = max(float(hand.x[:-1] @ [k, 2.0, math.log(10)] + hand.x[-1]), 1.0)
        assert betas[k] == pytest.approx(want, rel=1e-4)


def test_before_four_completions_beta_is_the_task_prior() -> None:
    # No job has completed: the regression is not fitted, beta = prior mean
    # epochs (ResNet18/CIFAR10: 20) minus the epochs done.
    w = Workload.of([_resnet("a", 0.0, 100.0)], "t")
    betas: list[tuple[int, float]] = []

    class Spy(Ones):
        def input_of(self, view: View, live: object) -> BatchSizeInput:  # type: ignore[override]
            inp = super().input_of(view, live)  # type: ignore[arg-type]
            betas.append((int(inp.processed[0]), float(inp.beta[0])))
            return inp

    simulate(w, ClusterSpec.uniform(1, 1), Spy(generations=2))
    for processed, beta in betas:
        assert beta == pytest.approx(20.0 - processed / D, abs=1e-3)


def test_the_declared_defaults_are_the_paper_system() -> None:
    w = Workload.of([_resnet("a", 0.0, 10.0)], "t")
    policy = make_policy("ones", w, ClusterSpec.uniform(1, 1))
    assert isinstance(policy, Ones)
    assert (policy.update, policy.change_cost, policy.epoch_limit) == ("epoch", 1.0, None)
    assert policy.predictor is not None
    assert policy.predictor.history.capacity == 1000
    fixed = make_policy("fixed-batch", w, ClusterSpec.uniform(1, 1), {"update": "event"})
    assert isinstance(fixed, FixedBatch)
    assert fixed.update == "event"
