"""The README's Python example runs as written (from the repository root)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_readme_python_example_runs() -> None:
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
    servers, heuristic, optimum, status = (
        proc.stdout.split("] ")[0] + "]",
        *proc.stdout.split("] ")[1].split(),
    )
    # Aryl Figure 5: returning the two servers of job a preempts one job, the optimum.
    assert float(optimum) == 1.0
    assert float(heuristic) >= float(optimum)
    assert status == "optimal"
    assert servers.count("'") == 4  # two server ids
