//! `hccl_multiprocess`: one rank per process, as MPI launchers and training frameworks run
//! HCCL jobs, in safe Rust.
//!
//! The process started by the user is rank 0. It sets its device, creates the rendezvous
//! (`HcclGetRootInfo`), starts ranks 1..n as copies of itself (`--rank R`) and writes the
//! 4108 root-info bytes to each one's standard input, the part an MPI broadcast or a key-value
//! store plays in a real job. Every rank joins (`HcclCommInitRootInfoConfig`), all-reduces a
//! known f32 pattern (sum) and all-gathers a known i32 pattern, and checks both against the
//! host. Rank 0 then collects the other ranks' exit statuses.
//!
//! Nothing waits forever: a collective whose peers do not come fails after the execution
//! timeout (`--timeout`), rank 0 watches its children with a deadline and kills and reaps them
//! when one fails, and a rank that loses its parent stops at its own deadline.

use hccl::{Collectives, Comm, CommConfig, ReduceOp, RootInfo};
use std::io::{Read, Write};
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// `INFO_LOG` of the reference samples, with the rank.
macro_rules! info {
    ($rank:expr, $($arg:tt)*) => { println!("[INFO]  rank {}: {}", $rank, format_args!($($arg)*)) };
}

const OK: &str = "Run the hccl_multiprocess sample successfully.";
const FAIL: &str = "Run the hccl_multiprocess sample failed.";
const USAGE: &str = "\
usage: hccl_multiprocess [--ranks N] [--count N] [--timeout SECS] [--lose-rank R]
  --ranks N       processes, one rank each (default 4)
  --count N       elements per rank of each collective (default 65537)
  --timeout SECS  how long a collective may wait for its peers (default 60)
  --lose-rank R   rank R exits before joining, to show how a lost rank is reported
  --help          this text
(--rank R is how rank 0 starts the others; they read the root info from standard input.)";

#[derive(Debug, Clone, PartialEq)]
struct Options {
    ranks: u32,
    count: usize,
    timeout: Duration,
    lose: Option<u32>,
    /// Set in the processes rank 0 starts.
    rank: Option<u32>,
}

enum Mode {
    Run(Options),
    Help,
}

