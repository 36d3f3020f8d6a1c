//! Units as newtypes: time in integer picoseconds, sizes in bytes, rates in bits per second.
//!
//! Engines never use floating-point time. At the standard rates a byte takes a whole number of
//! picoseconds (100G: 80 ps, 400G: 20 ps, 800G: 10 ps, 1.6T: 5 ps), so serialization is exact.

use crate::error::CoreError;
use std::fmt;
use std::ops::{Add, AddAssign, Mul, Sub, SubAssign};

/// `+`, `+=` and `-` on a u64 newtype, with the integer's overflow checks.
macro_rules! additive {
    ($t:ident) => {
        impl Add for $t {
            type Output = $t;
            #[inline]
            fn add(self, o: $t) -> $t {
                $t(self.0 + o.0)
            }
        }
        impl AddAssign for $t {
            #[inline]
            fn add_assign(&mut self, o: $t) {
                self.0 += o.0
            }
        }
        impl Sub for $t {
            type Output = $t;
            #[inline]
            fn sub(self, o: $t) -> $t {
                $t(self.0 - o.0)
            }
        }
    };
}

/// A point in time or a duration, in picoseconds. 2^64 ps is about 213 days.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time(pub u64);

impl Time {
    pub const ZERO: Time = Time(0);
    pub const MAX: Time = Time(u64::MAX);
    pub const fn from_ps(ps: u64) -> Time {
        Time(ps)
    }
    pub const fn from_ns(ns: u64) -> Time {
        Time(ns * 1_000)
    }
    pub const fn from_us(us: u64) -> Time {
        Time(us * 1_000_000)
    }
    pub const fn from_ms(ms: u64) -> Time {
        Time(ms * 1_000_000_000)
    }
    /// From seconds given as a float (input parsing only, never inside an engine); rounds to
    /// the nearest picosecond.
    pub fn from_secs_f64(s: f64) -> Time {
        Time((s * 1e12).round() as u64)
    }
    pub const fn ps(self) -> u64 {
        self.0
    }
    pub fn as_ns_f64(self) -> f64 {
        self.0 as f64 / 1e3
    }
    pub fn as_us_f64(self) -> f64 {
        self.0 as f64 / 1e6
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e12
    }
    pub fn saturating_sub(self, o: Time) -> Time {
        Time(self.0.saturating_sub(o.0))
    }
}

additive!(Time);
impl SubAssign for Time {
    #[inline]
    fn sub_assign(&mut self, o: Time) {
        self.0 -= o.0
    }
}
impl Mul<u64> for Time {
    type Output = Time;
    #[inline]
    fn mul(self, k: u64) -> Time {
        Time(self.0 * k)
    }
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ps = self.0;
        if ps >= 1_000_000_000_000 {
            write!(f, "{:.6} s", ps as f64 / 1e12)
        } else if ps >= 1_000_000_000 {
            write!(f, "{:.3} ms", ps as f64 / 1e9)
        } else if ps >= 1_000_000 {
            write!(f, "{:.3} us", ps as f64 / 1e6)
        } else if ps >= 1_000 {
            write!(f, "{:.3} ns", ps as f64 / 1e3)
        } else {
            write!(f, "{ps} ps")
        }
    }
}

/// A size in bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Bytes(pub u64);

additive!(Bytes);

/// A link or flow rate in bits per second.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BitRate(pub u64);

impl BitRate {
    pub const fn gbps(g: u64) -> BitRate {
        BitRate(g * 1_000_000_000)
    }
    pub const fn mbps(m: u64) -> BitRate {
        BitRate(m * 1_000_000)
    }
    pub const fn bps(self) -> u64 {
        self.0
    }
    pub fn as_gbps_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
    /// Picoseconds to put `bytes` on the wire at this rate, rounded up to a whole picosecond.
    #[inline]
    pub fn serialize(self, bytes: u64) -> Time {
        debug_assert!(self.0 > 0);
        let num = bytes as u128 * 8 * 1_000_000_000_000u128;
        Time(num.div_ceil(self.0 as u128) as u64)
    }
    /// Picoseconds per byte when exact (the standard rates), else `None`.
    pub fn ps_per_byte(self) -> Option<u64> {
        let num = 8_000_000_000_000u64;
        (self.0 > 0 && num % self.0 == 0).then(|| num / self.0)
    }
    /// Bytes that fit in `t` at this rate, rounded down.
    pub fn bytes_in(self, t: Time) -> u64 {
        (t.0 as u128 * self.0 as u128 / 8_000_000_000_000u128) as u64
    }
}

