//! Every document a comment or a data value cites exists in the repository (issue 22): a `*.md`
//! file or `defaults.toml` named in a comment of a Rust file under `crates/` (after `//`) or on
//! any line of a TOML or CSV file under `data/` or `examples/` (comments and values: a catalog
//! entry's `source` is printed by `compare`) must be a file of the repository (by its path from
//! the root or from any folder), unless it is part of a URL (a primary source elsewhere); a path into
//! `../shared/reference` (reference notes outside the repository) is never allowed. (The peer
//! scenarios in `../shared/peer-scenarios` are an input directory, not a cited document.)

use std::path::{Path, PathBuf};

/// The repository root: the nearest folder above this crate that holds `Cargo.lock`.
fn root() -> PathBuf {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    here.ancestors()
        .find(|d| d.join("Cargo.lock").is_file())
        .expect("a workspace root with Cargo.lock above the crate")
        .to_path_buf()
}

/// Every file under `dir`, skipping build output and hidden folders.
fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy();
        if p.is_dir() {
            if !name.starts_with('.') && name != "target" {
                walk(&p, out);
            }
        } else {
            out.push(p);
        }
    }
}

/// The comment text of each line of `text`: after `//` in Rust, after `#` in TOML.
fn comments(text: &str, toml: bool) -> Vec<(usize, String)> {
    let mut v = Vec::new();
    for (i, line) in text.lines().enumerate() {
        // A Rust comment starts at the first `//` that does not end a URL's scheme.
        let rust_mark = line
            .match_indices("//")
            .map(|(at, _)| at)
            .find(|&at| !line[..at].ends_with(':'));
        let mark = if toml { line.find('#') } else { rust_mark };
        if let Some(at) = mark {
            v.push((i + 1, line[at..].to_string()));
        }
    }
    v
}

/// The `*.md` names in `comment` that are not part of a URL.
fn md_names(comment: &str) -> Vec<String> {
    comment
        .split(|c: char| c.is_whitespace() || "()[]`\"',;<>".contains(c))
        .filter(|w| !w.contains("://"))
        .map(|w| w.trim_end_matches(['.', ':']))
        .filter(|w| w.len() > 3 && w.ends_with(".md"))
        .filter(|w| {
            w.chars()
                .all(|c| c.is_ascii_alphanumeric() || "_./-".contains(c))
        })
        .map(str::to_string)
        .collect()
}

/// The documents `text` cites: its `*.md` names and `defaults.toml` names not in a URL, and any
/// path into `shared/reference`.
fn cited(text: &str) -> Vec<String> {
    let mut v = md_names(text);
    for w in text.split(|c: char| c.is_whitespace() || "()[]`\"',;<>".contains(c)) {
        let w = w.trim_end_matches(['.', ':']);
        if w.contains("shared/reference") || (w.ends_with("defaults.toml") && !w.contains("://")) {
            v.push(w.to_string());
        }
    }
    v
}

/// Whether `name` is a repository file: its path from the root, or the tail of a file's path.
fn exists(name: &str, files: &[String]) -> bool {
    let tail = format!("/{}", name.trim_start_matches("./"));
    files.iter().any(|f| f == name || f.ends_with(&tail))
}

#[test]
fn the_scanner_finds_a_missing_document_and_skips_urls() {
    let files = vec![
        "ARCHITECTURE.md".to_string(),
        "docs/validation.md".to_string(),
    ];
    // The sample's comment mark is built so this file's own comments stay clean.
    let line = format!(
        "let x = 1; {} cites physics.md C4 and docs/validation.md",
        "/".repeat(2)
    );
    let c = comments(&line, false);
    let names: Vec<String> = c.iter().flat_map(|(_, t)| md_names(t)).collect();
    assert_eq!(names, ["physics.md", "docs/validation.md"]);
    assert!(!exists("physics.md", &files));
    assert!(exists("docs/validation.md", &files) && exists("validation.md", &files));
    let url = "https://github.com/NVIDIA/nccl-tests/blob/master/doc/PERFORMANCE.md";
    assert!(md_names(url).is_empty());
    let toml = comments("x = 1 # (see DESIGN.md)\nsource = \"a datasheet\"", true);
    let names: Vec<String> = toml.iter().flat_map(|(_, t)| md_names(t)).collect();
    assert_eq!(names, ["DESIGN.md"]);
    let value = "source = \"physics.md D2; defaults.toml [optics.sr4_400g]\"";
    assert_eq!(cited(value), ["physics.md", "defaults.toml"]);
    assert!(!exists("defaults.toml", &files));
    assert_eq!(
        cited("# copied from ../shared/reference/h200.csv"),
        ["../shared/reference/h200.csv"]
    );
    assert!(cited("# https://example.org/defaults.toml, a datasheet").is_empty());
    assert!(cited("# the peer scenarios (../shared/peer-scenarios)").is_empty());
}

#[test]
fn every_document_a_comment_cites_is_in_the_repository() {
    let root = root();
    let mut all = Vec::new();
    walk(&root, &mut all);
    let files: Vec<String> = all
        .iter()
        .map(|p| {
            p.strip_prefix(&root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/")
        })
        .collect();
    let mut missing = Vec::new();
    for (path, rel) in all.iter().zip(&files) {
        let rust = rel.starts_with("crates/") && rel.ends_with(".rs");
        let data = (rel.starts_with("data/") || rel.starts_with("examples/"))
            && (rel.ends_with(".toml") || rel.ends_with(".csv"));
        // This file names the forbidden citations to describe the rule.
        let own = rel.ends_with("tests/doc_citations.rs");
        if !(rust || data) || own {
            continue;
        }
        let text = std::fs::read_to_string(path).unwrap();
        let lines: Vec<(usize, String)> = if rust {
            comments(&text, false)
        } else {
            text.lines()
                .enumerate()
                .map(|(i, l)| (i + 1, l.to_string()))
                .collect()
        };
        for (line, c) in lines {
            for name in cited(&c) {
                if name.contains("shared/reference") || !exists(&name, &files) {
                    missing.push(format!("{rel}:{line}: {name}"));
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "comments or data values cite documents that are not in the repository (cite the primary source or a \
         file under docs/):\n{}",
        missing.join("\n")
    );
}
