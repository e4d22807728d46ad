//! The plumbing of the two-process samples: the first
//! process (A) starts the second (B) itself — the same binary with the role argument
//! [`ROLE_B`] — relays B's output to its own, and the two exchange one-line messages over B's
//! stdin and stdout. CANN's samples exchange files in a `file/` directory instead; pipes leave
//! nothing behind.
//!
//! Nothing waits for ever: every message is awaited at most [`PATIENCE`], and B is awaited at
//! most that long to end. B never outlives A: dropping the [`Peer`] kills a B that still runs
//! (A failed half-way), and B gives up when A's end of the pipe closes.
//!
//! [`main`] runs the process the role names and prints the verdict; the memory-sharing samples
//! end their exchange with [`Parent::complete`] and [`Peer::completion`].

use std::error::Error;
use std::fmt::Display;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, ExitCode, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The argument that runs the binary as process B.
pub const ROLE_B: &str = "--process-b";
/// How long either process waits for the other's next message (and A for B to end).
pub const PATIENCE: Duration = Duration::from_secs(30);
/// What starts a message line on B's stdout; every other line is B's own output.
const MARK: &str = "@@ ";

/// Whether this process was started as process B.
pub fn is_process_b() -> bool {
    std::env::args().nth(1).as_deref() == Some(ROLE_B)
}

/// A two-process sample's `main`: runs `process_b` in process B and `process_a` otherwise. An
/// error is printed after `[ERROR]  Process A: ` (or `B: `); process A then ends with the
/// verdict, `[SUCCESS] {ok}` or `[FAILURE] {fail}`. The exit status says which.
pub fn main(
    process_a: impl FnOnce() -> Result<(), Box<dyn Error>>,
    process_b: impl FnOnce() -> Result<(), Box<dyn Error>>,
    ok: &str,
    fail: &str,
) -> ExitCode {
    if is_process_b() {
        return match process_b() {
            Ok(()) if crate::report::releases_ok() => ExitCode::SUCCESS,
            Ok(()) => ExitCode::FAILURE,
            Err(e) => {
                println!("[ERROR]  Process B: {e}");
                ExitCode::FAILURE
            }
        };
    }
    let outcome = process_a();
    if let Err(e) = &outcome {
        println!("[ERROR]  Process A: {e}");
    }
    // Process A's handles are gone: a release that failed fails the sample too.
    match (outcome, crate::report::releases_ok()) {
        (Ok(()), true) => {
            println!("[SUCCESS] {ok}");
            ExitCode::SUCCESS
        }
        _ => {
            println!("[FAILURE] {fail}");
            ExitCode::FAILURE
        }
    }
}

/// Process B, seen from process A.
#[derive(Debug)]
pub struct Peer {
    child: Child,
    input: Option<ChildStdin>,
    messages: Receiver<String>,
    relay: Option<JoinHandle<()>>,
}

impl Peer {
    /// Starts process B: this binary with [`ROLE_B`]. Its output lines are printed as they
    /// come, in order with A's own.
    pub fn spawn() -> Result<Peer, Box<dyn Error>> {
        let exe = std::env::current_exe()?;
        let mut child = Command::new(exe)
            .arg(ROLE_B)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start process B: {e}"))?;
        let input = child.stdin.take();
        let output = child.stdout.take().ok_or("no pipe from process B")?;
        let (tx, messages) = channel();
        let relay = std::thread::spawn(move || {
            for line in BufReader::new(output).lines().map_while(Result::ok) {
                match line.strip_prefix(MARK) {
                    // A reader that is gone (A failed) no longer needs messages.
                    Some(m) => drop(tx.send(m.to_string())),
                    None => println!("{line}"),
                }
            }
        });
        Ok(Peer {
            child,
            input,
            messages,
            relay: Some(relay),
        })
    }

    /// Sends B one message.
    pub fn send(&mut self, message: impl Display) -> Result<(), Box<dyn Error>> {
        let input = self
            .input
            .as_mut()
            .ok_or("the pipe to process B is closed")?;
        writeln!(input, "{message}")
            .and_then(|()| input.flush())
            .map_err(|e| format!("process B is gone ({e})"))?;
        Ok(())
    }

