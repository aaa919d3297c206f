"""The papers' headline results, reproduced in the simulator beside the published numbers.

A paper's set (:class:`PaperSet`) is its policies x workloads x seeds as
simulator :class:`~scheduling_opt.sim.sweep.RunConfig` objects, its published
numbers as :class:`Claim` objects that compute ours from the runs, and a
``--quick`` variant on the bundled excerpt. ``scheduling-opt reproduce PAPER``
(:mod:`.command`) runs it and writes ``report.md`` (:mod:`.report`).
docs/reproduction.md has the setups and the numbers of the runs done.

Examples
--------
>>> from scheduling_opt.reproduce import PAPERS
>>> sorted(PAPERS)
['antman', 'aryl', 'chronus', 'edl', 'ones']
>>> PAPERS["edl"].claims[0].paper
89.5
"""

from scheduling_opt.reproduce.papers import PAPERS, Claim, PaperSet, PolicyRun, paper
from scheduling_opt.reproduce.workloads import ElasticRule, PaperWorkload

__all__ = ["PAPERS", "Claim", "ElasticRule", "PaperSet", "PaperWorkload", "PolicyRun", "paper"]
