"""Sensitivity models: Chronus' log2 iteration-time model and measured tables."""

from __future__ import annotations

import math

import pytest

from scheduling_opt.errors import InvalidInstanceError
from scheduling_opt.scaling import Log2Model, Log2Times, TableModel, parse_speed_model

# model_info.json of the Chronus artifact, alexnet rows (MIT license).
ALEXNET = {
    2: {1: 1.0, 2: 0.7450686884120468},
    4: {1: 1.0, 4: 0.325340860506144, 2: 0.3972922047776267},
    6: {1: 1.0, 2: 0.3309909296079203},
    8: {1: 1.0, 4: 0.26836765904968457, 2: 0.5083145152293351},
}


def test_log2_model_follows_section_3_2_2() -> None:
    times = Log2Times(0.2, 0.3)
    # t_n = t_1 + log2(n) (t_2 - t_1): 4 nodes -> 0.2 + 2 * 0.1.
    assert times.time(4) == pytest.approx(0.4)
    model = Log2Model(Log2Times(1.0, 1.5), {"vgg": times})
    assert model.speed("vgg", 8, 4) == pytest.approx(0.2 / 0.4)
    assert model.speed(None, 8, 4) == pytest.approx(1 / (1 + 2 * 0.5))
    assert model.speed("vgg", 8, 1) == 1.0
    assert model.knows("vgg")
    assert not model.knows("bert")


def test_table_model_fills_gaps_like_the_artifact() -> None:
    model = TableModel({"alexnet": ALEXNET})
    assert model.speed("alexnet", 8, 2) == ALEXNET[8][2]
    assert model.speed("alexnet", 3, 2) == ALEXNET[4][2]  # N=3 uses the 4-GPU row
    assert model.speed("alexnet", 8, 3) == ALEXNET[8][4]  # 3 nodes use the 4-node speed
    assert model.speed("alexnet", 6, 3) == ALEXNET[6][2]  # no k above 2: the largest
    assert model.speed("alexnet", 16, 2) == ALEXNET[8][2]  # beyond the table: largest N
    assert model.speed(None, 8, 4) == 1.0


def test_parse_speed_models() -> None:
    table = parse_speed_model(
        {"kind": "table", "models": {"alexnet": {"8": {"1": 1.0, "2": 0.5}}}, "source": "x"}
    )
    assert table.speed("alexnet", 8, 2) == 0.5
    log2 = parse_speed_model({"kind": "log2", "t1": 2.0, "t2": 3.0, "models": {}})
    assert log2.speed(None, 4, 2) == pytest.approx(2 / 3)
    assert math.isclose(parse_speed_model({"kind": "log2"}).speed(None, 4, 2), 1 / 1.5)


@pytest.mark.parametrize(
    ("value", "path"),
    [
        ({}, "params.sensitivity.kind"),
        ({"kind": "cubic"}, "params.sensitivity.kind"),
        ({"kind": "log2", "t1": 0, "t2": 1}, "params.sensitivity.t1"),
        ({"kind": "log2", "models": {"m": {"t1": 1}}}, "params.sensitivity.models.m.t2"),
        ({"kind": "table", "models": {"m": {"x": {"1": 1}}}}, "params.sensitivity.models.m.x"),
        ({"kind": "table", "models": {"m": {"8": {"2": -1}}}}, "params.sensitivity.models.m.8.2"),
        ({"kind": "table", "models": {"m": {"8": {}}}}, "params.sensitivity.models.m.8"),
        ({"kind": "table", "model": {}}, "params.sensitivity.model"),
    ],
)
def test_bad_models_name_their_path(value: object, path: str) -> None:
    with pytest.raises(InvalidInstanceError) as err:
        parse_speed_model(value)
    assert err.value.path == path
