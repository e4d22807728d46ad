//! `cargo xtask trace SAMPLE [-- ARGS]`: runs a sample on the emulator with its trace switched on
//! (`ASCENDCL_EMU_TRACE`) and draws the timeline next to the JSON: `target/trace/<sample>.json`
//! (Chrome trace / Perfetto format, docs/emulator.md "Profiling") and `target/trace/<sample>.svg`,
//! one lane per stream (and one per host thread with ranges or marks), each task a bar coloured
//! by its kind, and a summary of the lanes on stdout.
//!
//! The SVG is written by hand rather than with plotters (which the bench report uses): a
//! timeline is rectangles and text on lanes, which plotters has no series for, and each bar
//! carries a `<title>` (name, kind, duration, values) that a browser shows on hover, which
//! plotters' SVG backend cannot emit.

use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// One bar or instant of the timeline.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    pub name: String,
    pub cat: String,
    /// Start and duration, in microseconds (duration 0 for an instant).
    pub ts: f64,
    pub dur: f64,
    pub instant: bool,
    /// The values the trace gives (`bytes=4096 direction=H2D`).
    pub args: String,
}

/// A lane: a stream of a device, or a host thread.
#[derive(Debug, Clone, PartialEq)]
pub struct Lane {
    pub pid: i64,
    pub tid: i64,
    pub name: String,
    pub items: Vec<Item>,
}

/// The lanes of a trace document, devices first (by device then stream id), the host last.
pub fn lanes(doc: &Value) -> Result<Vec<Lane>, String> {
    let events = doc["traceEvents"]
        .as_array()
        .ok_or("the trace has no traceEvents array")?;
    let mut names: BTreeMap<(i64, i64), String> = BTreeMap::new();
    let mut process: BTreeMap<i64, String> = BTreeMap::new();
    let mut lanes: BTreeMap<(i64, i64), Vec<Item>> = BTreeMap::new();
    for e in events {
        let pid = e["pid"].as_i64().unwrap_or(0);
        let tid = e["tid"].as_i64().unwrap_or(0);
        let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
        match e["ph"].as_str() {
            Some("M") if e["name"] == "thread_name" => {
                names.insert((pid, tid), text(&e["args"]["name"]));
            }
            Some("M") if e["name"] == "process_name" => {
                process.insert(pid, text(&e["args"]["name"]));
            }
            Some(ph @ ("X" | "i")) => {
                let args = e["args"]
                    .as_object()
                    .map(|m| {
                        m.iter()
                            .map(|(k, v)| match v.as_str() {
                                Some(s) => format!("{k}={s}"),
                                None => format!("{k}={v}"),
                            })
                            .collect::<Vec<_>>()
                            .join(" ")
                    })
                    .unwrap_or_default();
                lanes.entry((pid, tid)).or_default().push(Item {
                    name: text(&e["name"]),
                    cat: text(&e["cat"]),
                    ts: e["ts"].as_f64().unwrap_or(0.0),
                    dur: e["dur"].as_f64().unwrap_or(0.0),
                    instant: ph == "i",
                    args,
                });
            }
            _ => {}
        }
    }
    Ok(lanes
        .into_iter()
        .map(|((pid, tid), mut items)| {
            items.sort_by(|a, b| a.ts.total_cmp(&b.ts));
            let thread = names
                .get(&(pid, tid))
                .cloned()
                .unwrap_or_else(|| format!("tid {tid}"));
            let name = match process.get(&pid) {
                Some(p) => format!("{p} / {thread}"),
                None => thread,
            };
            Lane {
                pid,
                tid,
                name,
                items,
            }
        })
        .collect())
}

/// The colour of a kind of task.
fn colour(cat: &str) -> &'static str {
    match cat {
        "copy" => "#4e79a7",
        "memset" => "#76b7b2",
        "kernel" => "#e15759",
        "host" => "#f28e2b",
        "event" => "#59a14f",
        "wait" => "#bab0ac",
        "collective" => "#b07aa1",
        "model" => "#9c755f",
        "builtin" => "#edc948",
        "range" | "push" => "#ff9da7",
        "mark" | "step" => "#000000",
        _ => "#8c8c8c",
    }
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Lane geometry.
const LABEL: f64 = 230.0;
const WIDTH: f64 = 1400.0;
const LANE: f64 = 34.0;
const TOP: f64 = 40.0;

