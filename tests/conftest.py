"""Hypothesis profiles.

Locally, ``python -m pytest`` draws new random examples on every run, so
property tests keep exploring. CI exports ``HYPOTHESIS_PROFILE=repeatable``:
the same examples every run, so that a red CI always means a change broke
something, never that this run happened to draw a new example (run
``python -m pytest --hypothesis-seed=N`` for a few N to explore on purpose).
"""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("repeatable", derandomize=True, database=None, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
