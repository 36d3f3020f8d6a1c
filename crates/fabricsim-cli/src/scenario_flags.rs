//! The scenario flags of a subcommand, built from the library's table
//! ([`fabricsim::scenario::flags::FLAGS`]) so that every command spells, documents, types and
//! applies a flag such as `--gpus` or `--fabric` the same way.

use std::marker::PhantomData;
use std::path::Path;

use clap::{Arg, ArgMatches, Args, Command, FromArgMatches};
use fabricsim::InputError;
use fabricsim::scenario::Scenario;
use fabricsim::scenario::flag_keys;
use fabricsim::scenario::flags::{COMPARE_FABRIC_HELP, FLAGS, Flag};

/// Which scenario keys a command takes flags for.
pub trait Keys {
    fn takes(key: &str) -> bool;
    /// The flag's help line (by default the table's).
    fn help(f: &Flag) -> &'static str {
        f.help
    }
}

/// `compare`: the keys `flag_keys::compare` names; `--fabric` is the list of fabrics compared.
pub struct Compare;
impl Keys for Compare {
    fn takes(key: &str) -> bool {
        flag_keys::compare(key)
    }
    fn help(f: &Flag) -> &'static str {
        match f.key {
            "fabric.profile" => COMPARE_FABRIC_HELP,
            _ => f.help,
        }
    }
}

/// A command taking the keys a `flag_keys` function names.
macro_rules! keys {
    ($($name:ident => $takes:ident),* $(,)?) => {$(
        pub struct $name;
        impl Keys for $name {
            fn takes(key: &str) -> bool {
                flag_keys::$takes(key)
            }
        }
    )*};
}

keys!(Plan => plan, Train => train, Serve => serve, Cluster => cluster, Sim => sim);

/// The scenario flags given on the command line, as (flag, value) pairs in table order.
pub struct ScenarioFlags<K> {
    pairs: Vec<(String, String)>,
    keys: PhantomData<K>,
}

fn flags<K: Keys>() -> impl Iterator<Item = &'static Flag> {
    FLAGS.iter().filter(|f| K::takes(f.key))
}

impl<K: Keys> ScenarioFlags<K> {
    /// The (flag, value) pairs given, as an array task repeats them.
    pub fn pairs(&self) -> &[(String, String)] {
        &self.pairs
    }

    /// The scenario file (or the built-in defaults) with these flags applied.
    pub fn load(&self, file: Option<&Path>) -> Result<Scenario, InputError> {
        let mut s = match file {
            Some(p) => Scenario::load(&p.display().to_string())?,
            None => Scenario::defaults(),
        };
        s.apply_flags_for(&self.pairs, K::takes)?;
        Ok(s)
    }
}

impl ScenarioFlags<Compare> {
    /// Applies these flags over `s` (`--fabric` sets the compared fabrics).
    pub fn apply_to(&self, s: &mut Scenario) -> Result<(), InputError> {
        s.apply_compare_flags(&self.pairs, flag_keys::compare)
    }
}

impl<K: Keys> FromArgMatches for ScenarioFlags<K> {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        let mut s = ScenarioFlags {
            pairs: Vec::new(),
            keys: PhantomData,
        };
        s.update_from_arg_matches(m)?;
        Ok(s)
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        for f in flags::<K>() {
            if let Some(v) = m.get_one::<String>(f.key) {
                self.pairs.retain(|(flag, _)| flag != f.flag);
                self.pairs.push((f.flag.to_string(), v.clone()));
            }
        }
        Ok(())
    }
}

impl<K: Keys> Args for ScenarioFlags<K> {
    fn augment_args(cmd: Command) -> Command {
        flags::<K>().fold(cmd, |cmd, f| {
            let file_key = match f.key.split_once('.') {
                _ if K::help(f) != f.help => "[compare] fabrics".to_string(),
                Some((table, key)) => format!("[{table}] {key}"),
                None => f.key.to_string(),
            };
            cmd.arg(
                Arg::new(f.key)
                    .long(&f.flag[2..])
                    .value_name("VALUE")
                    .allow_hyphen_values(true)
                    .help(format!("{} ({file_key})", K::help(f))),
            )
        })
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}
