//! The component catalog: switches, NICs, transceivers, cables, fibre, GPUs and GPU servers.
//!
//! The catalog is data (`data/catalog/*.toml`, embedded with `include_str!`). A user catalog
//! file with the same layout is merged on top: an entry whose `id` already exists replaces it,
//! a new `id` is added. Every file is checked (unknown keys, wrong types, non-positive numbers,
//! dangling references) and problems are [`InputError`]s naming the file, line and key.

mod check;
pub mod items;

use serde::Deserialize;

use crate::error::{InputError, Source};
pub use items::{
    Cable, CableMode, CableShape, Fiber, Gpu, LinkLayer, MediumClass, Nic, PortMode, Server,
    Switch, Transceiver, TransceiverMode,
};

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

/// Replaces the entry with the same id, or appends.
fn upsert<T>(list: &mut Vec<T>, item: T, id: impl Fn(&T) -> &str) {
    match list.iter().position(|x| id(x) == id(&item)) {
        Some(i) => list[i] = item,
        None => list.push(item),
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
        let text = std::fs::read_to_string(path).map_err(|e| InputError::io(path, &e))?;
        let mut c = Catalog::builtin()?;
        c.merge(&Source::new(path, text))?;
        Ok(c)
    }

    /// Parses, checks and merges one catalog file.
    pub fn merge(&mut self, src: &Source) -> Result<(), InputError> {
        let file: CatalogFile = toml::from_str(&src.text).map_err(|e| {
            let mut err = InputError::from_toml(src, &e);
            err.allowed = crate::scenario::plain_type_name(&err.allowed);
            err
        })?;
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
        switch
            .into_iter()
            .for_each(|x| upsert(&mut self.switches, x, |x| &x.id));
        nic.into_iter()
            .for_each(|x| upsert(&mut self.nics, x, |x| &x.id));
        transceiver
            .into_iter()
            .for_each(|x| upsert(&mut self.transceivers, x, |x| &x.id));
        cable
            .into_iter()
            .for_each(|x| upsert(&mut self.cables, x, |x| &x.id));
        fiber
            .into_iter()
            .for_each(|x| upsert(&mut self.fibers, x, |x| &x.id));
        gpu.into_iter()
            .for_each(|x| upsert(&mut self.gpus, x, |x| &x.id));
        server
            .into_iter()
            .for_each(|x| upsert(&mut self.servers, x, |x| &x.id));
        check::references(src, self)
    }

    pub fn switch(&self, id: &str) -> Option<&Switch> {
        self.switches.iter().find(|s| s.id == id)
    }
    pub fn nic(&self, id: &str) -> Option<&Nic> {
        self.nics.iter().find(|s| s.id == id)
    }
    pub fn gpu(&self, id: &str) -> Option<&Gpu> {
        self.gpus.iter().find(|s| s.id == id)
    }
    pub fn server(&self, id: &str) -> Option<&Server> {
        self.servers.iter().find(|s| s.id == id)
    }
    pub fn fiber_index(&self, id: &str) -> Option<usize> {
        self.fibers.iter().position(|s| s.id == id)
    }

    /// Every id in the catalog, for "allowed" lists in error messages.
    pub fn ids(&self) -> Vec<&str> {
        let mut v: Vec<&str> = Vec::new();
        v.extend(self.switches.iter().map(|x| x.id.as_str()));
        v.extend(self.nics.iter().map(|x| x.id.as_str()));
        v.extend(self.transceivers.iter().map(|x| x.id.as_str()));
        v.extend(self.cables.iter().map(|x| x.id.as_str()));
        v.extend(self.fibers.iter().map(|x| x.id.as_str()));
        v.extend(self.servers.iter().map(|x| x.id.as_str()));
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
