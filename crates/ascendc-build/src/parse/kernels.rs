//! Kernel declarations: `__global__` functions, their qualifiers (`__vector__`, `__cube__`,
//! `__mix__(c, v)`, `KERNEL_TASK_TYPE_DEFAULT(...)` in the body), template parameter lists,
//! enclosing namespaces and explicit instantiations.

use super::Note;
use super::params::{Param, split_params};
use super::tokens::{Tk, Tok, line_of, matching};

/// The cores a kernel runs on, as its qualifier (or `KERNEL_TASK_TYPE_DEFAULT` in its body)
/// declares. Without either, a kernel runs on vector cores in host mode (the kind the device
/// compiler infers for code without Cube instructions).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum CoreKind {
    /// No qualifier and no `KERNEL_TASK_TYPE_DEFAULT`.
    #[default]
    Unspecified,
    /// `__vector__`, `KERNEL_TYPE_AIV_ONLY`: one vector core (AIV) per block.
    Vector,
    /// `__cube__`, `KERNEL_TYPE_AIC_ONLY`: one cube core (AIC) per block.
    Cube,
    /// `__mix__(cube, vector)`, `KERNEL_TYPE_MIX_*`: per block, `cube` AIC and `vector` AIV
    /// cores running the kernel side by side (ratios 1:0, 0:1, 1:1, 1:2).
    Mix {
        /// Cube cores per block.
        cube: u8,
        /// Vector cores per block.
        vector: u8,
    },
}

impl CoreKind {
    /// `(cube, vector)` cores per block.
    pub fn cores(self) -> (u8, u8) {
        match self {
            CoreKind::Unspecified | CoreKind::Vector => (0, 1),
            CoreKind::Cube => (1, 0),
            CoreKind::Mix { cube, vector } => (cube, vector),
        }
    }
}

/// One parameter of a template kernel's template parameter list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateParam {
    /// As written (`typename T`, `uint32_t N = 8`).
    pub text: String,
    /// Its name, when it has one.
    pub name: Option<String>,
    /// `typename` / `class` (a type), else a value of the type written before the name.
    pub is_type: bool,
    /// The default argument, as written.
    pub default: Option<String>,
}

/// A kernel: a `__global__` function.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kernel {
    /// The function name (unqualified).
    pub name: String,
    /// Its parameters, in order.
    pub params: Vec<Param>,
    /// 1-based line of the name.
    pub line: usize,
    /// Whether it was declared `extern "C"`.
    pub extern_c: bool,
    /// The cores it runs on.
    pub kind: CoreKind,
    /// The namespaces around it, outermost first (empty at file scope).
    pub namespace: Vec<String>,
    /// Its template parameter list, for a template kernel (`None` otherwise).
    pub template: Option<Vec<TemplateParam>>,
    /// Whether the source defines its body (not only declares it).
    pub defined: bool,
}

impl Kernel {
    /// The name qualified by its namespaces (`ns::k`); what the host binary calls a
    /// non-template kernel. A template kernel's instantiations are called by this name followed
    /// by their template arguments as the C++ compiler prints them (`k<float, 8>`).
    pub fn qualified_name(&self) -> String {
        let mut s = String::new();
        for n in &self.namespace {
            s.push_str(n);
            s.push_str("::");
        }
        s.push_str(&self.name);
        s
    }
}

/// Where an instantiation of a template kernel was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InstantiationOrigin {
    /// An explicit instantiation (`template __global__ void k<float>(...);`).
    Explicit,
    /// A `k<...><<<...>>>(...)` launch in the source (its arguments may name local constants).
    Launch,
}

/// An instantiation of a template kernel written in a source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instantiation {
    /// The kernel's name as written before the template arguments (`k`, `ns::k`).
    pub kernel: String,
    /// The template arguments as written, without the angle brackets.
    pub args: String,
    /// 1-based line.
    pub line: usize,
    /// Explicit instantiation or launch site.
    pub origin: InstantiationOrigin,
}

/// What encloses a token: how the scanner classifies each `{`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Scope {
    /// `extern "C" {`: no scope of its own.
    ExternC,
    /// `namespace n {` (anonymous: an empty name).
    Namespace(String),
    /// A class, struct or union body.
    Class,
    /// Anything else: a function body, an initializer.
    Block,
}

