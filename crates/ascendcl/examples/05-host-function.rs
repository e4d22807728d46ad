//! Host functions: a Rust closure enqueued on a stream runs on a runtime thread once the work
//! before it is done, and the work after it waits for it.
//!
//! `cargo run -p ascendcl --example 05-host-function`

use ascendcl::{DeviceBuffer, MallocPolicy, Runtime};
use std::sync::mpsc;

fn main() -> ascendcl::Result<()> {
    let rt = Runtime::new()?;
    let device = rt.device(0)?;
    let stream = device.create_stream()?;
    let dev = DeviceBuffer::from_slice(&device, &[7u32; 4], MallocPolicy::HugeFirst)?;

    let (tx, rx) = mpsc::channel();
    let mut back = [0u32; 4];
    stream.scope(|s| {
        s.copy(&mut back, &dev)?;
        // aclrtLaunchHostFunc: runs after the copy; `move` so that it owns what it uses.
        let tx = tx.clone();
        s.launch_host_fn(move || tx.send("the copy is done").unwrap())?;
        Ok(())
    })?;
    println!("host function says: {}", rx.recv().unwrap());
    assert_eq!(back, [7; 4]);

    // A panic in a host function is caught at the FFI boundary and reported, not unwound into C
    // (the default panic hook still prints it; a quiet one keeps this example's output short).
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let handle = stream.launch_host_fn(|| panic!("boom"))?;
    let e = handle.wait().unwrap_err();
    println!("as expected: {e}");
    // The stream's next synchronisation reports it too.
    let e = stream.synchronize().unwrap_err();
    println!("and the stream says: {e}");
    std::panic::set_hook(default_hook);
    Ok(())
}
