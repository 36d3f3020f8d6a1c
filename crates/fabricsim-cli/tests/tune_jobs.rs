//! `fabricsim tune` on a job's objective, `step_time` (the `[train]` step as `train --calibrate`
//! times it) and `ttft_p99` (the `[serve]` deployment as `serve` runs it), and with `screen =
//! "flow"`: the same seed gives the same bytes; the best and the default are re-measured over
//! all the seeds on the packet engine (their first samples are what `train --calibrate`,
//! `serve` and `sim` give on it); a flow screen passes its stated fraction on to the packet
//! engine, and is skipped, naming the knob, where the flow engine's figures do not move with a
//! knob; bad keys exit 2 naming file, line and key.

mod support;

use support::{examples, json_file, json_ok, stdout_ok};

/// Mixtral 8x7B on 16 H100s (TP 2, EP 8 over two servers) on a 2:1 fat tree from the poor
/// ECN profile (5-10 KB): two Kmin values, Kmax at the shipped 1.5 MB; on the packet engine.
fn train_scenario() -> String {
    format!(
        "engine = \"packet\"\n[cluster]\ngpus = 16\ngpu = \"h100\"\n[fabric]\nprofile = \"{}\"\n\
         [topology]\nkind = \"fat-tree\"\ntiers = 2\noversubscription = \"2:1\"\n[train]\n\
         model = \"mixtral-8x7b\"\ntp = 2\nep = 8\n[tune]\nobjective = \"step_time\"\nseeds = 4\n\
         screen = \"flow\"\n[tune.knobs]\necn_kmin_bytes = [5000, 150000]\n\
         ecn_kmax_bytes = [1500000]\n",
        examples().join("tune-roce-poor-ecn.profile.toml").display()
    )
}

/// Runs `tune FILE` with `extra`, writing JSON, CSV and the profile under `name`; returns
/// (stdout, json, csv, profile) bytes.
fn tune(file: &str, name: &str, extra: &[&str]) -> (String, Vec<u8>, Vec<u8>, Vec<u8>) {
    let p = |ext: &str| support::tmp(&format!("{name}.{ext}")).display().to_string();
    let (j, c, t) = (p("json"), p("csv"), p("profile.toml"));
    let args = [
        &["tune", file, "--json", &j, "--csv", &c, "--profile-out", &t][..],
        extra,
    ]
    .concat();
    let out = stdout_ok(&args);
    let read = |f: &str| std::fs::read(f).unwrap();
    (out, read(&j), read(&c), read(&t))
}

fn step_ms(args: &[&str]) -> f64 {
    let r = json_ok(&[&["train"], args, &["--calibrate", "--format", "json"]].concat());
    r["step_time_s"].as_f64().unwrap() * 1e3
}

#[test]
fn a_training_step_is_tuned_to_the_same_bytes_and_its_best_remeasured_on_the_packet_engine() {
    let f = support::write("tune-train.toml", &train_scenario());
    let a = tune(&f, "train-a", &["--threads", "1"]);
    let b = tune(&f, "train-b", &["--threads", "2"]);
    assert!(a == b, "tune output differs between runs of the same seed");
    let (text, json, _, _) = &a;
    let r: serde_json::Value = serde_json::from_slice(json).unwrap();
    assert_eq!(
        (&r["objective"], &r["unit"]),
        (&"step_time".into(), &"ms".into())
    );
    // The flow engine's step does not move with Kmin here: the screen says so and is skipped.
    let s = &r["screen"];
    assert_eq!(
        s["ignored"],
        serde_json::json!(["ecn_kmin_bytes"]),
        "{text}"
    );
    assert_eq!(s["passed"], 2, "{text}");
    assert!(text.contains("skipped, all 2 go on"), "{text}");
    // The best and the default over every seed; the poor 5-10 KB default is measurably slower.
    for who in ["best", "default"] {
        assert_eq!(r[who]["samples"].as_array().unwrap().len(), 4, "{who}");
    }
    assert!(
        r["improvement"]["difference"]["lo"].as_f64().unwrap() > 0.0,
        "{text}"
    );
    // The first samples are `train --calibrate`'s step on the packet engine, with the scenario's
    // profile and with the written one.
    let first = |who: &str| r[who]["samples"][0]["objective"].as_f64().unwrap();
    assert_eq!(first("default"), step_ms(&[&f]));
    let best = support::tmp("train-a.profile.toml").display().to_string();
    assert_eq!(first("best"), step_ms(&[&f, "--fabric", &best]));
}

