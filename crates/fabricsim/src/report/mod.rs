//! Reports: formatting of plans (and, later, run results) as text, JSON and CSV. Reports read
//! results; they never compute the model.

pub mod claims;
pub mod compare;
pub mod html;
pub mod optics_choice;
pub mod plan;
pub mod plan_traffic;
pub mod reliability;
pub mod trace;
