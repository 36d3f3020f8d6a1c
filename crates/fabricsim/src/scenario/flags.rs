//! Command-line overrides of scenario keys. The CLI passes `(flag, value)` pairs; each flag maps
//! to one scenario key, is parsed to that key's type, and is remembered so that a later range
//! error names the flag rather than the file.

use super::Scenario;
use crate::error::InputError;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Int,
    Float,
    Text,
    /// An integer or a word (`--tiers 3`, `--tiers auto`).
    IntOrText,
}

/// Every overridable key: (flag, scenario key, type).
pub const FLAGS: &[(&str, &str)] = &[
    ("--gpus", "cluster.gpus"),
    ("--gpus-per-node", "cluster.gpus_per_node"),
    ("--nics-per-node", "cluster.nics_per_node"),
    ("--gpu", "cluster.gpu"),
    ("--nic", "cluster.nic"),
    ("--server", "cluster.server"),
    ("--fabric", "fabric.profile"),
    ("--mtu", "fabric.mtu_bytes"),
    ("--topology", "topology.kind"),
    ("--tiers", "topology.tiers"),
    ("--oversubscription", "topology.oversubscription"),
    ("--switch", "topology.switch"),
    ("--servers-per-rack", "layout.servers_per_rack"),
    ("--racks-per-row", "layout.racks_per_row"),
    ("--leaf-placement", "layout.leaf"),
    ("--spine-placement", "layout.spine"),
    ("--years", "cost.years"),
    ("--usd-per-kwh", "cost.usd_per_kwh"),
    ("--pue", "cost.pue"),
    ("--catalog", "catalog"),
];

fn kind(key: &str) -> Kind {
    match key {
        "cluster.gpus"
        | "cluster.gpus_per_node"
        | "cluster.nics_per_node"
        | "fabric.mtu_bytes"
        | "layout.servers_per_rack"
        | "layout.racks_per_row"
        | "cost.years" => Kind::Int,
        "cost.usd_per_kwh" | "cost.pue" => Kind::Float,
        "topology.tiers" => Kind::IntOrText,
        _ => Kind::Text,
    }
}

/// A parsed flag value.
enum Val {
    Int(i64),
    Float(f64),
    Text(String),
}

impl Scenario {
    /// Applies command-line overrides in order; an unknown flag or a value of the wrong type is
    /// an error naming the flag.
    pub fn apply_flags(&mut self, pairs: &[(String, String)]) -> Result<(), InputError> {
        for (flag, raw) in pairs {
            let Some(&(_, key)) = FLAGS.iter().find(|f| f.0 == flag) else {
                let all: Vec<&str> = FLAGS.iter().map(|f| f.0).collect();
                return Err(InputError::flag(
                    flag,
                    raw,
                    "is not a scenario flag",
                    all.join(", "),
                ));
            };
            let v = match kind(key) {
                Kind::Int => Val::Int(raw.trim().parse().map_err(|_| {
                    InputError::flag(flag, raw, "is not a whole number", "an integer")
                })?),
                Kind::Float => Val::Float(raw.trim().parse().map_err(|_| {
                    InputError::flag(flag, raw, "is not a number", "a decimal number")
                })?),
                Kind::IntOrText => match raw.trim().parse() {
                    Ok(i) => Val::Int(i),
                    Err(_) => Val::Text(raw.trim().to_string()),
                },
                Kind::Text => Val::Text(raw.trim().to_string()),
            };
            self.assign(key, v);
            self.flags.insert(key.to_string(), flag.clone());
        }
        Ok(())
    }

    fn assign(&mut self, key: &str, v: Val) {
        let f = &mut self.file;
        match (key, v) {
            ("cluster.gpus", Val::Int(i)) => f.cluster.gpus = i,
            ("cluster.gpus_per_node", Val::Int(i)) => f.cluster.gpus_per_node = i,
            ("cluster.nics_per_node", Val::Int(i)) => f.cluster.nics_per_node = i,
            ("cluster.gpu", Val::Text(s)) => f.cluster.gpu = s,
            ("cluster.nic", Val::Text(s)) => f.cluster.nic = Some(s),
            ("cluster.server", Val::Text(s)) => f.cluster.server = Some(s),
            ("fabric.profile", Val::Text(s)) => f.fabric.profile = s,
            ("fabric.mtu_bytes", Val::Int(i)) => f.fabric.mtu_bytes = Some(i),
            ("topology.kind", Val::Text(s)) => f.topology.kind = s,
            ("topology.tiers", Val::Int(i)) => f.topology.tiers = toml::Value::Integer(i),
            ("topology.tiers", Val::Text(s)) => f.topology.tiers = toml::Value::String(s),
            ("topology.oversubscription", Val::Text(s)) => f.topology.oversubscription = s,
            ("topology.switch", Val::Text(s)) => f.topology.switch = Some(s),
            ("layout.servers_per_rack", Val::Int(i)) => f.layout.servers_per_rack = i,
            ("layout.racks_per_row", Val::Int(i)) => f.layout.racks_per_row = i,
            ("layout.leaf", Val::Text(s)) => f.layout.leaf = s,
            ("layout.spine", Val::Text(s)) => f.layout.spine = s,
            ("cost.years", Val::Int(i)) => f.cost.years = i,
            ("cost.usd_per_kwh", Val::Float(x)) => f.cost.usd_per_kwh = x,
            ("cost.pue", Val::Float(x)) => f.cost.pue = x,
            ("catalog", Val::Text(s)) => f.catalog = Some(s),
            // `kind` and `FLAGS` pair every key with exactly one of the arms above.
            (k, _) => unreachable!("flag key {k} has no setter"),
        }
    }
}
