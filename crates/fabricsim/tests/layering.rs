//! The layers, checked: each crate's Cargo.toml names only the layer crates below it (so Cargo
//! refuses an import running back up), and inside the driver crate each top-level module names
//! only the modules below it (Cargo cannot see that, this test does).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Every workspace crate (its folder under `crates/`, its package) and the layer crates it may
/// depend on. Packet and flow are peers: neither names the other. Input (the schema) runs no
/// engine.
const CRATES: [(&str, &str, &[&str]); 10] = [
    ("core", "fabricsim-core", &[]),
    ("mech", "fabricsim-mech", &["fabricsim-core"]),
    (
        "packet",
        "fabricsim-packet",
        &["fabricsim-core", "fabricsim-mech"],
    ),
    (
        "flow",
        "fabricsim-flow",
        &["fabricsim-core", "fabricsim-mech"],
    ),
    (
        "input",
        "fabricsim-input",
        &["fabricsim-core", "fabricsim-mech"],
    ),
    (
        "fabricsim",
        "fabricsim",
        &[
            "fabricsim-core",
            "fabricsim-mech",
            "fabricsim-packet",
            "fabricsim-flow",
            "fabricsim-input",
            // A dev-dependency only: its tests take their cases from the crate on top (as a
            // normal dependency it would be a cycle, which Cargo refuses).
            "fabricsim-cases",
        ],
    ),
    ("fabricsim-cli", "fabricsim-cli", &["fabricsim"]),
    // On top, beside the CLI: the cases the tests and the lab share, and the calibration lab
    // (which reads the packet engine's `trace` feature directly).
    ("cases", "fabricsim-cases", &["fabricsim"]),
    (
        "lab",
        "fabricsim-lab",
        &["fabricsim", "fabricsim-cases", "fabricsim-packet"],
    ),
    // The Python package's native module, beside the CLI.
    ("python", "fabricsim-python", &["fabricsim"]),
];

/// The driver's top-level modules, lowest first, and the driver modules each may name (besides
/// itself); the layer crates below are open to all. The re-exported old paths in `lib.rs`
/// (`sim`, `units`, `scenario`, ...) are for the CLI, tests and examples, not for these
/// modules: a name not in the table fails.
const DRIVER: [(&str, &[&str]); 10] = [
    ("error", &[]),
    ("columns", &["error"]),
    ("svg", &[]),
    ("plan", &[]),
    ("setup", &["error", "plan"]),
    ("bench", &[]),
    ("workload", &["columns", "error", "setup", "plan"]),
    (
        "compare",
        &["columns", "error", "setup", "plan", "workload", "svg"],
    ),
    ("tune", &["columns", "error", "setup", "workload"]),
    (
        "report",
        &[
            "columns", "compare", "error", "setup", "plan", "workload", "svg",
        ],
    ),
];

fn crates_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The `fabricsim*` packages a manifest depends on (normal, dev and build dependencies).
fn layer_deps(manifest: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(manifest).unwrap();
    let doc: toml::Table = toml::from_str(&text).unwrap();
    let mut deps = Vec::new();
    for table in ["dependencies", "dev-dependencies", "build-dependencies"] {
        if let Some(t) = doc.get(table).and_then(|t| t.as_table()) {
            for (name, spec) in t {
                let package = spec.get("package").and_then(|p| p.as_str()).unwrap_or(name);
                if package.starts_with("fabricsim") {
                    deps.push(package.to_string());
                }
            }
        }
    }
    deps
}

/// Violations of `CRATES` in the manifests under `dir`, and crates missing from the table.
fn crate_violations(dir: &Path) -> Vec<String> {
    let mut bad = Vec::new();
    let mut found = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let path = e.unwrap().path();
        if path.join("Cargo.toml").is_file() {
            found.push(path.file_name().unwrap().to_str().unwrap().to_string());
        }
    }
    found.sort();
    for folder in &found {
        let Some((_, package, allowed)) = CRATES.iter().find(|c| c.0 == folder) else {
            bad.push(format!("crates/{folder}: not in the layer table"));
            continue;
        };
        for dep in layer_deps(&dir.join(folder).join("Cargo.toml")) {
            if dep != *package && !allowed.contains(&dep.as_str()) {
                bad.push(format!("{package} depends on {dep} (allowed: {allowed:?})"));
            }
        }
    }
    bad
}

/// The `.rs` files under `dir`, sorted.
fn rs_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rs_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// `code` without its `#[cfg(test)]` items (each up to its `;` or its matching `}`).
fn without_tests(code: &str) -> String {
    let mut out = String::new();
    let mut rest = code;
    while let Some(i) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..i]);
        let item = &rest[i..];
        let end = match (item.find('{'), item.find(';')) {
            (Some(b), s) if s.is_none_or(|s| b < s) => {
                let mut depth = 0;
                let mut end = item.len();
                for (k, c) in item[b..].char_indices() {
                    depth += match c {
                        '{' => 1,
                        '}' => -1,
                        _ => 0,
                    };
                    if depth == 0 {
                        end = b + k + 1;
                        break;
                    }
                }
                end
            }
            (_, Some(s)) => s + 1,
            _ => item.len(),
        };
        rest = &item[end..];
    }
    out.push_str(rest);
    out
}

