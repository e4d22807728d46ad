//! The runtime's built-in device tasks: element-wise reduction into device memory
//! (`aclrtReduceAsync`) and random number generation (`aclrtRandomNumAsync`, Philox4x32-10,
//! seeded and reproducible).

pub(crate) mod work;

use ascendcl_sys::*;
use half::{bf16, f16};

/// The element size of a reduction or random data type.
pub(crate) fn element_size(t: aclDataType) -> Option<usize> {
    Some(match t {
        ACL_INT8 | ACL_UINT8 => 1,
        ACL_FLOAT16 | ACL_BF16 | ACL_INT16 | ACL_UINT16 => 2,
        ACL_FLOAT | ACL_INT32 | ACL_UINT32 => 4,
        ACL_INT64 | ACL_UINT64 => 8,
        _ => return None,
    })
}

fn op<T: PartialOrd + Copy>(kind: u32, a: T, b: T, sum: impl Fn(T, T) -> T, one: T, zero: T) -> T {
    match kind {
        ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM => sum(a, b),
        ACL_RT_MEMCPY_SDMA_AUTOMATIC_MAX => {
            if b > a {
                b
            } else {
                a
            }
        }
        ACL_RT_MEMCPY_SDMA_AUTOMATIC_MIN => {
            if b < a {
                b
            } else {
                a
            }
        }
        _ => {
            if a == b {
                one
            } else {
                zero
            }
        }
    }
}

macro_rules! reduce_as {
    ($dst:expr, $src:expr, $kind:expr, $t:ty, $sum:expr, $one:expr, $zero:expr) => {{
        const N: usize = std::mem::size_of::<$t>();
        for (d, s) in $dst.chunks_exact_mut(N).zip($src.chunks_exact(N)) {
            let a = <$t>::from_ne_bytes(d.try_into().expect("chunk"));
            let b = <$t>::from_ne_bytes(s.try_into().expect("chunk"));
            d.copy_from_slice(&op($kind, a, b, $sum, $one, $zero).to_ne_bytes());
        }
    }};
}

/// `dst[i] = dst[i] OP src[i]` over elements of type `t`: SUM (integers wrap, floats round as
/// the type does), MAX, MIN, EQUAL (1 where equal, 0 elsewhere).
pub(crate) fn reduce(dst: &mut [u8], src: &[u8], kind: u32, t: aclDataType) {
    match t {
        ACL_INT8 => reduce_as!(dst, src, kind, i8, i8::wrapping_add, 1, 0),
        ACL_UINT8 => reduce_as!(dst, src, kind, u8, u8::wrapping_add, 1, 0),
        ACL_INT16 => reduce_as!(dst, src, kind, i16, i16::wrapping_add, 1, 0),
        ACL_UINT16 => reduce_as!(dst, src, kind, u16, u16::wrapping_add, 1, 0),
        ACL_INT32 => reduce_as!(dst, src, kind, i32, i32::wrapping_add, 1, 0),
        ACL_UINT32 => reduce_as!(dst, src, kind, u32, u32::wrapping_add, 1, 0),
        ACL_FLOAT => reduce_as!(dst, src, kind, f32, |a, b| a + b, 1.0, 0.0),
        ACL_FLOAT16 => reduce_as!(dst, src, kind, f16, |a, b| a + b, f16::ONE, f16::ZERO),
        ACL_BF16 => reduce_as!(dst, src, kind, bf16, |a, b| a + b, bf16::ONE, bf16::ZERO),
        _ => {}
    }
}

/// Philox4x32-10: a counter-based generator (the same key and counter give the same block).
pub(crate) fn philox(counter: [u32; 4], key: [u32; 2]) -> [u32; 4] {
    const M0: u64 = 0xD251_1F53;
    const M1: u64 = 0xCD9E_8D57;
    const W0: u32 = 0x9E37_79B9;
    const W1: u32 = 0xBB67_AE85;
    let (mut c, mut k) = (counter, key);
    for _ in 0..10 {
        let p0 = M0 * u64::from(c[0]);
        let p1 = M1 * u64::from(c[2]);
        c = [
            (p1 >> 32) as u32 ^ c[1] ^ k[0],
            p1 as u32,
            (p0 >> 32) as u32 ^ c[3] ^ k[1],
            p0 as u32,
        ];
        k = [k[0].wrapping_add(W0), k[1].wrapping_add(W1)];
    }
    c
}

/// A stream of 32-bit words from Philox at a 128-bit counter.
pub(crate) struct Words {
    key: [u32; 2],
    counter: u128,
    buf: [u32; 4],
    used: usize,
    /// Blocks drawn so far.
    pub blocks: u128,
}

impl Words {
    pub(crate) fn new(seed: u64, counter: u128) -> Words {
        Words {
            key: [seed as u32, (seed >> 32) as u32],
            counter,
            buf: [0; 4],
            used: 4,
            blocks: 0,
        }
    }

    pub(crate) fn next_u32(&mut self) -> u32 {
        if self.used == 4 {
            let c = self.counter.wrapping_add(self.blocks);
            self.buf = philox(
                [
                    c as u32,
                    (c >> 32) as u32,
                    (c >> 64) as u32,
                    (c >> 96) as u32,
                ],
                self.key,
            );
            self.blocks += 1;
            self.used = 0;
        }
        self.used += 1;
        self.buf[self.used - 1]
    }

