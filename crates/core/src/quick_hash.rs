//! A fast hash for what no adversary chooses: the screen's fingerprint, asked after every
//! message over every card (SipHash, std's default, was a tenth of the dashboard's time at
//! 1000 panes). The multiply-rotate step of rustc's FxHash, a word at a time.

use std::hash::Hasher;

/// Hashes 8 bytes at a step; not for keys an outsider picks (no defence against
/// collisions made on purpose).
#[derive(Debug, Default, Clone, Copy)]
pub struct QuickHasher(u64);

const K: u64 = 0x517c_c1b7_2722_0a95;

impl QuickHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(K);
    }
}

impl Hasher for QuickHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes(c.try_into().unwrap_or([0; 8])));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut last = [0u8; 8];
            last[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(last));
        }
    }

    #[inline]
    fn write_u8(&mut self, n: u8) {
        self.add(u64::from(n));
    }

    #[inline]
    fn write_u32(&mut self, n: u32) {
        self.add(u64::from(n));
    }

    #[inline]
    fn write_u64(&mut self, n: u64) {
        self.add(n);
    }

    #[inline]
    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::Hash;

    fn of<T: Hash>(v: T) -> u64 {
        let mut h = QuickHasher::default();
        v.hash(&mut h);
        h.finish()
    }

    #[test]
    fn equal_values_agree_and_near_ones_differ() {
        assert_eq!(of(("claude", 3u32)), of(("claude", 3u32)));
        assert_ne!(of(("claude", 3u32)), of(("claude", 4u32)));
        assert_ne!(of("working 3s"), of("working 4s"));
        // A string's end is marked (std writes 0xff after it): moved bytes differ.
        assert_ne!(of(("ab", "c")), of(("a", "bc")));
        // The tail beyond the last whole word counts.
        assert_ne!(of("123456789"), of("123456780"));
    }
}
