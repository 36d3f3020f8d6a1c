//! Times `topology::build` (graph + up/down routing) for large fabrics.
//! Run: `cargo run --release -p fabricsim --example topology_bench`.

use std::time::Instant;

use fabricsim::topology::{Kind, Tiers, TopologySpec, build};
use fabricsim::units::BitRate;

fn main() {
    let cases = [
        (131_072, Kind::FatTree, 128, (1, 1)),
        (131_072, Kind::RailOptimized, 128, (1, 1)),
        (131_072, Kind::RailOptimized, 64, (3, 1)),
        (65_536, Kind::FatTree, 64, (1, 1)),
    ];
    for (gpus, kind, radix, oversubscription) in cases {
        let spec = TopologySpec {
            gpus,
            gpus_per_node: 8,
            nics_per_node: 8,
            kind,
            tiers: Tiers::Auto,
            oversubscription,
            switch_radix: radix,
            port_rate: BitRate::gbps(400),
        };
        let start = Instant::now();
        let result = build(&spec);
        let elapsed = start.elapsed();
        match result {
            Ok(t) => println!(
                "{gpus} GPUs {kind:?} radix {radix} {}:{}: {} tiers, {} switches, {} links, \
                 build+routing {:.1} ms",
                oversubscription.0,
                oversubscription.1,
                t.tiers,
                t.switches().count(),
                t.links.len(),
                elapsed.as_secs_f64() * 1e3
            ),
            Err(e) => println!("{gpus} GPUs {kind:?} radix {radix}: {e:?}"),
        }
    }
}
