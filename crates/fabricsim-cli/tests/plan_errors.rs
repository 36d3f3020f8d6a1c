//! Bad input to `fabricsim plan`: each case exits with code 2 and a message naming the file,
//! line, key, the bad value and what is allowed. No panics.

mod support;

/// Writes `text` to a scenario file of its own, runs `fabricsim plan` on it and asserts exit
/// code 2 with a message holding `file:line:`, the key, the value and an `allowed:` part
/// containing `allowed`.
fn check(case: &str, text: &str, line: usize, key: &str, value: &str, allowed: &str) {
    let path = support::write(&format!("{case}.toml"), text);
    let err = support::exits_2_saying(
        &["plan", &path],
        &[&format!("{path}:{line}:"), &format!("`{key}`"), value],
    );
    let (_, after) = err.split_once("allowed: ").expect("an allowed part");
    assert!(
        after.contains(allowed),
        "{case}: allowed part lacks {allowed}: {err}"
    );
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn zero_gpus() {
    check(
        "zero",
        "[cluster]\ngpus = 0\n",
        2,
        "cluster.gpus",
        "= 0",
        "1 to 1048576",
    );
}

#[test]
fn negative_gpus() {
    check(
        "neg",
        "[cluster]\ngpus = -64\n",
        2,
        "cluster.gpus",
        "= -64",
        "1 to 1048576",
    );
}

#[test]
fn unknown_profile_id() {
    check(
        "profile",
        "# test\n[fabric]\nprofile = \"ib-hdr\"\n",
        3,
        "fabric.profile",
        "ib-hdr",
        "ib-ndr, ib-xdr, roce-400g, roce-800g",
    );
}

#[test]
fn unknown_switch_id() {
    check(
        "switch",
        "[topology]\nkind = \"fat-tree\"\nswitch = \"qm8700\"\n",
        3,
        "topology.switch",
        "qm8700",
        "sn5600",
    );
}

#[test]
fn radix_too_small_for_the_tiers() {
    check(
        "radix",
        "[cluster]\ngpus = 8192\n[fabric]\nprofile = \"ib-ndr\"\n[topology]\ntiers = 2\n",
        6,
        "topology.tiers",
        "= 2",
        "3",
    );
}

#[test]
fn malformed_oversubscription() {
    check(
        "oversub",
        "[topology]\noversubscription = \"2 to 1\"\n",
        2,
        "topology.oversubscription",
        "2 to 1",
        "\"2:1\"",
    );
}

#[test]
fn unknown_key() {
    check(
        "unknown",
        "[cluster]\ngpus = 64\ngpu_count = 64\n",
        3,
        "cluster.gpu_count",
        "gpu_count",
        "gpus_per_node",
    );
}

#[test]
fn wrong_type() {
    check(
        "type",
        "[cost]\nyears = \"five\"\n",
        2,
        "cost.years",
        "five",
        "a whole number",
    );
}

#[test]
fn bad_flag_names_the_flag() {
    support::exits_2_saying(
        &["plan", "--gpus", "-8", "--fabric", "roce-400g"],
        &[
            "command line: `--gpus` = -8",
            "allowed: a whole number from 1 to",
        ],
    );
}

#[test]
fn reliability_keys_out_of_range() {
    check(
        "mtbf-scale",
        "[cluster]\ngpus = 64\n[reliability]\nmtbf_scale = 0.0\n",
        4,
        "reliability.mtbf_scale",
        "= 0",
        "a number from 0.01 to 100",
    );
    check(
        "checkpoint",
        "[reliability]\ncheckpoint_interval_s = -5\n",
        2,
        "reliability.checkpoint_interval_s",
        "= -5",
        "a number from 1 to 2592000",
    );
    support::exits_2_saying(
        &["plan", "--mtbf-scale", "500"],
        &[
            "command line: `--mtbf-scale` = 500",
            "allowed: a number from 0.01 to 100",
        ],
    );
    support::exits_2_saying(
        &["plan", "--optics-drive", "cpo"],
        &["`--optics-drive`", "cpo", "dsp, lpo, lro"],
    );
}

#[test]
fn missing_scenario_file() {
    support::exits_2_saying(
        &["plan", "/nonexistent/scenario.toml"],
        &["/nonexistent/scenario.toml"],
    );
}
