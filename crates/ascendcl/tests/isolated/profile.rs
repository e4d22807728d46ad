//! `ascendcl::profile`: ranges and marks record nothing (and fail nothing) outside a collection;
//! inside a `Session` they reach the trace next to the stream's tasks, with their nesting. The
//! session is process-wide, so the test runs alone (`exclusive`); reading the trace back needs
//! the emulator's file format.

use crate::common::*;
use crate::exclusive;
use ascendcl::profile::{self, Session};
use ascendcl::{DeviceBuffer, HostBuffer, MallocPolicy, take_drop_errors};
use serde_json::Value;

fn end(e: &Value) -> f64 {
    e["ts"].as_f64().unwrap() + e["dur"].as_f64().unwrap()
}

#[test]
fn ranges_and_marks_reach_the_trace_of_a_session() {
    let _x = exclusive();
    let r = rt();
    // Outside a collection: nothing is recorded, nothing fails.
    {
        let idle = profile::range(&r, "idle").unwrap();
        assert!(!idle.is_recording());
        assert!(!profile::mark(&r, "idle mark").unwrap());
        idle.end().unwrap();
    }
    drop(profile::range(&r, "dropped").unwrap());
    assert!(take_drop_errors().is_empty());
    if !needs_emulator(
        "ranges_and_marks_reach_the_trace_of_a_session",
        "trace file",
    ) {
        return;
    }
    let d = r.device(0).unwrap();
    let s = d.create_stream().unwrap();
    let host = HostBuffer::<u32>::zeroed(&d, 256).unwrap();
    let mut dev = DeviceBuffer::<u32>::zeroed(&d, 256, MallocPolicy::HugeFirst).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let session = Session::start(&r, dir.path(), &[0]).unwrap();
    assert_eq!(session.dir(), dir.path());
    // One session at a time.
    assert_code(
        Session::start(&r, dir.path(), &[0]),
        AclError::REPEAT_INITIALIZE,
    );
    {
        let outer = profile::range(&r, "outer").unwrap();
        assert!(outer.is_recording());
        let inner = profile::range(&r, "inner").unwrap();
        s.scope(|sc| sc.copy(&mut dev, &host)).unwrap();
        assert!(profile::mark(&r, "copied").unwrap());
        assert!(profile::mark_on(&s, "on the stream").unwrap());
        s.synchronize().unwrap();
        // A range may end on another thread.
        std::thread::spawn(move || inner.end().unwrap())
            .join()
            .unwrap();
        drop(outer);
    }
    session.stop().unwrap();
    assert!(take_drop_errors().is_empty());

    let files: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&files[0]).unwrap()).unwrap();
    let events = doc["traceEvents"].as_array().unwrap();
    let find = |name: &str, ph: &str| {
        events
            .iter()
            .find(|e| e["name"] == name && e["ph"] == ph)
            .unwrap_or_else(|| panic!("no {ph} event {name} in {events:#?}"))
    };
    let outer = find("outer", "X");
    let inner = find("inner", "X");
    assert_eq!(outer["cat"], "range");
    assert!(outer["ts"].as_f64() <= inner["ts"].as_f64());
    assert!(end(inner) <= end(outer));
    let copy = find("memcpy H2D", "X");
    assert_eq!(copy["args"]["bytes"], 1024);
    assert_eq!(copy["pid"], 0);
    assert_eq!(copy["tid"], i64::from(s.id().unwrap()));
    assert!(inner["ts"].as_f64() <= copy["ts"].as_f64());
    assert!(end(copy) <= end(inner));
    let marker = find("on the stream", "X");
    assert_eq!(marker["tid"], copy["tid"]);
    find("copied", "i");
    // Nothing recorded once the session stopped.
    assert!(!profile::range(&r, "after").unwrap().is_recording());
}