impl fmt::Display for BitRate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        if b % 1_000_000_000 == 0 {
            write!(f, "{}Gbps", b / 1_000_000_000)
        } else if b % 1_000_000 == 0 {
            write!(f, "{}Mbps", b / 1_000_000)
        } else {
            write!(f, "{b}bps")
        }
    }
}

/// The largest size accepted at input (a message, a flow, a buffer): 2^50 B (1 PiB). Its
/// serialization at 100 Gb/s (80 ps per byte) is 9.0e16 ps, so a byte count times a per-byte
/// time, or the sum of 2^13 such sizes, stays inside a u64.
pub const MAX_BYTES: u64 = 1 << 50;
/// The largest time accepted at input (a start time, a duration, `until`): 24 hours of simulated
/// time, 8.64e16 ps, 1/213 of what a u64 of picoseconds holds, so a start plus durations cannot
/// wrap.
pub const MAX_TIME: Time = Time(86_400 * 1_000_000_000_000);

/// `bytes` if within [`MAX_BYTES`], else the problem in words.
pub fn bounded_bytes(bytes: u64) -> Result<u64, CoreError> {
    if bytes > MAX_BYTES {
        return Err(CoreError::Value(format!(
            "{bytes} B is above the largest size accepted, 2^50 B (1 PiB)"
        )));
    }
    Ok(bytes)
}

/// `secs` seconds as a [`Time`] if finite, non-negative and within [`MAX_TIME`].
pub fn bounded_secs(secs: f64) -> Result<Time, CoreError> {
    if !secs.is_finite() || secs < 0.0 {
        return Err(CoreError::Value(
            "not a non-negative number of seconds".into(),
        ));
    }
    if secs > MAX_TIME.as_secs_f64() {
        return Err(CoreError::Value(format!(
            "{secs} s is above the longest time accepted, 86400 s (24 hours of simulated time)"
        )));
    }
    Ok(Time::from_secs_f64(secs))
}

/// `s` trimmed and cut where its number ends: at the first character `in_number` rejects.
fn split_number(s: &str, in_number: impl Fn(char) -> bool) -> (&str, &str) {
    let t = s.trim();
    t.split_at(t.find(|c: char| !in_number(c)).unwrap_or(t.len()))
}

fn decimal_digit(c: char) -> bool {
    c.is_ascii_digit() || c == '.'
}

/// Parses a size such as `2MB`, `1M`, `64KiB`, `4096` into bytes, one convention everywhere
/// (scenario files and flags): KB, MB, GB, TB are powers of 1000; KiB, MiB, GiB, TiB powers of
/// 1024; a bare K, M, G, T is a power of 1024, as nccl-tests' `-b`/`-e` sizes and GNU coreutils'
/// size suffixes (`dd`, `head -c`) read it: `4M` = `4MiB` = 4,194,304 B, `4MB` = 4,000,000 B.
pub fn parse_bytes(s: &str) -> Result<u64, CoreError> {
    let (num, suf) = split_number(s, decimal_digit);
    const KI: f64 = 1024.0;
    let mult: f64 = match suf.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "kb" => 1e3,
        "mb" => 1e6,
        "gb" => 1e9,
        "tb" => 1e12,
        "k" | "kib" => KI,
        "m" | "mib" => KI * KI,
        "g" | "gib" => KI * KI * KI,
        "t" | "tib" => KI * KI * KI * KI,
        _ => {
            return Err(CoreError::Value(format!(
                "unknown size unit `{suf}` (allowed: B; KB, MB, GB, TB = powers of 1000; K, M, G, T or KiB, MiB, GiB, TiB = powers of 1024)"
            )));
        }
    };
    let v: f64 = num.parse().map_err(|_| {
        CoreError::Value(format!(
            "`{s}` is not a size (examples: 4096, 64KB, 2MB, 1GiB)"
        ))
    })?;
    let bytes = v * mult;
    if !bytes.is_finite() || bytes < 0.0 || bytes.fract() != 0.0 {
        return Err(CoreError::Value(format!(
            "`{s}` is not a whole number of bytes"
        )));
    }
    if bytes > MAX_BYTES as f64 {
        return Err(CoreError::Value(format!(
            "`{s}` is above the largest size accepted, 2^50 B (1 PiB)"
        )));
    }
    Ok(bytes as u64)
}

