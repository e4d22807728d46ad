//! Profiling (`acl_prof.h`): the session's codes, and the trace a session writes — a program
//! that copies and launches kernels on two streams, with ranges and marks, read back as JSON and
//! checked for its tasks, lanes and ordering. The session is process-wide, so this binary has
//! its tests to itself (one at a time), and the environment variable is checked in a child.
#![allow(clippy::undocumented_unsafe_blocks)]

mod common;
use common::*;
use serde_json::Value;
use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, MutexGuard, OnceLock};

/// One test at a time: the profiling session belongs to the process.
fn serial() -> MutexGuard<'static, ()> {
    static M: Mutex<()> = Mutex::new(());
    M.lock().unwrap_or_else(|e| e.into_inner())
}

/// The test kernels (tests/kernels/abi_kernels.c), compiled once.
fn binary_path() -> &'static Path {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kernels/abi_kernels.c");
        let so = Path::new(env!("CARGO_TARGET_TMPDIR")).join("emu_prof_kernels.so");
        // Compiled under a name of this process and renamed into place (the child compiles it
        // too).
        let partial = so.with_extension(format!("so.{}", std::process::id()));
        let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
        let out = Command::new(&cc)
            .args(["-std=c11", "-O1", "-shared", "-fPIC", "-fvisibility=hidden"])
            .arg(&src)
            .arg("-o")
            .arg(&partial)
            .output()
            .unwrap_or_else(|e| panic!("cannot run the C compiler {cc}: {e}"));
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        std::fs::rename(&partial, &so).unwrap();
        so
    })
}

fn function(name: &str) -> aclrtFuncHandle {
    let path = CString::new(binary_path().to_str().unwrap()).unwrap();
    let mut bin = null_mut();
    ok(unsafe { aclrtBinaryLoadFromFile(path.as_ptr(), null_mut(), &mut bin) });
    let mut f = null_mut();
    let n = CString::new(name).unwrap();
    ok(unsafe { aclrtBinaryGetFunction(bin, n.as_ptr(), &mut f) });
    f
}

/// Launches `f` with a pointer and a u32 argument, or only the u32 when `p` is NULL.
fn launch(f: aclrtFuncHandle, blocks: u32, s: aclrtStream, p: *mut c_void, v: u32) {
    let mut a = null_mut();
    let mut at = null_mut();
    ok(unsafe { aclrtKernelArgsInit(f, &mut a) });
    if !p.is_null() {
        ok(unsafe {
            aclrtKernelArgsAppend(a, (&p as *const *mut c_void).cast_mut().cast(), 8, &mut at)
        });
    }
    ok(unsafe { aclrtKernelArgsAppend(a, (&v as *const u32).cast_mut().cast(), 4, &mut at) });
    ok(unsafe { aclrtKernelArgsFinalize(a) });
    ok(unsafe { aclrtLaunchKernelWithConfig(f, blocks, s, null_mut(), a, null_mut()) });
}

fn stream_id(s: aclrtStream) -> i64 {
    let mut id = 0;
    ok(unsafe { aclrtStreamGetId(s, &mut id) });
    i64::from(id)
}

fn stamp(msg: &str) -> *mut c_void {
    let s = aclprofCreateStamp();
    assert!(!s.is_null());
    ok(unsafe { aclprofSetStampTraceMessage(s, msg.as_ptr().cast(), msg.len() as u32) });
    s
}

fn read_trace(p: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(p).unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    doc["traceEvents"].as_array().unwrap().clone()
}

/// The complete ("X") events of one lane, in start order.
fn lane(events: &[Value], pid: i64, tid: i64) -> Vec<Value> {
    let mut v: Vec<Value> = events
        .iter()
        .filter(|e| e["ph"] == "X" && e["pid"] == pid && e["tid"] == tid)
        .cloned()
        .collect();
    v.sort_by(|a, b| a["ts"].as_f64().partial_cmp(&b["ts"].as_f64()).unwrap());
    v
}

fn names(v: &[Value]) -> Vec<&str> {
    v.iter().map(|e| e["name"].as_str().unwrap()).collect()
}

