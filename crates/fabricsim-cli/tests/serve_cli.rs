//! End-to-end: `fabricsim serve` on the shipped example and flags, its three formats (the
//! same bytes for the same seed), and bad input (exit 2 naming file, line and key).

mod support;

use support::{exits_2_saying, json_ok, stdout_ok, write};

const SMALL: [&str; 9] = [
    "serve",
    "--gpus",
    "16",
    "--requests",
    "40",
    "--rate",
    "4",
    "--seeds",
    "2",
];

#[test]
fn the_example_and_flags_report_latencies_goodput_and_network_shares() {
    let out = stdout_ok(&[
        "serve",
        "examples/serve-llama3-70b-disagg.toml",
        "--requests",
        "60",
    ]);
    for want in [
        "prefill 3 x TP8, decode 5 x TP8, 64 GPUs",
        "ttft_p99",
        "tpot_p50",
        "tokens_per_s_per_gpu",
        "goodput",
        "ttft_kv_share",
        "tpot_comm_share",
        "±",
    ] {
        assert!(out.contains(want), "{want}: {out}");
    }
    let j = json_ok(&[&SMALL[..], &["--format", "json"]].concat());
    assert_eq!(j["seeds"], 2);
    assert_eq!(j["kv_bytes_per_request_mean"], 671_088_640.0);
    let figures = j["figures"].as_array().unwrap();
    let get = |n: &str| {
        figures.iter().find(|f| f["name"] == n).unwrap()["mean"]
            .as_f64()
            .unwrap()
    };
    assert!(get("ttft_p99") >= get("ttft_p50") && get("ttft_p50") > 0.0);
    assert!(get("ttft_kv_share") > 0.0 && get("ttft_kv_share") < get("ttft_network_share"));
    // An ideal network: no network share at all.
    let j = json_ok(&[&SMALL[..], &["--format", "json", "--network", "ideal"]].concat());
    let f = j["figures"].as_array().unwrap();
    assert!(
        f.iter()
            .filter(|f| f["name"].as_str().unwrap().ends_with("share"))
            .all(|f| f["mean"] == 0.0)
    );
}

#[test]
fn every_format_is_the_same_bytes_for_the_same_seed() {
    for format in ["text", "json", "csv"] {
        let args = [&SMALL[..], &["--format", format]].concat();
        assert_eq!(stdout_ok(&args), stdout_ok(&args), "{format}");
    }
    let csv = stdout_ok(&[&SMALL[..], &["--format", "csv"]].concat());
    assert!(csv.starts_with("figure,unit,mean,lo,hi,seeds\nttft_mean,s,"));
}

#[test]
fn bad_input_names_the_file_line_and_key() {
    let s = write(
        "serve-bad.toml",
        "[cluster]\ngpus = 16\n[serve]\ndecode_instances = 4\n",
    );
    exits_2_saying(
        &["serve", &s],
        &["serve-bad.toml:4", "serve.decode_instances` = 4", "40 GPUs"],
    );
    exits_2_saying(
        &["serve", "--model", "llama9"],
        &["--model", "llama9", "llama3-70b"],
    );
    let t = write(
        "serve-bad.csv",
        "arrival_s,prompt_tokens,output_tokens\n0.1,100,5\n0.2,100,five\n",
    );
    let s = write(
        "serve-trace.toml",
        &format!("[cluster]\ngpus = 16\n[serve]\ntrace = \"{t}\"\n"),
    );
    exits_2_saying(
        &["serve", &s],
        &["serve-bad.csv:3", "output_tokens", "five"],
    );
}

#[test]
fn compare_reports_the_serving_section_per_fabric_in_text_and_html() {
    let html = support::tmp("serve.html");
    let out = stdout_ok(&[
        "compare",
        "examples/serve-llama3-70b-disagg.toml",
        "--html",
        &html.display().to_string(),
    ]);
    let line = |label: &str| {
        out.lines()
            .find(|l| l.starts_with(label))
            .unwrap_or_else(|| panic!("{label}: {out}"))
            .to_string()
    };
    assert!(
        out.contains("serving llama3-70b (disaggregated, prefill 3 x TP8, decode 5 x TP8, 64 GPUs")
    );
    for label in [
        "TTFT p99 (ms)",
        "TPOT p50 (ms)",
        "goodput at SLO (%)",
        "KV share of TTFT (%)",
    ] {
        assert!(line(label).contains('±'), "{label}");
    }
    // The cost per delivered token: one figure per fabric, each from its plan's TCO.
    let cost = line("USD per M good tokens");
    assert_eq!(cost.matches('±').count(), 3, "{cost}");
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("id=\"serving\"") && page.contains("USD per M good tokens"));
}