/// Parses a duration such as `10us`, `1.5ms`, `1000ns`, `2s`, `500ps` into a [`Time`].
pub fn parse_time(s: &str) -> Result<Time, CoreError> {
    // Also 'e' and '-' for exponents such as 1e-3s.
    let (num, suf) = split_number(s, |c| decimal_digit(c) || c == 'e' || c == '-');
    let ps_per_unit: f64 = match suf.trim() {
        "ps" => 1.0,
        "ns" => 1e3,
        "us" | "µs" => 1e6,
        "ms" => 1e9,
        "s" => 1e12,
        "" => {
            return Err(CoreError::Value(format!(
                "`{s}` has no unit (allowed: ps, ns, us, ms, s)"
            )));
        }
        other => {
            return Err(CoreError::Value(format!(
                "unknown time unit `{other}` (allowed: ps, ns, us, ms, s)"
            )));
        }
    };
    let v: f64 = num.parse().map_err(|_| {
        CoreError::Value(format!(
            "`{s}` is not a duration (examples: 500ns, 10us, 1.5ms)"
        ))
    })?;
    if !v.is_finite() || v < 0.0 {
        return Err(CoreError::Value(format!(
            "`{s}` must be a non-negative duration"
        )));
    }
    let ps = (v * ps_per_unit).round();
    if ps > MAX_TIME.0 as f64 {
        return Err(CoreError::Value(format!(
            "`{s}` is above the longest time accepted, 86400s (24 hours of simulated time)"
        )));
    }
    Ok(Time(ps as u64))
}

/// Parses a rate such as `100Gbps`, `400G`, `25Gb/s`, `800` (Gb/s assumed only when `bare_gbps`).
pub fn parse_rate(s: &str) -> Result<BitRate, CoreError> {
    let (num, suf) = split_number(s, decimal_digit);
    let mult: f64 = match suf.trim().to_ascii_lowercase().as_str() {
        "bps" | "b/s" => 1.0,
        "k" | "kbps" | "kb/s" => 1e3,
        "m" | "mbps" | "mb/s" => 1e6,
        "g" | "gbps" | "gb/s" => 1e9,
        "t" | "tbps" | "tb/s" => 1e12,
        _ => {
            return Err(CoreError::Value(format!(
                "`{s}` is not a rate (examples: 100Gbps, 400G, 25Gb/s)"
            )));
        }
    };
    let v: f64 = num
        .parse()
        .map_err(|_| CoreError::Value(format!("`{s}` is not a rate (examples: 100Gbps, 400G)")))?;
    let bps = (v * mult).round();
    if bps <= 0.0 {
        return Err(CoreError::Value(format!("`{s}` must be a positive rate")));
    }
    Ok(BitRate(bps as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_times_are_whole_picoseconds_at_standard_rates() {
        assert_eq!(BitRate::gbps(100).ps_per_byte(), Some(80));
        assert_eq!(BitRate::gbps(400).ps_per_byte(), Some(20));
        assert_eq!(BitRate::gbps(800).ps_per_byte(), Some(10));
        assert_eq!(BitRate::gbps(1600).ps_per_byte(), Some(5));
        assert_eq!(BitRate::gbps(400).serialize(4096), Time(81_920));
    }

    #[test]
    fn serialization_rounds_up() {
        // 1 byte at 3 bit/s = 8/3 s -> rounded up to the next picosecond.
        assert_eq!(BitRate(3).serialize(1), Time(2_666_666_666_667));
    }

    #[test]
    fn parsing() {
        assert_eq!(parse_bytes("2MB").unwrap(), 2_000_000);
        assert_eq!(parse_bytes("4MB").unwrap(), 4_000_000);
        assert_eq!(parse_bytes("4MiB").unwrap(), 4_194_304);
        assert_eq!(parse_bytes("4M").unwrap(), 4_194_304);
        assert_eq!(parse_bytes("64KiB").unwrap(), 65_536);
        assert_eq!(parse_bytes("64K").unwrap(), 65_536);
        assert_eq!(parse_bytes("1TiB").unwrap(), 1 << 40);
        assert_eq!(parse_bytes("1.5KB").unwrap(), 1_500);
        assert!(parse_bytes("12parsecs").is_err());
        assert_eq!(parse_time("1000ns").unwrap(), Time::from_us(1));
        assert_eq!(parse_time("1.5ms").unwrap(), Time(1_500_000_000));
        assert!(parse_time("10").is_err());
        assert_eq!(parse_rate("100Gbps").unwrap(), BitRate::gbps(100));
        assert_eq!(parse_rate("400G").unwrap(), BitRate::gbps(400));
    }
}