fn end(e: &Value) -> f64 {
    e["ts"].as_f64().unwrap() + e["dur"].as_f64().unwrap()
}

/// Copies and kernels on two streams, with an event ordering them, a range, a push/pop and a
/// mark; returns the two streams' ids (the work is done when it returns).
fn two_stream_program() -> (i64, i64) {
    let a = {
        let mut s = null_mut();
        ok(unsafe { aclrtCreateStream(&mut s) });
        s
    };
    let b = {
        let mut s = null_mut();
        ok(unsafe { aclrtCreateStream(&mut s) });
        s
    };
    let store = function("store");
    let spin = function("spin");
    let dev = malloc(4096);
    let host = malloc_host(4096);
    let ev = event();
    let outer = stamp("outer range");
    let inner = stamp("inner push");
    let mark = stamp("a mark");
    let mut range = 0;
    ok(unsafe { aclprofRangeStart(outer, &mut range) });
    ok(unsafe { aclprofPush(inner) });
    unsafe {
        ok(aclrtMemcpyAsync(
            dev,
            4096,
            host,
            4096,
            ACL_MEMCPY_HOST_TO_DEVICE,
            a,
        ));
        launch(spin, 1, a, null_mut(), 20);
        ok(aclrtMemcpyAsync(
            dev.cast::<u8>().add(1024).cast(),
            1024,
            host,
            1024,
            ACL_MEMCPY_HOST_TO_DEVICE,
            b,
        ));
        launch(store, 2, b, dev, 7);
        ok(aclrtRecordEvent(ev, b));
        ok(aclrtStreamWaitEvent(a, ev));
        ok(aclrtMemcpyAsync(
            host,
            512,
            dev,
            512,
            ACL_MEMCPY_DEVICE_TO_HOST,
            a,
        ));
    }
    ok(unsafe { aclprofMark(mark) });
    ok(unsafe { aclrtSynchronizeStream(a) });
    ok(unsafe { aclrtSynchronizeStream(b) });
    ok(unsafe { aclprofPop() });
    ok(unsafe { aclprofRangeStop(range) });
    let ids = (stream_id(a), stream_id(b));
    for s in [outer, inner, mark] {
        aclprofDestroyStamp(s);
    }
    ok(unsafe { aclrtDestroyEvent(ev) });
    free(dev);
    free_host(host);
    ok(unsafe { aclrtDestroyStream(a) });
    ok(unsafe { aclrtDestroyStream(b) });
    ids
}

