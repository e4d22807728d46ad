//! Runs the built sample on the emulator with two and three devices (one and two consumers),
//! and with one, which it refuses.

use std::process::{Command, Output};

fn run(devices: u32) -> (Output, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_ipcevent_multi_device"))
        .env("ASCENDCL_BACKEND", "emulator")
        .env("ASCENDCL_EMU_DEVICES", devices.to_string())
        .env_remove("ASCENDCL_EMU_FAULTS")
        .output()
        .expect("run the sample");
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    (o, out)
}

#[test]
fn every_consumer_sees_the_record_and_the_producer_sees_theirs() {
    for devices in [2, 3] {
        let (o, out) = run(devices);
        assert!(o.status.success(), "{out}");
        let consumers = devices - 1;
        let mut want = vec![
            format!(
                "[INFO]  Starting producer on device 0, waiting for {consumers} consumer(s)..."
            ),
            "[INFO]  Producer: IPC event created on device 0".to_string(),
        ];
        for i in 1..=consumers {
            want.extend([
                format!("[INFO]  Starting consumer {i} on device {i}"),
                format!("[INFO]  Consumer {i}: IPC event opened on device {i}"),
                format!("[INFO]  Consumer {i}: event received, stream synchronized"),
                format!("[INFO]  Consumer {i}: event status = 1 (1=completed)"),
                format!("[INFO]  Consumer {i} (device {i}) finished successfully."),
                "[INFO]  Producer: event status = 1 (1=completed)".to_string(),
            ]);
        }
        want.extend([
            format!("[INFO]  All {consumers} consumers have finished."),
            "[INFO]  Producer: finished successfully.".to_string(),
            "[SUCCESS] IPC event multi-device synchronization works correctly.".to_string(),
        ]);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines, want, "{out}");
    }
}

#[test]
fn one_device_is_refused() {
    let (o, out) = run(1);
    assert!(!o.status.success(), "{out}");
    assert!(
        out.contains("1 device(s): the sample needs at least 2"),
        "{out}"
    );
    assert!(
        out.ends_with("[FAILURE] IPC event multi-device synchronization failed.\n"),
        "{out}"
    );
}
