"""The papers' sets by name: each paper's policies, workloads and claims (one module each).

- :mod:`.paper_set`: the types (:class:`PaperSet`, :class:`Claim`,
  :class:`PolicyRun`, :class:`Sweep`, :class:`LoadTarget`; a microbenchmark's
  :class:`Scenario`, :class:`Measure`, :class:`JobTimes`);
- :mod:`.edl`, :mod:`.chronus`, :mod:`.antman`, :mod:`.ones`, :mod:`.aryl`:
  one paper's set each.
"""

from __future__ import annotations

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.reproduce.papers.antman import ANTMAN
from scheduling_opt.reproduce.papers.aryl import ARYL
from scheduling_opt.reproduce.papers.chronus import CHRONUS
from scheduling_opt.reproduce.papers.edl import EDL
from scheduling_opt.reproduce.papers.ones import ONES
from scheduling_opt.reproduce.papers.paper_set import (
    TRACE_FILES,
    Claim,
    JobTimes,
    Kind,
    LoadTarget,
    Measure,
    PaperSet,
    PolicyRun,
    Scenario,
    Sweep,
)
from scheduling_opt.suggest import did_you_mean

#: The paper sets by name (the command's PAPER).
PAPERS: dict[str, PaperSet] = {
    "edl": EDL,
    "chronus": CHRONUS,
    "antman": ANTMAN,
    "ones": ONES,
    "aryl": ARYL,
}


def paper(name: str) -> PaperSet:
    """The set of paper ``name`` (InvalidInstanceError naming the known ones)."""
    found = PAPERS.get(name)
    if found is None:
        hint = did_you_mean(name, PAPERS)
        raise InvalidInstanceError(
            "PAPER", f"unknown paper {name!r}{hint}; known: {sorted(PAPERS)}"
        )
    return found


__all__ = [
    "PAPERS",
    "TRACE_FILES",
    "Claim",
    "JobTimes",
    "Kind",
    "LoadTarget",
    "Measure",
    "PaperSet",
    "PolicyRun",
    "Scenario",
    "Sweep",
    "paper",
]