/// A disaggregated llama3-8b deployment on 16 H100s (one prefill and one decode instance, TP 8)
/// on the packet engine: its p99 TTFT is the one `fabricsim serve` gives on the same seed.
#[test]
fn a_serving_run_is_tuned_by_its_p99_ttft_as_serve_measures_it() {
    let text = format!(
        "engine = \"packet\"\n[cluster]\ngpus = 16\ngpu = \"h100\"\n[fabric]\nprofile = \"{}\"\n\
         [topology]\nkind = \"fat-tree\"\ntiers = 2\noversubscription = \"2:1\"\n[serve]\n\
         model = \"llama3-8b\"\nmode = \"disaggregated\"\nprefill_instances = 1\nprefill_tp = 8\n\
         decode_instances = 1\ndecode_tp = 8\nrate = 20\nrequests = 20\nprompt_tokens = 2048\n\
         output_tokens = 64\nnetwork = \"fabric\"\n[tune]\nobjective = \"ttft_p99\"\nseeds = 2\n\
         [tune.knobs]\necn_kmin_bytes = [5000, 150000]\necn_kmax_bytes = [1500000]\n",
        examples().join("tune-roce-poor-ecn.profile.toml").display()
    );
    let f = support::write("tune-serve.toml", &text);
    let a = tune(&f, "serve-a", &["--threads", "1"]);
    let b = tune(&f, "serve-b", &["--threads", "2"]);
    assert!(a == b, "tune output differs between runs of the same seed");
    let r: serde_json::Value = serde_json::from_slice(&a.1).unwrap();
    assert_eq!(
        (&r["objective"], &r["unit"]),
        (&"ttft_p99".into(), &"ms".into())
    );
    assert_eq!(r["default"]["samples"].as_array().unwrap().len(), 2);
    let s = json_ok(&["serve", &f, "--seeds", "1", "--format", "json"]);
    let want = s["figures"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["name"] == "ttft_p99")
        .unwrap()["mean"]
        .as_f64()
        .unwrap()
        * 1e3;
    let got = r["default"]["samples"][0]["objective"].as_f64().unwrap();
    assert!(
        (got - want).abs() < 1e-6 * want,
        "tune {got} ms, serve {want} ms"
    );
    // A screen where every round runs on the flow engine already is refused at its key.
    let flow = support::write(
        "tune-serve-screen.toml",
        &text
            .replacen("engine = \"packet\"\n", "", 1)
            .replace("seeds = 2\n", "seeds = 2\nscreen = \"flow\"\n"),
    );
    support::exits_2_saying(&["tune", &flow], &["tune.screen", "flow"]);
}

#[test]
fn a_flow_screen_passes_its_fraction_of_the_candidates_to_the_packet_engine() {
    let poor = std::fs::read_to_string(examples().join("tune-roce-poor-ecn.toml")).unwrap();
    let profile = examples().join("tune-roce-poor-ecn.profile.toml");
    let plain = poor.replace(
        "\"tune-roce-poor-ecn.profile.toml\"",
        &format!("\"{}\"", profile.display()),
    );
    let screened = plain.replace(
        "seeds = 3\n",
        "seeds = 3\nscreen = \"flow\"\nscreen_keep = 0.34\n",
    );
    assert_ne!(screened, plain);
    let run = |name: &str, text: &str| {
        let f = support::write(&format!("{name}.toml"), text);
        let j = support::tmp(&format!("{name}.json"));
        let out = stdout_ok(&["tune", &f, "--json", &j.display().to_string()]);
        (f, out, json_file(&j))
    };
    let (_, _, without) = run("no-screen", &plain);
    let (f, text, with) = run("screen", &screened);
    assert!(without.get("screen").is_none());
    assert_eq!(without["rounds"][0]["ranked"].as_array().unwrap().len(), 9);
    // 9 screened on the flow engine, ceil(0.34 x 9) = 4 go on to the packet engine.
    let s = &with["screen"];
    assert_eq!(
        (&s["engine"], &s["passed"]),
        (&"flow".into(), &4.into()),
        "{text}"
    );
    assert_eq!(s["round"]["ranked"].as_array().unwrap().len(), 9);
    assert!(s["skipped"].is_null(), "{text}");
    assert_eq!(with["rounds"][0]["ranked"].as_array().unwrap().len(), 4);
    assert!(
        text.contains("screen: 9 candidates x 1 seeds on the flow engine")
            && text.contains("4 passed on to round 1"),
        "{text}"
    );
    // The best is re-measured over all seeds by the packet engine: its first sample is `sim`'s.
    assert_eq!(with["best"]["samples"].as_array().unwrap().len(), 3);
    let best = support::tmp("screen-best.toml");
    std::fs::write(&best, with["profile_toml"].as_str().unwrap()).unwrap();
    let b = best.display().to_string();
    let sim = json_ok(&[
        "sim", &f, "--fabric", &b, "--seed", "1", "--engine", "packet",
    ]);
    let got = sim["summary"]["max_fct_ps"].as_f64().unwrap() / 1e6;
    assert_eq!(
        got,
        with["best"]["samples"][0]["objective"].as_f64().unwrap()
    );
}

#[test]
fn bad_step_time_and_screen_keys_exit_2_naming_file_line_key_and_value() {
    let base = train_scenario();
    // (from, to, the line the error is on, key, value)
    let cases = [
        (
            "screen = \"flow\"",
            "screen = \"packet\"",
            "screen",
            "tune.screen",
            "packet",
        ),
        (
            "screen = \"flow\"",
            "screen = \"flow\"\nscreen_keep = 0",
            "screen_keep",
            "tune.screen_keep",
            "0",
        ),
        (
            "seeds = 4",
            "seeds = 4\nmax_pause_us = 5",
            "max_pause_us",
            "tune.max_pause_us",
            "5",
        ),
        (
            "\"mixtral-8x7b\"",
            "\"gpt-9\"",
            "model",
            "train.model",
            "gpt-9",
        ),
        (
            "[train]\nmodel = \"mixtral-8x7b\"\ntp = 2\nep = 8\n",
            "",
            "objective",
            "tune.objective",
            "step_time",
        ),
    ];
    for (i, (from, to, at, key, value)) in cases.into_iter().enumerate() {
        let text = base.replacen(from, to, 1);
        assert_ne!(text, base);
        let line = text.lines().position(|l| l.starts_with(at)).unwrap() + 1;
        let f = support::write(&format!("bad-tune-train-{i}.toml"), &text);
        support::exits_2_saying(&["tune", &f], &[&format!("{f}:{line}"), key, value]);
    }
}
