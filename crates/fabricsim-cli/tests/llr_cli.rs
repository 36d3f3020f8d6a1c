//! `[sim] llr` (link-level retry, UEC 1.0 5.1) from a scenario: the lossy incast example with
//! LLR resends nothing at the transport while its link replays, byte for byte the same on a
//! second run; `train` and `compare` cost their random loss as the links' replays under it;
//! bad values and meaningless combinations exit 2 naming the file, line and key.

mod support;

use support::{examples, exits_2_saying, json_ok, stdout_ok, write};

/// The lossy incast example (`examples/sim-incast-lossy.toml`) with `extra` in its `[sim]`.
fn lossy_incast(name: &str, extra: &str) -> String {
    let src = std::fs::read_to_string(examples().join("sim-incast-lossy.toml")).unwrap();
    let topo = examples().join("sim-ft4.topo.txt").display().to_string();
    let text = src
        .replace(
            "topology_file = \"sim-ft4.topo.txt\"",
            &format!("topology_file = \"{topo}\""),
        )
        .replace("seed = 7\n", &format!("seed = 7\n{extra}"));
    write(&format!("{name}.toml"), &text)
}

#[test]
fn llr_takes_the_corruption_off_the_transport_and_repeats_itself() {
    let off: serde_json::Value =
        serde_json::from_str(&stdout_ok(&["sim", &lossy_incast("off", "")])).unwrap();
    let s = lossy_incast("on", "llr = true\n");
    let a = stdout_ok(&["sim", &s]);
    let on: serde_json::Value = serde_json::from_str(&a).unwrap();
    let (c0, c1) = (&off["counters"], &on["counters"]);
    println!("without LLR: {c0}\nwith LLR: {c1}");
    assert!(c0["drops"]["corruption"].as_u64().unwrap() > 0);
    assert_eq!(c1["drops"]["corruption"].as_u64().unwrap(), 0);
    assert!(c1["llr_replays"].as_u64().unwrap() > 0);
    assert!(c1["llr_nacks"].as_u64().unwrap() > 0);
    assert!(c1["llr_acks"].as_u64().unwrap() > 0);
    assert!(c0.get("llr_replays").is_none(), "no LLR field without LLR");
    // Buffer drops remain the transport's to recover.
    assert!(c1["drops"]["buffer"].as_u64().unwrap() > 0);
    let b = stdout_ok(&["sim", &s]);
    let strip = |x: &str| {
        let mut v: serde_json::Value = serde_json::from_str(x).unwrap();
        v["sim"]
            .as_object_mut()
            .unwrap()
            .retain(|k, _| !k.contains("wall") && !k.contains("per_s"));
        v
    };
    assert_eq!(strip(&a), strip(&b), "same scenario and seed, same results");
}

#[test]
fn bad_llr_settings_exit_2() {
    let s = lossy_incast("llr-str", "llr = \"yes\"\n");
    exits_2_saying(&["sim", &s], &["llr-str.toml", "llr"]);
    let s = lossy_incast("llr-small", "llr = true\nllr_replay_buffer = \"1KB\"\n");
    exits_2_saying(
        &["sim", &s],
        &[
            "llr-small.toml:12:",
            "`sim.llr_replay_buffer`",
            "1000",
            "at least 4178 B",
        ],
    );
    let s = lossy_incast("llr-off", "llr_replay_buffer = \"64KB\"\n");
    exits_2_saying(&["sim", &s], &["`sim.llr_replay_buffer`", "llr = true"]);
    let s = lossy_incast("llr-timer", "llr = true\nllr_ack_timer = \"0ns\"\n");
    exits_2_saying(
        &["sim", &s],
        &[
            "llr-timer.toml:12:",
            "`sim.llr_ack_timer`",
            "\"0ns\"",
            "must be positive",
        ],
    );
    let s = lossy_incast("llr-spacing", "llr = true\nllr_ack_spacing = \"lots\"\n");
    exits_2_saying(&["sim", &s], &["`sim.llr_ack_spacing`", "\"lots\"", "64KB"]);
    let s = lossy_incast("llr-spacing-off", "llr_ack_spacing = 4096\n");
    exits_2_saying(
        &["sim", &s],
        &["`sim.llr_ack_spacing`", "4096", "llr = true"],
    );
    let s = lossy_incast("llr-ib", "llr = true\n");
    let text = std::fs::read_to_string(&s)
        .unwrap()
        .replace("fabric = \"roce\"", "fabric = \"ib\"");
    std::fs::write(&s, text).unwrap();
    exits_2_saying(&["sim", &s], &["`sim.llr`", "credit-based flow control"]);
}

