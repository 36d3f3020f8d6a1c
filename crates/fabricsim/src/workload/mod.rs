//! Workloads: what traffic to offer the fabric. Collectives become message DAGs for the
//! engines; the training-step model turns a model and its parallelism into compute phases and
//! collectives, timed by a communication model (alpha-beta now, engine-fitted later).

pub mod alpha_beta;
pub mod busbw;
pub mod collective;
pub mod comm_model;
pub mod fabric_estimate;
pub mod gpu;
pub mod measure;
pub mod placement;
pub mod sweep;
pub mod table;
pub mod train;
