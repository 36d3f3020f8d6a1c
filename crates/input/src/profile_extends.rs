//! `extends = "ID"`: a profile that starts from a shipped one. The rule is by section: every
//! top-level table the profile writes (`[ports]`, `[congestion]`, with its sub-tables) replaces
//! the base's table of that name whole; the tables it leaves out are the base's. The root keys
//! (`id`, `name`, `family`) are never inherited. Replacing whole tables, not merging keys, means
//! a profile never carries a base key it cannot see or delete.
//!
//! The composition is textual: the profile's own text first (so its line numbers stay those of
//! its file in every error), then the base's tables it does not write.

/// The top-level table a header line opens (`[congestion.hpcc]` -> `congestion`), or None for a
/// line that is not a table header.
fn header_table(line: &str) -> Option<&str> {
    let h = line.trim_start().strip_prefix('[')?;
    let h = h.strip_prefix('[').unwrap_or(h);
    let name = h.split(']').next()?;
    Some(name.split('.').next()?.trim().trim_matches('"'))
}

/// The names of the top-level tables `text` writes, in order, each once.
pub fn tables(text: &str) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for line in text.lines() {
        if let Some(t) = header_table(line) {
            if !out.contains(&t) {
                out.push(t);
            }
        }
    }
    out
}

/// `child`'s text followed by the tables of `base` (itself composed) that `child` does not
/// write. `base`'s root keys are dropped.
pub fn compose(child: &str, base: &str) -> String {
    let own = tables(child);
    let mut out = String::from(child);
    if !out.ends_with('\n') {
        out.push('\n');
    }
    let mut keep = false;
    for line in base.lines() {
        if let Some(t) = header_table(line) {
            keep = !own.contains(&t);
        }
        if keep {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = "id = \"b\"\nname = \"B\"\nfamily = \"roce\"\n\
        [ports]\nrate_gbps = 400\n\
        [congestion]\necn = \"red\"\n[congestion.dcqcn]\nx = 1\n\
        [routing]\npolicy = \"ecmp\"\n";

    #[test]
    fn written_tables_replace_the_base_whole_and_the_rest_is_inherited() {
        let child = "id = \"c\"\nname = \"C\"\nfamily = \"roce\"\nextends = \"b\"\n\
            [congestion]\necn = \"off\"\n";
        let c = compose(child, BASE);
        assert!(c.starts_with(child), "the child's lines keep their numbers");
        assert!(c.contains("[ports]\nrate_gbps = 400"));
        assert!(c.contains("[routing]\npolicy = \"ecmp\""));
        assert!(
            !c.contains("ecn = \"red\""),
            "the base's [congestion] is replaced"
        );
        assert!(!c.contains("[congestion.dcqcn]"), "with its sub-tables");
        assert!(!c.contains("id = \"b\""), "root keys are not inherited");
        assert_eq!(tables(&c), ["congestion", "ports", "routing"]);
    }

    #[test]
    fn headers_with_quotes_spaces_and_arrays_name_their_table() {
        assert_eq!(header_table("  [ \"ports\" ]"), Some("ports"));
        assert_eq!(header_table("[[lanes]]"), Some("lanes"));
        assert_eq!(
            header_table("[flow_control.untuned] # c"),
            Some("flow_control")
        );
        assert_eq!(header_table("rate = 1 # [x]"), None);
    }
}
