//! Times `topology::build` (validation, graph and up/down routing) for large fabrics: the best
//! and worst of 5 runs each, and `Routing::derive` alone.
//! Run: `cargo run --release -p fabricsim --example topology_bench`.

use std::time::Instant;

use fabricsim::topology::{Kind, Routing, Tiers, TopologySpec, build};
use fabricsim::units::BitRate;

fn ms(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1e3
}

fn main() {
    let cases = [
        (131_072, Kind::FatTree, 128, (1, 1)),
        (131_072, Kind::RailOptimized, 128, (1, 1)),
        (131_072, Kind::RailOptimized, 128, (3, 1)),
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
            planes: 1,
        };
        let (mut best, mut worst) = (f64::MAX, 0f64);
        let mut topo = None;
        for _ in 0..5 {
            let start = Instant::now();
            let t = build(&spec);
            let elapsed = ms(start);
            best = best.min(elapsed);
            worst = worst.max(elapsed);
            topo = Some(t);
        }
        match topo.expect("ran 5 times") {
            Ok(t) => {
                let start = Instant::now();
                let routing = Routing::derive(&t);
                let routing_ms = ms(start);
                drop(routing);
                println!(
                    "{gpus} GPUs {kind:?} radix {radix} {}:{}: {} tiers, {} switches, {} links; \
                     build+routing {best:.1} ms best, {worst:.1} ms worst of 5 (routing alone \
                     {routing_ms:.1} ms)",
                    oversubscription.0,
                    oversubscription.1,
                    t.tiers,
                    t.switches().count(),
                    t.links.len(),
                );
            }
            Err(e) => println!("{gpus} GPUs {kind:?} radix {radix}: {e:?}"),
        }
    }
}
