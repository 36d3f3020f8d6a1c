//! The training-step model: a transformer and its parallelism become compute phases and
//! collectives; the result is the step time split into compute, exposed communication and
//! pipeline bubble, with tokens/s, TFLOP/s per GPU and MFU.

pub mod calibrate;
pub mod compute;
pub mod config;
pub mod efficiency;
pub mod fabric_bytes;
pub mod flops;
pub mod flow_step;
pub mod groups;
pub mod job;
pub mod loss_cost;
pub mod memory;
pub mod model;
pub mod random_loss;
pub mod report;
pub mod run;
pub mod schedule;
pub mod stall_path;
pub mod step;
pub mod step_dag;
