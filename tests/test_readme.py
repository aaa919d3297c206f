"""The README's Python example runs as written (from the repository root)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_readme_python_example_runs_and_finds_the_hand_computed_optimum() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert len(blocks) == 1
    proc = subprocess.run(
        [sys.executable, "-c", blocks[0]],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ),
    )
    assert proc.returncode == 0, proc.stderr
    first, second = proc.stdout.strip().splitlines()
    # By hand: returning i1 or i2 takes 2 of inelastic job a's 4 workers, so a
    # is preempted; returning i3 leaves elastic b 2 workers (its minimum), so
    # nothing is preempted. The optimum is i3 with 0 preempted jobs.
    assert first == "('i3',) 0.0 optimal 0.0"
    objective, bound, fast = second.split()
    assert float(objective) >= 0.0
    assert float(bound) <= float(objective)
    assert fast == "True"