/// The crate-root names a file's code reaches (`crate::x`, `crate::{x, ..}` and `super::`
/// chains that climb to the root), its unit tests left out (`tests.rs` files and
/// `#[cfg(test)]` items).
fn root_names(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap();
    if rel.file_name().unwrap() == "tests.rs" {
        return Vec::new();
    }
    // The module's depth below the root: a.rs and a/mod.rs are 1, a/b.rs is 2.
    let parts = rel.components().count();
    let depth = if rel.file_name().unwrap() == "mod.rs" {
        parts - 1
    } else {
        parts
    };
    let text = std::fs::read_to_string(file).unwrap();
    let code: String = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    let code = without_tests(&code);
    let mut names = Vec::new();
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let mut push_group_or_name = |after: &str| {
        if let Some(group) = after.strip_prefix('{') {
            let body = &group[..group.find('}').unwrap_or(group.len())];
            for item in body.split(',') {
                let n = ident(item.trim());
                if !n.is_empty() {
                    names.push(n);
                }
            }
        } else {
            names.push(ident(after));
        }
    };
    for (i, _) in code.match_indices("crate::") {
        let before = code[..i].chars().last();
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$') {
            continue;
        }
        push_group_or_name(&code[i + "crate::".len()..]);
    }
    let mut i = 0;
    while let Some(k) = code[i..].find("super::") {
        let start = i + k;
        let mut at = start;
        let mut ups = 0;
        while code[at..].starts_with("super::") {
            ups += 1;
            at += "super::".len();
        }
        let before = code[..start].chars().last();
        let word = before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':');
        if !word && ups >= depth {
            push_group_or_name(&code[at..]);
        }
        i = at;
    }
    names.retain(|n| n != "self" && !n.is_empty());
    names
}

/// Violations of `DRIVER` in the driver sources under `src`.
fn driver_violations(src: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rs_files(src, &mut files);
    let mut bad = BTreeMap::new();
    for file in files {
        let rel = file.strip_prefix(src).unwrap();
        let top = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_str()
            .unwrap();
        let top = top.strip_suffix(".rs").unwrap_or(top);
        if top == "lib" {
            continue;
        }
        let Some((_, allowed)) = DRIVER.iter().find(|d| d.0 == top) else {
            bad.insert(format!("{top}: not in the driver's module table"), ());
            continue;
        };
        for name in root_names(src, &file) {
            if name != top && !allowed.contains(&name.as_str()) {
                let msg = format!(
                    "{} names crate::{name} (allowed: {allowed:?})",
                    rel.display()
                );
                bad.insert(msg, ());
            }
        }
    }
    bad.into_keys().collect()
}

#[test]
fn no_crate_depends_on_a_crate_above_it() {
    let bad = crate_violations(&crates_dir());
    assert!(bad.is_empty(), "layering broken:\n{}", bad.join("\n"));
}

#[test]
fn no_driver_module_names_a_module_above_it() {
    let bad = driver_violations(&crates_dir().join("fabricsim/src"));
    assert!(
        bad.is_empty(),
        "driver layering broken:\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_checks_see_a_back_up_import() {
    // A scratch copy of a driver module and of a manifest, each with one arrow back up: the
    // checks must report exactly it.
    let dir = std::env::temp_dir().join(format!("fabricsim-layering-{}", std::process::id()));
    let src = dir.join("src");
    std::fs::create_dir_all(src.join("plan")).unwrap();
    std::fs::write(
        src.join("plan/mod.rs"),
        "use crate::report::x;\n#[cfg(test)]\nfn t() { crate::setup::x(); }\n\
         fn f() { super::compare::z(); }\n#[cfg(test)]\nmod tests { use crate::workload; }\n\
         #[cfg(test)]\nuse crate::bench;\nfn g() { crate::sim::run(); }\n",
    )
    .unwrap();
    std::fs::write(src.join("svg.rs"), "use crate::{plan, svg};\n").unwrap();
    let bad = driver_violations(&src);
    assert_eq!(
        bad,
        [
            "plan/mod.rs names crate::compare (allowed: [])",
            "plan/mod.rs names crate::report (allowed: [])",
            "plan/mod.rs names crate::sim (allowed: [])",
            "svg.rs names crate::plan (allowed: [])",
        ]
    );
    let krates = dir.join("crates");
    std::fs::create_dir_all(krates.join("flow")).unwrap();
    std::fs::write(
        krates.join("flow/Cargo.toml"),
        "[package]\nname = \"fabricsim-flow\"\n[dependencies]\n\
         fabricsim-mech.workspace = true\npk = { package = \"fabricsim-packet\", path = \"x\" }\n",
    )
    .unwrap();
    let bad = crate_violations(&krates);
    assert_eq!(bad.len(), 1, "{bad:?}");
    assert!(bad[0].starts_with("fabricsim-flow depends on fabricsim-packet"));
    std::fs::remove_dir_all(&dir).unwrap();
}
