"""Imported by the fuzz's fork server only: matplotlib as ``scheduling_opt.sim.cli.plots`` sets it up.

``sim/cli/plots.py`` selects the Agg backend and imports pyplot on its first
plot (about 1 s of CPU); doing the same once in the fork server keeps a
mutant with ``--out`` from spending it again (:mod:`tests.fuzz.preloaded`).
Without matplotlib (it comes with the ``bench`` extra, which CI does not
install) ``simulate`` draws no plots, and there is nothing to preload.
"""

try:
    import matplotlib
except ImportError:
    pass
else:
    matplotlib.use("Agg")
    import matplotlib.pyplot
