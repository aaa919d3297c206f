"""What AntMan's local coordinator knows of a model: memory over a job's life, SM use, scaling cost.

AntMan's frameworks report each job's peak and minimal memory, host memory
use and mini-batch time (§3.2); the coordinator uses them to size GPU
memory and to limit an opportunistic job's kernels (§3.1, §3.3). The trace
reports none of this, so each model gets a documented
:class:`ModelProfile`:

- ``peak_gb``: device memory per GPU while it trains (§5.1's numbers:
  Fig. 11a ResNet-50 17.6 GB; Fig. 11b VGG16 17 GB, Inception3 16 GB,
  GoogleNet 4 GB; Table 1 GCN 3.5 GB; Fig. 4 ESPnet 3.6 GB training, up to
  19 GB decoding);
- ``curve``: its speed at a fraction of that memory with the rest in host
  memory (universal memory, §3.1.1), read off Fig. 10
  (:data:`scheduling_opt.memory_split.PRESETS`); below the curve's first
  fraction it cannot run (its persistent model);
- ``sm``: its SM utilization alone, what GpuOpManager weighs (§3.1.2);
  None: the trace's rule (:func:`utilization`, Fig. 1's distribution);
- ``grow_seconds``: the time lost when its memory grows back (§5.1:
  ResNet-50's growing mini-batch takes 234 ms against 119 ms, 115 ms of
  overhead; VGG16's overhead is 0.4% of a one-minute interval, 0.24 s);
  every shrink costs :data:`SHRINK_SECONDS` (17.6 -> 1.3 GB in 17 ms);
- ``phases``: memory and SM over the job's life, a cycle of
  :class:`Phase` repeated by progress (ESPnet, Fig. 4 and Fig. 12:
  training 140 s at 3.6 GB and 5-50% SM, then decoding 250 s at 19 GB with
  no SM); none: ``peak_gb`` and ``sm`` for its whole life. The paper
  profiles no other model over time, so the trace's models have one phase.

Where the paper gives no number the choice is written beside the entry
(:data:`PROFILES`). Everything here is plain data: O(phases) per lookup.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping
from dataclasses import dataclass

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.memory_split import PRESETS, check_curve
from scheduling_opt.memory_split.model import Curve

#: V100 memory (AntMan §5: 32 GB) and the memory split's chunk.
GPU_MEMORY_GB, CHUNK_GB = 32.0, 0.5
#: Fig. 11a: a shrink of ResNet-50's memory, 17.6 -> 1.3 GB, takes 17 ms.
SHRINK_SECONDS = 0.017
#: Fig. 11a: ResNet-50's growing mini-batch 234 ms against 119 ms: 115 ms of overhead.
GROW_SECONDS = 0.115
#: Utilization of a GPU under a busy (10% of jobs) or an ordinary job (the trace's rule).
HOT, WARM = 0.9, 0.5


def _unit(job_id: str) -> float:
    """A stable number in [0, 1) from a job id (no RNG: the same under every seed)."""
    return int.from_bytes(hashlib.sha256(job_id.encode()).digest()[:8], "big") / 2**64


def utilization(job_id: str) -> float:
    """The SM utilization of a job without a profiled one: 0.9 for a stable 10%, else 0.5.

    AntMan Fig. 1: "only 10% of the GPUs achieve higher than 80% GPU
    utilization"; a hash of the id, so every seed and policy agree.

    Examples
    --------
    >>> sorted({utilization(str(i)) for i in range(100)})
    [0.5, 0.9]
    """
    return HOT if _unit(job_id) < 0.1 else WARM


def _fraction(value: float, name: str) -> float:
    v = float(value)
    if not 0.0 <= v <= 1.0:
        raise InvalidInstanceError(name, f"must be in [0, 1], got {value!r}")
    return v


def _positive(value: float, name: str, *, zero: bool = False) -> float:
    v = float(value)
    if not (math.isfinite(v) and (v >= 0.0 if zero else v > 0.0)):
        raise InvalidInstanceError(
            name, f"must be finite and {'>=' if zero else '>'} 0, got {value!r}"
        )
    return v


@dataclass(frozen=True, slots=True)
class Phase:
    """One stage of a job's cycle: ``seconds`` of progress at ``gb`` per GPU and ``sm``.

    ``seconds`` counts the job's own progress (work at speed 1), so a
    slowed job stays in a phase longer; ``sm`` None: the job's trace rule.

    Examples
    --------
    >>> Phase(140.0, 3.6, 0.3)
    Phase(seconds=140.0, gb=3.6, sm=0.3)
    >>> Phase(0.0, 3.6)
    Traceback (most recent call last):
    ...
    scheduling_opt.errors.InvalidInstanceError: phase.seconds: must be finite and > 0, got 0.0
    """

    seconds: float
    gb: float
    sm: float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "seconds", _positive(self.seconds, "phase.seconds"))
        object.__setattr__(self, "gb", _positive(self.gb, "phase.gb"))
        if self.sm is not None:
            object.__setattr__(self, "sm", _fraction(self.sm, "phase.sm"))


@dataclass(frozen=True, slots=True)
class ModelProfile:
    """A model's memory, SM use and memory-scaling cost (the module docstring).

    ``curve``: a :data:`~scheduling_opt.memory_split.PRESETS` name or
    points; ``peak_gb`` is the largest phase's memory when phases are given.

    Examples
    --------
    >>> p = ModelProfile(19.0, "vgg", phases=(Phase(140.0, 3.6, 0.3), Phase(250.0, 19.0, 0.0)))
    >>> p.at(100.0), p.at(200.0), p.at(400.0)
    ((3.6, 0.3, 40.0), (19.0, 0.0, 190.0), (3.6, 0.3, 130.0))
    >>> ModelProfile(17.6, "resnet").at(1e6)
    (17.6, None, inf)
    """

    peak_gb: float
    curve: str | Curve
    sm: float | None = None
    grow_seconds: float = GROW_SECONDS
    phases: tuple[Phase, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "peak_gb", _positive(self.peak_gb, "peak_gb"))
        if isinstance(self.curve, str):
            if self.curve not in PRESETS:
                raise InvalidInstanceError(
                    "curve", f"unknown preset {self.curve!r}; known: {', '.join(PRESETS)}"
                )
        else:
            object.__setattr__(self, "curve", check_curve(self.curve))
        if self.sm is not None:
            object.__setattr__(self, "sm", _fraction(self.sm, "sm"))
        gs = _positive(self.grow_seconds, "grow_seconds", zero=True)
        object.__setattr__(self, "grow_seconds", gs)
        phases = tuple(self.phases)
        for i, ph in enumerate(phases):
            if not isinstance(ph, Phase):
                raise InvalidInstanceError(f"phases[{i}]", f"must be a Phase, got {ph!r:.60}")
            if ph.gb > self.peak_gb:
                raise InvalidInstanceError(f"phases[{i}].gb", f"above peak_gb {self.peak_gb}")
        object.__setattr__(self, "phases", phases)

    @property
    def points(self) -> Curve:
        """The slowdown curve's points."""
        return PRESETS[self.curve] if isinstance(self.curve, str) else self.curve

    @property
    def cycle(self) -> float:
        """Seconds of progress of one cycle of phases (inf without phases)."""
        return sum(p.seconds for p in self.phases) if self.phases else math.inf

    def at(self, progress: float) -> tuple[float, float | None, float]:
        """``(GB, SM or None, seconds left in the phase)`` after ``progress`` seconds of work.

        Without phases: ``(peak_gb, sm, inf)``. A progress within a
        millisecond of a phase's end counts as the next phase, so a policy
        that wakes at the boundary finds the new phase.
        """
        if not self.phases:
            return self.peak_gb, self.sm, math.inf
        t = math.fmod(max(progress, 0.0), self.cycle)
        for p in self.phases:
            if t < p.seconds - 1e-3:
                return p.gb, p.sm if p.sm is not None else self.sm, p.seconds - t
            t -= p.seconds
        first = self.phases[0]  # at the cycle's end within the tolerance
        return first.gb, first.sm if first.sm is not None else self.sm, first.seconds - max(t, 0.0)


