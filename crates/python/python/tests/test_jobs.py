"""The package gives the CLI's JSON, byte for byte, for the same scenario, flags and seed."""

import fabricsim
from conftest import EXAMPLES

PERMUTATION = EXAMPLES / "sim-permutation.toml"
COMPARE = EXAMPLES / "compare-hpcc.toml"


def test_sim_gives_the_cli_bytes(cli, tmp_path):
    want = cli("sim", PERMUTATION, "--seed", 3, out=tmp_path / "sim.json")
    got = fabricsim.sim_json(str(PERMUTATION), seed=3)
    assert got.encode() == want
    r = fabricsim.sim(PERMUTATION, seed=3)
    assert r["sim"]["seed"] == 3
    assert r["counters"]["bytes_delivered"] == r["counters"]["bytes_offered"] > 0


def test_sim_seed_changes_the_run_and_repeats():
    a = fabricsim.sim_json(str(PERMUTATION), seed=3)
    assert fabricsim.sim_json(str(PERMUTATION), seed=3) == a
    assert fabricsim.sim_json(str(PERMUTATION), seed=4) != a


def test_sim_from_a_dict_is_the_file():
    scenario = {
        "sim": {
            "topology_file": str(EXAMPLES / "sim-ft4.topo.txt"),
            "fabric": "roce",
            "seed": 1,
            "sample_interval": "20us",
        },
        "traffic": {"kind": "permutation", "bytes": "1MB"},
    }
    assert fabricsim.sim_json(scenario, seed=2) == fabricsim.sim_json(str(PERMUTATION), seed=2)


def test_plan_with_overrides_gives_the_cli_bytes(cli, tmp_path):
    want = cli("plan", "--gpus", 512, "--fabric", "ib-ndr", "--format", "json", out=tmp_path / "p.json")
    got = fabricsim.plan_json(gpus=512, fabric="ib-ndr")
    assert got.encode() == want
    assert fabricsim.plan(gpus=512)["bill_of_materials"]


def test_compare_gives_the_cli_bytes(cli, tmp_path):
    args = ["--seeds", 1, "--claims", "off"]
    want = cli("compare", COMPARE, *args, "--format", "json", out=tmp_path / "c.json")
    got = fabricsim.compare_json(COMPARE, seeds=1, claims="off")
    assert got.encode() == want


def test_train_gives_the_cli_bytes(cli, tmp_path):
    example = EXAMPLES / "train-llama3-70b.toml"
    want = cli("train", example, "--pp", 8, "--dp", 16, "--format", "json", out=tmp_path / "t.json")
    got = fabricsim.train_json(example, pp=8, dp=16)
    assert got.encode() == want
    r = fabricsim.train(example, pp=8, dp=16)
    assert (r["pp"], r["dp"]) == (8, 16)
    assert 0 < r["mfu"] < 1


def test_train_calibrated_on_the_engine_gives_the_cli_bytes(cli, tmp_path):
    args = ["--gpus", 32, "--model", "llama3-8b", "--tp", 8, "--pp", 1, "--global-batch", 32]
    want = cli("train", *args, "--calibrate", "--format", "json", out=tmp_path / "t.json")
    got = fabricsim.train_json(gpus=32, model="llama3-8b", tp=8, pp=1, global_batch=32, calibrate=True)
    assert got.encode() == want
    assert fabricsim.train(gpus=32, model="llama3-8b", tp=8, pp=1, global_batch=32, calibrate=True)["calibration"]


def test_collective_gives_the_cli_bytes(cli, tmp_path):
    args = ["--gpus", 16, "--max-bytes", "4M"]
    want = cli("collective", *args, "--format", "json", out=tmp_path / "c.json")
    got = fabricsim.collective_json(gpus=16, max_bytes="4M")
    assert got.encode() == want
    r = fabricsim.collective(gpus=16, max_bytes="4M")
    assert (r["op"], r["ranks"]) == ("all_reduce", 16)
    assert [row["size_bytes"] for row in r["table"]["rows"]] == [1 << 20, 2 << 20, 4 << 20]


def test_collective_with_its_own_flags_gives_the_cli_bytes(cli, tmp_path):
    args = ["--gpus", 16, "--op", "all_gather", "--min-bytes", "64K", "--max-bytes", "1M", "--fit"]
    want = cli("collective", *args, "--format", "json", out=tmp_path / "c.json")
    got = fabricsim.collective_json(gpus=16, op="all_gather", min_bytes="64K", max_bytes="1M", fit=True)
    assert got.encode() == want
    assert fabricsim.collective(gpus=16, op="all_gather", min_bytes="64K", max_bytes="1M", fit=True)["fit"]


def test_sweep_gives_the_cli_record_bytes(cli, tmp_path):
    record = tmp_path / "s.json"
    cli("sweep", "--param", "loss_rate=0,0.001", "--seeds", 1, "--json", record)
    got = fabricsim.sweep_json(param="loss_rate=0,0.001", seeds=1)
    assert got.encode() == record.read_bytes()
    r = fabricsim.sweep(param=["loss_rate=0,0.001"], seeds=1)
    assert [p["point"]["values"] for p in r["points"]] == [[["loss_rate", "0"]], [["loss_rate", "0.001"]]]
    assert "status" not in r
