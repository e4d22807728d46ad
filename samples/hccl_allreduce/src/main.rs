//! `hccl_allreduce`: HCCL's `02_collectives/01_allreduce` example in safe Rust: an all-reduce
//! across the devices of one process.
//!
//! The main thread counts the devices (`aclrtGetDeviceCount`: "Found N NPU device(s)
//! available") and creates the rendezvous (`HcclGetRootInfo`); one thread per rank sets its
//! device (rank `r` on device `r`) and joins (`HcclCommInitRootInfoConfig`, with an execution
//! timeout), creates a stream, uploads its input (element `i` is `i` on every rank, 8 elements
//! as in the reference unless `--count` says otherwise), all-reduces it (sum) into a second
//! buffer, and copies the result back; every element of every rank is checked against the
//! host's sum, and each rank's first 8 are printed in rank order as the reference prints them
//! (`rankId: 0, output: [ 0 4 8 … ]` for 4 ranks). A collective whose peers do not come
//! fails after the execution timeout, and the main thread waits for the ranks with a deadline
//! too, so a rank that fails or never arrives is reported, never waited for forever. On the
//! emulator the machine is given one device per rank.

use hccl::{Collectives, Comm, CommConfig, ReduceOp, RootInfo};
use std::process::ExitCode;
use std::sync::mpsc;
use std::time::{Duration, Instant};

const OK: &str = "Run the hccl_allreduce sample successfully.";
/// How many elements of each rank's result are printed (the reference's whole input).
const SHOWN: usize = 8;
const FAIL: &str = "Run the hccl_allreduce sample failed.";
const USAGE: &str = "\
usage: hccl_allreduce [--ranks N] [--count N] [--timeout SECS] [--lose-rank R]
  --ranks N       ranks, one device and one thread each (default 4)
  --count N       f32 elements per rank (default 8, as in the reference)
  --timeout SECS  how long the ranks may take in all (default 60)
  --lose-rank R   rank R returns before the all-reduce, to show how a lost rank is reported
  --help          this text";

#[derive(Debug, Clone, PartialEq)]
struct Options {
    ranks: u32,
    count: usize,
    timeout: Duration,
    lose: Option<u32>,
}

enum Command {
    Run(Options),
    Help,
}

