//! Workloads: what traffic to offer the fabric. Collectives become message DAGs for the
//! engines; the training-step model turns a model and its parallelism into compute phases and
//! collectives, timed by a communication model (alpha-beta now, engine-fitted later).
//!
//! Where an engine plugs in (each takes the engine as a closure `&MessageDag -> Time`):
//! - [`measure::measure`]: a collective over an nccl-tests size sweep -> the nccl-tests
//!   [`table::Table`] (text and JSON) and the alpha-beta [`alpha_beta::Fit`] with its error;
//! - [`train::calibrate::calibrate`]: every (op, group) of a training step -> fits inserted
//!   into the [`comm_model::AlphaBetaModel`] the step model then uses.
//!
//! GPUs are addressed through a [`placement::Placement`] built from the topology's
//! (server, rail) -> HostId lookup ([`placement::Placement::on_topology`]); GPU numbers come
//! from the catalog and link numbers from the fabric profile ([`link_params`]).

pub mod alpha_beta;
pub mod busbw;
pub mod chakra;
pub mod collective;
pub mod comm_model;
pub mod holdout;
pub mod link_params;
pub mod measure;
pub mod moe;
pub mod placement;
pub mod run_engine;
pub mod seeds;
pub mod serve;
pub mod sim_job;
pub mod sweep;
pub mod table;
pub mod tenants;
pub mod tier;
pub mod train;
pub mod train_engine;
