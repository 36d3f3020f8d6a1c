//! End-to-end: `sim --format parquet|arrow` (and `--series`) and `sweep --parquet/--arrow` write
//! the CSV's table: read back (parquet's Arrow reader, arrow-ipc's file reader), each has the
//! CSV's columns and rows, cell for cell. Without the cargo feature `columnar` they exit 2
//! naming it (docs/columnar.md).

mod support;

use support::{examples, exits_2_saying, fabricsim, stderr, tmp};

/// `sim` of the permutation example (seed 3) writing `--format FORMAT` to `name`, and its
/// port series beside it (`name.series`).
fn sim_to(format: &str, name: &str) -> (std::path::PathBuf, std::path::PathBuf) {
    let (out, series) = (tmp(name), tmp(&format!("{name}.series")));
    let o = fabricsim(&[
        "sim",
        examples().join("sim-permutation.toml").to_str().unwrap(),
        "--seed",
        "3",
        "--format",
        format,
        "--out",
        out.to_str().unwrap(),
        "--series",
        series.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    (out, series)
}

#[cfg(feature = "columnar")]
mod with_the_feature {
    use super::*;
    use fabricsim::columns::read;

    #[test]
    fn sim_parquet_and_arrow_hold_the_csv_table() {
        let (csv, csv_series) = sim_to("csv", "m.csv");
        let (json, _) = sim_to("json", "m.json");
        let messages = support::json_file(&json)["messages"]
            .as_array()
            .unwrap()
            .len();
        let text = std::fs::read_to_string(&csv).unwrap();
        let series_text = std::fs::read_to_string(&csv_series).unwrap();
        assert!(text.starts_with(
            "id,qp,class,src,dst,bytes,start_ps,recv_ps,finish_ps,fct_ps,ideal_fct_ps\n"
        ));
        assert_eq!(text.lines().count(), messages + 1);
        assert!(series_text.starts_with("port,node,time_ps,queue_bytes,tx_bytes\n"));
        assert!(series_text.lines().count() > 1);
        let (pq, pq_series) = sim_to("parquet", "m.parquet");
        let (ar, ar_series) = sim_to("arrow", "m.arrow");
        let t = read::parquet_file(&pq).unwrap();
        assert_eq!(t.rows(), messages);
        assert_eq!(t.to_csv(), text);
        assert_eq!(
            read::parquet_file(&pq_series).unwrap().to_csv(),
            series_text
        );
        assert_eq!(read::arrow_file(&ar).unwrap().to_csv(), text);
        assert_eq!(read::arrow_file(&ar_series).unwrap().to_csv(), series_text);
        // Same scenario and seed, same bytes.
        let (again, _) = sim_to("parquet", "m2.parquet");
        assert_eq!(std::fs::read(&pq).unwrap(), std::fs::read(&again).unwrap());
    }

    #[test]
    fn sweep_parquet_and_arrow_hold_the_csv_table() {
        let (csv, pq, ar) = (tmp("s.csv"), tmp("s.parquet"), tmp("s.arrow"));
        let o = fabricsim(&[
            "sweep",
            "--param",
            "loss_rate=0,0.001",
            "--param",
            "transport=go-back-n,selective-repeat",
            "--seeds",
            "1",
            "--csv",
            csv.to_str().unwrap(),
            "--parquet",
            pq.to_str().unwrap(),
            "--arrow",
            ar.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let text = std::fs::read_to_string(&csv).unwrap();
        let t = read::parquet_file(&pq).unwrap();
        assert_eq!(t.rows(), 4);
        assert_eq!(t.to_csv(), text);
        assert_eq!(read::arrow_file(&ar).unwrap().to_csv(), text);
        // The numeric axis is a float column, the transport its text.
        let kinds: Vec<_> = t.columns[1..3]
            .iter()
            .map(|c| matches!(c.cells, fabricsim::columns::Cells::F64(_)))
            .collect();
        assert_eq!(kinds, [true, false]);
    }
}

#[cfg(not(feature = "columnar"))]
#[test]
fn without_the_feature_parquet_and_arrow_exit_2_naming_it() {
    let sim = examples().join("sim-permutation.toml");
    for format in ["parquet", "arrow"] {
        exits_2_saying(
            &["sim", sim.to_str().unwrap(), "--format", format],
            &["--format", format, "--features columnar"],
        );
    }
    let out = tmp("never.parquet");
    exits_2_saying(
        &[
            "sweep",
            "--param",
            "loss_rate=0",
            "--parquet",
            out.to_str().unwrap(),
        ],
        &["--parquet", "parquet", "--features columnar"],
    );
    assert!(!out.exists());
}

#[test]
fn series_without_samples_exits_2_naming_the_key() {
    let scenario = support::write(
        "nosamples.toml",
        &std::fs::read_to_string(examples().join("sim-permutation.toml"))
            .unwrap()
            .replace("sample_interval = \"20us\"\n", "")
            .replace(
                "topology_file = \"sim-ft4.topo.txt\"",
                &format!(
                    "topology_file = {:?}",
                    examples().join("sim-ft4.topo.txt").display().to_string()
                ),
            ),
    );
    exits_2_saying(
        &["sim", &scenario, "--series", tmp("x.csv").to_str().unwrap()],
        &["--series", "sample_interval"],
    );
}

#[test]
fn sim_csv_is_the_per_message_table() {
    let (csv, _) = sim_to("csv", "plain.csv");
    let text = std::fs::read_to_string(csv).unwrap();
    let header = text.lines().next().unwrap();
    assert_eq!(
        header,
        "id,qp,class,src,dst,bytes,start_ps,recv_ps,finish_ps,fct_ps,ideal_fct_ps"
    );
    // Every message of a completed run has its completion time.
    assert!(
        text.lines()
            .skip(1)
            .all(|l| !l.split(',').nth(9).unwrap().is_empty())
    );
}

#[test]
fn series_on_the_flow_engine_exits_2_naming_the_engine() {
    let out = tmp("flow-series.csv");
    exits_2_saying(
        &[
            "sim",
            examples().join("sim-permutation.toml").to_str().unwrap(),
            "--engine",
            "flow",
            "--series",
            out.to_str().unwrap(),
        ],
        &["--series", "flow engine", "--engine packet"],
    );
    assert!(!out.exists());
}
