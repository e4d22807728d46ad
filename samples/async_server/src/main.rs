//! `async_server`: many concurrent requests on shared streams, each awaiting its own work. A
//! request brings a vector; the "server" copies it to the device, adds a bias there
//! (`aclrtReduceAsync`) and copies the result back. With [`Stream::submit`] a request's task
//! moves its buffers into a submission and `.await`s it: the future is woken by the runtime's
//! host-function callback when the stream is past that request's work, whatever the other
//! requests queued before or after it. The same requests are then served with one blocking
//! scope each ([`Stream::scope`], on tokio's blocking threads): a scope ends with a
//! synchronisation of the stream, which waits for every other request's work queued on it too.
//!
//! ```text
//! async_server [--requests N] [--concurrency C] [--streams S] [--len L]
//! ```
//!
//! Prints both throughputs (requests/s) and their ratio, checks every reply, then
//! `[SUCCESS] ...`, or `[ERROR]` lines and `[FAILURE] ...` with exit status 1.

use ascendcl::{Device, DeviceBuffer, HostBuffer, ReduceKind, Runtime, Stream};
use std::error::Error;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;

const USAGE: &str = "\
usage: async_server [--requests N] [--concurrency C] [--streams S] [--len L]

  --requests N      requests served by each server (default 2000)
  --concurrency C   requests in flight at once (default 64)
  --streams S       streams the requests share (default 2)
  --len L           i32 elements of a request (default 4096)
  --help            this text";

/// The command line.
#[derive(Debug, Clone, Copy)]
struct Options {
    requests: usize,
    concurrency: usize,
    streams: usize,
    len: usize,
}

fn parse(args: &[String]) -> Result<Option<Options>, String> {
    let mut o = Options {
        requests: 2000,
        concurrency: 64,
        streams: 2,
        len: 4096,
    };
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        if flag == "--help" || flag == "-h" {
            return Ok(None);
        }
        let value = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let bad = |e: &dyn std::fmt::Display| format!("{flag} {value}: {e}");
        let n: usize = value.parse().map_err(|e| bad(&e))?;
        if n == 0 {
            return Err(format!("{flag} must be at least 1"));
        }
        match flag.as_str() {
            "--requests" => o.requests = n,
            "--concurrency" => o.concurrency = n,
            "--streams" => o.streams = n,
            "--len" => o.len = n,
            other => return Err(format!("unknown option {other}")),
        }
    }
    Ok(Some(o))
}

/// What one request needs: its input and reply in pinned host memory (a copy into a pageable
/// `Vec` completes before its enqueue returns, which would block the task), a device buffer,
/// and the bias it adds.
struct Request {
    input: HostBuffer<i32>,
    work: DeviceBuffer<i32>,
    reply: HostBuffer<i32>,
    bias: Arc<DeviceBuffer<i32>>,
}

impl Request {
    fn new(
        device: &Device,
        id: usize,
        len: usize,
        bias: &Arc<DeviceBuffer<i32>>,
    ) -> ascendcl::Result<Self> {
        let mut input = HostBuffer::<i32>::zeroed(device, len)?;
        for (i, v) in input.iter_mut().enumerate() {
            *v = (id * 7 + i) as i32;
        }
        Ok(Request {
            input,
            work: device.alloc_zeros(len)?,
            reply: HostBuffer::zeroed(device, len)?,
            bias: Arc::clone(bias),
        })
    }

    /// Whether the reply is the input plus the bias.
    fn answered(&self, bias: i32) -> bool {
        self.input
            .iter()
            .zip(self.reply.iter())
            .all(|(&x, &y)| y == x + bias)
    }
}

/// The request's work, enqueued through a scope: upload, add the bias, download.
fn serve<'scope>(s: &ascendcl::Scope<'scope, '_>, r: &'scope mut Request) -> ascendcl::Result<()> {
    let Request {
        input,
        work,
        reply,
        bias,
    } = r;
    let work = s.claim(work);
    s.copy(work, &*input)?;
    s.reduce(work, &**bias, ReduceKind::Sum)?;
    s.copy(reply, work)
}