/// Checks the trace of [`two_stream_program`] on device 0.
fn check_two_streams(events: &[Value], (a, b): (i64, i64)) {
    let la = lane(events, 0, a);
    let lb = lane(events, 0, b);
    assert_eq!(
        names(&la),
        ["memcpy H2D", "spin", "event wait", "memcpy D2H"],
        "{la:#?}"
    );
    assert_eq!(
        names(&lb),
        ["memcpy H2D", "store", "event record"],
        "{lb:#?}"
    );
    // What each task says of itself.
    assert_eq!(la[0]["cat"], "copy");
    assert_eq!(la[0]["args"]["direction"], "H2D");
    assert_eq!(la[0]["args"]["bytes"], 4096);
    assert_eq!(la[1]["cat"], "kernel");
    assert_eq!(la[1]["args"]["blocks"], 1);
    assert_eq!(la[3]["args"]["direction"], "D2H");
    assert_eq!(la[3]["args"]["bytes"], 512);
    assert_eq!(lb[0]["args"]["bytes"], 1024);
    assert_eq!(lb[1]["args"]["blocks"], 2);
    assert_eq!(la[2]["cat"], "wait");
    assert_eq!(lb[2]["cat"], "event");
    assert_eq!(la[2]["args"]["event"], lb[2]["args"]["event"]);
    // The spin kernel takes its 20 ms (the emulator's clock, not an assertion on speed: the
    // kernel itself loops until 20 ms have passed).
    assert!(la[1]["dur"].as_f64().unwrap() >= 20_000.0, "{:?}", la[1]);
    // A stream runs its tasks one after the other.
    for l in [&la, &lb] {
        for w in l.windows(2) {
            assert!(end(&w[0]) <= w[1]["ts"].as_f64().unwrap(), "{w:#?}");
        }
    }
    // The wait ends only once the record ran, and the copy after it starts after that.
    assert!(end(&la[2]) >= lb[2]["ts"].as_f64().unwrap());
    assert!(la[3]["ts"].as_f64().unwrap() >= lb[2]["ts"].as_f64().unwrap());
    // The user's range and push on the host, around the tasks; the mark as an instant.
    let host: Vec<&Value> = events.iter().filter(|e| e["pid"] == 1000).collect();
    let range = host
        .iter()
        .find(|e| e["name"] == "outer range" && e["ph"] == "X")
        .expect("the range");
    let push = host
        .iter()
        .find(|e| e["name"] == "inner push" && e["ph"] == "X")
        .expect("the push");
    assert_eq!(range["cat"], "range");
    assert_eq!(push["cat"], "push");
    assert!(range["ts"].as_f64() <= push["ts"].as_f64());
    assert!(end(push) <= end(range));
    assert!(range["ts"].as_f64() <= la[0]["ts"].as_f64());
    assert!(end(&la[3]) <= end(push));
    let mark = host
        .iter()
        .find(|e| e["name"] == "a mark")
        .expect("the mark");
    assert_eq!(mark["ph"], "i");
    // The viewer's names for the lanes.
    let named = |pid: i64, tid: i64, name: &str| {
        events.iter().any(|e| {
            e["ph"] == "M"
                && e["name"] == "thread_name"
                && e["pid"] == pid
                && e["tid"] == tid
                && e["args"]["name"] == name
        })
    };
    assert!(named(0, a, &format!("stream {a}")));
    assert!(named(0, b, &format!("stream {b}")));
    assert!(events.iter().any(|e| e["ph"] == "M"
        && e["name"] == "process_name"
        && e["pid"] == 0
        && e["args"]["name"] == "device 0"));
}

#[test]
fn a_session_traces_two_streams_with_their_tasks_in_order() {
    let _s = serial();
    let _d = Dev::new(0);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out");
    let p = path.to_str().unwrap();
    ok(unsafe { aclprofInit(p.as_ptr().cast(), p.len()) });
    let mut devices = [0u32];
    let cfg = unsafe {
        aclprofCreateConfig(
            devices.as_mut_ptr(),
            1,
            ACL_AICORE_NONE,
            null(),
            u64::from(ACL_PROF_TASK_TIME | ACL_PROF_MSPROFTX),
        )
    };
    assert!(!cfg.is_null());
    // Work before the start is not recorded.
    let before = malloc(64);
    let host = malloc_host(64);
    let s = stream();
    let copy = |n: usize| unsafe {
        ok(aclrtMemcpyAsync(
            before,
            64,
            host,
            n,
            ACL_MEMCPY_HOST_TO_DEVICE,
            s,
        ));
        ok(aclrtSynchronizeStream(s));
    };
    copy(64);
    ok(unsafe { aclprofStart(cfg) });
    let ids = two_stream_program();
    ok(unsafe { aclprofStop(cfg) });
    let file = ascendcl_emu::last_trace_file().expect("a trace was written");
    assert!(file.starts_with(path.canonicalize().unwrap()), "{file:?}");
    let events = read_trace(&file);
    check_two_streams(&events, ids);
    // Nothing else of this process ran during the session: only the program's two lanes.
    let lanes: std::collections::BTreeSet<(i64, i64)> = events
        .iter()
        .filter(|e| e["ph"] == "X" && e["pid"] == 0)
        .map(|e| (0, e["tid"].as_i64().unwrap()))
        .collect();
    assert_eq!(lanes.len(), 2, "{lanes:?}");
    // After the stop nothing is recorded: a second session sees only its own copy.
    copy(48);
    ok(unsafe { aclprofStart(cfg) });
    copy(32);
    ok(unsafe { aclprofStop(cfg) });
    copy(16);
    let second = ascendcl_emu::last_trace_file().unwrap();
    assert_ne!(second, file);
    let events = read_trace(&second);
    let tasks: Vec<&Value> = events.iter().filter(|e| e["ph"] == "X").collect();
    assert_eq!(tasks.len(), 1, "{tasks:#?}");
    assert_eq!(tasks[0]["args"]["bytes"], 32);
    assert_eq!(tasks[0]["tid"], stream_id(s));
    ok(unsafe { aclrtDestroyStream(s) });
    free(before);
    free_host(host);
    ok(unsafe { aclprofDestroyConfig(cfg) });
    ok(unsafe { aclprofFinalize() });
}

