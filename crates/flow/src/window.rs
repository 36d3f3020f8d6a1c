//! The hold threshold of a switch ingress under lossless back-pressure: what it takes in before
//! it holds the link into it (credits per VL, IBA Vol. 1 7.9; PFC XOFF, IEEE 802.1Qbb). Shared by
//! `hol` (victims behind held queues) and `nic_send` (a NIC held by its first switch).

use fabricsim_mech::{FlowControl, PfcThreshold, SimParams};

use super::state::PS_PER_S;

/// An ingress's hold threshold.
#[derive(Clone, Copy)]
pub(super) enum Window {
    /// Credits per VL, or a static PFC XOFF (bytes).
    Fixed(u64),
    /// PFC's dynamic XOFF: `alpha` x the switch's free buffer of `buffer` bytes (Choudhury &
    /// Hahne 1998, `sim::pfc`).
    Dynamic { alpha: f64, buffer: u64 },
}

impl Window {
    /// The hold threshold of `p`'s flow control; `None` on a lossy fabric (a full buffer
    /// drops, so nothing is held back).
    pub(super) fn of(p: &SimParams) -> Option<Window> {
        Some(match &p.flow_control {
            FlowControl::None => return None,
            FlowControl::Credits(c) => Window::Fixed(c.switch_vl_buffer_bytes),
            FlowControl::Pfc(pfc) => match pfc.xoff {
                PfcThreshold::Static(b) => Window::Fixed(b),
                PfcThreshold::Dynamic(alpha) => Window::Dynamic {
                    alpha,
                    buffer: p.switch_buffer_bytes,
                },
            },
        })
    }

    /// The threshold in work units (bits x 10^12) of a switch whose buffer holds `backlog`
    /// work units of other bytes (they leave a dynamic XOFF less free buffer).
    pub(super) fn work(&self, backlog: u128) -> u128 {
        let bits = |bytes: u64| bytes as u128 * 8 * PS_PER_S;
        match *self {
            Window::Fixed(b) => bits(b),
            Window::Dynamic { alpha, buffer } => {
                let free = bits(buffer).saturating_sub(backlog);
                (alpha * free as f64) as u128
            }
        }
    }
}