/// Serves `o.requests` requests with at most `o.concurrency` in flight, request `i` on stream
/// `i % streams`, each with `handle`; the time it took and whether every reply was right.
async fn run_server<F, Fut>(
    o: &Options,
    device: &Device,
    streams: &[Stream],
    bias: &Arc<DeviceBuffer<i32>>,
    handle: F,
) -> Result<(Duration, bool), Box<dyn Error>>
where
    F: Fn(Stream, Request) -> Fut,
    Fut: std::future::Future<Output = ascendcl::Result<Request>> + Send + 'static,
{
    let requests: Vec<Request> = (0..o.requests)
        .map(|i| Request::new(device, i, o.len, bias))
        .collect::<ascendcl::Result<_>>()?;
    let limit = Arc::new(Semaphore::new(o.concurrency));
    let start = Instant::now();
    let mut tasks = Vec::with_capacity(o.requests);
    for (i, r) in requests.into_iter().enumerate() {
        let permit = Arc::clone(&limit).acquire_owned().await?;
        let reply = handle(streams[i % streams.len()].clone(), r);
        tasks.push(tokio::spawn(async move {
            let r = reply.await;
            drop(permit);
            r
        }));
    }
    let mut right = true;
    for t in tasks {
        right &= t.await??.answered(BIAS);
    }
    Ok((start.elapsed(), right))
}

const BIAS: i32 = 1000;

async fn run(o: Options) -> Result<Option<String>, Box<dyn Error>> {
    let rt = Runtime::new()?;
    println!("[INFO]  Backend: {}", rt.backend().description);
    let device = rt.device(0)?;
    let streams: Vec<Stream> = (0..o.streams)
        .map(|_| device.create_stream())
        .collect::<ascendcl::Result<_>>()?;
    let bias = Arc::new(device.clone_htod(&vec![BIAS; o.len])?);
    println!(
        "[INFO]  {} requests of {} i32, {} in flight, on {} shared stream(s)",
        o.requests, o.len, o.concurrency, o.streams
    );
    // Each request awaits its own submission.
    let (t_async, ok_async) = run_server(&o, &device, &streams, &bias, |stream, r| async move {
        let r = stream.submit(r, |s, r| serve(s, r)).await?;
        Ok(r)
    })
    .await?;
    // The same requests, one blocking scope each (on tokio's blocking threads).
    let (t_blocking, ok_blocking) =
        run_server(&o, &device, &streams, &bias, |stream, mut r| async move {
            tokio::task::spawn_blocking(move || {
                stream.scope(|s| serve(s, &mut r))?;
                Ok(r)
            })
            .await
            .map_err(|e| ascendcl::Error::Argument {
                api: "spawn_blocking",
                reason: e.to_string().into(),
            })?
        })
        .await?;
    let rate = |t: Duration| o.requests as f64 / t.as_secs_f64();
    println!(
        "[INFO]  async (submit + await): {:.0} requests/s ({:.1} ms)",
        rate(t_async),
        t_async.as_secs_f64() * 1e3
    );
    println!(
        "[INFO]  blocking (one scope each): {:.0} requests/s ({:.1} ms)",
        rate(t_blocking),
        t_blocking.as_secs_f64() * 1e3
    );
    println!(
        "[INFO]  throughput ratio async/blocking: {:.2}",
        rate(t_async) / rate(t_blocking)
    );
    if !(ok_async && ok_blocking) {
        println!("[FAILURE] a reply was not the request plus the bias");
        return Ok(None);
    }
    Ok(Some(format!(
        "every one of the {} requests of each server got its reply",
        o.requests
    )))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let o = match parse(&args) {
        Ok(Some(o)) => o,
        Ok(None) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            println!("[ERROR] {e}\n{USAGE}");
            return ExitCode::FAILURE;
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            println!("[ERROR] cannot start the tokio runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let outcome = runtime.block_on(run(o));
    // Every handle is gone: a release that failed is a failure too.
    let dropped = ascendcl::take_drop_errors();
    for e in &dropped {
        println!("[ERROR] a release failed: {e}");
    }
    match outcome {
        Ok(Some(done)) if dropped.is_empty() => {
            println!("[SUCCESS] {done}");
            ExitCode::SUCCESS
        }
        Ok(_) => {
            println!("[FAILURE] async_server did not serve every request cleanly");
            ExitCode::FAILURE
        }
        Err(e) => {
            println!("[ERROR] {e}");
            let mut cause = e.source();
            while let Some(c) = cause {
                println!("[ERROR]   caused by: {c}");
                cause = c.source();
            }
            println!("[FAILURE] async_server did not run");
            ExitCode::FAILURE
        }
    }
}
