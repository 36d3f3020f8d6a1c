//! An InfiniBand fabric as OFED's `ibnetdiscover` prints it (and ibsim reads it), as a
//! [`ImportedTopology`]: `Switch` and `Ca`/`Hca` records, each a header
//! `Switch 36 "S-0002c90200404b60"  # "desc" ...` followed by one line per connected port
//! `[1](guid) "H-0002c9030010d5e0"[1](guid)  # "desc" lid 3 4xNDR`; `vendid=`-style lines and
//! `#` comments are skipped. Each connected CA port is a host; each link's rate is its width
//! times the per-lane rate of its speed (IBTA names: SDR 2.5, DDR 5, QDR and FDR10 10, FDR 14,
//! EDR 25, HDR 50, NDR 100, XDR 200 Gb/s per lane, as the data rates are marketed: 4xNDR =
//! 400G). A dump holds no cable lengths: every link gets [`CABLE_M`] of cable.

use std::collections::HashMap;

use fabricsim_core::error::{InputError, Source};
use fabricsim_core::units::{BitRate, Time};

use super::imported::{self, ImportedTopology, Link, PS_PER_M, Unfit};

/// The cable every link of a dump gets: 5 m, an in-row run (estimate: ibnetdiscover reports no
/// lengths).
pub const CABLE_M: f64 = 5.0;

/// Whether `text` looks like an ibnetdiscover dump rather than an ns-3 topology (whose first
/// token is the node count): its first line that is not blank or a `#` comment is not a number.
pub fn detect(text: &str) -> bool {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))
        .and_then(|l| l.split_whitespace().next())
        .is_some_and(|t| t.parse::<u64>().is_err())
}

/// Per-lane data rate of an IB speed name, Mb/s.
fn lane_mbps(speed: &str) -> Option<u64> {
    Some(match speed {
        "SDR" => 2_500,
        "DDR" => 5_000,
        "QDR" | "FDR10" => 10_000,
        "FDR" => 14_000,
        "EDR" => 25_000,
        "HDR" => 50_000,
        "NDR" => 100_000,
        "XDR" => 200_000,
        _ => return None,
    })
}

/// The rate of a `4xNDR`-style token.
fn link_rate(tok: &str) -> Option<BitRate> {
    let (w, speed) = tok.split_once('x')?;
    let width: u64 = w.parse().ok().filter(|&w| [1, 2, 4, 8, 12].contains(&w))?;
    Some(BitRate::mbps(width * lane_mbps(speed)?))
}

const SPEEDS: &str = "a width and speed in the port line's comment, such as `4xNDR` (widths 1, 2, 4, 8, 12; speeds SDR, DDR, QDR, FDR10, FDR, EDR, HDR, NDR, XDR)";

/// `"id"` at the start of `s`: the id and the rest.
fn quoted(s: &str) -> Option<(&str, &str)> {
    let s = s.strip_prefix('"')?;
    let end = s.find('"')?;
    Some((&s[..end], &s[end + 1..]))
}

/// `[n]` at the start of `s`, then an optional `(guid)` and `[ext n]`: the port and the rest.
fn port(s: &str) -> Option<(u32, &str)> {
    let s = s.strip_prefix('[')?;
    let end = s.find(']')?;
    let p = s[..end].trim().parse().ok()?;
    let mut rest = &s[end + 1..];
    if rest.starts_with('(') {
        rest = &rest[rest.find(')')? + 1..];
    }
    if let Some(r) = rest.strip_prefix("[ext") {
        rest = &r[r.find(']')? + 1..];
    }
    Some((p, rest))
}

/// A port end: the node's id and its port.
type End = (String, u32);

struct PortLine {
    line: usize,
    from: End,
    to: End,
    rate: Option<BitRate>,
}