/// What opens the `{` at `at`.
pub(crate) fn scope_of_brace(src: &str, toks: &[Tok], at: usize) -> Scope {
    if at >= 2 && toks[at - 2].is(src, "extern") && toks[at - 1].kind == Tk::Str {
        return Scope::ExternC;
    }
    // The head of the statement the brace belongs to.
    let mut s = at;
    while s > 0 && !matches!(toks[s - 1].kind, Tk::Punct(b';' | b'{' | b'}')) {
        s -= 1;
    }
    let head = &toks[s..at];
    if let Some(n) = head.iter().position(|t| t.is(src, "namespace")) {
        let name: String = head[n + 1..]
            .iter()
            .filter(|t| t.kind == Tk::Ident || t.kind == Tk::Scope)
            .map(|t| t.text(src))
            .collect();
        return Scope::Namespace(name);
    }
    // A class head: `struct X {`, `template <class T> class X : public B {` (no parentheses
    // outside a template parameter list, which would make it a function).
    let mut depth = 0i32;
    let mut class = false;
    for t in head {
        match t.kind {
            Tk::Punct(b'<') => depth += 1,
            Tk::Punct(b'>') => depth -= 1,
            Tk::Punct(b'(') if depth <= 0 => return Scope::Block,
            Tk::Punct(b'=') if depth <= 0 => return Scope::Block,
            Tk::Ident if depth <= 0 && matches!(t.text(src), "struct" | "class" | "union") => {
                class = true
            }
            _ => {}
        }
    }
    if class { Scope::Class } else { Scope::Block }
}

/// Identifiers followed by a parenthesised group that belongs to a declaration's qualifiers, not
/// its parameter list.
const ATTRIBUTE_CALLS: [&str; 6] = [
    "__mix__",
    "__attribute__",
    "__launch_bounds__",
    "__schedmode__",
    "alignas",
    "__declspec",
];

/// A `__global__` declaration: the kernel, and the template arguments when it is an explicit
/// instantiation.
pub(crate) struct Found {
    pub kernel: Kernel,
    pub explicit_args: Option<String>,
}

/// The kernel whose declaration contains the `__global__` token at `at`.
pub(crate) fn kernel_at(src: &str, toks: &[Tok], at: usize) -> Result<Option<Found>, Note> {
    // Back to the start of the declaration.
    let mut s = at;
    while s > 0 && !matches!(toks[s - 1].kind, Tk::Punct(b';' | b'}' | b'{')) {
        s -= 1;
    }
    let head = &toks[s..at];
    let extern_c = head
        .windows(2)
        .any(|w| w[0].is(src, "extern") && w[1].kind == Tk::Str && w[1].text(src) == "\"C\"");
    let mut kind = CoreKind::Unspecified;
    let mut template = None;
    let mut explicit = false;
    let mut k = 0;
    while k < head.len() {
        let t = head[k];
        if t.is(src, "template") {
            if head.get(k + 1).is_some_and(|n| n.kind == Tk::Punct(b'<')) {
                let open = s + k + 1;
                let Some(close) = matching(toks, open) else {
                    return Err(Note {
                        line: line_of(src, t.start),
                        message: "unbalanced template parameter list".into(),
                    });
                };
                template = Some(template_params(src, &toks[open + 1..close]));
                k = close - s + 1;
                continue;
            }
            explicit = true;
        }
        qualifier(src, head, k, &mut kind);
        k += 1;
    }
    // Forward to the parameter list, past qualifiers such as `__mix__(1, 2)`.
    let mut j = at + 1;
    loop {
        let Some(t) = toks.get(j) else {
            return Ok(None);
        };
        match t.kind {
            Tk::Punct(b';' | b'{' | b'}') => return Ok(None),
            Tk::Ident
                if ATTRIBUTE_CALLS.contains(&t.text(src))
                    && toks.get(j + 1).is_some_and(|n| n.kind == Tk::Punct(b'(')) =>
            {
                qualifier(src, toks, j, &mut kind);
                j = matching(toks, j + 1).map_or(toks.len(), |c| c + 1);
                continue;
            }
            Tk::Ident => qualifier(src, toks, j, &mut kind),
            Tk::Punct(b'(') => break,
            _ => {}
        }
        j += 1;
    }
    // The name: the identifier before the list, or before `<args>` of an explicit
    // instantiation.
    let mut name_at = j.checked_sub(1);
    let mut explicit_args = None;
    if let Some(n) = name_at
        && toks[n].kind == Tk::Punct(b'>')
    {
        let mut depth = 0i32;
        let mut m = n;
        loop {
            match toks[m].kind {
                Tk::Punct(b'>') => depth += 1,
                Tk::Punct(b'<') => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                _ => {}
            }
            if m == 0 {
                return Ok(None);
            }
            m -= 1;
        }
        explicit_args = Some(src[toks[m].end..toks[n].start].trim().to_string());
        name_at = m.checked_sub(1);
    }
    let Some(name_at) = name_at.filter(|&n| toks[n].kind == Tk::Ident) else {
        return Ok(None);
    };
    let name = toks[name_at].text(src).to_string();
    let line = line_of(src, toks[name_at].start);
    let open = j;
    let Some(close) = matching(toks, open) else {
        return Err(Note {
            line,
            message: format!("kernel `{name}`: unbalanced parameter list"),
        });
    };
    let params = split_params(src, &toks[open + 1..close]);
    // A definition has a body: `KERNEL_TASK_TYPE_DEFAULT(...)` in it declares the kind.
    let mut defined = false;
    let mut b = close + 1;
    while let Some(t) = toks.get(b) {
        match t.kind {
            Tk::Punct(b'{') => {
                defined = true;
                let end = matching(toks, b).unwrap_or(toks.len());
                if kind == CoreKind::Unspecified {
                    kind = body_kind(src, &toks[b..end]);
                }
                break;
            }
            Tk::Punct(b';') => break,
            _ => b += 1,
        }
    }
    if explicit && explicit_args.is_none() {
        return Ok(None);
    }
    Ok(Some(Found {
        kernel: Kernel {
            name,
            params,
            line,
            extern_c,
            kind,
            namespace: Vec::new(),
            template,
            defined,
        },
        explicit_args: if explicit { explicit_args } else { None },
    }))
}

