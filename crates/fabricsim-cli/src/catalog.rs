//! `fabricsim catalog`: the shipped component catalog, listed by kind or printed item by item as
//! TOML with its source comments, to copy into a catalog file of one's own (`--catalog FILE`:
//! an item with the same id replaces the shipped one).

use clap::{Args, Subcommand};

use fabricsim::InputError;
use fabricsim::catalog::shipped;

use crate::outcome::Outcome;

#[derive(Args)]
pub struct CatalogArgs {
    #[command(subcommand)]
    pub cmd: Option<CatalogCmd>,
}

#[derive(Subcommand)]
pub enum CatalogCmd {
    /// Print catalog items as TOML: one item by id, or every item of a kind (switch, nic,
    /// transceiver, cable, fiber, gpu, server).
    Show {
        /// An item id or a kind (`fabricsim catalog` lists both).
        what: String,
    },
}

/// The table of shipped items: kind, id, file.
fn list() -> String {
    let mut rows = vec![["kind".to_string(), "id".into(), "file".into()]];
    for item in shipped::items() {
        rows.push([item.kind.into(), item.id.into(), item.file.into()]);
    }
    let mut out = crate::table::aligned(&rows);
    out.push_str(
        "\n`fabricsim catalog show ID` prints one item as TOML; `fabricsim catalog show KIND` every item of a kind.\n",
    );
    out
}

/// The items `what` names: the one with that id, else every item of that kind.
fn show(what: &str) -> Result<String, InputError> {
    let items = shipped::items();
    let chosen: Vec<&shipped::ShippedItem> = match items.iter().find(|i| i.id == what) {
        Some(one) => vec![one],
        None => items.iter().filter(|i| i.kind == what).collect(),
    };
    if chosen.is_empty() {
        let mut kinds: Vec<&str> = Vec::new();
        for i in &items {
            if !kinds.contains(&i.kind) {
                kinds.push(i.kind);
            }
        }
        return Err(InputError::flag(
            "catalog show",
            what,
            "is neither a catalog id nor a kind",
            format!(
                "a kind ({}) or an id that `fabricsim catalog` lists",
                kinds.join(", ")
            ),
        ));
    }
    let blocks: Vec<String> = chosen
        .iter()
        .map(|i| format!("# from {}\n{}\n", i.file, i.text))
        .collect();
    Ok(blocks.join("\n"))
}

pub fn run(a: CatalogArgs) -> Outcome {
    let text = match a.cmd {
        None => list(),
        Some(CatalogCmd::Show { what }) => show(&what)?,
    };
    print!("{text}");
    Ok(())
}