#[test]
fn session_calls_return_the_documented_codes() {
    let _s = serial();
    let _d = Dev::new(0);
    // Without aclprofInit: stop and finalize are 100043.
    err(unsafe { aclprofStop(null()) }, AclError::PROF_NOT_RUN);
    err(unsafe { aclprofFinalize() }, AclError::PROF_NOT_RUN);
    err(unsafe { aclprofInit(null(), 4) }, AclError::INVALID_PARAM);
    err(
        unsafe { aclprofInit(c"".as_ptr(), 0) },
        AclError::INVALID_FILE,
    );
    let dir = tempfile::tempdir().unwrap();
    // A regular file is no directory.
    let file = dir.path().join("f");
    std::fs::write(&file, b"x").unwrap();
    let f = file.to_str().unwrap();
    err(
        unsafe { aclprofInit(f.as_ptr().cast(), f.len()) },
        AclError::INVALID_FILE,
    );
    let p = dir.path().to_str().unwrap();
    ok(unsafe { aclprofInit(p.as_ptr().cast(), p.len()) });
    err(
        unsafe { aclprofInit(p.as_ptr().cast(), p.len()) },
        AclError::REPEAT_INITIALIZE,
    );
    // Configurations: the devices are checked; no device needs the msproftx bit.
    let mut count = 0;
    ok(unsafe { aclrtGetDeviceCount(&mut count) });
    let mut bad = [count];
    let flags = u64::from(ACL_PROF_TASK_TIME);
    assert!(unsafe { aclprofCreateConfig(bad.as_mut_ptr(), 1, 0, null(), flags) }.is_null());
    assert!(take_msg().contains("does not exist"));
    let mut twice = [0u32, 0];
    assert!(unsafe { aclprofCreateConfig(twice.as_mut_ptr(), 2, 0, null(), flags) }.is_null());
    assert!(unsafe { aclprofCreateConfig(null_mut(), 1, 0, null(), flags) }.is_null());
    assert!(unsafe { aclprofCreateConfig(null_mut(), 0, 0, null(), flags) }.is_null());
    let events = 8 as *const aclprofAicoreEvents;
    let mut one = [0u32];
    assert!(unsafe { aclprofCreateConfig(one.as_mut_ptr(), 1, 0, events, flags) }.is_null());
    take_msg();
    let tx = unsafe { aclprofCreateConfig(null_mut(), 0, 0, null(), u64::from(ACL_PROF_MSPROFTX)) };
    assert!(!tx.is_null());
    err(
        unsafe { aclprofDestroyConfig(null()) },
        AclError::INVALID_PARAM,
    );
    // Settings: types and ranges.
    let set =
        |t: aclprofConfigType, v: &str| unsafe { aclprofSetConfig(t, v.as_ptr().cast(), v.len()) };
    ok(set(ACL_PROF_SYS_HARDWARE_MEM_FREQ, "15"));
    err(
        set(ACL_PROF_SYS_HARDWARE_MEM_FREQ, "101"),
        AclError::INVALID_PARAM,
    );
    err(
        set(ACL_PROF_SYS_INTERCONNECTION_FREQ, "51"),
        AclError::INVALID_PARAM,
    );
    ok(set(ACL_PROF_LLC_MODE, "read"));
    err(set(ACL_PROF_LLC_MODE, "both"), AclError::INVALID_PARAM);
    ok(set(ACL_PROF_STORAGE_LIMIT, "200MB"));
    err(set(ACL_PROF_STORAGE_LIMIT, "199"), AclError::INVALID_PARAM);
    err(set(ACL_PROF_ARGS_MAX, "1"), AclError::INVALID_PARAM);
    err(set(ACL_PROF_OPTYPE, "x"), AclError::FEATURE_UNSUPPORTED);
    err(
        unsafe { aclprofSetConfig(ACL_PROF_LLC_MODE, null(), 4) },
        AclError::INVALID_PARAM,
    );
    // Start and stop pair, with the same configuration.
    ok(unsafe { aclprofStart(tx) });
    err(unsafe { aclprofStart(tx) }, AclError::PROF_ALREADY_RUN);
    err(set(ACL_PROF_SYS_IO_FREQ, "10"), AclError::PROF_ALREADY_RUN);
    err(unsafe { aclprofStop(null()) }, AclError::INVALID_PARAM);
    ok(unsafe { aclprofStop(tx) });
    err(unsafe { aclprofStop(tx) }, AclError::PROF_NOT_RUN);
    ok(unsafe { aclprofDestroyConfig(tx) });
    err(unsafe { aclprofDestroyConfig(tx) }, AclError::INVALID_PARAM);
    err(unsafe { aclprofStart(tx) }, AclError::INVALID_PARAM);
    ok(unsafe { aclprofFinalize() });
    err(unsafe { aclprofFinalize() }, AclError::PROF_NOT_RUN);
    // aclprofStr2Id: the same string, the same id; NULL is UINT64_MAX.
    let a = unsafe { aclprofStr2Id(c"MatMul".as_ptr()) };
    assert_eq!(a, unsafe { aclprofStr2Id(c"MatMul".as_ptr()) });
    assert_ne!(a, unsafe { aclprofStr2Id(c"Add".as_ptr()) });
    assert_eq!(unsafe { aclprofStr2Id(null()) }, u64::MAX);
    take_msg();
}

