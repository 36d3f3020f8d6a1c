//! The seeds of a comparison or sweep and the runs over them: the workload layer's
//! (`workload::seeds`), which `collective` and `train` share with compare and sweep.

pub use crate::workload::seeds::*;
