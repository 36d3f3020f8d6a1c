//! Where each parallelism's communicator lands on the servers, from the Megatron rank layout
//! (see `config`): TP groups are consecutive GPUs, CP strides by tp, DP and EP by tp * cp,
//! expert-data-parallel by tp * cp * ep, and a pipeline hop by tp * cp * dp.

use super::config::TrainConfig;
use crate::workload::comm_model::GroupShape;
use crate::workload::placement::Placement;

/// One communicator: `shape.ranks` GPUs `stride` apart, starting at GPU 0.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Layout {
    pub shape: GroupShape,
    pub stride: u64,
}

impl Layout {
    fn new(stride: u64, size: u64, place: &Placement) -> Layout {
        Layout {
            shape: shape(stride, size, place),
            stride,
        }
    }

    /// The global GPU indices of the group containing GPU 0.
    pub fn members(&self) -> Vec<u32> {
        (0..self.shape.ranks as u64)
            .map(|i| (i * self.stride) as u32)
            .collect()
    }
}

/// The communicators of one training job (those of the group containing GPU 0).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Groups {
    pub tp: Layout,
    pub cp: Layout,
    pub dp: Layout,
    pub ep: Layout,
    /// Data parallelism of the expert weights: dp / ep ranks.
    pub edp: Layout,
    /// Two adjacent pipeline stages (a send/recv pair).
    pub pp_pair: Layout,
}

/// `size` GPUs `stride` apart from GPU 0, on the servers `place` puts them.
pub fn shape(stride: u64, size: u64, place: &Placement) -> GroupShape {
    let mut servers: Vec<u32> = (0..size)
        .map(|i| place.server((i * stride) as u32))
        .collect();
    servers.dedup();
    GroupShape {
        ranks: size as u32,
        servers: servers.len() as u32,
    }
}

pub fn groups(cfg: &TrainConfig) -> Groups {
    let (p, g) = (&cfg.par, &cfg.place);
    Groups {
        tp: Layout::new(1, p.tp, g),
        cp: Layout::new(p.tp, p.cp, g),
        dp: Layout::new(p.tp * p.cp, p.dp, g),
        ep: Layout::new(p.tp * p.cp, p.ep, g),
        edp: Layout::new(p.tp * p.cp * p.ep, p.dp / p.ep, g),
        pp_pair: Layout::new(p.tp * p.cp * p.dp, p.pp.min(2), g),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strided_groups_land_on_the_expected_servers() {
        // 8 GPUs per server: tp 8 fills one server; dp strides by 8, one GPU per server;
        // tp 2 with dp 16 strides by 2: 4 per server over 4 servers; a pipeline hop of 256
        // GPUs crosses servers.
        let place = Placement::dense(64, 8);
        assert_eq!(
            shape(1, 8, &place),
            GroupShape {
                ranks: 8,
                servers: 1
            }
        );
        assert_eq!(
            shape(8, 32, &place),
            GroupShape {
                ranks: 32,
                servers: 32
            }
        );
        assert_eq!(
            shape(2, 16, &place),
            GroupShape {
                ranks: 16,
                servers: 4
            }
        );
        assert_eq!(
            shape(1, 16, &place),
            GroupShape {
                ranks: 16,
                servers: 2
            }
        );
        assert_eq!(
            shape(256, 2, &place),
            GroupShape {
                ranks: 2,
                servers: 2
            }
        );
        assert_eq!(
            shape(2, 1, &place),
            GroupShape {
                ranks: 1,
                servers: 1
            }
        );
    }
}