#[test]
fn msproftx_calls_need_a_started_session() {
    let _s = serial();
    let _d = Dev::new(0);
    let s = stamp("m");
    err(unsafe { aclprofMark(s) }, AclError::PROF_NOT_RUN);
    err(unsafe { aclprofPush(s) }, AclError::PROF_NOT_RUN);
    let mut id = 0;
    err(
        unsafe { aclprofRangeStart(s, &mut id) },
        AclError::PROF_NOT_RUN,
    );
    err(unsafe { aclprofMark(null_mut()) }, AclError::INVALID_PARAM);
    err(
        unsafe { aclprofSetStampTraceMessage(null_mut(), c"x".as_ptr(), 1) },
        AclError::INVALID_PARAM,
    );
    // A session started without aclprofInit initialises itself (the ACL_PROF_PATH setting).
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().to_str().unwrap();
    ok(unsafe { aclprofSetConfig(ACL_PROF_PATH, p.as_ptr().cast(), p.len()) });
    ok(unsafe { aclprofStart(null()) });
    err(unsafe { aclprofPop() }, AclError::INVALID_PARAM);
    err(unsafe { aclprofRangeStop(12345) }, AclError::INVALID_PARAM);
    err(
        unsafe { aclprofRangeStart(s, null_mut()) },
        AclError::INVALID_PARAM,
    );
    // A range may end on another thread; a push pops only on its own.
    ok(unsafe { aclprofRangeStart(s, &mut id) });
    ok(unsafe { aclprofPush(s) });
    std::thread::spawn(move || {
        ok(unsafe { aclprofRangeStop(id) });
        err(unsafe { aclprofPop() }, AclError::INVALID_PARAM);
    })
    .join()
    .unwrap();
    ok(unsafe { aclprofPop() });
    // A mark on a stream is also a task of the stream.
    let st = stream();
    ok(unsafe { aclprofMarkEx(c"on the stream".as_ptr(), 13, st) });
    let long = [b'x'; 128];
    err(
        unsafe { aclprofMarkEx(long.as_ptr().cast(), 128, st) },
        AclError::INVALID_PARAM,
    );
    // A library's task (an HCCL collective) under its name.
    ascendcl_emu::extension::stream(st as usize)
        .unwrap()
        .enqueue_named("HcclAllReduce", || Ok(()))
        .unwrap();
    ok(unsafe { aclrtSynchronizeStream(st) });
    // Step timestamps: each tag once.
    let step = aclprofCreateStepInfo();
    ok(unsafe { aclprofGetStepTimestamp(step, ACL_STEP_START, st) });
    err(
        unsafe { aclprofGetStepTimestamp(step, ACL_STEP_START, st) },
        AclError::INVALID_PARAM,
    );
    ok(unsafe { aclprofGetStepTimestamp(step, ACL_STEP_END, st) });
    aclprofDestroyStepInfo(step);
    ok(unsafe { aclprofStop(null()) });
    let file = ascendcl_emu::last_trace_file().unwrap();
    assert!(file.starts_with(dir.path().canonicalize().unwrap()));
    let events = read_trace(&file);
    let marker = lane(&events, 0, stream_id(st));
    assert_eq!(names(&marker), ["on the stream", "HcclAllReduce"]);
    assert_eq!(marker[0]["cat"], "mark");
    assert_eq!(marker[1]["cat"], "collective");
    let host_names: Vec<&str> = events
        .iter()
        .filter(|e| e["pid"] == 1000 && e["ph"] != "M")
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    for n in ["m", "on the stream", "step start", "step end"] {
        assert!(host_names.contains(&n), "{n} in {host_names:?}");
    }
    // The range and the push: two complete events named after the stamp.
    assert_eq!(host_names.iter().filter(|n| **n == "m").count(), 2);
    aclprofDestroyStamp(s);
    ok(unsafe { aclrtDestroyStream(st) });
    ok(unsafe { aclprofFinalize() });
}

