//! The local ACK timeout's resend (IBA Vol. 1 9.7.6.1.3: the requester resends from the oldest
//! unacknowledged PSN; the engine counts the retries, `engine::nic_rx::timer`).

use super::Qp;
use fabricsim_mech::Transport;

impl Qp {
    /// The local ACK timer expired with packets outstanding: resend them. Go-back-N rewinds
    /// (go-back-0 too, to its oldest unacknowledged PSN, a message's first);
    /// a receiver that places out-of-order packets keeps what arrived, so the sender resends
    /// everything outstanding as holes and the receiver discards the duplicates.
    pub fn on_timeout(&mut self, kind: Transport) {
        match kind {
            Transport::GoBackN | Transport::GoBack0 => self.nxt = self.una,
            Transport::SelectiveRepeat | Transport::Unordered => {
                self.in_recovery = true;
                self.recovery_point = self.nxt.saturating_sub(1);
                self.retx_ptr = self.una;
                self.high_sack = self.nxt;
            }
            // RUD times each packet itself (UEC PDS `RTO_Init_Time`): `Qp::rud_expire`.
            Transport::Rud => unreachable!("RUD's timers are per packet"),
        }
    }
}