#: Model -> profile. The trace's models (Chronus' model_info.json) with §5.1's
#: peaks and Fig. 10's curves, one phase, the trace's SM rule; two of §5.1's
#: jobs (its ResNet-50 runs differ: each microbenchmark gives its own).
PROFILES: dict[str, ModelProfile] = {
    "vgg16": ModelProfile(17.0, "vgg", grow_seconds=0.24),  # Fig. 11b; 0.4% of a minute
    "inception_v3": ModelProfile(16.0, "resnet"),  # Fig. 11b; a CNN like ResNet's curve
    "resnet101": ModelProfile(17.6, "resnet"),  # as ResNet-50 (Fig. 11a)
    "resnet50": ModelProfile(17.6, "resnet"),  # Fig. 11a
    "alexnet": ModelProfile(4.0, "vgg"),  # as GoogleNet (Fig. 11b: 4 GB)
    "mobilenet_v2": ModelProfile(3.5, "sr"),  # a small model, memory-insensitive as SR
    # Table 1 (3.5 GB). Its SM and memory sensitivity are not published: its
    # graph sampling runs on the CPU (§1), so 0.1 SM, and SR's flat curve.
    "gcn": ModelProfile(3.5, "sr", sm=0.1),
    # Fig. 4 and Fig. 12: training (140 s, 3.6 GB, SM 5-50% under AntMan: 0.3)
    # then decoding (250 s, up to 19 GB, no SM). Its memory curve is not
    # published (it is a guarantee job in §5.1): VGG's.
    "espnet": ModelProfile(
        19.0, "vgg", sm=0.3, phases=(Phase(140.0, 3.6, 0.3), Phase(250.0, 19.0, 0.0))
    ),
}
#: A model not in the table: 8 GB, VGG's curve (a middling CNN), the trace's SM rule.
DEFAULT_PROFILE = ModelProfile(8.0, "vgg")