    fn next_u64(&mut self) -> u64 {
        u64::from(self.next_u32()) | (u64::from(self.next_u32()) << 32)
    }

    /// A uniform double in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// A standard normal value (Box-Muller).
    fn normal(&mut self) -> f64 {
        let u1 = 1.0 - self.unit();
        let u2 = self.unit();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }
}

/// A floating-point element, read from and written as `t`'s bytes.
pub(crate) fn float_from(t: aclDataType, b: &[u8]) -> f64 {
    match t {
        ACL_FLOAT16 => f64::from(f16::from_ne_bytes([b[0], b[1]])),
        ACL_BF16 => f64::from(bf16::from_ne_bytes([b[0], b[1]])),
        _ => f64::from(f32::from_ne_bytes([b[0], b[1], b[2], b[3]])),
    }
}

fn float_to(t: aclDataType, v: f64, out: &mut [u8]) {
    match t {
        ACL_FLOAT16 => out.copy_from_slice(&f16::from_f64(v).to_ne_bytes()),
        ACL_BF16 => out.copy_from_slice(&bf16::from_f64(v).to_ne_bytes()),
        _ => out.copy_from_slice(&(v as f32).to_ne_bytes()),
    }
}

/// An integer element of `t` (sign-extended), from up to 8 bytes.
pub(crate) fn int_from(t: aclDataType, b: &[u8]) -> i128 {
    let mut w = [0u8; 8];
    w[..b.len().min(8)].copy_from_slice(&b[..b.len().min(8)]);
    let v = u64::from_ne_bytes(w);
    match t {
        ACL_INT32 => i128::from(v as u32 as i32),
        ACL_UINT32 => i128::from(v as u32),
        ACL_INT64 => i128::from(v as i64),
        _ => i128::from(v),
    }
}

/// The distribution of a random task, with its parameters already read.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Distribution {
    /// One bit per element, set (kept) with probability `1 - ratio`.
    Dropout { ratio: f64 },
    /// Uniform floats in [min, max).
    UniformFloat { min: f64, max: f64 },
    /// Uniform integers in [min, max).
    UniformInt { min: i128, max: i128 },
    /// Normal values.
    Normal { mean: f64, stddev: f64 },
    /// Normal values redrawn until within two standard deviations of the mean.
    Truncated { mean: f64, stddev: f64 },
}

/// Fills `out` with `num` values of type `t` from `w`.
pub(crate) fn generate(out: &mut [u8], num: usize, t: aclDataType, d: Distribution, w: &mut Words) {
    if let Distribution::Dropout { ratio } = d {
        out.fill(0);
        for i in 0..num {
            if w.unit() >= ratio {
                out[i / 8] |= 1 << (i % 8);
            }
        }
        return;
    }
    let n = element_size(t).unwrap_or(4);
    for e in out.chunks_exact_mut(n).take(num) {
        match d {
            Distribution::UniformFloat { min, max } => float_to(t, min + w.unit() * (max - min), e),
            Distribution::UniformInt { min, max } => {
                let span = (max - min).max(1) as u128;
                let v = min + (u128::from(w.next_u64()) % span) as i128;
                e.copy_from_slice(&(v as u64).to_ne_bytes()[..n]);
            }
            Distribution::Normal { mean, stddev } => float_to(t, mean + stddev * w.normal(), e),
            Distribution::Truncated { mean, stddev } => {
                let mut z = w.normal();
                while z.abs() > 2.0 {
                    z = w.normal();
                }
                float_to(t, mean + stddev * z, e)
            }
            Distribution::Dropout { .. } => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn philox_matches_the_published_known_answer() {
        // Random123's known-answer vectors for Philox4x32-10.
        assert_eq!(
            philox([0, 0, 0, 0], [0, 0]),
            [0x6627_e8d5, 0xe169_c58d, 0xbc57_ac4c, 0x9b00_dbd8]
        );
        assert_eq!(
            philox([u32::MAX; 4], [u32::MAX; 2]),
            [0x408f_276d, 0x41c8_3b0e, 0xa20b_c7c6, 0x6d54_51fd]
        );
    }

    #[test]
    fn reductions_per_type() {
        let mut d: Vec<u8> = [1i32, -5, 7, 9]
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        let s: Vec<u8> = [1i32, 2, 7, 3]
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        reduce(&mut d, &s, ACL_RT_MEMCPY_SDMA_AUTOMATIC_MAX, ACL_INT32);
        let got: Vec<i32> = d
            .chunks(4)
            .map(|c| i32::from_ne_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(got, [1, 2, 7, 9]);
        let mut h: Vec<u8> = [1.5f32, 2.0]
            .map(f16::from_f32)
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        let s: Vec<u8> = [0.25f32, 2.0]
            .map(f16::from_f32)
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        reduce(&mut h, &s, ACL_RT_MEMCPY_SDMA_AUTOMATIC_SUM, ACL_FLOAT16);
        assert_eq!(float_from(ACL_FLOAT16, &h[0..2]), 1.75);
        assert_eq!(float_from(ACL_FLOAT16, &h[2..4]), 4.0);
    }
}