const CHILD: &str = "ASCENDCL_EMU_PROFILING_TEST_CHILD";

/// `ASCENDCL_EMU_TRACE` records a program that never calls aclprof*: run in a child, whose
/// trace is written at exit.
#[test]
fn the_environment_variable_traces_a_whole_program() {
    let _s = serial();
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("trace.json");
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "env_child", "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .env(ascendcl_emu::ENV_TRACE, &trace)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = stdout
        .lines()
        .find_map(|l| l.split("child streams ").nth(1))
        .expect("the child names its streams");
    let ids: Vec<i64> = line.split(' ').map(|n| n.parse().unwrap()).collect();
    let events = read_trace(&trace);
    check_two_streams(&events, (ids[0], ids[1]));
}

#[test]
fn env_child() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    let _d = Dev::new(0);
    let (a, b) = two_stream_program();
    println!("child streams {a} {b}");
}

extern "C" fn nothing(_: *mut c_void) {}

/// A captured model's execution: one `model execute` task on the stream it was queued on, and
/// each replayed step on the lane of the stream it was captured from, inside the execution.
#[test]
fn a_model_replay_shows_its_steps_on_the_capture_stream() {
    let _s = serial();
    let _d = Dev::new(0);
    let (cap, exec) = (stream(), stream());
    let (src, dst) = (malloc_host(256), malloc(256));
    let ev = event();
    ok(unsafe { aclmdlRICaptureBegin(cap, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL) });
    ok(unsafe { aclrtMemsetAsync(dst, 256, 0, 256, cap) });
    ok(unsafe { aclrtMemcpyAsync(dst, 128, src, 128, ACL_MEMCPY_HOST_TO_DEVICE, cap) });
    ok(unsafe { aclrtLaunchHostFunc(cap, Some(nothing), null_mut()) });
    ok(unsafe { aclrtRecordEvent(ev, cap) });
    let mut ri = null_mut();
    ok(unsafe { aclmdlRICaptureEnd(cap, &mut ri) });
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().to_str().unwrap();
    ok(unsafe { aclprofInit(p.as_ptr().cast(), p.len()) });
    ok(unsafe { aclprofStart(null()) });
    ok(unsafe { aclmdlRIExecuteAsync(ri, exec) });
    ok(unsafe { aclrtSynchronizeStream(exec) });
    ok(unsafe { aclprofStop(null()) });
    let events = read_trace(&ascendcl_emu::last_trace_file().unwrap());
    let on_exec = lane(&events, 0, stream_id(exec));
    assert_eq!(names(&on_exec), ["model execute"], "{on_exec:#?}");
    assert_eq!(on_exec[0]["cat"], "model");
    assert_eq!(on_exec[0]["args"]["steps"], 4);
    let steps = lane(&events, 0, stream_id(cap));
    assert_eq!(
        names(&steps),
        ["memset", "memcpy H2D", "host function", "event record"],
        "{steps:#?}"
    );
    assert_eq!(steps[1]["args"]["bytes"], 128);
    for s in &steps {
        assert!(s["ts"].as_f64() >= on_exec[0]["ts"].as_f64());
        assert!(end(s) <= end(&on_exec[0]));
    }
    ok(unsafe { aclprofFinalize() });
    ok(unsafe { aclmdlRIDestroy(ri) });
    ok(unsafe { aclrtDestroyEvent(ev) });
    free_host(src);
    free(dst);
    ok(unsafe { aclrtDestroyStream(cap) });
    ok(unsafe { aclrtDestroyStream(exec) });
}