def as_profile(entry: object, path: str = "memory") -> ModelProfile:
    """A table entry as a profile: a :class:`ModelProfile`, ``(peak GB, preset)``, or a mapping.

    The mapping holds :class:`ModelProfile`'s fields as plain data, each
    phase a ``(seconds, GB, SM or None)`` triple: what a caller that may not
    import this family passes (a paper set's microbenchmark).

    Examples
    --------
    >>> as_profile((30.0, "resnet")).peak_gb
    30.0
    >>> as_profile({"peak_gb": 4.0, "curve": "vgg", "phases": [(60, 4.0, 0.8), (60, 2.0, 0.0)]}).cycle
    120.0
    >>> as_profile("big")
    Traceback (most recent call last):
    ...
    scheduling_opt.errors.InvalidInstanceError: memory: must be a ModelProfile, (peak GB, curve preset) or a mapping of its fields, got 'big'
    """
    if isinstance(entry, ModelProfile):
        return entry
    if isinstance(entry, tuple) and len(entry) == 2:
        return ModelProfile(float(entry[0]), entry[1])
    if isinstance(entry, Mapping):
        fields = dict(entry)
        unknown = sorted(set(fields) - set(ModelProfile.__dataclass_fields__))
        if unknown:
            raise InvalidInstanceError(path, f"unknown fields {unknown}")
        try:
            phases = tuple(Phase(*p) for p in fields.pop("phases", ()))
            return ModelProfile(**fields, phases=phases)
        except TypeError as e:
            raise InvalidInstanceError(path, str(e)) from None
    raise InvalidInstanceError(
        path,
        "must be a ModelProfile, (peak GB, curve preset) or a mapping of its fields, "
        f"got {entry!r:.60}",
    )


def profiles(table: Mapping[str, object] | None) -> dict[str, ModelProfile]:
    """:data:`PROFILES` with ``table``'s entries over it (each checked, :func:`as_profile`)."""
    out = dict(PROFILES)
    if table is not None:
        if not isinstance(table, Mapping):
            raise InvalidInstanceError("memory", "must be a mapping of model to profile")
        out.update({str(k): as_profile(v, f"memory.{k}") for k, v in table.items()})
    return out


def profile_of(model: str | None, table: Mapping[str, ModelProfile]) -> ModelProfile:
    """The profile of ``model`` in ``table`` (:data:`DEFAULT_PROFILE` when absent).

    Examples
    --------
    >>> profile_of("vgg16", PROFILES).peak_gb, profile_of(None, PROFILES).peak_gb
    (17.0, 8.0)
    """
    return table.get(model or "", DEFAULT_PROFILE)