#[test]
fn llr_across_a_link_failure_is_refused() {
    let s = lossy_incast("llr-down", "llr = true\n");
    let text = std::fs::read_to_string(&s).unwrap() + "down_at = \"10us\"\n";
    std::fs::write(&s, text).unwrap();
    exits_2_saying(
        &["sim", &s],
        &["llr-down.toml:", "`sim.llr`", "link going down or up"],
    );
}

/// The Llama 3 70B training example (RoCE 400G) with `extra` appended.
fn train_with(name: &str, extra: &str) -> String {
    let src = std::fs::read_to_string(examples().join("train-llama3-70b.toml")).unwrap();
    write(&format!("{name}.toml"), &format!("{src}\n{extra}"))
}

#[test]
fn train_costs_random_loss_as_link_replays_under_llr() {
    let (off, on) = (
        train_with("train-off", ""),
        train_with("train-llr", "[sim]\nllr = true\n"),
    );
    let run = |f: &str, loss: bool| {
        let mut args = vec!["train", f, "--format", "json"];
        if loss {
            args.extend(["--loss-rate", "1e-4"]);
        }
        json_ok(&args)
    };
    let (clean, lossy, llr) = (run(&off, false), run(&off, true), run(&on, true));
    let mfu = |v: &serde_json::Value| v["mfu"].as_f64().unwrap();
    println!(
        "train MFU: lossless {}, 1e-4 go-back-N {}, 1e-4 under LLR {}",
        mfu(&clean),
        mfu(&lossy),
        mfu(&llr)
    );
    let l = &llr["loss"];
    println!("under LLR: {l}");
    assert_eq!(l["retransmitted_per_step"].as_f64().unwrap(), 0.0);
    assert_eq!(l["timeouts_per_step"].as_f64().unwrap(), 0.0);
    assert!(
        l["step_s_added"].as_f64().unwrap() > 0.0,
        "replays cost time"
    );
    assert!(l["recovery"].as_str().unwrap().contains("link-level retry"));
    assert!(mfu(&llr) > mfu(&lossy) && mfu(&llr) < mfu(&clean));
    // Without loss LLR has nothing to replay: the closed-form step is the same.
    assert_eq!(mfu(&run(&on, false)), mfu(&clean));
    let ib = std::fs::read_to_string(&on)
        .unwrap()
        .replace("profile = \"roce-400g\"", "profile = \"ib-ndr\"");
    let ib = write("train-llr-ib.toml", &ib);
    exits_2_saying(
        &["train", &ib, "--loss-rate", "1e-4"],
        &[
            "train-llr-ib.toml:",
            "`sim.llr`",
            "credit-based flow control",
            "ib-ndr",
        ],
    );
}

/// A 16-GPU compare of one RoCE fabric at 0.1% loss per link (small enough for seconds).
fn compare_with(name: &str, fabrics: &str, extra: &str) -> String {
    write(
        &format!("{name}.toml"),
        &format!(
            "[cluster]\ngpus = 16\ngpus_per_node = 8\nnics_per_node = 8\ngpu = \"h100\"\n\
             [train]\nmodel = \"llama3-8b\"\ntp = 8\npp = 1\n[compare]\nseed = 9\n\
             fabrics = [ {fabrics} ]\n{extra}"
        ),
    )
}

#[test]
fn compare_costs_random_loss_as_link_replays_under_llr() {
    let lossy = "{ name = \"lossy\", profile = \"roce-400g\", loss_rate = 1e-3 }";
    let step = |f: &str| {
        let v = json_ok(&["compare", f, "--format", "json"]);
        v["fabrics"][0]["delivered"]["step_time_s"]["mean"]
            .as_f64()
            .unwrap()
    };
    let clean = step(&compare_with(
        "cmp-clean",
        "{ name = \"clean\", profile = \"roce-400g\" }",
        "",
    ));
    let off = step(&compare_with("cmp-off", lossy, ""));
    let on = step(&compare_with("cmp-llr", lossy, "[sim]\nllr = true\n"));
    println!("compare step: lossless {clean} s, 1e-3 go-back-N {off} s, 1e-3 under LLR {on} s");
    assert!(on < off, "LLR takes the transport's recovery off the step");
    assert!(on > clean, "the replays cost something");
    let with_ib = format!("{{ name = \"ib\", profile = \"ib-ndr\" }}, {lossy}");
    let f = compare_with("cmp-llr-ib", &with_ib, "[sim]\nllr = true\n");
    exits_2_saying(
        &["compare", &f],
        &[
            "cmp-llr-ib.toml:",
            "`sim.llr`",
            "credit-based flow control",
            "ib-ndr",
        ],
    );
}
