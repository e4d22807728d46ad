//! Which algorithm runs an operation: by the operation, its size and the number of ranks, as
//! measured on the emulator (`docs/hccl-benchmarks.md`), unless the communicator's `HCCL_ALGO`
//! (or its configuration's `hcclAlgo`) names one.

use crate::dtype::DType;
use crate::error::*;
use crate::ops::Op;
use hccl_sys::*;

/// An algorithm the emulator runs an operation with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Algorithm {
    /// One rank: the output from its own input.
    Local = 1,
    /// One-shot mesh through the server's shared regions.
    OneShot,
    /// Ring reduce-scatter and all-gather, chunked and pipelined.
    Ring,
    /// Recursive halving (reduce-scatter) and doubling (all-gather).
    HalvingDoubling,
    /// A pipelined chain from the root (broadcast).
    Chain,
    /// Every rank streams to each peer what it needs.
    Direct,
    /// Sends and receives.
    Transfer,
}

impl Algorithm {
    /// The algorithm's name, as the bandwidth report prints it.
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Local => "local copy",
            Algorithm::OneShot => "one-shot mesh",
            Algorithm::Ring => "ring",
            Algorithm::HalvingDoubling => "halving-doubling",
            Algorithm::Chain => "pipelined chain",
            Algorithm::Direct => "pairwise direct",
            Algorithm::Transfer => "point-to-point",
        }
    }
}

/// What `HCCL_ALGO` asks for one level (inside a server, or between servers).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum Level {
    /// The emulator's choice.
    #[default]
    Auto,
    Ring,
    HalvingDoubling,
    /// Full mesh: the one-shot exchange where it fits.
    Mesh,
}

/// The preferences of one operation kind: level 0 (inside a server), level 1 (between
/// servers).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Levels {
    pub level0: Level,
    pub level1: Level,
}

/// A communicator's `HCCL_ALGO`: a default and per-operation overrides.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Pref {
    all: Levels,
    ops: Vec<(&'static str, Levels)>,
}

const OP_NAMES: [&str; 6] = [
    "allreduce",
    "allgather",
    "reducescatter",
    "broadcast",
    "reduce",
    "alltoall",
];

fn level(v: &str, text: &str) -> R<Level> {
    Ok(match v.trim() {
        "NA" | "" | "fullmesh" | "pairwise" => {
            if v.trim() == "fullmesh" {
                Level::Mesh
            } else {
                Level::Auto
            }
        }
        "ring" | "NHR" | "NHR_V1" | "pipeline" => Level::Ring,
        "H-D_R" | "NB" | "AHC" | "AHC_BROKE" => Level::HalvingDoubling,
        other => {
            return fail(
                HCCL_E_PARA,
                format!(
                    "HCCL_ALGO {text:?}: {other:?} is not an algorithm (ring, H-D_R, NHR, NB, \
                     pipeline, fullmesh, pairwise, AHC or NA)"
                ),
            );
        }
    })
}

fn levels(spec: &str, text: &str) -> R<Levels> {
    let mut l = Levels::default();
    for part in spec.split(';').filter(|p| !p.trim().is_empty()) {
        let Some((k, v)) = part.split_once(':') else {
            return fail(
                HCCL_E_PARA,
                format!("HCCL_ALGO {text:?}: {part:?} is not level<n>:<algorithm>"),
            );
        };
        match k.trim() {
            "level0" => l.level0 = level(v, text)?,
            "level1" => l.level1 = level(v, text)?,
            "level2" | "level3" => {}
            other => {
                return fail(
                    HCCL_E_PARA,
                    format!("HCCL_ALGO {text:?}: {other:?} is not level0 to level3"),
                );
            }
        }
    }
    Ok(l)
}

impl Pref {
    /// Parses `HCCL_ALGO`'s value: `level0:<algo>;level1:<algo>` for every operation, or
    /// `<op>=level0:..;level1:../<op>=...` per operation (`allreduce`, `allgather`,
    /// `reducescatter`, `broadcast`, `reduce`, `alltoall`). The emulator has one level per
    /// communicator: level 0 when every rank is on one server, level 1 otherwise.
    pub fn parse(text: &str) -> R<Pref> {
        let mut p = Pref::default();
        if !text.contains('=') {
            p.all = levels(text, text)?;
            return Ok(p);
        }
        for item in text.split('/').filter(|i| !i.trim().is_empty()) {
            let Some((op, spec)) = item.split_once('=') else {
                return fail(
                    HCCL_E_PARA,
                    format!("HCCL_ALGO {text:?}: {item:?} is not <op>=<levels>"),
                );
            };
            let op = op.trim();
            let Some(name) = OP_NAMES.iter().find(|n| **n == op) else {
                return fail(
                    HCCL_E_PARA,
                    format!("HCCL_ALGO {text:?}: {op:?} is not one of {OP_NAMES:?}"),
                );
            };
            p.ops.push((name, levels(spec, text)?));
        }
        Ok(p)
    }

    fn for_op(&self, op: &Op) -> Levels {
        let name = match op {
            Op::AllReduce { .. } => "allreduce",
            Op::AllGather { .. } | Op::AllGatherV { .. } => "allgather",
            Op::ReduceScatter { .. } | Op::ReduceScatterV { .. } => "reducescatter",
            Op::Broadcast { .. } => "broadcast",
            Op::Reduce { .. } => "reduce",
            Op::AlltoAll { .. } | Op::AlltoAllV { .. } | Op::AlltoAllVC { .. } => "alltoall",
            _ => return self.all,
        };
        self.ops
            .iter()
            .find(|(n, _)| *n == name)
            .map_or(self.all, |(_, l)| *l)
    }
}

