//! Reading AscendC sources: the kernels they define (`__global__` functions: names, parameter
//! lists, core kinds, template parameters, namespaces), the instantiations of template kernels
//! they write, the `kernel<<<blockDim, dyn, stream>>>(args)` launches they contain, their
//! `asm("trap")` statements and their `main`.
//!
//! This is a tokenizer, not a C++ parser: comments, string and character literals (raw strings
//! included) and preprocessor lines are skipped (the code of every `#if` branch is read), braces
//! are counted, and kernels are recognised at namespace scope (or inside `extern "C" { ... }`).
//!
//! What [`Scan`] records is the interface of the launcher generators: [`Scan::kernels`] are the
//! kernels a Rust launcher can call by name; [`Scan::templates`] the template kernels, with
//! their template parameter lists, and [`Scan::instantiations`] the instantiations written in
//! the source. In host mode every kernel the compiled code instantiates gets an entry in the
//! kernel binary, under the name the C++ compiler prints for it (`ascendc_host/entry.h`).

mod kernels;
mod params;
mod rewrite;
mod tokens;

use std::fmt;

// The whole representation, including what only the launcher generators read.
#[allow(unused_imports)]
pub use kernels::{CoreKind, Instantiation, InstantiationOrigin, Kernel, TemplateParam};
#[allow(unused_imports)]
pub use params::{Param, ParamKind, Prim};
pub use rewrite::{Edit, LaunchSite, rewrite};

use kernels::{Scope, kernel_at, scope_of_brace};
use tokens::{Tk, tokenize};

/// Something in a source the build cannot use; reported as a build warning.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    /// 1-based line.
    pub line: usize,
    /// What and why.
    pub message: String,
}

impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

/// What a source holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scan {
    /// Non-template kernels at file scope (or in `extern "C" { }`), in order of first appearance
    /// (a declaration followed by its definition counts once): those a Rust launcher calls.
    pub kernels: Vec<Kernel>,
    /// Template kernels at namespace scope, in order of first appearance.
    pub templates: Vec<Kernel>,
    /// Non-template kernels inside a namespace (their binary names are qualified: `ns::k`).
    pub nested: Vec<Kernel>,
    /// Instantiations of template kernels written in the source: explicit instantiations and
    /// `k<args><<<...>>>` launches, in source order.
    pub instantiations: Vec<Instantiation>,
    /// Launch sites, in source order.
    pub launches: Vec<LaunchSite>,
    /// The `asm("trap")` statements (byte ranges).
    pub traps: Vec<(usize, usize)>,
    /// The name of a `main` defined at file scope (byte range), if any.
    pub main: Option<(usize, usize)>,
    /// Unqualified `printf` and `assert` calls in device code (byte ranges of the names) and
    /// what they become: the device's `printf` and `assert`.
    pub device_calls: Vec<((usize, usize), &'static str)>,
    /// Whether the source synchronises blocks with each other (`SyncAll`, `CrossCore*Flag`,
    /// `IBSet`/`IBWait`, `GroupBarrier`, ...): its launches need every block running at once.
    pub block_sync: bool,
    /// Things skipped, with the reason.
    pub notes: Vec<Note>,
}

/// Calls that make blocks wait for one another.
const BLOCK_SYNC_CALLS: [&str; 9] = [
    "SyncAll",
    "CrossCoreSetFlag",
    "CrossCoreWaitFlag",
    "IBSet",
    "IBWait",
    "GroupBarrier",
    "NotifyNextBlock",
    "WaitPreBlock",
    // Polled by a core that waits for others' writes to global memory.
    "DataCacheCleanAndInvalid",
];

impl Scan {
    /// Every kernel the source declares: file-scope, template and namespaced ones.
    pub fn all_kernels(&self) -> impl Iterator<Item = &Kernel> {
        self.kernels
            .iter()
            .chain(self.templates.iter())
            .chain(self.nested.iter())
    }

