//! D-mod-K per tier (Zahavi, "D-Mod-K routing providing non-blocking traffic for shift
//! permutations on real life fat trees", 2010): the up port for destination d at a switch with
//! divisor W (`ibroute::divisors`) is floor(d / W) mod K; down through parallel links to a child,
//! OpenSM's fat-tree routing spreads the destinations below it over the links (consecutive
//! destinations on consecutive links), so a child's hosts do not share one link: d mod n.
//! Adaptive routing falls back to the same static table.

/// Index into `n` candidates for destination `dst` at a switch with divisor `divisor`; `up`:
/// the candidates are its up ports (else parallel links down to one child).
#[inline]
pub fn pick(n: usize, dst: u32, divisor: u32, up: bool) -> usize {
    if up {
        (dst / divisor.max(1)) as usize % n
    } else {
        dst as usize % n
    }
}
