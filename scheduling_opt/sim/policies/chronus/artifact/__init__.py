"""The rules of the simulator the Chronus authors released, as options of the ``chronus`` policy.

- :mod:`.rules`: the estimate, the GPU bins, the queue classes and their
  orders, the admission packing, the pool placement, and the presets of
  the ``artifact`` semantics;
- :mod:`.cbc`: the selection MILP as the artifact's code writes it,
  solved by PuLP's CBC binary (``selection="artifact-cbc"``);
- :mod:`.mip`: the same model through python-mip, the artifact's solver
  build (``selection="artifact-mip"``; the optional extra ``parity``).
"""
