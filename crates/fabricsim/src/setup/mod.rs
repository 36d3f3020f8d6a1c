//! The one road from a scenario to an engine: the engine parameters of a design
//! (`params_from_design`), a packet-level run built from a scenario (`build`), and which engine
//! runs a DAG and how (`engine_choice`), and whether it fits in memory (`memory`).

pub mod build;
pub mod engine_choice;
pub mod memory;
pub mod params_from_design;

pub use params_from_design::params_from_design;