fn parse_args(args: &[String]) -> Result<Mode, String> {
    let mut o = Options {
        ranks: 4,
        count: 65_537,
        timeout: Duration::from_secs(60),
        lose: None,
        rank: None,
    };
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        if matches!(flag.as_str(), "--help" | "-h") {
            return Ok(Mode::Help);
        }
        let v = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let v: u64 = v
            .parse()
            .map_err(|_| format!("{flag}: {v:?} is not a number"))?;
        match flag.as_str() {
            "--ranks" => o.ranks = v as u32,
            "--count" => o.count = v as usize,
            "--timeout" => o.timeout = Duration::from_secs(v.max(1)),
            "--lose-rank" => o.lose = Some(v as u32),
            "--rank" => o.rank = Some(v as u32),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    if o.ranks == 0 || o.count == 0 {
        return Err("--ranks and --count must be at least 1".into());
    }
    if o.rank.is_some_and(|r| r >= o.ranks) {
        return Err("--rank must be below --ranks".into());
    }
    Ok(Mode::Run(o))
}

/// Element `i` of rank `r`'s all-reduce input; exact in f32, and so is the sum.
fn reduce_input(r: u32, i: usize) -> f32 {
    (i % 509) as f32 * 0.25 + r as f32
}

/// Element `i` of rank `r`'s all-gather input.
fn gather_input(r: u32, i: usize) -> i32 {
    r as i32 * 1_000_000 + i as i32
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// One rank's part: join, both collectives, the checks.
fn rank_work(o: &Options, rank: u32, info: &RootInfo) -> Result<(), String> {
    let rt = ascendcl::Runtime::new().map_err(err)?;
    let count = rt.device_count().map_err(err)?;
    // One NPU per rank on a server; on the emulator every process is a machine of its own.
    let dev = rt.device((rank % count) as i32).map_err(err)?;
    let config = CommConfig::builder()
        .exec_timeout(o.timeout)
        .build()
        .map_err(err)?;
    let comm = Comm::init_root_info(&dev, o.ranks, info, rank, Some(&config)).map_err(err)?;
    info!(
        rank,
        "joined communicator {:?} as rank {} of {}, device {}",
        comm.name().unwrap_or_default(),
        comm.rank(),
        comm.size(),
        dev.id()
    );
    let n = o.ranks;
    let stream = dev.create_stream().map_err(err)?;
    let reduce_in: Vec<f32> = (0..o.count).map(|i| reduce_input(rank, i)).collect();
    let mut reduced = dev.clone_htod(&reduce_in).map_err(err)?;
    let part: Vec<i32> = (0..o.count).map(|i| gather_input(rank, i)).collect();
    let part = dev.clone_htod(&part).map_err(err)?;
    let mut gathered = dev.alloc_zeros::<i32>(o.count * n as usize).map_err(err)?;
    hccl::scope(&stream, |s| {
        s.all_reduce_in_place(&comm, &mut reduced, ReduceOp::Sum)?;
        s.all_gather(&comm, &part, &mut gathered)
    })
    .map_err(err)?;
    let reduced = reduced.copy_to_vec().map_err(err)?;
    let gathered = gathered.copy_to_vec().map_err(err)?;
    for (i, x) in reduced.iter().enumerate() {
        let want: f32 = (0..n).map(|r| reduce_input(r, i)).sum();
        if *x != want {
            return Err(format!("all-reduce: element {i} is {x}, expected {want}"));
        }
    }
    for (k, x) in gathered.iter().enumerate() {
        let want = gather_input((k / o.count) as u32, k % o.count);
        if *x != want {
            return Err(format!("all-gather: element {k} is {x}, expected {want}"));
        }
    }
    info!(
        rank,
        "all-reduce sum[0..3] = {:?}, all-gather holds every rank's {} elements: checked",
        &reduced[..reduced.len().min(3)],
        o.count
    );
    comm.destroy().map_err(err)?;
    Ok(())
}

/// Runs `f` on a thread and waits for it at most `limit`.
fn bounded<T: Send + 'static>(
    limit: Duration,
    what: &str,
    f: impl FnOnce() -> Result<T, String> + Send + 'static,
) -> Result<T, String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(limit)
        .map_err(|_| format!("{what} did not finish within {} s", limit.as_secs()))?
}

/// The ranks rank 0 started; killed and reaped unless they exited already.
struct Children(Vec<(u32, Child)>);

