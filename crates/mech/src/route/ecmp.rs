//! ECMP: the flow's 5-tuple hashed with CRC-32 (IEEE 802.3 polynomial, as in switch hash
//! engines) once per QP; each switch mixes in its own salt (switches use per-device hash seeds to
//! avoid polarization) and reduces the result to one of its usable ports (RFC 2992's hash-
//! threshold choice: every packet of a flow takes the same path).

/// CRC-32 (IEEE, reflected, polynomial 0xEDB88320), bitwise: computed once per flow.
pub fn crc32(bytes: &[u8]) -> u32 {
    let mut c = 0xFFFF_FFFFu32;
    for &b in bytes {
        c ^= b as u32;
        for _ in 0..8 {
            c = if c & 1 != 0 {
                (c >> 1) ^ 0xEDB8_8320
            } else {
                c >> 1
            };
        }
    }
    !c
}

/// RoCEv2 host address of host `h` (11.X.Y.1, the ns-3 HPCC convention).
pub fn host_ip(h: u32) -> u32 {
    0x0b00_0001 + (h / 256) * 0x10000 + (h % 256) * 0x100
}

/// UDP source port of a QP: RoCEv2 NICs derive it from the QP number for ECMP entropy.
pub fn qp_sport(qp: u32) -> u16 {
    0xC000 | (qp as u16 & 0x3FFF)
}

/// CRC-32 of the 5-tuple (src ip, dst ip, protocol 17, src port, dst port).
pub fn five_tuple_hash(src: u32, dst: u32, sport: u16, dport: u16) -> u32 {
    let mut b = [0u8; 13];
    b[0..4].copy_from_slice(&host_ip(src).to_be_bytes());
    b[4..8].copy_from_slice(&host_ip(dst).to_be_bytes());
    b[8] = 17;
    b[9..11].copy_from_slice(&sport.to_be_bytes());
    b[11..13].copy_from_slice(&dport.to_be_bytes());
    crc32(&b)
}

/// The per-switch salt (a fixed mix of the switch id).
#[inline]
pub fn switch_salt(node: u32) -> u32 {
    (node.wrapping_mul(0x9E37_79B1)).rotate_left(13) ^ 0x5bd1_e995
}

/// Index into `n` candidates for flow hash `hash` at a switch with salt `salt`.
#[inline]
pub fn pick(n: usize, hash: u32, salt: u32) -> usize {
    let h = (hash ^ salt).wrapping_mul(0x8578_2d29);
    // Lemire's multiply-shift range reduction: uniform like `% n`, without a division.
    ((h as u64 * n as u64) >> 32) as usize
}