/// mstx: nothing (and range id 0) without a collection; inside one, marks and ranges in the
/// default domain and in a named one, a mark on a stream as its marker task.
#[test]
fn mstx_marks_and_ranges_in_domains() {
    use ascendcl_emu::capi::mstx::*;
    let _s = serial();
    let _d = Dev::new(0);
    let st = stream();
    assert_eq!(unsafe { mstxRangeStartA(c"idle".as_ptr(), null_mut()) }, 0);
    unsafe { mstxMarkA(c"idle".as_ptr(), null_mut()) };
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().to_str().unwrap();
    ok(unsafe { aclprofInit(p.as_ptr().cast(), p.len()) });
    ok(unsafe { aclprofStart(null()) });
    let domain = unsafe { mstxDomainCreateA(c"io".as_ptr()) };
    assert!(!domain.is_null());
    let outer = unsafe { mstxRangeStartA(c"outer".as_ptr(), null_mut()) };
    assert_ne!(outer, 0);
    let inner = unsafe { mstxDomainRangeStartA(domain, c"load".as_ptr(), st) };
    assert_ne!(inner, 0);
    unsafe { mstxDomainMarkA(domain, c"loaded".as_ptr(), st) };
    // A NULL message is refused (recorded), an id of another domain ends nothing.
    unsafe { mstxMarkA(null(), null_mut()) };
    assert!(take_msg().contains("message is NULL"));
    mstxRangeEnd(inner);
    mstxDomainRangeEnd(domain, inner);
    mstxRangeEnd(outer);
    ok(unsafe { aclrtSynchronizeStream(st) });
    mstxDomainDestroy(domain);
    assert_eq!(
        unsafe { mstxDomainRangeStartA(domain, c"gone".as_ptr(), null_mut()) },
        0
    );
    ok(unsafe { aclprofStop(null()) });
    let events = read_trace(&ascendcl_emu::last_trace_file().unwrap());
    let find = |name: &str, ph: &str| {
        events
            .iter()
            .find(|e| e["name"] == name && e["ph"] == ph)
            .unwrap_or_else(|| panic!("no {ph} {name} in {events:#?}"))
            .clone()
    };
    let o = find("outer", "X");
    let l = find("io: load", "X");
    assert_eq!(o["cat"], "mstx");
    assert!(o["ts"].as_f64() <= l["ts"].as_f64() && end(&l) <= end(&o));
    assert_eq!(find("io: loaded", "i")["cat"], "mstx");
    let marker = lane(&events, 0, stream_id(st));
    assert_eq!(names(&marker), ["io: loaded"]);
    assert!(
        !events
            .iter()
            .any(|e| e["name"] == "idle" || e["name"] == "io: gone")
    );
    ok(unsafe { aclprofFinalize() });
    ok(unsafe { aclrtDestroyStream(st) });
}