/// `examples/serve-frontend.toml`: the prompts come from the front-end server over the fabric,
/// and the report gives their share of TTFT in every format.
#[test]
fn the_front_end_example_reports_the_prompts_share_of_ttft() {
    let args = [
        "serve",
        "examples/serve-frontend.toml",
        "--requests",
        "40",
        "--seeds",
        "1",
    ];
    let out = stdout_ok(&args);
    for want in [
        "front-end: 1 server(s) x 1 NIC(s), shared fabric, 4 B per prompt token",
        "frontend_p99",
        "ttft_frontend_share",
        "4 B per response token",
        "e2e_p99",
    ] {
        assert!(out.contains(want), "{want}: {out}");
    }
    let j = json_ok(&[&args[..], &["--format", "json"]].concat());
    let figures = j["figures"].as_array().unwrap();
    let get = |n: &str| {
        figures.iter().find(|f| f["name"] == n).unwrap()["mean"]
            .as_f64()
            .unwrap()
    };
    // An 8 KB prompt on a 400G port: microseconds against a TTFT of tens of milliseconds.
    assert!(get("frontend_p99") > 1e-6 && get("frontend_p99") < 1e-4);
    assert!(get("ttft_frontend_share") > 0.0 && get("ttft_frontend_share") < 1e-3);
    // End to end: TTFT and 255 decode steps of a few ms, the last token's microseconds after.
    assert!(get("e2e_p50") > get("ttft_p50") + 255.0 * get("tpot_p50") * 0.9);
    let csv = stdout_ok(&[&args[..], &["--format", "csv"]].concat());
    assert!(csv.contains("\nttft_frontend_share,share,"), "{csv}");
}

#[test]
fn bad_front_end_input_exits_2_naming_the_key() {
    let base = "[cluster]\ngpus = 24\n[serve]\nrequests = 4\n";
    let cases = [
        ("[frontend]\nnics = 1\n", "frontend.servers", "1 or more"),
        ("[frontend]\nservers = 0\n", "frontend.servers", "1 or more"),
        // 3 servers, 2 taken by the pools: one is left for the front-end.
        ("[frontend]\nservers = 2\n", "frontend.servers", "1 to 1"),
        (
            "[frontend]\nservers = 1\nnics = 9\n",
            "frontend.nics",
            "1 to 8",
        ),
        (
            "[frontend]\nservers = 1\nfabric = \"own\"\n",
            "frontend.fabric",
            "separate",
        ),
        (
            "[frontend]\nservers = 1\nprompt_bytes_per_token = 0\n",
            "frontend.prompt_bytes_per_token",
            "1 to 16384",
        ),
        (
            "[frontend]\nservers = 1\nresponse_bytes_per_token = 16385\n",
            "frontend.response_bytes_per_token",
            "1 to 16384",
        ),
        ("[frontend]\nservers = 1\nhosts = 2\n", "hosts", "servers"),
    ];
    // Too many requests per prefill instance for a shared front-end's DAG: refused (exit 1)
    // before the engine runs, naming the way out.
    let o = support::fabricsim(&[
        "serve",
        "examples/serve-frontend.toml",
        "--requests",
        "10000",
        "--seeds",
        "1",
    ]);
    let err = support::stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("at most 67108864") && err.contains("\"separate\""),
        "{err}"
    );
    for (i, (fe, key, allowed)) in cases.iter().enumerate() {
        let s = write(&format!("serve-fe-bad{i}.toml"), &format!("{base}{fe}"));
        exits_2_saying(
            &["serve", &s],
            &[&format!("serve-fe-bad{i}.toml"), key, allowed],
        );
    }
}
