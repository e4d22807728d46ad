//! The built-in tasks as stream work: `aclrtReduceAsync` (`dst[i] = dst[i] OP src[i]`) and
//! `aclrtRandomNumAsync` (Philox draws at an offset kept in device memory).

use crate::base::error::*;
use crate::engine::trace::Task;
use crate::engine::work::{Cx, Side, Work};
use crate::memory::access;

/// `aclrtReduceAsync`.
#[derive(Debug)]
pub(crate) struct Reduce {
    pub dst: usize,
    pub src: usize,
    pub len: usize,
    pub kind: u32,
    pub dtype: i32,
    pub sides: [Side; 2],
}

impl Work for Reduce {
    fn memory(&self) -> &[Side] {
        &self.sides
    }

    fn run(&self, _: &Cx<'_>) -> R {
        let [ds, ss] = self.sides;
        let mut s = vec![0u8; self.len];
        // SAFETY: both ranges were validated as live device memory when queued; the source is
        // read before the destination is written, so they may overlap.
        unsafe { access::read(self.src, ss, &mut s) };
        // SAFETY: as above; no other reference to the destination exists here.
        let d = unsafe { std::slice::from_raw_parts_mut(access::ptr(self.dst, ds), self.len) };
        super::reduce(d, &s, self.kind, self.dtype);
        Ok(())
    }

    fn describe(&self) -> Task {
        Task::new("reduce", "builtin").num("bytes", self.len as u64)
    }
}

/// A scalar of a random task: inline bytes, or the device address that holds them (with its
/// validated side).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Scalar {
    pub addr: Option<(usize, Side)>,
    pub bytes: [u8; 8],
    pub size: usize,
}

impl Scalar {
    /// The scalar's bytes when the task runs (read from device memory for an address).
    fn read(&self) -> [u8; 8] {
        match self.addr {
            None => self.bytes,
            Some((a, side)) => {
                let mut b = [0u8; 8];
                // SAFETY: the address was validated as `size` bytes of live device memory
                // (size ≤ 8) when the task was queued.
                unsafe { access::read(a, side, &mut b[..self.size]) };
                b
            }
        }
    }
}

/// An `aclrtRandomNumAsync` task.
#[derive(Debug, Clone)]
pub(crate) struct RandomJob {
    pub dtype: i32,
    pub func: u32,
    pub params: [Scalar; 2],
    pub seed: Scalar,
    pub num: Scalar,
    pub result: usize,
    pub result_len: usize,
    pub counter: usize,
    pub sides: [Side; 2],
}

impl Work for RandomJob {
    fn memory(&self) -> &[Side] {
        &self.sides
    }

    fn run(&self, _: &Cx<'_>) -> R {
        use super::Distribution;
        let size = |s: &Scalar| s.size.min(8);
        let uint = |s: &Scalar| {
            let b = s.read();
            let mut w = [0u8; 8];
            w[..size(s)].copy_from_slice(&b[..size(s)]);
            u64::from_le_bytes(w)
        };
        let float = |s: &Scalar| super::float_from(self.dtype, &s.read());
        let int = |s: &Scalar| super::int_from(self.dtype, &s.read()[..size(s)]);
        let cap = if self.func == ascendcl_sys::ACL_RT_RANDOM_NUM_FUNC_TYPE_DROPOUT_BITMASK {
            self.result_len * 8
        } else {
            self.result_len / super::element_size(self.dtype).unwrap_or(4)
        };
        let num = (uint(&self.num) as usize).min(cap);
        let d = match self.func {
            ascendcl_sys::ACL_RT_RANDOM_NUM_FUNC_TYPE_DROPOUT_BITMASK => Distribution::Dropout {
                ratio: float(&self.params[0]),
            },
            ascendcl_sys::ACL_RT_RANDOM_NUM_FUNC_TYPE_UNIFORM_DIS => {
                if matches!(self.dtype, 0 | 1 | 27) {
                    Distribution::UniformFloat {
                        min: float(&self.params[0]),
                        max: float(&self.params[1]),
                    }
                } else {
                    Distribution::UniformInt {
                        min: int(&self.params[0]),
                        max: int(&self.params[1]),
                    }
                }
            }
            ascendcl_sys::ACL_RT_RANDOM_NUM_FUNC_TYPE_NORMAL_DIS => Distribution::Normal {
                mean: float(&self.params[0]),
                stddev: float(&self.params[1]),
            },
            _ => Distribution::Truncated {
                mean: float(&self.params[0]),
                stddev: float(&self.params[1]),
            },
        };
        let [result_side, counter_side] = self.sides;
        // SAFETY: the counter was validated as 16 bytes of live device memory when queued.
        let c = u128::from_ne_bytes(unsafe { access::read_array(self.counter, counter_side) });
        let mut words = super::Words::new(uint(&self.seed), c);
        // SAFETY: the result range was validated as live device memory of result_len bytes.
        let out = unsafe {
            std::slice::from_raw_parts_mut(access::ptr(self.result, result_side), self.result_len)
        };
        super::generate(out, num, self.dtype, d, &mut words);
        // The generator's offset moves on, so the next task draws new numbers.
        let next = c.wrapping_add(words.blocks).to_ne_bytes();
        // SAFETY: as for the read above.
        unsafe { access::write(self.counter, counter_side, &next) };
        Ok(())
    }

    fn describe(&self) -> Task {
        Task::new("random numbers", "builtin").num("bytes", self.result_len as u64)
    }
}
