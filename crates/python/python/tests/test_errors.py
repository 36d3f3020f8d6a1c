"""Bad input raises InputError carrying the file, line, key, value and what is allowed."""

import pytest

import fabricsim
from conftest import EXAMPLES


def test_a_bad_value_in_toml_text_names_line_and_key():
    with pytest.raises(fabricsim.InputError) as e:
        fabricsim.plan('name = "x"\n[cluster]\ngpus = "many"\n')
    err = e.value
    assert isinstance(err, ValueError)
    assert (err.file, err.line, err.key) == ("(scenario string)", 3, "cluster.gpus")
    assert err.allowed
    assert "cluster.gpus" in str(err)


def test_a_bad_override_names_the_flag():
    with pytest.raises(fabricsim.InputError) as e:
        fabricsim.plan(gpus="many")
    assert (e.value.file, e.value.line, e.value.key, e.value.value) == ("command line", None, "--gpus", "many")


def test_a_flag_the_command_does_not_take_is_refused():
    # `sim` takes no `--seeds` (compare's and collective's): refused, not silently ignored.
    with pytest.raises(fabricsim.InputError) as e:
        fabricsim.sim(EXAMPLES / "sim-permutation.toml", seeds=3)
    assert (e.value.key, e.value.problem) == ("--seeds", "is not a scenario flag")


def test_a_missing_file_names_it():
    with pytest.raises(fabricsim.InputError) as e:
        fabricsim.sim("no-such-scenario.toml")
    assert e.value.file == "no-such-scenario.toml"


def test_a_dict_toml_cannot_hold_is_refused():
    with pytest.raises(fabricsim.InputError) as e:
        fabricsim.plan({"cluster": {"gpus": None}})
    assert e.value.file == "(scenario dict)"


def test_a_bad_collective_flag_names_it():
    with pytest.raises(fabricsim.InputError) as e:
        fabricsim.collective(gpus=16, op="all_sum")
    assert (e.value.key, e.value.value) == ("--op", "all_sum")
    assert "all_reduce" in e.value.allowed


def test_a_scenario_flag_sweep_does_not_take_is_refused():
    # `sweep` takes --engine and --seeds from the scenario flags, not --gpus (a --param axis).
    with pytest.raises(fabricsim.InputError) as e:
        fabricsim.sweep(gpus=64)
    assert (e.value.key, e.value.problem) == ("--gpus", "is not a sweep flag")


def test_a_bad_sweep_axis_names_the_param():
    with pytest.raises(fabricsim.InputError) as e:
        fabricsim.sweep(param="loss_rate=lots")
    assert e.value.key == "--param"


def test_an_unknown_sim_table_names_what_is_allowed():
    with pytest.raises(fabricsim.InputError) as e:
        fabricsim.sim_frame(EXAMPLES / "sim-permutation.toml", table="flows")
    assert (e.value.key, e.value.value, e.value.allowed) == ("table", "flows", "messages or series")