    /// The edits of host mode: launches, traps and, with `rename_main`, `main` renamed to
    /// `main_name`.
    pub fn host_edits(&self, rename_main: Option<&str>) -> Vec<Edit> {
        let mut edits: Vec<Edit> = self.launches.iter().map(LaunchSite::edit).collect();
        edits.extend(self.traps.iter().map(|&span| Edit {
            span,
            text: "::ascendc_host::trap_instruction()".into(),
        }));
        edits.extend(self.device_calls.iter().map(|&(span, text)| Edit {
            span,
            text: text.into(),
        }));
        if let (Some(span), Some(name)) = (self.main, rename_main) {
            edits.push(Edit {
                span,
                text: name.to_string(),
            });
        }
        edits.sort_by_key(|e| e.span.0);
        edits
    }
}

/// Reads the kernels and launch sites of a source.
pub fn scan(src: &str) -> Scan {
    let toks = tokenize(src);
    let mut out = Scan::default();
    let mut scopes: Vec<Scope> = Vec::new();
    let mut file_scope = vec![false; toks.len()];
    for (i, t) in toks.iter().enumerate() {
        file_scope[i] = scopes.iter().all(|s| *s == Scope::ExternC);
        match t.kind {
            Tk::Punct(b'{') => scopes.push(scope_of_brace(src, &toks, i)),
            Tk::Punct(b'}') => {
                scopes.pop();
            }
            Tk::Open3 => {
                if let Some(site) = rewrite::launch_site(src, &toks, i) {
                    out.launches.push(site);
                }
            }
            Tk::Ident if BLOCK_SYNC_CALLS.contains(&t.text(src)) => out.block_sync = true,
            Tk::Ident if t.text(src) == "__global__" => {
                let in_code = scopes
                    .iter()
                    .any(|s| matches!(s, Scope::Class | Scope::Block));
                match kernel_at(src, &toks, i) {
                    Ok(Some(found)) if in_code => out.notes.push(Note {
                        line: found.kernel.line,
                        message: format!(
                            "kernel `{}` is not at namespace scope (inside a class or function): \
                             it gets no entry and no launcher",
                            found.kernel.name
                        ),
                    }),
                    Ok(Some(found)) => {
                        let mut kernel = found.kernel;
                        kernel.namespace = scopes
                            .iter()
                            .filter_map(|s| match s {
                                Scope::Namespace(n) => Some(n.clone()),
                                _ => None,
                            })
                            .collect();
                        if let Some(args) = found.explicit_args {
                            out.instantiations.push(Instantiation {
                                kernel: kernel.qualified_name(),
                                args,
                                line: kernel.line,
                                origin: InstantiationOrigin::Explicit,
                            });
                        } else {
                            add_kernel(&mut out, kernel);
                        }
                    }
                    Ok(None) => {}
                    Err(note) => out.notes.push(note),
                }
            }
            _ => {}
        }
    }
    out.traps = rewrite::trap_sites(src, &toks);
    out.main = rewrite::main_site(src, &toks, &file_scope);
    out.device_calls = rewrite::device_calls(src, &toks);
    let launched: Vec<Instantiation> = out
        .launches
        .iter()
        .filter_map(|l| {
            let (base, rest) = l.callee.split_once('<')?;
            let base = base.trim().trim_start_matches("::");
            let known = out.templates.iter().any(|k| {
                let q = k.qualified_name();
                q == base || q.ends_with(&format!("::{base}")) || k.name == base
            });
            known.then(|| Instantiation {
                kernel: base.to_string(),
                args: rest.trim_end().trim_end_matches('>').trim().to_string(),
                line: l.line,
                origin: InstantiationOrigin::Launch,
            })
        })
        .collect();
    out.instantiations.extend(launched);
    out.instantiations.sort_by_key(|i| i.line);
    for k in &out.templates {
        out.notes.push(Note {
            line: k.line,
            message: format!(
                "template kernel `{}`: the instantiations its C++ launches (or explicit \
                 instantiations) make get entries in the kernel binary; no Rust launcher is \
                 generated for it",
                k.qualified_name()
            ),
        });
    }
    for k in &out.nested {
        out.notes.push(Note {
            line: k.line,
            message: format!(
                "kernel `{}` is inside a namespace: it gets an entry in the kernel binary under \
                 that name, no Rust launcher",
                k.qualified_name()
            ),
        });
    }
    out.notes.sort_by_key(|n| n.line);
    out
}