fn parse_args(args: &[String]) -> Result<Command, String> {
    let mut o = Options {
        ranks: 4,
        count: 8,
        timeout: Duration::from_secs(60),
        lose: None,
    };
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        if matches!(flag.as_str(), "--help" | "-h") {
            return Ok(Command::Help);
        }
        let mut value = || {
            it.next()
                .ok_or_else(|| format!("{flag} needs a value"))
                .cloned()
        };
        let number = |v: String| {
            v.parse::<u64>()
                .map_err(|_| format!("{flag}: {v:?} is not a number"))
        };
        match flag.as_str() {
            "--ranks" => o.ranks = number(value()?)? as u32,
            "--count" => o.count = number(value()?)? as usize,
            "--timeout" => o.timeout = Duration::from_secs(number(value()?)?),
            "--lose-rank" => o.lose = Some(number(value()?)? as u32),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    if o.ranks == 0 || o.count == 0 {
        return Err("--ranks and --count must be at least 1".into());
    }
    Ok(Command::Run(o))
}

/// Element `i` of rank `r`'s input, as in the reference: `i` on every rank. Exact in f32, and
/// so is the sum over the ranks (up to 2^24 / ranks elements).
fn input(_r: u32, i: usize) -> f32 {
    i as f32
}

fn expected(n: u32, i: usize) -> f32 {
    (0..n).map(|r| input(r, i)).sum()
}

/// What one rank does: its part, the all-reduce, the check. Returns its first elements.
fn rank(comm: &Comm, count: usize) -> Result<Vec<f32>, String> {
    let (r, n) = (comm.rank(), comm.size());
    let dev = comm.device();
    let stream = dev.create_stream().map_err(|e| e.to_string())?;
    let host: Vec<f32> = (0..count).map(|i| input(r, i)).collect();
    let send = dev.clone_htod(&host).map_err(|e| e.to_string())?;
    let mut recv = dev.alloc_zeros::<f32>(count).map_err(|e| e.to_string())?;
    hccl::scope(&stream, |s| {
        s.all_reduce(comm, &send, &mut recv, ReduceOp::Sum)
    })
    .map_err(|e| e.to_string())?;
    let out = recv.copy_to_vec().map_err(|e| e.to_string())?;
    if let Some(i) = (0..count).find(|&i| out[i] != expected(n, i)) {
        return Err(format!(
            "recv[{i}] = {}, expected {}",
            out[i],
            expected(n, i)
        ));
    }
    Ok(out[..count.min(SHOWN)].to_vec())
}

fn run(o: &Options) -> Result<(), String> {
    // The emulated machine has 2 devices unless ASCENDCL_EMU_DEVICES says otherwise: give it
    // one per rank. A CANN runtime has the devices it has and ignores this.
    if std::env::var_os(ascendcl_emu::config::ENV_DEVICES).is_none() {
        let mut c = ascendcl_emu::config::config();
        c.devices = c.devices.max(o.ranks);
        ascendcl_emu::config::set_config(c);
    }
    let rt = ascendcl::Runtime::new().map_err(|e| e.to_string())?;
    let available = rt.device_count().map_err(|e| e.to_string())?; // aclrtGetDeviceCount
    println!("Found {available} NPU device(s) available");
    if available < o.ranks {
        return Err(format!(
            "{} ranks need {} devices; there are {available}",
            o.ranks, o.ranks
        ));
    }
    let devices = (0..o.ranks as i32)
        .map(|d| rt.device(d))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.to_string())?;
    let info = RootInfo::new(&devices[0]).map_err(|e| e.to_string())?; // HcclGetRootInfo
    // A collective whose peers do not arrive fails after this, on its stream.
    let config = CommConfig::builder()
        .exec_timeout(o.timeout.max(Duration::from_secs(1)))
        .build()
        .map_err(|e| e.to_string())?;
    let (done, results) = mpsc::channel();
    let (n, count, lose) = (o.ranks, o.count, o.lose);
    for (r, dev) in devices.into_iter().enumerate() {
        let (done, info, config) = (done.clone(), info.clone(), config.clone());
        let r = r as u32;
        // Detached: a rank that never returns must not keep the process waiting.
        std::thread::spawn(move || {
            let outcome = Comm::init_root_info(&dev, n, &info, r, Some(&config))
                .map_err(|e| e.to_string())
                .and_then(|comm| {
                    let head = if lose == Some(r) {
                        Err("left before the all-reduce (--lose-rank)".to_string())
                    } else {
                        rank(&comm, count)
                    }?;
                    comm.destroy().map_err(|e| e.to_string())?;
                    Ok(head)
                });
            let _ = done.send((r, outcome));
        });
    }
    drop(done);
    // The execution timeout bounds every rank; the deadline is a last resort.
    let limit = 2 * o.timeout + Duration::from_secs(10);
    let deadline = Instant::now() + limit;
    let mut pending: Vec<u32> = (0..n).collect();
    let mut failures = Vec::new();
    let mut outputs = Vec::new();
    while !pending.is_empty() {
        let left = deadline.saturating_duration_since(Instant::now());
        match results.recv_timeout(left) {
            Ok((r, outcome)) => {
                pending.retain(|p| *p != r);
                match outcome {
                    Ok(head) => outputs.push((r, head)),
                    Err(e) => {
                        println!("[ERROR]  rank {r}: {e}");
                        failures.push(r);
                    }
                }
            }
            Err(_) => {
                return Err(format!(
                    "ranks {pending:?} did not finish within {} s",
                    limit.as_secs()
                ));
            }
        }
    }
    // In rank order, as the reference's ranks print (each waits `rank` seconds first).
    outputs.sort_by_key(|(r, _)| *r);
    for (r, head) in &outputs {
        let values: String = head.iter().map(|v| format!(" {v}")).collect();
        println!("rankId: {r}, output: [{values} ]");
    }
    if !failures.is_empty() {
        return Err(format!("ranks {failures:?} failed"));
    }
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let o = match parse_args(&args) {
        Ok(Command::Run(o)) => o,
        Ok(Command::Help) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            println!("[ERROR]  {e}");
            println!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    let outcome = run(&o);
    // The handles are gone: a release that failed fails the sample too.
    if !sample_common::report::releases_ok() {
        if let Err(e) = &outcome {
            println!("[ERROR]  {e}");
        }
        println!("[FAILURE] hccl_allreduce: a release failed");
        return ExitCode::FAILURE;
    }
    match outcome {
        Ok(()) => {
            println!("[SUCCESS] {OK}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            println!("[ERROR]  {e}");
            println!("[FAILURE] {FAIL}");
            // Ranks still waiting for a lost peer are abandoned with the process.
            std::process::exit(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn arguments() {
        let Ok(Command::Run(o)) = parse_args(&args("--ranks 3 --count 9 --lose-rank 1")) else {
            panic!("parsed")
        };
        assert_eq!((o.ranks, o.count, o.lose), (3, 9, Some(1)));
        assert!(matches!(parse_args(&args("--help")), Ok(Command::Help)));
        assert!(parse_args(&args("--ranks 0")).is_err());
        assert!(parse_args(&args("--ranks")).is_err());
        assert!(parse_args(&args("--what")).is_err());
    }

    #[test]
    fn the_pattern_is_exact() {
        assert_eq!(expected(4, 3), 4.0 * 1.5 + 6.0);
    }
}