/// The SVG of the lanes: time on x (from the first task), one lane per row, bars coloured by
/// kind with a hover title, nested ranges stacked inside their lane, a legend of the kinds.
pub fn svg(title: &str, lanes: &[Lane]) -> String {
    let items = || lanes.iter().flat_map(|l| l.items.iter());
    let t0 = items().map(|i| i.ts).fold(f64::INFINITY, f64::min);
    let t1 = items()
        .map(|i| i.ts + i.dur)
        .fold(f64::NEG_INFINITY, f64::max);
    let (t0, span) = if t0.is_finite() && t1 > t0 {
        (t0, t1 - t0)
    } else {
        (0.0, 1.0)
    };
    let plot = WIDTH - LABEL - 20.0;
    let x = |t: f64| LABEL + (t - t0) / span * plot;
    let height = TOP + LANE * lanes.len() as f64 + 70.0;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" font-family="sans-serif" font-size="11">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="10" y="20" font-size="14">{} — {:.3} ms</text>"#,
        escape(title),
        span / 1000.0
    );
    for (row, lane) in lanes.iter().enumerate() {
        let y = TOP + LANE * row as f64;
        let fill = if row % 2 == 0 { "#f4f4f4" } else { "#ffffff" };
        let _ = writeln!(
            s,
            r#"<rect x="0" y="{y}" width="{WIDTH}" height="{LANE}" fill="{fill}"/><text x="8" y="{:.1}">{}</text>"#,
            y + LANE / 2.0 + 4.0,
            escape(&lane.name)
        );
        // Nested ranges (host lanes) stack: each bar one level below the bars that contain it.
        let mut open: Vec<f64> = Vec::new();
        for it in &lane.items {
            let title = format!(
                "{} [{}] {:.1} µs{}{}",
                it.name,
                it.cat,
                it.dur,
                if it.args.is_empty() { "" } else { " — " },
                it.args
            );
            let c = colour(&it.cat);
            if it.instant {
                let px = x(it.ts);
                let _ = writeln!(
                    s,
                    r#"<path d="M{px:.2},{:.1} l4,-7 l-8,0 z" fill="{c}"><title>{}</title></path>"#,
                    y + LANE - 4.0,
                    escape(&title)
                );
                continue;
            }
            open.retain(|&end| end > it.ts);
            let depth = open.len().min(3) as f64;
            open.push(it.ts + it.dur);
            let h = LANE - 10.0 - depth * 5.0;
            let (bx, bw) = (x(it.ts), ((it.dur / span) * plot).max(0.8));
            let _ = writeln!(
                s,
                r#"<rect x="{bx:.2}" y="{:.1}" width="{bw:.2}" height="{h:.1}" fill="{c}" fill-opacity="0.85"><title>{}</title></rect>"#,
                y + 5.0 + depth * 5.0,
                escape(&title)
            );
            if bw > 7.0 * it.name.len() as f64 {
                let _ = writeln!(
                    s,
                    r#"<text x="{:.2}" y="{:.1}" fill="white">{}</text>"#,
                    bx + 3.0,
                    y + LANE / 2.0 + 4.0,
                    escape(&it.name)
                );
            }
        }
    }
    // The time axis and the legend.
    let axis = TOP + LANE * lanes.len() as f64 + 14.0;
    for k in 0..=10 {
        let t = span * k as f64 / 10.0;
        let px = LABEL + plot * k as f64 / 10.0;
        let _ = writeln!(
            s,
            r##"<line x1="{px:.1}" y1="{TOP}" x2="{px:.1}" y2="{:.1}" stroke="#cccccc"/><text x="{px:.1}" y="{:.1}" text-anchor="middle">{:.2} ms</text>"##,
            axis - 10.0,
            axis + 2.0,
            t / 1000.0
        );
    }
    let mut lx = LABEL;
    for cat in [
        "copy",
        "memset",
        "kernel",
        "host",
        "event",
        "wait",
        "collective",
        "model",
        "builtin",
        "range",
        "mark",
    ] {
        let _ = writeln!(
            s,
            r#"<rect x="{lx}" y="{:.1}" width="12" height="12" fill="{}"/><text x="{}" y="{:.1}">{cat}</text>"#,
            axis + 24.0,
            colour(cat),
            lx + 16.0,
            axis + 34.0
        );
        lx += 95.0;
    }
    s.push_str("</svg>\n");
    s
}

/// A summary of each lane: its tasks by name (count, total time), its busy time.
pub fn summary(lanes: &[Lane]) -> String {
    let mut out = String::new();
    for l in lanes {
        let bars: Vec<&Item> = l.items.iter().filter(|i| !i.instant).collect();
        let busy: f64 = bars.iter().map(|i| i.dur).sum();
        let _ = writeln!(
            out,
            "{}: {} tasks, {:.3} ms busy",
            l.name,
            bars.len(),
            busy / 1000.0
        );
        let mut by: BTreeMap<&str, (usize, f64)> = BTreeMap::new();
        for i in &bars {
            let e = by.entry(i.name.as_str()).or_default();
            e.0 += 1;
            e.1 += i.dur;
        }
        for (name, (n, t)) in by {
            let _ = writeln!(out, "    {n:>4} × {name:<28} {:>10.3} ms", t / 1000.0);
        }
    }
    out
}

