"""FreeMap.with_free: the state that taking the used GPUs one server at a time leaves."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scheduling_opt.sim.cluster import FreeMap


def _taken(capacity: list[int], free: list[int]) -> FreeMap:
    """The independent construction: a full map, then each server's used GPUs taken."""
    plan = FreeMap(capacity)
    for s, (c, f) in enumerate(zip(capacity, free, strict=True)):
        if c > f:
            plan.take(((s, c - f),))
    return plan


def _state(m: FreeMap) -> tuple[object, ...]:
    return (m.capacity, m.free, m.kmax, m.levels, m.total_free, m.uniform)


@st.composite
def _maps(draw: st.DrawFn) -> tuple[list[int], list[int]]:
    capacity = draw(st.lists(st.sampled_from([0, 2, 4, 8]), min_size=1, max_size=12))
    free = [draw(st.integers(0, c)) for c in capacity]
    return capacity, free


def test_a_hand_made_map() -> None:
    # Server 0: 3 of 8 free; server 1: all 8; server 2 unavailable; server 3: 0 of 4.
    m = FreeMap.with_free([8, 8, 0, 4], [3, 8, 0, 0])
    assert m.total_free == 11
    assert m.levels[3] == [0]
    assert m.levels[8] == [1]
    assert m.levels[0] == [3]
    assert m.place(3) == ((0, 3),)  # best fit: the server with 3 free
    assert not m.uniform


@given(_maps())
def test_with_free_equals_taking_the_used_gpus(case: tuple[list[int], list[int]]) -> None:
    capacity, free = case
    assert _state(FreeMap.with_free(capacity, free)) == _state(_taken(capacity, free))


@pytest.mark.parametrize("free", [[9, 0], [-1, 0], [0]])
def test_free_outside_capacity_is_refused(free: list[int]) -> None:
    with pytest.raises(ValueError, match="not within capacity"):
        FreeMap.with_free([8, 8], free)
