//! The loss recovery of the RC transport, one type for the packet engine (`sim::transport`),
//! the flow engine's loss model (`flow::loss`) and compare/sweep, with its TOML/CLI names.

use super::params::RoutePolicy;

/// Loss recovery of the RC transport.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    /// NAK on PSN sequence error, resend from the NAKed PSN (IBA Vol. 1 9.7).
    GoBackN,
    /// Go-back-0: a sequence error discards the message received so far and the sender
    /// restarts it from its first packet, as early RoCE NIC firmware did (Guo et al., "RDMA
    /// over Commodity Ethernet at Scale", SIGCOMM 2016, 4.1: the livelock it causes).
    GoBack0,
    /// IRN-style selective repeat: receiver keeps out-of-order packets and SACKs them
    /// (Mittal et al., "Revisiting network support for RDMA", SIGCOMM 2018).
    SelectiveRepeat,
    /// Unordered placement: the receiver keeps out-of-order packets and acknowledges
    /// cumulatively only, so reordering never triggers a resend; a lost packet is found by the
    /// local ACK timeout and resent as selective repeat resends after one.
    Unordered,
    /// Ultra Ethernet's reliable unordered delivery (UEC 1.0 3.5.7, PDS RUD): packets placed as
    /// they arrive, each SACKed; a message completes when all its packets have arrived, in any
    /// order; the sender resends only what is missing, a trimmed packet at once on its NACK, a
    /// lost one at the retransmission timeout; reordering never triggers a resend.
    Rud,
}

/// Every recovery, in the order error messages list them.
pub const TRANSPORTS: [Transport; 5] = [
    Transport::GoBackN,
    Transport::GoBack0,
    Transport::SelectiveRepeat,
    Transport::Unordered,
    Transport::Rud,
];

impl Transport {
    /// The name in TOML and on the command line (`parse` also takes `_` for `-`).
    pub fn name(self) -> &'static str {
        match self {
            Transport::GoBackN => "go-back-n",
            Transport::GoBack0 => "go-back-0",
            Transport::SelectiveRepeat => "selective-repeat",
            Transport::Unordered => "unordered",
            Transport::Rud => "rud",
        }
    }

    /// The recovery named `s`: `go-back-n`, `go-back-0`, `selective-repeat`, `unordered`, `rud`, or
    /// the same with underscores (`[sim] transport`'s spelling).
    pub fn parse(s: &str) -> Option<Transport> {
        let s = s.trim().replace('_', "-");
        TRANSPORTS.into_iter().find(|t| t.name() == s)
    }

    /// The accepted names, for an error's "allowed" part.
    pub fn allowed() -> String {
        let names: Vec<&str> = TRANSPORTS.iter().map(|t| t.name()).collect();
        format!("{} (or with underscores)", names.join(", "))
    }

    /// Whether the receiver keeps out-of-order packets (a PSN bitmap bounded by the window).
    pub fn places_out_of_order(self) -> bool {
        !matches!(self, Transport::GoBackN | Transport::GoBack0)
    }

    /// The recovery a run applies under `routing`: a routing that reorders packets (adaptive,
    /// spray) turns selective repeat into unordered placement, since a SACK per reordered
    /// packet would resend what is only late (`sim::cc` rejects go-back-N there).
    pub fn under(self, routing: RoutePolicy) -> Transport {
        match self {
            Transport::SelectiveRepeat if routing.reorders() => Transport::Unordered,
            t => t,
        }
    }
}
