//! Keys and values as db_bench makes them, so that the same options put the same bytes (sizes,
//! order, compressibility) into the store.
//!
//! A key is the key number big-endian in `min(key_size, 8)` bytes (its low bytes when the key
//! is shorter), the rest filled with ASCII '0'. Values are windows that slide along one buffer
//! of at least 1 MiB made of 100-byte pieces, each `compression_ratio × 100` random printable
//! characters repeated to 100 bytes, so a value compresses to about that ratio. Where fsarena
//! differs: its random characters come from fastrand (db_bench's from its own generator seeded
//! 301), so the bytes differ while sizes and ratio agree.

/// Writes key number `n` into `key` (its length is the key size).
pub fn key_from_int(n: u64, key: &mut [u8]) {
    let width = key.len().min(8);
    let be = n.to_be_bytes();
    key[..width].copy_from_slice(&be[8 - width..]);
    key[width..].fill(b'0');
}

/// db_bench's value source: a compressible buffer and a position sliding along it.
#[derive(Debug, Clone)]
pub struct ValueGen {
    data: Vec<u8>,
    pos: usize,
}

impl ValueGen {
    /// A buffer of at least 1 MiB (and at least `value_size`), compressible to `ratio`.
    pub fn new(value_size: usize, ratio: f64, seed: u64) -> Self {
        let mut rng = fastrand::Rng::with_seed(seed);
        let want = value_size.max(1 << 20);
        let mut data = Vec::with_capacity(want + 100);
        // Each 100-byte piece: `raw` random printable bytes, repeated until the piece is full.
        let raw = ((ratio * 100.0) as usize).clamp(1, 100);
        while data.len() < want {
            let fragment: Vec<u8> = (0..raw).map(|_| b' ' + rng.u8(0..95)).collect();
            let start = data.len();
            while data.len() < start + 100 {
                let take = (start + 100 - data.len()).min(raw);
                data.extend_from_slice(&fragment[..take]);
            }
        }
        Self { data, pos: 0 }
    }

    /// The next value of `len` bytes: the window after the last one, from the start again
    /// when it would run past the end.
    pub fn next(&mut self, len: usize) -> &[u8] {
        if self.pos + len > self.data.len() {
            self.pos = 0;
        }
        self.pos += len;
        &self.data[self.pos - len..self.pos]
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_big_endian_numbers_padded_with_ascii_zeros() {
        let mut k = [0u8; 16];
        key_from_int(0x0102, &mut k);
        assert_eq!(&k[..8], &[0, 0, 0, 0, 0, 0, 1, 2]);
        assert_eq!(&k[8..], b"00000000");
        let mut short = [0u8; 4];
        key_from_int(0x0102_0304_0506, &mut short);
        assert_eq!(short, [3, 4, 5, 6], "a short key keeps the low bytes");
        // Big-endian: key order is number order, so fillseq writes in key order.
        let (mut a, mut b) = ([0u8; 16], [0u8; 16]);
        key_from_int(255, &mut a);
        key_from_int(256, &mut b);
        assert!(a < b);
    }

    #[test]
    fn values_slide_along_a_compressible_buffer() {
        let mut g = ValueGen::new(100, 0.5, 7);
        assert!(g.data.len() >= 1 << 20);
        let first = g.next(100).to_vec();
        // Half of each 100-byte piece is random, the other half repeats it.
        assert_eq!(first[..50], first[50..]);
        assert!(first.iter().all(|c| (b' '..=b'~').contains(c)));
        let second = g.next(100).to_vec();
        assert_ne!(first, second, "the window moves");
        let mut big = ValueGen::new(4 << 20, 0.5, 7);
        assert_eq!(big.next(4 << 20).len(), 4 << 20);
        assert_eq!(big.next(4 << 20).len(), 4 << 20, "wraps to the start");
        let distinct: std::collections::BTreeSet<u8> = ValueGen::new(100, 1.0, 1).next(100).iter().copied().collect();
        assert!(distinct.len() > 30, "ratio 1 is random throughout");
    }
}
