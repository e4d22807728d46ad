#!/usr/bin/env python3
"""Regenerates docs/api-map.md and src/api_table.md from scripts/api-map.tsv (wrapped C function -> Rust, family) and the
list of every runtime function in crates/ascendcl-sys/src/generated/functions.rs."""
import os
import re

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.normpath(os.path.join(here, "..", "..", ".."))
rows = [l.rstrip("\n").split("\t") for l in open(os.path.join(here, "api-map.tsv")) if l.strip()]
wrapped = {r[0] for r in rows}
src = open(os.path.join(root, "crates/ascendcl-sys/src/generated/functions.rs")).read()
names = sorted(set(re.findall(r"pub fn (\w+)\(", src)))
unknown = [n for n in wrapped if n not in names]
assert not unknown, unknown
rest = [n for n in names if n not in wrapped]


def cell(s):
    return s.replace("|", "\\|")


out = [
    "# AscendCL → `ascendcl`: the C-to-Rust map",
    "",
    "Every runtime concept and every C function of `acl/acl_rt.h` (ACL 1.17.0), with the Rust type or",
    "method of the safe `ascendcl` crate that calls it. Functions the safe crate does not wrap are listed",
    "at the end: call them through `ascendcl::sys::api()` with the raw handles the safe types expose",
    "(`Stream::as_raw`, `DeviceBuffer::as_ptr`/`as_mut_ptr`, `Device::id`, `Context::as_raw`,",
    "`Event::as_raw`, `Claimed::as_mut_ptr` inside a `Stream::scope`), after `Stream::make_current` /",
    "`Device::make_current`.",
    "",
    "Regenerate with `crates/ascendcl/scripts/gen-api-map.py` (the mapping is",
    "`crates/ascendcl/scripts/api-map.tsv`; a test checks it against the crate's FFI calls).",
    "",
    "## Concepts",
    "",
    "| runtime concept | Rust type | notes |",
    "|---|---|---|",
]
concepts = [
    ("`aclInit` … `aclFinalize`", "`Runtime`", "clonable process-wide handle; the first handle initialises, the last drop finalises"),
    ("backend (CANN library / emulator)", "`BackendChoice` (= `ascendcl_sys::Choice`), `BackendInfo`, `install_backend`", "`ASCENDCL_BACKEND=cann|emulator|auto`; `Runtime::backend()` reports the library, SoC and ACL version"),
    ("device set on a thread", "`Device<'rt>`", "`!Send`/`!Sync`; borrows the `Runtime`"),
    ("context", "`Context<'d>`, `Bound`", "`Context::bind(|bound| …)` scopes the current context"),
    ("stream", "`Stream<'a>`, `StreamFlags`, `StreamStatus`, `FailureMode`", "borrows its device or context"),
    ("event", "`Event<'d>`, `EventFlags`", "elapsed time as `Duration`"),
    ("device memory", "`DeviceBuffer<'d, T>`, `DeviceSlice`, `DeviceSliceMut`, `MallocPolicy`, `MallocFlags`, `MallocConfig`", "`T: DeviceRepr` (plain data)"),
    ("pinned host memory", "`HostBuffer<'d, T>`", "derefs to `[T]`"),
    ("registered host memory", "`HostRegistration<'a, T>`, `HostRegisterType`, `HostRegisterFlags`", "borrows the slice while registered"),
    ("copy direction", "`MemcpyKind`, `MemoryLocation`", "inferred from the endpoint types"),
    ("copy endpoints", "`CopySource`, `CopyDest`, `RawRegion`", "slices, arrays, `Vec`, host/device buffers and views"),
    ("asynchronous work", "`Stream::scope`, `Scope`, `Claimed`, `AsyncSource`, `AsyncDest`", "the scope waits for the stream before returning, also on panic"),
    ("peer access", "`PeerAccess<'a, 'b>`", "the only path for copies between devices"),
    ("host callbacks", "`HostFnHandle`, `ReportSubscription`, `CallbackBlock`", "panics are caught and reported"),
    ("`aclError`", "`Error`, `Result`, `error_name`, `error_code`, `error_codes`", "API name, code, symbolic name, `aclGetRecentErrMsg`"),
    ("release failures in `Drop`", "`take_drop_errors`, `drop_errors_overflow`", "explicit `free`/`destroy`/`reset`/`finalize` return them instead"),
]
for c in concepts:
    out.append("| %s | %s | %s |" % tuple(cell(x) for x in c))
out += ["", "## Wrapped functions"]
fam = None
for name, rust, family in rows:
    if family != fam:
        out += ["", "### " + family, "", "| C function | Rust |", "|---|---|"]
        fam = family
    out.append("| `%s` | %s |" % (name, cell(rust)))
out += [
    "",
    "## Not wrapped (raw access through `ascendcl::sys`)",
    "",
    "These %d functions have no safe wrapper; `ascendcl::sys::api().<name>` calls them. A backend" % len(rest),
    "that lacks one returns 207000 and `ascendcl_sys::take_missing_symbol()` names it.",
    "",
]
groups = {}
for n in rest:
    m = re.match(r"(acl(?:rt|mdl|sys)?)", n)
    key = {
        "aclmdl": "Model runtime instances and dump (`aclmdl*`)",
        "aclsys": "System information (`aclsys*`)",
        "acl": "Data buffers, float16, init/finalize callbacks, CANN attributes (`acl*`)",
    }.get(m.group(1), "Runtime (`aclrt*`)")
    groups.setdefault(key, []).append(n)
for k in sorted(groups):
    out.append("**%s** (%d): " % (k, len(groups[k])) + ", ".join("`%s`" % n for n in groups[k]))
    out.append("")
open(os.path.join(root, "docs/api-map.md"), "w").write("\n".join(out))

# The crate docs include the wrapped-function table (one table, family as a column).
table = ["| C function | Rust | family |", "|---|---|---|"]
for name, rust, family in rows:
    table.append("| `%s` | %s | %s |" % (name, cell(rust), family))
open(os.path.join(here, "..", "src", "api_table.md"), "w").write("\n".join(table) + "\n")
print("wrapped %d, not wrapped %d, total %d" % (len(rows), len(rest), len(names)))