impl Children {
    /// Waits until every child exits successfully, one fails, or `deadline` passes.
    fn wait(&mut self, deadline: Instant) -> Result<(), String> {
        let mut left: Vec<usize> = (0..self.0.len()).collect();
        while !left.is_empty() {
            let mut still = Vec::new();
            for i in left {
                let (rank, child) = &mut self.0[i];
                match child.try_wait().map_err(err)? {
                    Some(st) if st.success() => {}
                    Some(st) => return Err(format!("rank {rank} exited with {st}")),
                    None => still.push(i),
                }
            }
            left = still;
            if !left.is_empty() {
                if Instant::now() > deadline {
                    let ranks: Vec<u32> = left.iter().map(|i| self.0[*i].0).collect();
                    return Err(format!("ranks {ranks:?} did not finish in time"));
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        Ok(())
    }
}

impl Drop for Children {
    fn drop(&mut self) {
        for (_, c) in &mut self.0 {
            if matches!(c.try_wait(), Ok(None)) {
                let _ = c.kill();
            }
            let _ = c.wait();
        }
    }
}

/// Rank 0: the rendezvous, the other ranks, its own part, their verdicts.
fn root(o: &Options) -> Result<(), String> {
    let rt = ascendcl::Runtime::new().map_err(err)?;
    info!(0, "backend: {}", rt.backend().description);
    let dev = rt.device(0).map_err(err)?;
    let info = RootInfo::new(&dev).map_err(err)?;
    info!(
        0,
        "HcclGetRootInfo: {} bytes, handed to the other {} ranks on their standard input",
        info.as_bytes().len(),
        o.ranks - 1
    );
    let exe = std::env::current_exe().map_err(err)?;
    let mut children = Children(Vec::new());
    for rank in 1..o.ranks {
        let mut c = Command::new(&exe);
        c.args(["--rank", &rank.to_string(), "--ranks", &o.ranks.to_string()])
            .args(["--count", &o.count.to_string()])
            .args(["--timeout", &o.timeout.as_secs().to_string()])
            .stdin(Stdio::piped());
        if let Some(l) = o.lose {
            c.args(["--lose-rank", &l.to_string()]);
        }
        let mut child = c
            .spawn()
            .map_err(|e| format!("starting rank {rank}: {e}"))?;
        let mut stdin = child.stdin.take().ok_or("no standard input")?;
        children.0.push((rank, child));
        // A child that is gone already closed its end: that is reported by its exit status.
        let _ = stdin.write_all(info.as_bytes());
    }
    let limit = 2 * o.timeout + Duration::from_secs(10);
    let deadline = Instant::now() + limit;
    let (o2, info2) = (o.clone(), info.clone());
    let (tx, mine) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(rank_work(&o2, 0, &info2));
    });
    // Watch the children while rank 0 works: a child that fails ends the run at once.
    loop {
        match mine.recv_timeout(Duration::from_millis(20)) {
            Ok(r) => {
                r.map_err(|e| format!("rank 0: {e}"))?;
                break;
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => return Err("rank 0 panicked".into()),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
        for (rank, child) in &mut children.0 {
            if let Some(st) = child.try_wait().map_err(err)?
                && !st.success()
            {
                return Err(format!("rank {rank} exited with {st}"));
            }
        }
        if Instant::now() > deadline {
            return Err(format!(
                "rank 0 did not finish within {} s",
                limit.as_secs()
            ));
        }
    }
    children.wait(deadline)?;
    info!(0, "every rank checked its results");
    drop(children);
    drop(dev);
    Ok(())
}

/// Ranks 1..n: the root info from standard input, then the same part as rank 0.
fn child(o: &Options, rank: u32) -> Result<(), String> {
    if o.lose == Some(rank) {
        return Err("exits before joining (--lose-rank)".into());
    }
    let mut bytes = vec![0u8; RootInfo::LEN];
    std::io::stdin()
        .read_exact(&mut bytes)
        .map_err(|e| format!("reading the root info: {e}"))?;
    let info = RootInfo::from_bytes(&bytes).map_err(err)?;
    let o = o.clone();
    // Bounded, in case rank 0 is gone before the others joined.
    bounded(
        2 * o.timeout + Duration::from_secs(10),
        "the rank",
        move || rank_work(&o, rank, &info),
    )
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let o = match parse_args(&args) {
        Ok(Mode::Run(o)) => o,
        Ok(Mode::Help) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            println!("[ERROR]  {e}");
            println!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    match o.rank {
        Some(rank) => match child(&o, rank) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                println!("[ERROR]  rank {rank}: {e}");
                // Threads still waiting for a peer are abandoned with the process.
                std::process::exit(3);
            }
        },
        None => match root(&o) {
            Ok(()) => {
                println!("[SUCCESS] {OK}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                println!("[ERROR]  {e}");
                println!("[FAILURE] {FAIL}");
                std::process::exit(1);
            }
        },
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
        let Ok(Mode::Run(o)) = parse_args(&args("--ranks 3 --rank 2 --timeout 5")) else {
            panic!("parsed")
        };
        assert_eq!(
            (o.ranks, o.rank, o.timeout),
            (3, Some(2), Duration::from_secs(5))
        );
        assert!(matches!(parse_args(&args("-h")), Ok(Mode::Help)));
        assert!(parse_args(&args("--rank 4")).is_err());
        assert!(parse_args(&args("--count 0")).is_err());
        assert!(parse_args(&args("--bogus 1")).is_err());
    }
}
