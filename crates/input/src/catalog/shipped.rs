//! The shipped catalog as text, for `fabricsim catalog`: each item's block of its file with its
//! source comments, so a user can copy it into a catalog file of their own (merged by `id`,
//! `Catalog::with_user_file`).

use super::BUILTIN;

/// The shipped catalog files as (file name, text), in merge order.
pub fn files() -> &'static [(&'static str, &'static str)] {
    &BUILTIN
}

/// One item as shipped: its kind (`switch`, `nic`, ...), id and its lines of the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShippedItem {
    pub file: &'static str,
    pub kind: &'static str,
    pub id: &'static str,
    /// The `[[kind]]` header through the line before the next header (trailing blank lines cut).
    pub text: &'static str,
}

/// The kind a `[[kind]]` header line opens.
fn array_header(line: &str) -> Option<&str> {
    let t = line.trim();
    t.strip_prefix("[[")?.strip_suffix("]]").map(str::trim)
}

/// The value of a block's `id = "..."` line.
fn block_id(block: &str) -> Option<&str> {
    block.lines().find_map(|l| {
        let rest = l
            .trim()
            .strip_prefix("id")?
            .trim_start()
            .strip_prefix('=')?;
        rest.trim().strip_prefix('"')?.split('"').next()
    })
}

/// Every shipped item in file order.
pub fn items() -> Vec<ShippedItem> {
    let mut out = Vec::new();
    for (file, text) in files() {
        let starts: Vec<(usize, &str)> = line_starts(text)
            .filter_map(|at| array_header(text[at..].lines().next()?).map(|k| (at, k)))
            .collect();
        for (i, &(at, kind)) in starts.iter().enumerate() {
            let end = starts.get(i + 1).map_or(text.len(), |s| s.0);
            let block = text[at..end].trim_end();
            if let Some(id) = block_id(block) {
                out.push(ShippedItem {
                    file,
                    kind,
                    id,
                    text: block,
                });
            }
        }
    }
    out
}

/// Byte offsets where the lines of `text` start.
fn line_starts(text: &str) -> impl Iterator<Item = usize> + '_ {
    std::iter::once(0).chain(
        text.match_indices('\n')
            .map(|(i, _)| i + 1)
            .filter(move |&i| i < text.len()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Catalog;

    #[test]
    fn every_catalog_item_has_exactly_one_shipped_block() {
        let cat = Catalog::builtin().unwrap();
        let items = items();
        let ids: Vec<&str> = cat
            .switches
            .iter()
            .map(|s| s.id.as_str())
            .chain(cat.nics.iter().map(|n| n.id.as_str()))
            .chain(cat.transceivers.iter().map(|t| t.id.as_str()))
            .chain(cat.cables.iter().map(|c| c.id.as_str()))
            .chain(cat.fibers.iter().map(|f| f.id.as_str()))
            .chain(cat.gpus.iter().map(|g| g.id.as_str()))
            .chain(cat.servers.iter().map(|s| s.id.as_str()))
            .collect();
        assert_eq!(items.len(), ids.len());
        for id in ids {
            assert_eq!(items.iter().filter(|i| i.id == id).count(), 1, "{id}");
        }
    }

    #[test]
    fn a_shipped_block_parses_back_as_a_catalog_file_with_that_one_item() {
        for item in items() {
            let f: crate::catalog::CatalogFile = toml::from_str(item.text).unwrap();
            let n = f.switch.len()
                + f.nic.len()
                + f.transceiver.len()
                + f.cable.len()
                + f.fiber.len()
                + f.gpu.len()
                + f.server.len();
            assert_eq!(n, 1, "{}: {}", item.id, item.text);
            assert!(item.text.starts_with(&format!("[[{}]]", item.kind)));
        }
    }
}
