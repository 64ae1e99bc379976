//! PostMark 1.5's random numbers: the Mersenne Twister MT19937 as in Matsumoto and
//! Nishimura's integer version of 1999 (`genrand`), seeded by its `sgenrand`, which fills the
//! state from Knuth's linear congruential generator x → 69069·x + 1 (two steps per word, the
//! high 16 bits of each), and PostMark's `RND(x)`: the next number modulo `x`, or 0 when `x`
//! is 0. PostMark replaced libc's `rand()` with this generator in 1.5, so the same seed gives
//! the same files, sizes and choices on every libc; reproducing it exactly is what makes the
//! counts here equal to PostMark's for the same seed.
//!
//! PostMark keeps the state in `unsigned long`, 64 bits on Linux, but every step masks or
//! shifts within the low 32 bits (and the LCG's low 32 bits do not depend on the high ones),
//! so 32-bit arithmetic gives the same numbers.
//!
//! Reference: M. Matsumoto and T. Nishimura, "Mersenne Twister: A 623-dimensionally
//! equidistributed uniform pseudo-random number generator", ACM TOMACS 8(1), 1998.

/// Words of state.
const N: usize = 624;
/// The middle word of the recurrence.
const M: usize = 397;
/// The twist matrix's last row.
const MATRIX_A: u32 = 0x9908_b0df;
/// The bit of a word kept from the first of the pair twisted together.
const UPPER_MASK: u32 = 0x8000_0000;
/// The bits kept from the second.
const LOWER_MASK: u32 = 0x7fff_ffff;

/// PostMark's generator.
#[derive(Clone)]
pub struct PostmarkRng {
    state: Box<[u32; N]>,
    /// The next word of `state` to temper; `N` when the state must be twisted first.
    next: usize,
}

impl std::fmt::Debug for PostmarkRng {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostmarkRng").field("next", &self.next).finish_non_exhaustive()
    }
}

impl PostmarkRng {
    /// Seeded as `sgenrand(seed)`: PostMark calls it with `set seed` (42 by default) at the
    /// start of every `run`.
    pub fn new(seed: u32) -> Self {
        let mut state = Box::new([0u32; N]);
        let mut x = seed;
        for word in state.iter_mut() {
            let high = x & 0xffff_0000;
            x = x.wrapping_mul(69069).wrapping_add(1);
            *word = high | ((x & 0xffff_0000) >> 16);
            x = x.wrapping_mul(69069).wrapping_add(1);
        }
        Self { state, next: N }
    }

    /// The next 32-bit number (`genrand()`).
    pub fn next_u32(&mut self) -> u32 {
        if self.next >= N {
            self.twist();
        }
        let mut y = self.state[self.next];
        self.next += 1;
        // Tempering: improves the equidistribution of the output's leading bits.
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c_5680;
        y ^= (y << 15) & 0xefc6_0000;
        y ^ (y >> 18)
    }

    /// PostMark's `RND(x)`: the next number modulo `x`, without drawing one when `x` is 0 (a
    /// fixed size, one subdirectory): `0 ≤ RND(x) < x`.
    pub fn below(&mut self, x: u32) -> u32 {
        if x == 0 {
            0
        } else {
            self.next_u32() % x
        }
    }

    /// Makes the next `N` words of state from the last `N`.
    fn twist(&mut self) {
        let s = &mut self.state;
        for k in 0..N {
            let y = (s[k] & UPPER_MASK) | (s[(k + 1) % N] & LOWER_MASK);
            let odd = if y & 1 == 1 { MATRIX_A } else { 0 };
            s[k] = s[(k + M) % N] ^ (y >> 1) ^ odd;
        }
        self.next = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn postmarks_default_seed_gives_postmarks_first_bytes() {
        // sgenrand(42): the first numbers, and the first bytes of the data PostMark writes
        // (32 + RND(95) each), which are how Debian's postmark 1.53 starts its first file with
        // seed 42 (seen with strace: the first write to file 1 begins "LeZebJ6S").
        let mut r = PostmarkRng::new(42);
        let got: Vec<u32> = (0..8).map(|_| r.next_u32()).collect();
        assert_eq!(
            got,
            [
                4_179_544_424,
                615_236_124,
                4_165_290_828,
                3_119_652_344,
                1_623_863_471,
                605_280_572,
                1_209_526_912,
                2_753_559_756
            ]
        );
        let bytes: Vec<u8> = got.iter().map(|x| 32 + (x % 95) as u8).collect();
        assert_eq!(bytes, b"LeZebJ6S");
    }

    #[test]
    fn rnd_of_zero_draws_nothing() {
        let (mut a, mut b) = (PostmarkRng::new(42), PostmarkRng::new(42));
        assert_eq!(a.below(0), 0);
        assert_eq!(a.next_u32(), b.next_u32());
        for _ in 0..2000 {
            assert!(a.below(95) < 95);
        }
    }
}
