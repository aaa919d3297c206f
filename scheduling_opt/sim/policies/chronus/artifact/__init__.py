"""The rules of the simulator the Chronus authors released, as options of the ``chronus`` policy.

The artifact is the public repository S-Lab-System-Group/ChronusArtifact at
commit bc7e15f, folder ``code/``; the modules here cite its files and
functions (``time_aware_with_lease.py`` for ``code/alg/scheduler/``'s
scheduler, ``solver.py`` for its MILP and packing), never its code: each
rule is read from it and written again.

- :mod:`.rules`: the estimate, the GPU bins, the queue classes and their
  orders, the admission packing, the pool placement, and the presets of
  the ``artifact`` semantics; its docstring explains every option;
- :mod:`.admission`: the batch admission (``admission_check="batch"``);
- :mod:`.selection`: the selection MILP's rows in the artifact's order, its
  frozen jobs (``search_rows``) and the selection's bookkeeping;
- :mod:`.cbc`: the selection MILP as the artifact's code writes it,
  solved by PuLP's CBC binary (``selection="artifact-cbc"``);
- :mod:`.mip`: the same model through python-mip, the artifact's solver
  build (``selection="artifact-mip"``; the optional extra ``parity``);
- :mod:`.queue`: the queue classes and the moves between them (overrun,
  forced, lowest);
- :mod:`.minute`: the minute loop (``queue="artifact"``): terms, 5-minute
  passes, odd-minute fills.

These modules import from the rest of the ``chronus`` package only its
plain data (:mod:`~scheduling_opt.sim.policies.chronus.options`,
:mod:`~scheduling_opt.sim.policies.chronus.ledger`); the policy's own parts call
into them, and the minute loop gets the term selection and the admission
as functions.
"""
