//! Runs the built sample on the emulator, in a directory of its own, and checks its lines and
//! the trace it leaves in `./output`.

use std::process::Command;

#[test]
fn lines_and_trace_are_the_configured_ones() {
    let dir = std::env::temp_dir().join(format!("profiling_create_config_{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("make the run directory");
    let o = Command::new(env!("CARGO_BIN_EXE_profiling_create_config"))
        .current_dir(&dir)
        .env("ASCENDCL_BACKEND", "emulator")
        .env_remove("ASCENDCL_EMU_FAULTS")
        .env_remove("ASCENDCL_EMU_TRACE")
        .output()
        .expect("run the sample");
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    let traces: Vec<_> = std::fs::read_dir(dir.join("output"))
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(o.status.success(), "{out}");
    let infos: Vec<&str> = out
        .lines()
        .filter_map(|l| l.strip_prefix("[INFO]  "))
        .filter(|l| !l.starts_with("trace "))
        .collect();
    assert_eq!(
        infos,
        [
            "-------- Start --------",
            "profiling init done",
            "profiling set config done",
            "profiling start",
            "model running ....",
            "profiling stop and finalize done",
            "-------- End --------",
        ],
        "{out}"
    );
    assert!(
        out.starts_with("[INFO]  -------- Start --------\n"),
        "{out}"
    );
    assert!(
        out.contains("[INFO]  trace ")
            && out.contains("data types 0x1bf on devices [0], 4 reduce tasks on device 0"),
        "{out}"
    );
    assert!(
        out.ends_with("[SUCCESS] Run the profiling configuration sample successfully.\n"),
        "{out}"
    );
    assert_eq!(traces.len(), 1, "one trace file: {traces:?}");
}
