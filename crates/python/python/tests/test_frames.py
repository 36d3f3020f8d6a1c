"""Result tables as pandas DataFrames (through Arrow) and the CLI's Parquet and Arrow files read
with pyarrow: the CSV's column names, units and values."""

import io

import numpy as np
import pandas as pd
import pyarrow.ipc
import pyarrow.parquet

import fabricsim
from conftest import EXAMPLES

PERMUTATION = EXAMPLES / "sim-permutation.toml"


def assert_is_the_csv(df, csv_bytes):
    """`df` has the CSV's columns in order and its values: numbers equal, text equal."""
    want = pd.read_csv(io.BytesIO(csv_bytes), dtype=str, keep_default_na=False)
    assert list(df.columns) == list(want.columns)
    assert len(df) == len(want) > 0
    for c in want.columns:
        if pd.api.types.is_numeric_dtype(df[c]):
            got = df[c].to_numpy(dtype=float)
            csv = pd.to_numeric(want[c].replace("", np.nan)).to_numpy(dtype=float)
            np.testing.assert_array_equal(got, csv, err_msg=c)
        else:
            assert list(df[c].fillna("")) == list(want[c]), c


def test_sim_frame_is_the_cli_csv(cli, tmp_path):
    csv = cli("sim", PERMUTATION, "--seed", 3, "--format", "csv", out=tmp_path / "m.csv")
    df = fabricsim.sim_frame(PERMUTATION, seed=3)
    assert_is_the_csv(df, csv)
    assert (df["fct_ps"] >= df["ideal_fct_ps"]).all()
    assert len(df) == len(fabricsim.sim(PERMUTATION, seed=3)["messages"])
    pd.testing.assert_frame_equal(df, fabricsim.sim_frame(str(PERMUTATION), seed=3))


def test_sim_series_frame_is_the_cli_csv(cli, tmp_path):
    series = tmp_path / "series.csv"
    cli("sim", PERMUTATION, "--seed", 3, "--series", series, out=tmp_path / "r.json")
    df = fabricsim.sim_frame(PERMUTATION, seed=3, table="series")
    assert_is_the_csv(df, series.read_bytes())
    assert list(df.columns) == ["port", "node", "time_ps", "queue_bytes", "tx_bytes"]


def test_cli_parquet_and_arrow_files_are_the_csv_table(cli, tmp_path):
    csv = cli("sim", PERMUTATION, "--seed", 3, "--format", "csv", out=tmp_path / "m.csv")
    cli("sim", PERMUTATION, "--seed", 3, "--format", "parquet", out=tmp_path / "m.parquet")
    cli("sim", PERMUTATION, "--seed", 3, "--format", "arrow", out=tmp_path / "m.arrow")
    from_parquet = pyarrow.parquet.read_table(tmp_path / "m.parquet").to_pandas()
    from_arrow = pyarrow.ipc.open_file(tmp_path / "m.arrow").read_all().to_pandas()
    assert_is_the_csv(from_parquet, csv)
    pd.testing.assert_frame_equal(from_parquet, from_arrow)
    pd.testing.assert_frame_equal(from_parquet, fabricsim.sim_frame(PERMUTATION, seed=3))


def test_sweep_frame_is_the_cli_csv_and_parquet(cli, tmp_path):
    csv, parquet = tmp_path / "s.csv", tmp_path / "s.parquet"
    args = ["--param", "loss_rate=0,0.001", "--param", "transport=go-back-n,selective-repeat", "--seeds", 1]
    cli("sweep", *args, "--csv", csv, "--parquet", parquet)
    df = fabricsim.sweep_frame(
        param=["loss_rate=0,0.001", "transport=go-back-n,selective-repeat"], seeds=1
    )
    assert_is_the_csv(df, csv.read_bytes())
    assert df["loss_rate"].dtype == float and not pd.api.types.is_numeric_dtype(df["transport"])
    pd.testing.assert_frame_equal(df, pyarrow.parquet.read_table(parquet).to_pandas())


def test_collective_frame_is_the_json_table():
    r = fabricsim.collective(gpus=16, max_bytes="4M")
    df = fabricsim.collective_frame(gpus=16, max_bytes="4M")
    rows = r["table"]["rows"]
    assert list(df["size_bytes"]) == [row["size_bytes"] for row in rows]
    for name in ["time_us", "algbw_GBps", "busbw_GBps"]:
        assert list(df[name]) == [row[name]["mean"] for row in rows]
        assert list(df[name + "_lo"]) == [row[name]["lo"] for row in rows]
        assert list(df[name + "_hi"]) == [row[name]["hi"] for row in rows]
    assert list(df["root"]) == [row["root"] for row in rows]