/// Reads the dump `src`.
pub fn read(src: &Source) -> Result<ImportedTopology, InputError> {
    let at = |line, key: &str, value: &dyn std::fmt::Display, problem: &str, allowed: &str| {
        InputError::at_line(src, line, key, value, problem, allowed)
    };
    // Node id -> (is a switch, header line).
    let mut nodes: HashMap<String, (bool, usize)> = HashMap::new();
    let mut order: Vec<String> = Vec::new();
    let mut ports: Vec<PortLine> = Vec::new();
    let mut current: Option<String> = None;
    for (i, raw) in src.text.lines().enumerate() {
        let line = i + 1;
        let l = raw.trim();
        if l.is_empty() {
            current = None;
            continue;
        }
        if l.starts_with('#') || l.split_whitespace().next().is_some_and(|t| t.contains('=')) {
            continue;
        }
        if let Some(rest) = ["Switch", "Hca", "Ca", "Rt"]
            .iter()
            .find_map(|k| l.strip_prefix(k).map(|r| (*k, r)))
            .filter(|(_, r)| r.starts_with(char::is_whitespace))
        {
            let (kind, r) = rest;
            let r = r.trim_start();
            let (_, r) = r.split_once(char::is_whitespace).ok_or_else(|| {
                at(
                    line,
                    kind,
                    &l,
                    "a record header without its id",
                    "`Switch <ports> \"<id>\"`",
                )
            })?;
            let (id, _) = quoted(r.trim_start()).ok_or_else(|| {
                at(
                    line,
                    kind,
                    &r,
                    "the node id is not quoted",
                    "`Switch <ports> \"<id>\"`",
                )
            })?;
            if kind == "Rt" {
                return Err(at(
                    line,
                    kind,
                    &id,
                    "routers are not modelled",
                    "Switch and Ca records",
                ));
            }
            if nodes
                .insert(id.to_string(), (kind == "Switch", line))
                .is_some()
            {
                return Err(at(
                    line,
                    kind,
                    &id,
                    "a node listed twice",
                    "each node id once",
                ));
            }
            order.push(id.to_string());
            current = Some(id.to_string());
            continue;
        }
        if l.starts_with('[') {
            let Some(from) = current.clone() else {
                return Err(at(
                    line,
                    "port",
                    &l,
                    "a port line outside a record",
                    "port lines under a Switch or Ca header",
                ));
            };
            let bad = || {
                at(
                    line,
                    "port",
                    &l,
                    "not a port line",
                    "`[<port>] \"<remote id>\"[<remote port>]  # ... 4xNDR`",
                )
            };
            let (p, rest) = port(l).ok_or_else(bad)?;
            let (remote, rest) = quoted(rest.trim_start()).ok_or_else(bad)?;
            let (rp, rest) = port(rest).ok_or_else(bad)?;
            let comment = rest.split_once('#').map_or("", |(_, c)| c);
            let rate = comment.split_whitespace().find_map(link_rate);
            ports.push(PortLine {
                line,
                from: (from, p),
                to: (remote.to_string(), rp),
                rate,
            });
            continue;
        }
        return Err(at(
            line,
            "line",
            &l,
            "not part of an ibnetdiscover dump",
            "`Switch`/`Ca` headers, `[port]` lines, `key=value` lines, `#` comments",
        ));
    }
    // File nodes: the switches, then one host per connected CA port.
    let mut index: HashMap<End, usize> = HashMap::new();
    let mut is_switch = Vec::new();
    for id in &order {
        if nodes[id].0 {
            index.insert((id.clone(), 0), is_switch.len());
            is_switch.push(true);
        }
    }
    let mut node_of = |end: &End, line: usize| -> Result<usize, InputError> {
        let Some(&(switch, _)) = nodes.get(&end.0) else {
            return Err(at(
                line,
                "port",
                &end.0,
                "names a node without a record",
                "node ids with their own Switch or Ca record",
            ));
        };
        let key = if switch {
            (end.0.clone(), 0)
        } else {
            end.clone()
        };
        Ok(*index.entry(key).or_insert_with(|| {
            is_switch.push(false);
            is_switch.len() - 1
        }))
    };
    // Each link appears at both of its ends: kept once, its speed from either end.
    let mut seen: HashMap<(End, End), usize> = HashMap::new();
    let mut end_used: HashMap<End, usize> = HashMap::new();
    let mut links: Vec<Link> = Vec::new();
    let mut lines: Vec<usize> = Vec::new();
    let delay = Time::from_ps((CABLE_M * PS_PER_M) as u64);
    for pl in &ports {
        let key = if pl.from <= pl.to {
            (pl.from.clone(), pl.to.clone())
        } else {
            (pl.to.clone(), pl.from.clone())
        };
        if let Some(&k) = seen.get(&key) {
            match (links[k].rate, pl.rate) {
                (r, Some(p)) if r != p && r != BitRate::mbps(0) => {
                    return Err(at(
                        pl.line,
                        "port",
                        &format!("{} Gb/s", p.bps() as f64 / 1e9),
                        "the two ends of a link disagree on its speed",
                        "the same width and speed at both ends",
                    ));
                }
                (r, Some(p)) if r == BitRate::mbps(0) => links[k].rate = p,
                _ => {}
            }
            continue;
        }
        for end in [&pl.from, &pl.to] {
            if let Some(&other) = end_used.get(end) {
                return Err(at(
                    pl.line,
                    "port",
                    &format!("{}[{}]", end.0, end.1),
                    &format!("a port connected twice (also on line {})", lines[other]),
                    "each port on one link",
                ));
            }
        }
        let (a, b) = (node_of(&pl.from, pl.line)?, node_of(&pl.to, pl.line)?);
        end_used.insert(pl.from.clone(), links.len());
        end_used.insert(pl.to.clone(), links.len());
        seen.insert(key, links.len());
        links.push(Link {
            a,
            b,
            rate: pl.rate.unwrap_or(BitRate::mbps(0)),
            delay,
            loss: 0.0,
        });
        lines.push(pl.line);
    }
    if let Some(k) = links.iter().position(|l| l.rate == BitRate::mbps(0)) {
        return Err(at(
            lines[k],
            "port",
            &"(no speed)",
            "the link's speed is not given at either end",
            SPEEDS,
        ));
    }
    let switch_line = |i: usize| {
        order
            .iter()
            .filter(|id| nodes[*id].0)
            .nth(i)
            .map_or(1, |id| nodes[id].1)
    };
    imported::build(&is_switch, &links).map_err(|u| match u {
        Unfit::NoHost => at(1, "Ca", &"(none)", "no connected Ca port: nothing to send from", "at least one Ca record with a connected port"),
        Unfit::Unreachable(i) => at(switch_line(i), "Switch", &i, "this switch is not connected to any host", "switches reachable from a Ca port"),
        Unfit::HostLinks(i, k) => at(1, "Ca", &i, &format!("host port with {k} links"), "each Ca port on one link"),
        Unfit::SameTier(k) => at(lines[k], "port", &format!("{} {}", links[k].a, links[k].b), "joins two nodes at the same tier (up/down routing needs each link to go between tiers)", "links from Ca ports to switches and between switch tiers"),
        Unfit::TooDeep => at(1, "Switch", &order.len(), "too many tiers", "up to 255 tiers"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two leaves under one spine, two hosts per leaf; the links as ibnetdiscover prints them
    /// (each at both ends; `vendid=` lines; a 2xNDR link; an `[ext]` port).
    const DUMP: &str = "\
#
# Topology file: generated by hand for the test
#
vendid=0x2c9
devid=0xd2f0
switchguid=0x1(1)
Switch\t64 \"S-spine\"\t\t# \"spine\" enhanced port 0 lid 1 lmc 0
[1]\t\"S-leaf1\"[9]\t\t# \"leaf1\" lid 2 4xNDR
[2]\t\"S-leaf2\"[9]\t\t# \"leaf2\" lid 3 4xNDR

vendid=0x2c9
Switch\t64 \"S-leaf1\"\t\t# \"leaf1\" enhanced port 0 lid 2 lmc 0
[1]\t\"H-a\"[1](a1)\t\t# \"a HCA-1\" lid 10 4xNDR
[2]\t\"H-b\"[1](b1)\t\t# \"b HCA-1\" lid 11 2xNDR
[9]\t\"S-spine\"[1]\t\t# \"spine\" lid 1 4xNDR

Switch\t64 \"S-leaf2\"\t\t# \"leaf2\" enhanced port 0 lid 3 lmc 0
[1][ext 1]\t\"H-c\"[1](c1)\t\t# \"c HCA-1\" lid 12 4xNDR
[9]\t\"S-spine\"[2]\t\t# \"spine\" lid 1 4xNDR

caguid=0xa
Ca\t1 \"H-a\"\t\t# \"a HCA-1\"
[1](a1) \t\"S-leaf1\"[1]\t\t# lid 10 lmc 0 \"leaf1\" lid 2 4xNDR

Ca\t1 \"H-b\"\t\t# \"b HCA-1\"
[1](b1) \t\"S-leaf1\"[2]\t\t# lid 11 lmc 0 \"leaf1\" lid 2 2xNDR

Ca\t2 \"H-c\"\t\t# \"c HCA-1\"
[1](c1) \t\"S-leaf2\"[1]\t\t# lid 12 lmc 0 \"leaf2\" lid 3 4xNDR
";

    fn read_text(text: &str) -> Result<ImportedTopology, InputError> {
        read(&Source::new("fabric.ibnet", text))
    }

    #[test]
    fn a_two_tier_dump_gives_its_hosts_switches_and_link_rates() {
        assert!(detect(DUMP) && !detect("3 1 2\n2\n0 2 100Gbps 1us 0\n"));
        let t = read_text(DUMP).unwrap();
        assert_eq!(t.topo.num_hosts(), 3);
        assert_eq!(t.topo.tiers, 2);
        assert_eq!(t.topo.links.len(), 5);
        let mut rates: Vec<u64> = t
            .topo
            .links
            .iter()
            .map(|l| l.rate.bps() / 1_000_000_000)
            .collect();
        rates.sort();
        assert_eq!(rates, [200, 400, 400, 400, 400]);
        assert!(
            t.topo
                .links
                .iter()
                .all(|l| l.delay == Time::from_ps(25_000))
        );
    }

    #[test]
    fn malformed_dumps_name_the_line_and_what_is_allowed() {
        for (text, line, want) in [
            (
                "Switch 8 \"S-x\"\n[1] \"H-y\"[1] # 4xNDR\n",
                2,
                "names a node without a record",
            ),
            (
                "Switch 8 \"S-x\"\n[1] \"H-y\"[1] # lid 3\nCa 1 \"H-y\"\n",
                2,
                "speed is not given",
            ),
            (
                "Switch 8 \"S-x\"\n[1] \"H-y\"[1] # 4xNDR\n\nCa 1 \"H-y\"\n[1] \"S-x\"[1] # 4xHDR\n",
                5,
                "disagree",
            ),
            ("[1] \"H-y\"[1] # 4xNDR\n", 1, "outside a record"),
            (
                "Switch 8 \"S-x\"\nhello\n",
                2,
                "not part of an ibnetdiscover dump",
            ),
            (
                "Switch 8 \"S-x\"\n[1] \"H-y\"[1] # 4xNDR\n[2] \"H-y\"[1] # 4xNDR\n\nCa 1 \"H-y\"\n",
                3,
                "connected twice",
            ),
        ] {
            let e = read_text(text).unwrap_err();
            assert_eq!(e.line, Some(line), "{text}: {e}");
            assert!(e.to_string().contains(want), "{text}: {e}");
            assert!(e.to_string().contains("fabric.ibnet"), "{e}");
        }
    }
}
