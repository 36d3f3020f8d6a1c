//! The component catalog: switches, NICs, transceivers, cables, fibre, GPUs and GPU servers.
//!
//! The catalog is data (`data/catalog/*.toml`, embedded with `include_str!`). A user catalog
//! file with the same layout is merged on top: an entry whose `id` already exists replaces it,
//! a new `id` is added. Every file is checked (unknown keys, wrong types, non-positive numbers,
//! dangling references) and problems are [`InputError`]s naming the file, line and key.

mod check;
pub mod items;
mod optics_prices;
pub mod shipped;

use serde::Deserialize;

use fabricsim_core::error::{InputError, Source};
pub use items::{
    Cable, CableMode, CableShape, Drive, Fiber, Gpu, LinkLayer, MediumClass, Nic, PortMode, Server,
    Switch, Transceiver, TransceiverMode,
};
pub use optics_prices::OpticsPrices;

/// The shipped catalog files, in merge order.
const BUILTIN: [(&str, &str); 4] = [
    (
        "data/catalog/switches.toml",
        include_str!("../../../../data/catalog/switches.toml"),
    ),
    (
        "data/catalog/nics.toml",
        include_str!("../../../../data/catalog/nics.toml"),
    ),
    (
        "data/catalog/optics.toml",
        include_str!("../../../../data/catalog/optics.toml"),
    ),
    (
        "data/catalog/gpus.toml",
        include_str!("../../../../data/catalog/gpus.toml"),
    ),
];

/// One catalog file: any subset of the item arrays.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CatalogFile {
    #[serde(default)]
    pub switch: Vec<Switch>,
    #[serde(default)]
    pub nic: Vec<Nic>,
    #[serde(default)]
    pub transceiver: Vec<Transceiver>,
    #[serde(default)]
    pub cable: Vec<Cable>,
    #[serde(default)]
    pub fiber: Vec<Fiber>,
    #[serde(default)]
    pub gpu: Vec<Gpu>,
    #[serde(default)]
    pub server: Vec<Server>,
}

/// The merged catalog. Item order is file order (built-in first, then user additions), so
/// every listing and every tie-break is deterministic.
#[derive(Clone, Debug, Default)]
pub struct Catalog {
    pub switches: Vec<Switch>,
    pub nics: Vec<Nic>,
    pub transceivers: Vec<Transceiver>,
    pub cables: Vec<Cable>,
    pub fibers: Vec<Fiber>,
    pub gpus: Vec<Gpu>,
    pub servers: Vec<Server>,
}

/// A catalog entry: every kind is found, replaced and listed by its `id`.
pub trait Item: Clone {
    fn id(&self) -> &str;
}

macro_rules! items {
    ($($t:ty),*) => {
        $(impl Item for $t {
            fn id(&self) -> &str {
                &self.id
            }
        })*
    };
}
items!(Switch, Nic, Transceiver, Cable, Fiber, Gpu, Server);

/// The entry of `items` with this id.
pub fn find<'a, T: Item>(items: &'a [T], id: &str) -> Option<&'a T> {
    items.iter().find(|x| x.id() == id)
}

/// Replaces the entries with the same ids, or appends them.
fn upsert<T: Item>(list: &mut Vec<T>, items: Vec<T>) {
    for item in items {
        match list.iter().position(|x| x.id() == item.id()) {
            Some(i) => list[i] = item,
            None => list.push(item),
        }
    }
}

impl Catalog {
    /// The shipped catalog.
    pub fn builtin() -> Result<Catalog, InputError> {
        let mut c = Catalog::default();
        for (name, text) in BUILTIN {
            c.merge(&Source::new(name, text))?;
        }
        Ok(c)
    }

    /// The shipped catalog with a user file merged on top.
    pub fn with_user_file(path: &str) -> Result<Catalog, InputError> {
        let text = crate::io::input::read_input(path.as_ref())
            .map_err(|e| InputError::io(path, "catalog", e))?;
        let mut c = Catalog::builtin()?;
        c.merge(&Source::new(path, text))?;
        Ok(c)
    }

    /// Parses, checks and merges one catalog file.
    pub fn merge(&mut self, src: &Source) -> Result<(), InputError> {
        let file: CatalogFile =
            toml::from_str(&src.text).map_err(|e| InputError::from_toml(src, &e))?;
        check::file(src, &file)?;
        let CatalogFile {
            switch,
            nic,
            transceiver,
            cable,
            fiber,
            gpu,
            server,
        } = file;
        upsert(&mut self.switches, switch);
        upsert(&mut self.nics, nic);
        upsert(&mut self.transceivers, transceiver);
        upsert(&mut self.cables, cable);
        upsert(&mut self.fibers, fiber);
        upsert(&mut self.gpus, gpu);
        upsert(&mut self.servers, server);
        check::references(src, self)
    }

    pub fn switch(&self, id: &str) -> Option<&Switch> {
        find(&self.switches, id)
    }
    pub fn nic(&self, id: &str) -> Option<&Nic> {
        find(&self.nics, id)
    }
    pub fn gpu(&self, id: &str) -> Option<&Gpu> {
        find(&self.gpus, id)
    }
    pub fn server(&self, id: &str) -> Option<&Server> {
        find(&self.servers, id)
    }
    pub fn fiber_index(&self, id: &str) -> Option<usize> {
        self.fibers.iter().position(|s| s.id == id)
    }

    /// Every id in the catalog, for "allowed" lists in error messages.
    pub fn ids(&self) -> Vec<&str> {
        let mut v: Vec<&str> = Vec::new();
        v.extend(self.switches.iter().map(Item::id));
        v.extend(self.nics.iter().map(Item::id));
        v.extend(self.transceivers.iter().map(Item::id));
        v.extend(self.cables.iter().map(Item::id));
        v.extend(self.fibers.iter().map(Item::id));
        v.extend(self.servers.iter().map(Item::id));
        v
    }

    /// Sets the price of the item with this id (for a fibre: the per-metre price). Returns
    /// false when no item has the id.
    pub fn set_price(&mut self, id: &str, usd: f64) -> bool {
        if let Some(x) = self.switches.iter_mut().find(|x| x.id == id) {
            x.price_usd = usd;
        } else if let Some(x) = self.nics.iter_mut().find(|x| x.id == id) {
            x.price_usd = usd;
        } else if let Some(x) = self.transceivers.iter_mut().find(|x| x.id == id) {
            x.price_usd = usd;
        } else if let Some(x) = self.cables.iter_mut().find(|x| x.id == id) {
            x.price_usd = usd;
        } else if let Some(x) = self.fibers.iter_mut().find(|x| x.id == id) {
            x.usd_per_m = usd;
        } else if let Some(x) = self.servers.iter_mut().find(|x| x.id == id) {
            x.price_usd = usd;
        } else {
            return false;
        }
        true
    }
}

/// Comma-separated ids for "allowed" lists.
pub fn id_list<'a>(ids: impl Iterator<Item = &'a str>) -> String {
    ids.collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests;