/// Applies the core-type qualifier at `toks[k]`, if it is one.
fn qualifier(src: &str, toks: &[Tok], k: usize, kind: &mut CoreKind) {
    match toks[k].text(src) {
        "__vector__" if toks[k].kind == Tk::Ident => *kind = CoreKind::Vector,
        "__cube__" if toks[k].kind == Tk::Ident => *kind = CoreKind::Cube,
        "__mix__" if toks[k].kind == Tk::Ident => {
            let nums: Vec<u8> = toks
                .get(k + 1..)
                .unwrap_or(&[])
                .iter()
                .take_while(|t| t.kind != Tk::Punct(b')'))
                .filter(|t| t.kind == Tk::Number)
                .filter_map(|t| t.text(src).parse().ok())
                .collect();
            let (cube, vector) = match nums.as_slice() {
                [c, v] => (*c, *v),
                _ => (1, 2),
            };
            *kind = CoreKind::Mix { cube, vector };
        }
        _ => {}
    }
}

/// The kind a `KERNEL_TASK_TYPE_DEFAULT(type)` statement in a kernel body declares.
fn body_kind(src: &str, body: &[Tok]) -> CoreKind {
    for (i, t) in body.iter().enumerate() {
        if t.is(src, "KERNEL_TASK_TYPE_DEFAULT") {
            let arg = body
                .get(i + 2..)
                .unwrap_or(&[])
                .iter()
                .take_while(|t| t.kind != Tk::Punct(b')'))
                .filter(|t| t.kind == Tk::Ident)
                .last()
                .map(|t| t.text(src));
            return match arg {
                Some("KERNEL_TYPE_AIV_ONLY") => CoreKind::Vector,
                Some("KERNEL_TYPE_AIC_ONLY") => CoreKind::Cube,
                Some("KERNEL_TYPE_MIX_AIV_1_0") => CoreKind::Mix { cube: 0, vector: 1 },
                Some("KERNEL_TYPE_MIX_AIC_1_0") => CoreKind::Mix { cube: 1, vector: 0 },
                Some("KERNEL_TYPE_MIX_AIC_1_1") => CoreKind::Mix { cube: 1, vector: 1 },
                Some("KERNEL_TYPE_MIX_AIC_1_2") => CoreKind::Mix { cube: 1, vector: 2 },
                _ => CoreKind::Unspecified,
            };
        }
    }
    CoreKind::Unspecified
}

/// The parameters of a template parameter list (the tokens between `<` and `>`).
fn template_params(src: &str, toks: &[Tok]) -> Vec<TemplateParam> {
    let mut groups: Vec<&[Tok]> = Vec::new();
    let (mut depth, mut start) = (0i32, 0usize);
    for (i, t) in toks.iter().enumerate() {
        match t.kind {
            Tk::Punct(b'(' | b'<' | b'[' | b'{') => depth += 1,
            Tk::Punct(b')' | b'>' | b']' | b'}') => depth -= 1,
            Tk::Punct(b',') if depth == 0 => {
                groups.push(&toks[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if start < toks.len() {
        groups.push(&toks[start..]);
    }
    groups
        .into_iter()
        .filter(|g| !g.is_empty())
        .map(|g| {
            let text = src[g[0].start..g[g.len() - 1].end].to_string();
            let eq = g.iter().position(|t| t.kind == Tk::Punct(b'='));
            let decl = &g[..eq.unwrap_or(g.len())];
            let default = eq.map(|e| src[g[e].end..g[g.len() - 1].end].trim().to_string());
            let is_type = decl
                .first()
                .is_some_and(|t| t.is(src, "typename") || t.is(src, "class"));
            let name = decl
                .last()
                .filter(|t| t.kind == Tk::Ident && decl.len() >= 2)
                .map(|t| t.text(src).to_string());
            TemplateParam {
                text,
                name,
                is_type,
                default,
            }
        })
        .collect()
}
