//! Finding and copying what is built in (`fabricsim profiles`, `fabricsim catalog`), flags that
//! can be repeated (the last wins) and the one size convention of flags and scenario files.

mod support;

use support::{exits_2_saying, stdout_ok, write};

const PROFILES: [&str; 7] = [
    "ib-ndr",
    "ib-xdr",
    "roce-400g",
    "roce-800g",
    "roce-400g-hpcc",
    "roce-400g-ar",
    "roce-800g-ar",
];

#[test]
fn profiles_lists_every_shipped_profile() {
    let out = stdout_ok(&["profiles"]);
    for id in PROFILES {
        assert!(
            out.lines().any(|l| l.starts_with(&format!("{id} "))),
            "{id}:\n{out}"
        );
    }
}

#[test]
fn a_shown_profile_copied_to_a_file_plans_as_the_built_in_one() {
    for id in PROFILES {
        for resolved in [false, true] {
            let mut args = vec!["profiles", "show", id];
            if resolved {
                args.push("--resolved");
            }
            let text = stdout_ok(&args);
            let file = write(&format!("copied-{id}-{resolved}.toml"), &text);
            let built_in =
                stdout_ok(&["plan", "--gpus", "128", "--fabric", id, "--format", "json"]);
            let copied = stdout_ok(&[
                "plan", "--gpus", "128", "--fabric", &file, "--format", "json",
            ]);
            let strip = |s: &str| -> serde_json::Value {
                let mut v: serde_json::Value = serde_json::from_str(s).unwrap();
                v.as_object_mut().unwrap().remove("scenario");
                v
            };
            assert_eq!(
                strip(&built_in)["bom"],
                strip(&copied)["bom"],
                "{id} resolved={resolved}"
            );
        }
    }
    exits_2_saying(
        &["profiles", "show", "ib-hdr"],
        &["profiles show", "ib-hdr", "ib-ndr"],
    );
}

#[test]
fn catalog_shows_an_item_or_a_kind_with_its_sources() {
    let list = stdout_ok(&["catalog"]);
    assert!(list.contains("qm9700") && list.contains("h100"), "{list}");
    let one = stdout_ok(&["catalog", "show", "qm9700"]);
    assert_eq!(one.matches("[[switch]]").count(), 1, "{one}");
    assert!(one.contains("id = \"qm9700\"") && one.contains("price_usd") && one.contains('#'));
    let kind = stdout_ok(&["catalog", "show", "switch"]);
    assert!(kind.matches("[[switch]]").count() >= 2 && kind.contains("qm9700"));
    // A shown item is a catalog file of its own: merged over the built-in one, it plans the same.
    let file = write("catalog-qm9700.toml", &one);
    let a = stdout_ok(&[
        "plan", "--gpus", "128", "--fabric", "ib-ndr", "--format", "csv",
    ]);
    let b = stdout_ok(&[
        "plan",
        "--gpus",
        "128",
        "--fabric",
        "ib-ndr",
        "--catalog",
        &file,
        "--format",
        "csv",
    ]);
    assert_eq!(a, b);
    exits_2_saying(
        &["catalog", "show", "qm9999"],
        &["catalog show", "qm9999", "switch, nic"],
    );
}

#[test]
fn a_repeated_flag_takes_its_last_value() {
    let twice = stdout_ok(&["plan", "--gpus", "64", "--gpus", "256", "--format", "json"]);
    let once = stdout_ok(&["plan", "--gpus", "256", "--format", "json"]);
    assert_eq!(twice, once);
    assert_ne!(
        twice,
        stdout_ok(&["plan", "--gpus", "64", "--format", "json"])
    );
}

#[test]
fn size_suffixes_say_powers_of_1000_or_1024_as_written() {
    let rows = |max: &str| -> Vec<u64> {
        let v = support::json_ok(&[
            "collective",
            "--gpus",
            "16",
            "--min-bytes",
            max,
            "--max-bytes",
            max,
            "--format",
            "json",
        ]);
        v["table"]["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["size_bytes"].as_u64().unwrap())
            .collect()
    };
    assert_eq!(rows("4M"), vec![4_194_304]);
    assert_eq!(rows("4MiB"), vec![4_194_304]);
    assert_eq!(rows("4MB"), vec![4_000_000]);
}