    /// B's next message, waited for at most [`PATIENCE`].
    pub fn recv(&mut self) -> Result<String, Box<dyn Error>> {
        match self.messages.recv_timeout(PATIENCE) {
            Ok(m) => Ok(m),
            Err(RecvTimeoutError::Timeout) => {
                Err(format!("process B sent nothing for {} s", PATIENCE.as_secs()).into())
            }
            Err(RecvTimeoutError::Disconnected) => {
                let status = self.wait()?;
                Err(
                    format!("process B ended ({status}) before sending what process A waits for")
                        .into(),
                )
            }
        }
    }

    /// B's exit status, waited for at most [`PATIENCE`].
    fn wait(&mut self) -> Result<ExitStatus, Box<dyn Error>> {
        let deadline = Instant::now() + PATIENCE;
        loop {
            if let Some(status) = self.child.try_wait()? {
                return Ok(status);
            }
            if Instant::now() >= deadline {
                return Err(
                    format!("process B did not end within {} s", PATIENCE.as_secs()).into(),
                );
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// The end of a memory-sharing exchange ([`Parent::complete`]): B's completion signal,
    /// printed as the reference prints it, and the value B read; then B's end ([`finish`]).
    /// The signal must be 1 and the value `expected`.
    ///
    /// [`finish`]: Peer::finish
    pub fn completion(mut self, expected: i32) -> Result<(), Box<dyn Error>> {
        let flag: i32 = self.recv_parsed("the completion signal")?;
        println!(
            "[INFO]  Process A: receive the completion signal from Process B, completion signal = {flag}"
        );
        let seen: i32 = self.recv_parsed("the value it read")?;
        self.finish()?;
        if flag != 1 || seen != expected {
            return Err(format!(
                "process B signalled {flag} and read {seen}, not 1 and {expected}"
            )
            .into());
        }
        Ok(())
    }

    /// Waits (at most [`PATIENCE`]) for B to end, with all its output printed; B must succeed.
    pub fn finish(mut self) -> Result<(), Box<dyn Error>> {
        drop(self.input.take());
        let status = self.wait()?;
        if let Some(relay) = self.relay.take() {
            let _ = relay.join();
        }
        if !status.success() {
            return Err(format!("process B failed ({status})").into());
        }
        Ok(())
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        // A failed before B ended: B must not be left running.
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Process A, seen from process B.
#[derive(Debug)]
pub struct Parent {
    messages: Receiver<Option<String>>,
}

impl Default for Parent {
    fn default() -> Parent {
        Parent::new()
    }
}

impl Parent {
    /// Starts reading A's messages from stdin.
    pub fn new() -> Parent {
        let (tx, messages) = channel();
        std::thread::spawn(move || {
            for line in std::io::stdin().lock().lines().map_while(Result::ok) {
                if tx.send(Some(line)).is_err() {
                    return;
                }
            }
            // End of input: A is gone or has nothing more to say.
            let _ = tx.send(None);
        });
        Parent { messages }
    }

    /// Sends A one message.
    pub fn send(&self, message: impl Display) {
        println!("{MARK}{message}");
        let _ = std::io::stdout().flush();
    }

    /// B's side of [`Peer::completion`]: the completion signal (1) and the value B read.
    pub fn complete(&self, seen: i32) {
        self.send(1);
        self.send(seen);
    }

    /// A's next message, waited for at most [`PATIENCE`].
    pub fn recv(&self) -> Result<String, Box<dyn Error>> {
        match self.messages.recv_timeout(PATIENCE) {
            Ok(Some(m)) => Ok(m),
            Ok(None) | Err(RecvTimeoutError::Disconnected) => {
                Err("process A closed the pipe before sending what process B waits for".into())
            }
            Err(RecvTimeoutError::Timeout) => {
                Err(format!("process A sent nothing for {} s", PATIENCE.as_secs()).into())
            }
        }
    }

    /// A's next message, parsed.
    pub fn recv_parsed<T: std::str::FromStr>(&self, what: &str) -> Result<T, Box<dyn Error>>
    where
        T::Err: Display,
    {
        let m = self.recv()?;
        m.parse()
            .map_err(|e| format!("process A sent {m:?} as {what}: {e}").into())
    }
}

impl Peer {
    /// B's next message, parsed.
    pub fn recv_parsed<T: std::str::FromStr>(&mut self, what: &str) -> Result<T, Box<dyn Error>>
    where
        T::Err: Display,
    {
        let m = self.recv()?;
        m.parse()
            .map_err(|e| format!("process B sent {m:?} as {what}: {e}").into())
    }
}
