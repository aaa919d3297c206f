"""The Sia case study's rescaling (benchmarks/peers/sia_knapsack.py), checked by hand."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import numpy as np

PEERS = Path(__file__).resolve().parent.parent.parent / "benchmarks" / "peers"


def _module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("sia_knapsack", PEERS / "sia_knapsack.py")
    assert spec is not None
    assert spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("sia_knapsack", mod)
    spec.loader.exec_module(mod)
    return mod


def test_rescale_multiplies_each_row_but_its_previous_column() -> None:
    # Sia's rescaling: a job's row times its re-allocation factor, except the
    # configuration it holds. Row 0 holds column 2 (factor 0.5), row 1 holds
    # nothing (unchanged), row 2 holds column 0 (factor 0.25).
    speedup = np.array([[1.0, 2.0, 4.0], [3.0, 5.0, 7.0], [8.0, 8.0, 8.0]])
    got = _module().rescale(speedup, [0.5, 0.1, 0.25], [2, None, 0])
    assert got.tolist() == [[0.5, 1.0, 4.0], [3.0, 5.0, 7.0], [8.0, 2.0, 2.0]]
    assert speedup[0, 0] == 1.0  # the input is not changed
    assert _module().rescale(speedup, [1.0] * 3, [None] * 3).tolist() == speedup.tolist()
