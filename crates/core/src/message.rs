//! The traffic contract between workloads and engines: a DAG of messages.
//!
//! A message is posted at `max(start, finish of every dependency) + delay`; `Net` messages go
//! from one host's NIC (a queue pair) to another's over the fabric, `NvLink` ones between two
//! GPUs of the same server over its scale-up domain. Traffic generators (permutation, incast,
//! flow files) produce DAGs without dependencies; collectives and training steps produce DAGs
//! with them.

use crate::error::CoreError;
use crate::topology::HostId;
use crate::units::{BitRate, MAX_BYTES, MAX_TIME, Time};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Path {
    /// Over the scale-out fabric, NIC to NIC.
    Net,
    /// Inside a server over NVLink/NVSwitch.
    NvLink,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Message {
    pub src: HostId,
    pub dst: HostId,
    pub bytes: u64,
    /// Earliest post time.
    pub start: Time,
    /// Extra wait after the last dependency finishes (compute between steps, for example).
    pub delay: Time,
    /// Dependencies: `MessageDag::deps[deps_start .. deps_start + deps_len]`.
    pub deps_start: u32,
    pub deps_len: u32,
    /// Which queue pair of the (src, dst) connection carries it (ECMP entropy; NCCL channels).
    pub qp: u16,
    pub path: Path,
    /// Traffic class (an IB SL mapped to its VL, a RoCEv2 priority's queue): the engine class
    /// of its data packets and its QP; `None`: the fabric's data class (`SimParams::data_tc`).
    pub class: Option<u8>,
    /// Free tag for the producer (collective step, flow id from a file, ...).
    pub tag: u32,
}

#[derive(Clone, Debug, Default)]
pub struct MessageDag {
    pub messages: Vec<Message>,
    pub deps: Vec<u32>,
    /// Per dependency, a gap after its finish before it counts as met (the compute a Chakra
    /// trace puts between two transfers, `io::chakra`): empty when every gap is zero, else
    /// parallel to `deps`. A message then posts at `max(start, max over its dependencies of
    /// finish + gap) + delay`.
    pub dep_gaps: Vec<Time>,
    /// Rate of NVLink transfers (per GPU, one direction); `None` when there are none.
    pub nvlink_rate: Option<BitRate>,
}

impl MessageDag {
    /// Checks that every message fits a topology of `num_hosts` hosts: endpoints exist, a
    /// network message goes between two hosts, an NVLink one has the DAG's NVLink rate; and
    /// its size, start and delay are within the input bounds (`units::MAX_BYTES`, `MAX_TIME`),
    /// which keep the engines' sums of times and byte counts inside a u64. Both engines run it
    /// first; `Err` names the message.
    pub fn check_hosts(&self, num_hosts: u32) -> Result<(), CoreError> {
        for (i, m) in self.messages.iter().enumerate() {
            if m.bytes > MAX_BYTES || m.start > MAX_TIME || m.delay > MAX_TIME {
                return Err(CoreError::Dag(format!(
                    "message {i}: {} B starting at {} ps after a delay of {} ps; at most 2^50 B \
                     and 24 hours ({} ps)",
                    m.bytes, m.start.0, m.delay.0, MAX_TIME.0
                )));
            }
            if let Some(g) = self.gaps_of(i as u32).iter().find(|&&g| g > MAX_TIME) {
                return Err(CoreError::Dag(format!(
                    "message {i}: a dependency gap of {} ps; at most 24 hours ({} ps)",
                    g.0, MAX_TIME.0
                )));
            }
            if m.src.0 >= num_hosts || m.dst.0 >= num_hosts {
                return Err(CoreError::Dag(format!(
                    "message {i}: host {} -> {} but the topology has {num_hosts} hosts",
                    m.src.0, m.dst.0
                )));
            }
            match m.path {
                Path::Net if m.src == m.dst => {
                    return Err(CoreError::Dag(format!(
                        "message {i}: source and destination are both host {}",
                        m.src.0
                    )));
                }
                Path::NvLink if self.nvlink_rate.is_none() => {
                    return Err(CoreError::Dag(format!(
                        "message {i} uses NVLink but the DAG has no NVLink rate"
                    )));
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Adds a message that depends on `deps` (indices of earlier messages); returns its index.
    pub fn push(&mut self, src: HostId, dst: HostId, bytes: u64, start: Time, deps: &[u32]) -> u32 {
        let id = self.messages.len() as u32;
        debug_assert!(deps.iter().all(|&d| d < id), "dependencies must come first");
        let deps_start = self.deps.len() as u32;
        self.deps.extend_from_slice(deps);
        if !self.dep_gaps.is_empty() {
            self.dep_gaps.resize(self.deps.len(), Time::ZERO);
        }
        self.messages.push(Message {
            src,
            dst,
            bytes,
            start,
            delay: Time::ZERO,
            deps_start,
            deps_len: deps.len() as u32,
            qp: 0,
            path: Path::Net,
            class: None,
            tag: id,
        });
        id
    }

    pub fn deps_of(&self, m: u32) -> &[u32] {
        let msg = &self.messages[m as usize];
        &self.deps[msg.deps_start as usize..(msg.deps_start + msg.deps_len) as usize]
    }

    /// The gaps of `m`'s dependencies, in the order of [`MessageDag::deps_of`] (empty: none).
    pub fn gaps_of(&self, m: u32) -> &[Time] {
        if self.dep_gaps.is_empty() {
            return &[];
        }
        let msg = &self.messages[m as usize];
        &self.dep_gaps[msg.deps_start as usize..(msg.deps_start + msg.deps_len) as usize]
    }

    /// Sets the gap of `m`'s `k`-th dependency (the gaps start all zero).
    pub fn set_gap(&mut self, m: u32, k: u32, gap: Time) {
        self.dep_gaps.resize(self.deps.len(), Time::ZERO);
        let i = self.messages[m as usize].deps_start + k;
        debug_assert!(k < self.messages[m as usize].deps_len);
        self.dep_gaps[i as usize] = gap;
    }

    /// The dependants of every message in CSR form: message `m`'s children are
    /// `children[start[m] .. start[m + 1]]`, in message order (both engines release them).
    pub fn children(&self) -> (Vec<u32>, Vec<u32>) {
        let n = self.messages.len();
        let mut start = vec![0u32; n + 1];
        for i in 0..n {
            for &d in self.deps_of(i as u32) {
                start[d as usize + 1] += 1;
            }
        }
        for i in 0..n {
            start[i + 1] += start[i];
        }
        let mut fill = start.clone();
        let mut children = vec![0u32; start[n] as usize];
        for i in 0..n {
            for &d in self.deps_of(i as u32) {
                children[fill[d as usize] as usize] = i as u32;
                fill[d as usize] += 1;
            }
        }
        (start, children)
    }

    pub fn total_bytes(&self) -> u64 {
        self.messages
            .iter()
            .fold(0u64, |s, m| s.saturating_add(m.bytes))
    }
}
