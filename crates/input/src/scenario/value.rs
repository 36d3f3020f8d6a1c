//! Scenario values written with units (`"2MB"`, `"10us"`) or as plain numbers, checked with the
//! file, line and key on error.

use serde::Deserialize;

use fabricsim_core::error::{InputError, Source};
use fabricsim_core::units::{Time, bounded_bytes, parse_bytes, parse_time};

/// A size: `4096` or `"2MB"`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum SizeValue {
    Int(u64),
    Text(String),
}

impl SizeValue {
    pub fn bytes(&self, src: &Source, key: &str) -> Result<u64, InputError> {
        match self {
            SizeValue::Int(b) => bounded_bytes(*b).map_err(|p| {
                InputError::at_key(src, key, b, p, "a size of at most 2^50 B (1 PiB)")
            }),
            SizeValue::Text(s) => parse_bytes(s).map_err(|p| {
                InputError::at_key(
                    src,
                    key,
                    format!("\"{s}\""),
                    p,
                    "a size such as 4096, 64KB, 2MB",
                )
            }),
        }
    }
}

impl SizeValue {
    /// As `bytes`, and above 0 (a buffer).
    pub fn buffer_bytes(&self, src: &Source, key: &str) -> Result<u64, InputError> {
        match self.bytes(src, key)? {
            0 => Err(InputError::at_key(
                src,
                key,
                0,
                "a buffer of 0 bytes holds no packet",
                "a size above 0, such as 64KB",
            )),
            b => Ok(b),
        }
    }
}

/// A duration with its unit: `"10us"`.
pub fn time(src: &Source, key: &str, s: &str) -> Result<Time, InputError> {
    parse_time(s).map_err(|p| {
        InputError::at_key(
            src,
            key,
            format!("\"{s}\""),
            p,
            "a duration such as 500ns, 10us, 1.5ms",
        )
    })
}

/// Checks `lo <= v <= hi` for a number.
pub fn in_range<T: PartialOrd + std::fmt::Display>(
    src: &Source,
    key: &str,
    v: T,
    lo: T,
    hi: T,
    allowed: &str,
) -> Result<T, InputError> {
    if v < lo || v > hi {
        return Err(InputError::at_key(src, key, &v, "out of range", allowed));
    }
    Ok(v)
}