/// Whether an item is work (a copy, a kernel ...), not a wait, an event task or a mark.
fn is_work(i: &Item) -> bool {
    !i.instant && !matches!(i.cat.as_str(), "wait" | "event" | "mark" | "range" | "push")
}

/// Time during which work of lane `a` and work of lane `b` ran at once, in microseconds (waits,
/// event tasks and marks do not count).
pub fn overlap(a: &Lane, b: &Lane) -> f64 {
    let mut total = 0.0;
    for x in a.items.iter().filter(|i| is_work(i)) {
        for y in b.items.iter().filter(|i| is_work(i)) {
            let lo = x.ts.max(y.ts);
            let hi = (x.ts + x.dur).min(y.ts + y.dur);
            if hi > lo {
                total += hi - lo;
            }
        }
    }
    total
}

/// Where the trace of `sample` goes.
pub fn paths(sample: &str) -> (PathBuf, PathBuf) {
    let dir = crate::tools::target_dir().join("trace");
    (
        dir.join(format!("{sample}.json")),
        dir.join(format!("{sample}.svg")),
    )
}

/// Draws the trace at `json` into `svg_path`; returns the summary printed.
pub fn render(title: &str, json: &Path, svg_path: &Path) -> Result<String, String> {
    let text = std::fs::read_to_string(json)
        .map_err(|e| format!("cannot read {}: {e}", json.display()))?;
    let doc: Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: not JSON: {e}", json.display()))?;
    let lanes = lanes(&doc)?;
    if lanes.is_empty() {
        return Err(format!(
            "{} holds no task: did the sample run on the emulator?",
            json.display()
        ));
    }
    std::fs::write(svg_path, svg(title, &lanes))
        .map_err(|e| format!("cannot write {}: {e}", svg_path.display()))?;
    let mut out = summary(&lanes);
    let device: Vec<&Lane> = lanes.iter().filter(|l| l.pid != 1000).collect();
    for (i, a) in device.iter().enumerate() {
        for b in &device[i + 1..] {
            let o = overlap(a, b);
            if o > 0.0 {
                let _ = writeln!(
                    out,
                    "copies and kernels at once, {} and {}: {:.3} ms",
                    a.name,
                    b.name,
                    o / 1000.0
                );
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc() -> Value {
        json!({"traceEvents": [
            {"name": "process_name", "ph": "M", "pid": 0, "args": {"name": "device 0"}},
            {"name": "thread_name", "ph": "M", "pid": 0, "tid": 2, "args": {"name": "stream 2"}},
            {"name": "thread_name", "ph": "M", "pid": 0, "tid": 3, "args": {"name": "stream 3"}},
            {"name": "scale_add", "cat": "kernel", "ph": "X", "ts": 100.0, "dur": 50.0,
             "pid": 0, "tid": 3, "args": {"blocks": 2}},
            {"name": "memcpy H2D", "cat": "copy", "ph": "X", "ts": 10.0, "dur": 100.0,
             "pid": 0, "tid": 2, "args": {"bytes": 64, "direction": "H2D"}},
            {"name": "a <mark>", "cat": "mark", "ph": "i", "s": "t", "ts": 120.0,
             "pid": 1000, "tid": 77},
        ]})
    }

    #[test]
    fn lanes_are_grouped_named_and_sorted() {
        let l = lanes(&doc()).unwrap();
        assert_eq!(l.len(), 3);
        assert_eq!(l[0].name, "device 0 / stream 2");
        assert_eq!(l[0].items[0].args, "bytes=64 direction=H2D");
        assert_eq!(l[1].items[0].name, "scale_add");
        assert_eq!(l[2].name, "tid 77");
        assert!(l[2].items[0].instant);
        // The copy (10..110) and the kernel (100..150) overlap by 10 µs.
        assert_eq!(overlap(&l[0], &l[1]), 10.0);
        assert_eq!(overlap(&l[0], &l[2]), 0.0);
    }

    #[test]
    fn the_svg_has_a_bar_per_task_and_escapes_names() {
        let l = lanes(&doc()).unwrap();
        let s = svg("t", &l);
        assert!(s.starts_with("<svg"));
        assert!(s.trim_end().ends_with("</svg>"));
        assert_eq!(s.matches("<title>").count(), 3);
        assert!(s.contains("a &lt;mark&gt;"));
        assert!(s.contains(colour("kernel")) && s.contains(colour("copy")));
        // The first task starts at the left edge of the plot.
        assert!(s.contains(&format!(r#"<rect x="{LABEL:.2}""#)));
        let sum = summary(&l);
        assert!(
            sum.contains("device 0 / stream 3: 1 tasks, 0.050 ms busy"),
            "{sum}"
        );
    }
}
