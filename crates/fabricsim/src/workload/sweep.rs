//! The message sizes of an nccl-tests sweep (`-b MIN -e MAX -f FACTOR`), rounded as each test
//! rounds its element count (nccl-tests `*GetCollByteCount`), with 4-byte floats.

use super::collective::Op;
use fabricsim_core::error::InputError;

/// Bytes per element (nccl-tests' default type, float).
pub const ELEMENT_BYTES: u64 = 4;

/// One size of the sweep: what nccl-tests prints as `size` and `count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SweepSize {
    pub bytes: u64,
    pub count: u64,
}

/// Sizes min, min*f, min*f^2, ... up to max, each rounded for `op` on `n` ranks.
pub fn sizes(
    op: Op,
    n: u32,
    min_bytes: u64,
    max_bytes: u64,
    step_factor: u64,
) -> Result<Vec<SweepSize>, InputError> {
    if min_bytes == 0 {
        return Err(InputError::flag(
            "--min-bytes",
            min_bytes,
            "the smallest size must be positive",
            "1 byte or more (e.g. 8, 1K, 1M)",
        ));
    }
    if max_bytes < min_bytes {
        return Err(InputError::flag(
            "--max-bytes",
            max_bytes,
            format!("smaller than --min-bytes {min_bytes}"),
            "a size at least --min-bytes",
        ));
    }
    if step_factor < 2 {
        return Err(InputError::flag(
            "--step-factor",
            step_factor,
            "the sweep would not advance",
            "an integer of 2 or more",
        ));
    }
    let mut out = Vec::new();
    let mut s = min_bytes;
    loop {
        out.push(round(op, n, s));
        match s.checked_mul(step_factor) {
            Some(next) if next <= max_bytes => s = next,
            _ => break,
        }
    }
    Ok(out)
}

/// nccl-tests' rounding: the element count is cut to a multiple of the rank count for the
/// ops that split the buffer per rank; `count` is the per-rank count those tests print.
pub fn round(op: Op, n: u32, bytes: u64) -> SweepSize {
    let count = bytes / ELEMENT_BYTES;
    let n = n as u64;
    match op {
        Op::AllGather | Op::ReduceScatter | Op::AllToAll | Op::MoeDispatch | Op::MoeCombine => {
            let per_rank = count / n;
            SweepSize {
                bytes: per_rank * n * ELEMENT_BYTES,
                count: per_rank,
            }
        }
        _ => SweepSize {
            bytes: count * ELEMENT_BYTES,
            count,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sweep_doubles_from_min_to_max() {
        let v = sizes(Op::AllReduce, 8, 1 << 20, 1 << 30, 2).unwrap();
        assert_eq!(v.len(), 11);
        assert_eq!(v[0].bytes, 1 << 20);
        assert_eq!(v[0].count, 1 << 18);
        assert_eq!(v[10].bytes, 1 << 30);
        let ag = sizes(Op::AllGather, 8, 1 << 20, 1 << 20, 2).unwrap();
        assert_eq!(
            ag[0],
            SweepSize {
                bytes: 1 << 20,
                count: 1 << 15
            }
        );
        assert_eq!(round(Op::AllGather, 3, 100).bytes, 96);
        assert!(sizes(Op::AllReduce, 8, 0, 8, 2).is_err());
        assert!(sizes(Op::AllReduce, 8, 16, 8, 2).is_err());
        assert!(sizes(Op::AllReduce, 8, 8, 16, 1).is_err());
    }
}