/// The largest contribution the one-shot exchange takes for all-reduce, reduce-scatter and
/// all-gather without being asked: beyond it the ring or halving-doubling is faster.
const ONESHOT_BYTES: usize = 32 << 10;
/// Up to this size of one rank's data, halving-doubling runs on a power-of-two number of
/// ranks; beyond it the ring (fewer, longer pipelines) is faster.
const HD_BYTES: usize = 2 << 20;

/// The algorithm of `op` on `n` ranks (`single_server`: all on one server), with one-shot
/// buffers of `oneshot_max` bytes.
pub(crate) fn select(
    op: &Op,
    n: u32,
    single_server: bool,
    oneshot_max: usize,
    pref: &Pref,
) -> Algorithm {
    if matches!(op, Op::Batch(_)) {
        return Algorithm::Transfer;
    }
    if n == 1 {
        return Algorithm::Local;
    }
    let levels = pref.for_op(op);
    let wish = if single_server {
        levels.level0
    } else {
        levels.level1
    };
    let part = op.largest_part(n as usize);
    let fits = single_server && part.is_some_and(|p| p <= oneshot_max);
    let pow2 = n.is_power_of_two();
    let ring_family = matches!(
        op,
        Op::AllReduce { .. } | Op::ReduceScatter { .. } | Op::AllGather { .. }
    );
    if ring_family {
        let bytes = part.unwrap_or(usize::MAX);
        // The data of one rank: all-gather's is its part, the others' their whole buffer.
        let data = match op {
            Op::AllGather { .. } => bytes * n as usize,
            _ => bytes,
        };
        return match wish {
            Level::Ring => Algorithm::Ring,
            Level::HalvingDoubling if pow2 => Algorithm::HalvingDoubling,
            Level::HalvingDoubling => Algorithm::Ring,
            Level::Mesh if fits => Algorithm::OneShot,
            _ if fits && bytes <= ONESHOT_BYTES => Algorithm::OneShot,
            _ if pow2 && data <= HD_BYTES => Algorithm::HalvingDoubling,
            _ => Algorithm::Ring,
        };
    }
    if fits && wish != Level::Ring && wish != Level::HalvingDoubling {
        return Algorithm::OneShot;
    }
    match op {
        Op::ReduceScatterV { .. } | Op::AllGatherV { .. } | Op::Reduce { .. } => Algorithm::Ring,
        Op::Broadcast { .. } => Algorithm::Chain,
        _ => Algorithm::Direct,
    }
}

/// The collectives the bandwidth report names algorithms for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Collective {
    /// `HcclAllReduce`
    AllReduce,
    /// `HcclAllGather`
    AllGather,
    /// `HcclReduceScatter`
    ReduceScatter,
}

/// The algorithm that runs `c` with a count argument of `count` elements of `dtype` on `ranks`
/// ranks of one server, when `HCCL_ALGO` names none.
pub fn algorithm(c: Collective, count: u64, dtype: DType, ranks: u32) -> Algorithm {
    use crate::devmem::Buf;
    let (send, recv) = (Buf::none(), Buf::none());
    let op = match c {
        Collective::AllReduce => Op::AllReduce {
            send,
            recv,
            count,
            dt: dtype,
            op: crate::dtype::RedOp::Sum,
        },
        Collective::AllGather => Op::AllGather {
            send,
            recv,
            count,
            dt: dtype,
        },
        Collective::ReduceScatter => Op::ReduceScatter {
            send,
            recv,
            count,
            dt: dtype,
            op: crate::dtype::RedOp::Sum,
        },
    };
    let oneshot = crate::transport::region::Layout::new(ranks as usize, None).oneshot;
    select(&op, ranks, true, oneshot, &Pref::default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hccl_algo_is_parsed_and_checked() {
        let p = Pref::parse("level0:ring;level1:H-D_R").unwrap();
        assert_eq!(p.all.level0, Level::Ring);
        assert_eq!(p.all.level1, Level::HalvingDoubling);
        let p = Pref::parse("allreduce=level0:NA;level1:ring/allgather=level0:fullmesh").unwrap();
        assert_eq!(p.ops.len(), 2);
        assert_eq!(p.ops[1].1.level0, Level::Mesh);
        for bad in [
            "level0=ring",
            "level9:ring",
            "level0:fast",
            "gather=level0:ring",
        ] {
            assert_eq!(Pref::parse(bad).unwrap_err().code, HCCL_E_PARA, "{bad}");
        }
    }

    #[test]
    fn sizes_pick_the_algorithms() {
        let f32 = DType::F32;
        assert_eq!(
            algorithm(Collective::AllReduce, 1, f32, 2),
            Algorithm::OneShot
        );
        assert_eq!(
            algorithm(Collective::AllReduce, 1 << 24, f32, 8),
            Algorithm::Ring
        );
        assert_eq!(
            algorithm(Collective::AllReduce, 1 << 16, f32, 4),
            Algorithm::HalvingDoubling
        );
        assert_eq!(
            algorithm(Collective::AllReduce, 1 << 16, f32, 3),
            Algorithm::Ring
        );
        assert_eq!(
            algorithm(Collective::AllGather, 1, f32, 1),
            Algorithm::Local
        );
    }
}
