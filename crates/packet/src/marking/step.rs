//! Step (threshold) ECN marking (DCTCP, Alizadeh et al., SIGCOMM 2010, section 3.1): mark CE
//! (RFC 3168) on every packet that finds the instantaneous queue above K.

/// A step at `k` bytes.
pub struct Step {
    k: u64,
}

impl Step {
    pub fn new(k: u64) -> Step {
        Step { k }
    }

    /// Whether a packet that leaves `queue_bytes` in its egress queue is marked.
    #[inline]
    pub fn mark(&self, queue_bytes: u64) -> bool {
        queue_bytes > self.k
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn step_marks_above_k_only() {
        let m = Step::new(30_000);
        assert!(!m.mark(0));
        assert!(!m.mark(30_000));
        assert!(m.mark(30_001));
        assert!(m.mark(u64::MAX));
    }
}
