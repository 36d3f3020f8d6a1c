//! No congestion control: the NICs send at line rate (or the QP's rate limit) and ignore
//! marks; every hook is the trait's no-op.

use super::CongestionControl;

pub struct NoCc;

impl CongestionControl for NoCc {}
