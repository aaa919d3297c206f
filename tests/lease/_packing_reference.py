"""The packing search's ``_replay`` as it was before issue 25's speed-up: the reference.

tests/lease/test_lease_packing_replay.py proves that the faster version in
:mod:`scheduling_opt.lease.packing` gives every job the same terms.
"""

from __future__ import annotations

from collections.abc import Sequence


def replay(
    jobs: Sequence[tuple[int, int, int]],
    horizon: int,
    sizes: Sequence[int],
    choice: Sequence[tuple[int, ...]],
) -> list[list[int]]:
    cls_of = {g: c for c, g in enumerate(sizes)}
    left = [rl for _, rl, _ in jobs]
    terms: list[list[int]] = [[] for _ in jobs]
    of_cls: list[list[int]] = [[] for _ in sizes]
    for i, (g, rl, _) in enumerate(jobs):
        if rl > 0:
            of_cls[cls_of[g]].append(i)
    for tau in range(horizon):
        for c, k in enumerate(choice[tau]):
            ready = [i for i in of_cls[c] if left[i] > 0 and horizon - jobs[i][2] <= tau]
            ready.sort(key=lambda i: (-left[i], i))
            for i in ready[:k]:
                left[i] -= 1
                terms[i].append(horizon - 1 - tau)
    return [sorted(t) for t in terms]
