//! The crate's shape, checked on its own sources: which folder imports which (docs/emulator.md
//! draws the map), the stream engine importing no concept, no import circle between folders,
//! every lock ranked, a C layer without state of its own.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The folders (and top-level files) that are not concepts: what everything builds on, the
/// engine, the C layer, the interface for layered libraries and the crate root.
const NOT_CONCEPTS: &[&str] = &["base", "engine", "capi", "extension", "lib"];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Each file's folder (or top-level file name) and its text without `//` comments.
fn sources() -> Vec<(String, PathBuf, String)> {
    let root = src();
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    files
        .into_iter()
        .map(|p| {
            let rel = p.strip_prefix(&root).unwrap();
            let first = rel.components().next().unwrap().as_os_str();
            let unit = first.to_string_lossy().trim_end_matches(".rs").to_string();
            let text: String = std::fs::read_to_string(&p)
                .unwrap()
                .lines()
                .map(|l| l.split("//").next().unwrap_or(""))
                .collect::<Vec<_>>()
                .join("\n");
            (unit, rel.to_path_buf(), text)
        })
        .collect()
}

/// Folder → the folders it imports (`crate::<folder>` paths).
fn imports() -> BTreeMap<String, BTreeSet<String>> {
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (unit, _, text) in sources() {
        let e = edges.entry(unit.clone()).or_default();
        for (i, _) in text.match_indices("crate::") {
            let rest = &text[i + "crate::".len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() && name != unit {
                e.insert(name);
            }
        }
    }
    edges
}

#[test]
fn the_engine_imports_no_concept_and_base_imports_nothing() {
    let edges = imports();
    let engine: Vec<&String> = edges["engine"].iter().filter(|u| *u != "base").collect();
    assert!(engine.is_empty(), "the engine imports {engine:?}");
    assert!(edges["base"].is_empty(), "base imports {:?}", edges["base"]);
}

#[test]
fn no_import_circle_spans_two_folders() {
    let edges = imports();
    // Every folder reachable from a folder that reaches it back shares a circle with it.
    let reach = |from: &str| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.to_string()];
        while let Some(u) = todo.pop() {
            for v in edges.get(&u).into_iter().flatten() {
                if seen.insert(v.clone()) {
                    todo.push(v.clone());
                }
            }
        }
        seen
    };
    let mut circles = Vec::new();
    for a in edges.keys() {
        for b in reach(a) {
            if &b > a && reach(&b).contains(a) {
                circles.push((a.clone(), b));
            }
        }
    }
    assert!(
        circles.is_empty(),
        "import circles between folders: {circles:?}"
    );
    // The concepts import only downwards: none imports the C layer or the crate root.
    for (unit, to) in &edges {
        if NOT_CONCEPTS.contains(&unit.as_str()) {
            continue;
        }
        assert!(
            !to.contains("capi") && !to.contains("extension"),
            "{unit} imports the C layer or the extension interface: {to:?}"
        );
    }
}

#[test]
fn every_lock_is_ranked() {
    for (_, path, text) in sources() {
        if path.ends_with("base/lock.rs") {
            continue;
        }
        for bad in [
            "std::sync::Mutex",
            "std::sync::RwLock",
            "std::sync::Condvar",
            "parking_lot::",
            "sync::{Mutex",
            "sync::{RwLock",
            "sync::{Condvar",
        ] {
            assert!(
                !text.contains(bad),
                "{} uses {bad}: every lock of the crate is a ranked lock of base/lock.rs",
                path.display()
            );
        }
    }
}

#[test]
fn the_c_layer_keeps_no_state() {
    for (unit, path, text) in sources() {
        if unit != "capi" {
            continue;
        }
        for line in text.lines() {
            let t = line.trim_start();
            let mutable = [
                "Mutex", "RwLock", "Atomic", "LazyLock", "OnceLock", "Cell", "mut ",
            ]
            .iter()
            .any(|m| t.contains(m));
            assert!(
                !((t.starts_with("static ") && mutable) || t.starts_with("thread_local!")),
                "{} keeps state: {t}",
                path.display()
            );
        }
    }
}

/// The emulator's lock ranks appear in docs/emulator.md in their order.
#[test]
fn the_documented_lock_order_is_the_code_s() {
    let doc = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/emulator.md"),
    )
    .unwrap();
    let ranks = ascendcl_emu::lock_ranks();
    let mut at = 0;
    for (variant, _) in &ranks {
        let needle = format!("`{variant}`");
        let found = doc[at..].find(&needle).unwrap_or_else(|| {
            panic!("docs/emulator.md lists no rank {needle} after the ranks before it")
        });
        at += found + needle.len();
    }
}