/// Records a kernel declaration in its list; a second declaration of the same kernel (its
/// definition after a prototype) completes the first.
fn add_kernel(out: &mut Scan, kernel: Kernel) {
    let list = if kernel.template.is_some() {
        &mut out.templates
    } else if kernel.namespace.is_empty() {
        &mut out.kernels
    } else {
        &mut out.nested
    };
    match list
        .iter_mut()
        .find(|k| k.qualified_name() == kernel.qualified_name())
    {
        Some(seen) if seen.params.len() != kernel.params.len() => out.notes.push(Note {
            line: kernel.line,
            message: format!(
                "kernel `{}` is declared again with {} parameter(s) instead of {}: overloaded \
                 kernels get no launcher",
                kernel.name,
                kernel.params.len(),
                seen.params.len()
            ),
        }),
        Some(seen) => {
            seen.defined |= kernel.defined;
            if seen.kind == CoreKind::Unspecified {
                seen.kind = kernel.kind;
            }
        }
        None => list.push(kernel),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ADD: &str = r#"
#include "kernel_operator.h"
// a comment with add<<<1, nullptr, s>>>(x) inside
/* __global__ void not_a_kernel(int x); */
constexpr int32_t BUFFER_NUM = 2;
extern "C" __global__ __aicore__ void add_custom(GM_ADDR x, GM_ADDR y, GM_ADDR z)
{
    const char* s = "k<<<1, 2, 3>>>(y)";
    KernelAdd op;
}
extern "C" __global__ __aicore__ void scale(__gm__ const float* __restrict__ src,
                                             __gm__ float *dst, float alpha, uint32_t n);
extern "C" __global__ __aicore__ void scale(__gm__ const float* __restrict__ src,
                                             __gm__ float *dst, float alpha, uint32_t n) {}
#ifndef ASCENDC_CPU_DEBUG
void add_custom_do(uint32_t blockDim, void* stream, uint8_t* x, uint8_t* y, uint8_t* z)
{
    add_custom<<<blockDim, nullptr,
                 stream>>>(x, y, z);
}
#endif
"#;

    #[test]
    fn finds_kernels_and_their_parameters() {
        let s = scan(ADD);
        assert_eq!(s.notes, vec![]);
        let names: Vec<_> = s.kernels.iter().map(|k| k.name.as_str()).collect();
        assert_eq!(names, ["add_custom", "scale"]);
        let add = &s.kernels[0];
        assert!(add.extern_c);
        assert_eq!(add.line, 6);
        assert_eq!(add.params.len(), 3);
        assert_eq!(add.params[0].name.as_deref(), Some("x"));
        assert_eq!(add.params[0].ty, "GM_ADDR");
        assert_eq!(
            add.params[0].kind,
            ParamKind::Gm {
                writable: true,
                elem: None
            }
        );
        let scale = &s.kernels[1];
        assert_eq!(scale.params[0].ty, "__gm__ const float* __restrict__");
        assert_eq!(
            scale.params[0].kind,
            ParamKind::Gm {
                writable: false,
                elem: Some(Prim::F32)
            }
        );
        assert_eq!(
            scale.params[1].kind,
            ParamKind::Gm {
                writable: true,
                elem: Some(Prim::F32)
            }
        );
        assert_eq!(scale.params[2].kind, ParamKind::Scalar(Prim::F32));
        assert_eq!(scale.params[3].kind, ParamKind::Scalar(Prim::U32));
        assert_eq!(scale.params[3].name.as_deref(), Some("n"));
    }

    #[test]
    fn classifies_parameter_types() {
        let src = "extern \"C\" __global__ void k(uint32_t, unsigned int u, const half h, \
                   __gm__ half* const p, __gm__ void* v, Tiling t, __gm__ Tiling* tp, int** pp, \
                   const float& r, bfloat16_t b, __gm__ const GM_ADDR* g) {}";
        let k = &scan(src).kernels[0];
        let kinds: Vec<_> = k.params.iter().map(|p| p.kind.clone()).collect();
        assert_eq!(
            kinds,
            vec![
                ParamKind::Scalar(Prim::U32),
                ParamKind::Scalar(Prim::U32),
                ParamKind::Scalar(Prim::Half),
                ParamKind::Gm {
                    writable: true,
                    elem: Some(Prim::Half)
                },
                ParamKind::Gm {
                    writable: true,
                    elem: None
                },
                ParamKind::Other,
                ParamKind::Gm {
                    writable: true,
                    elem: None
                },
                ParamKind::Other,
                ParamKind::Other,
                ParamKind::Scalar(Prim::Bf16),
                ParamKind::Other,
            ]
        );
        assert_eq!(k.params[0].name, None);
        assert_eq!(k.params[1].name.as_deref(), Some("u"));
        assert_eq!(k.params[1].ty, "unsigned int");
        assert_eq!(k.params[3].ty, "__gm__ half* const");
    }

    #[test]
    fn templates_and_nested_kernels_are_recorded_apart() {
        let src = "template <typename T, uint32_t N = 8> __global__ __aicore__ void t(__gm__ T* p) {}\n\
                   namespace ns { extern \"C\" __global__ void inner(int x) {} }\n\
                   extern \"C\" { __global__ __aicore__ void in_block(int x) {} }\n\
                   struct S { __global__ void member(int x) {} };\n\
                   extern \"C\" __global__ void none(void) {}";
        let s = scan(src);
        let names: Vec<_> = s.kernels.iter().map(|k| k.name.as_str()).collect();
        assert_eq!(names, ["in_block", "none"]);
        assert!(s.kernels[1].params.is_empty());
        assert_eq!(s.templates.len(), 1);
        let t = &s.templates[0];
        let tp = t.template.as_ref().unwrap();
        assert_eq!(tp.len(), 2);
        assert!(tp[0].is_type);
        assert_eq!(tp[0].name.as_deref(), Some("T"));
        assert_eq!(tp[1].name.as_deref(), Some("N"));
        assert!(!tp[1].is_type);
        assert_eq!(tp[1].default.as_deref(), Some("8"));
        assert_eq!(s.nested.len(), 1);
        assert_eq!(s.nested[0].qualified_name(), "ns::inner");
        assert_eq!(s.notes.len(), 3, "{:?}", s.notes);
        assert!(s.notes[0].message.contains("template kernel `t`"));
        assert!(s.notes[1].message.contains("`ns::inner`"));
        assert!(s.notes[2].message.contains("`member`"));
    }

    #[test]
    fn rewrites_launches_keeping_lines() {
        let s = scan(ADD);
        assert_eq!(s.launches.len(), 1);
        let site = &s.launches[0];
        assert_eq!(site.callee, "add_custom");
        assert_eq!(site.line, 18);
        let out = rewrite(ADD, &s.host_edits(None));
        assert!(
            out.contains(
                "::ascendc_host::launch<add_custom>(blockDim, nullptr,\n                 stream)(x, y, z);"
            ),
            "{out}"
        );
        assert_eq!(out.lines().count(), ADD.lines().count());
        // Comments and strings are left alone.
        assert!(out.contains("add<<<1, nullptr, s>>>(x) inside"));
        assert!(out.contains("\"k<<<1, 2, 3>>>(y)\""));
        assert!(scan(&out).launches.is_empty());
    }

    #[test]
    fn rewrites_qualified_and_template_callees() {
        let src = "void f(void* s) { ns::k<<<8, nullptr, s>>>(a); t<half><<<2, 0, s>>>(b, c); }";
        let s = scan(src);
        let callees: Vec<_> = s.launches.iter().map(|l| l.callee.as_str()).collect();
        assert_eq!(callees, ["ns::k", "t<half>"]);
        let out = rewrite(src, &s.host_edits(None));
        assert_eq!(
            out,
            "void f(void* s) { ::ascendc_host::launch<ns::k>(8, nullptr, s)(a); \
             ::ascendc_host::launch<t<half>>(2, 0, s)(b, c); }"
        );
    }

    #[test]
    fn ignores_what_is_not_a_launch() {
        let src = "int a = b <<< c; x<<<1>>> y; std::vector<std::vector<std::vector<int>>> v;";
        assert!(scan(src).launches.is_empty());
    }

    #[test]
    fn raw_strings_and_preprocessor_lines_are_skipped() {
        let src = "#define LAUNCH(k) k<<<1, nullptr, s>>>()\n\
                   const char* r = R\"x(k<<<1,2,3>>>(a) \" )\" )x\";\n\
                   #if 0 /* multi\n line */\n#endif\n\
                   void g(void* s) { k<<<1, nullptr, s>>>(); }";
        let s = scan(src);
        assert_eq!(s.launches.len(), 1);
        assert_eq!(s.launches[0].line, 6);
    }

    #[test]
    fn kernel_kinds_come_from_qualifiers_and_task_types() {
        let src = "__global__ __vector__ void v(GM_ADDR x) {}\n\
                   __global__ __cube__ void c(GM_ADDR x) {}\n\
                   __global__ __mix__(1, 2) void m(GM_ADDR a, __kfc_workspace__ GM_ADDR w, \
                   AscendC::tiling::TCubeTiling t) {}\n\
                   extern \"C\" __global__ __aicore__ void d(GM_ADDR x) { \
                   KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_1); }\n\
                   extern \"C\" __global__ __aicore__ void plain(GM_ADDR x) {}";
        let s = scan(src);
        let kinds: Vec<_> = s
            .kernels
            .iter()
            .map(|k| (k.name.as_str(), k.kind))
            .collect();
        assert_eq!(
            kinds,
            [
                ("v", CoreKind::Vector),
                ("c", CoreKind::Cube),
                ("m", CoreKind::Mix { cube: 1, vector: 2 }),
                ("d", CoreKind::Mix { cube: 1, vector: 1 }),
                ("plain", CoreKind::Unspecified)
            ]
        );
        let m = &s.kernels[2];
        assert_eq!(m.params.len(), 3);
        assert!(m.params[1].workspace && !m.params[0].workspace);
        assert_eq!(m.params[1].ty, "GM_ADDR");
        assert_eq!(m.params[2].kind, ParamKind::Other);
        assert!(!s.block_sync);
    }

    #[test]
    fn instantiations_traps_main_and_block_sync_are_found() {
        let src = "template <uint32_t N> __global__ __vector__ void k(__gm__ float* x) \
                   { asm volatile(\"trap\"); AscendC::SyncAll(); }\n\
                   template __global__ __vector__ void k<64>(__gm__ float* x);\n\
                   int32_t main(int32_t argc, char* argv[])\n{\n    constexpr uint32_t n = 8;\n    \
                   k<n><<<8, 0, stream>>>(x);\n    return 0;\n}\n";
        let s = scan(src);
        assert_eq!(s.templates.len(), 1);
        let inst: Vec<_> = s
            .instantiations
            .iter()
            .map(|i| (i.kernel.as_str(), i.args.as_str(), i.origin))
            .collect();
        assert_eq!(
            inst,
            [
                ("k", "64", InstantiationOrigin::Explicit),
                ("k", "n", InstantiationOrigin::Launch)
            ]
        );
        assert_eq!(s.traps.len(), 1);
        assert!(s.block_sync);
        let (a, b) = s.main.unwrap();
        assert_eq!(&src[a..b], "main");
        let out = rewrite(src, &s.host_edits(Some("renamed_main")));
        assert!(out.contains("{ ::ascendc_host::trap_instruction(); AscendC::SyncAll(); }"));
        assert!(out.contains("int32_t renamed_main(int32_t argc"));
        assert!(out.contains("::ascendc_host::launch<k<n>>(8, 0, stream)(x);"));
        assert_eq!(out.lines().count(), src.lines().count());
    }
}
