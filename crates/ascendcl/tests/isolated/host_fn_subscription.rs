//! Host-function subscription on an IPV350-class SoC (the test makes the emulator claim to be
//! one, alone, and `exclusive` restores the SoC after it): host closures launched on a
//! subscribed stream run on the subscription's thread.

use crate::common::*;
use crate::exclusive;
use ascendcl::{Model, StreamFlags, StreamRole};
use std::sync::{Arc, Mutex};

fn ipv350() {
    ascendcl_emu::set_config(ascendcl_emu::Config {
        soc: "IPV350".to_string(),
        ..ascendcl_emu::config()
    });
}

/// The name of the calling thread (the subscription's thread is `ascendcl-host-fn`).
fn thread_name() -> String {
    std::thread::current().name().unwrap_or("").to_string()
}

#[test]
fn host_closures_run_on_the_subscribed_thread() -> ascendcl::Result<()> {
    let _x = exclusive();
    if !needs_emulator("host_closures_run_on_the_subscribed_thread", "SoC table") {
        return Ok(());
    }
    ipv350();
    let rt = rt();
    let dev = rt.device(0)?;
    let stream = dev.create_stream()?;
    let sub = stream.subscribe_host_fns()?;
    let ran = Arc::new(Mutex::new(Vec::new()));
    let handles: Vec<_> = (0..3)
        .map(|i| {
            let ran = Arc::clone(&ran);
            stream.launch_host_fn(move || ran.lock().unwrap().push((i, thread_name())))
        })
        .collect::<ascendcl::Result<_>>()?;
    stream.synchronize()?;
    for h in handles {
        h.wait()?;
    }
    let ran = ran.lock().unwrap().clone();
    assert_eq!(ran.iter().map(|r| r.0).collect::<Vec<_>>(), vec![0, 1, 2]);
    assert!(ran.iter().all(|r| r.1 == "ascendcl-host-fn"), "{ran:?}");
    assert_ne!(sub.thread_id(), 0);
    // One subscription per stream.
    assert_code(stream.subscribe_host_fns(), AclError::STREAM_SUBSCRIBE);
    sub.close()?;
    // Unsubscribed: closures run on the runtime's thread again.
    let other = Arc::new(Mutex::new(String::new()));
    let o = Arc::clone(&other);
    stream
        .launch_host_fn(move || *o.lock().unwrap() = thread_name())?
        .wait()?;
    assert_ne!(*other.lock().unwrap(), "ascendcl-host-fn");
    // The class has no model runtime instances: the runtime's typed error.
    let mut model = Model::new(&dev);
    let e = model.build(|b| {
        b.bind(
            dev.create_stream_with(StreamFlags::PERSISTENT, 0)?,
            StreamRole::Head,
        )
    });
    assert_code(e, AclError::FEATURE_NOT_SUPPORT);
    Ok(())
}
