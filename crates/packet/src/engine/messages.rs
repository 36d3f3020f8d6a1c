//! Messages of the DAG: posting (network or NVLink), joining their QPs after the NIC latency,
//! completion at the sender and the release of their dependants.

use super::{Engine, Ev};
use fabricsim_core::message::Path;
use fabricsim_mech::entropy;

impl Engine<'_> {
    pub(super) fn post(&mut self, msg: u32) {
        let m = &self.dag.messages[msg as usize];
        self.msgs[msg as usize].post = self.now.0;
        match m.path {
            Path::Net => self
                .q
                .push((self.now + self.p.nic_latency).0, Ev::Start { msg }),
            Path::NvLink => {
                let rate = self.dag.nvlink_rate.expect("checked in new");
                let free = &mut self.nv_free[m.src.idx()];
                *free = (*free).max(self.now.0) + rate.serialize(m.bytes).0;
                self.q.push(*free, Ev::NvDone { msg });
            }
        }
    }

    /// After the sender NIC's latency, message `msg`'s parts join their QPs.
    pub(super) fn start(&mut self, msg: u32) {
        let m = &self.dag.messages[msg as usize];
        let st = self.msgs[msg as usize];
        let qpc = self.p.cc.qps_per_message();
        for j in 0..st.parts {
            let qp = st.qp + j as u32;
            if self.qps[qp as usize].failed {
                self.msgs[msg as usize].failed = true;
                return;
            }
            let bytes = entropy::part_bytes(m.bytes, qpc, j);
            self.qps[qp as usize].post(msg, bytes, self.p.mtu_bytes);
            self.activate(qp);
        }
    }

    /// An NVLink transfer completes.
    pub(super) fn nv_done(&mut self, msg: u32) {
        self.msgs[msg as usize].recv = self.now.0;
        self.complete(msg);
    }

    /// Message `m` completed at the sender: release its dependants.
    pub(super) fn complete(&mut self, m: u32) {
        let st = &mut self.msgs[m as usize];
        st.send_left -= 1;
        if st.send_left > 0 {
            return;
        }
        st.finish = self.now.0;
        self.remaining -= 1;
        self.stop |= self.remaining == 0;
        let q = &mut self.q;
        self.release.complete(self.dag, m, self.now, |c, at| {
            q.push(at.0, Ev::Post { msg: c })
        });
    }
}
