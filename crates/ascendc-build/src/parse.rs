//! Reading AscendC sources: the kernels they define (`__global__` functions and their parameter
//! lists) and the `kernel<<<blockDim, l2ctrl, stream>>>(args)` launches they contain.
//!
//! This is a tokenizer, not a C++ parser: comments, string and character literals (raw strings
//! included) and preprocessor lines are skipped, braces are counted, and kernels are recognised
//! only at namespace scope of the file (or inside `extern "C" { ... }`).

use std::fmt;

/// A scalar type the launchers know, by its C++ spelling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Prim {
    /// `int8_t`, `signed char`.
    I8,
    /// `uint8_t`, `unsigned char`.
    U8,
    /// `int16_t`, `short`.
    I16,
    /// `uint16_t`, `unsigned short`.
    U16,
    /// `int32_t`, `int`.
    I32,
    /// `uint32_t`, `unsigned`, `unsigned int`.
    U32,
    /// `int64_t`, `long long`, `long` (LP64).
    I64,
    /// `uint64_t`, `unsigned long long`, `unsigned long` (LP64).
    U64,
    /// `float`.
    F32,
    /// `double`.
    F64,
    /// `half` (IEEE binary16), carried as its bits in a `u16`.
    Half,
    /// `bfloat16_t`, carried as its bits in a `u16`.
    Bf16,
    /// `bool`.
    Bool,
    /// `size_t`.
    Usize,
}

impl Prim {
    /// Looks a type up by its C++ spelling (qualifiers already removed, words joined by one space).
    pub fn from_cpp(name: &str) -> Option<Prim> {
        Some(match name {
            "int8_t" | "signed char" => Prim::I8,
            "uint8_t" | "unsigned char" => Prim::U8,
            "int16_t" | "short" | "short int" | "signed short" => Prim::I16,
            "uint16_t" | "unsigned short" | "unsigned short int" => Prim::U16,
            "int32_t" | "int" | "signed" | "signed int" => Prim::I32,
            "uint32_t" | "unsigned" | "unsigned int" => Prim::U32,
            "int64_t" | "long long" | "long long int" | "long" | "long int" => Prim::I64,
            "uint64_t" | "unsigned long long" | "unsigned long" | "unsigned long int" => Prim::U64,
            "float" => Prim::F32,
            "double" => Prim::F64,
            "half" => Prim::Half,
            "bfloat16_t" => Prim::Bf16,
            "bool" => Prim::Bool,
            "size_t" => Prim::Usize,
            _ => return None,
        })
    }

    /// The Rust type a launcher uses for it (`half` and `bfloat16_t` travel as their bits).
    pub fn rust(self) -> &'static str {
        match self {
            Prim::I8 => "i8",
            Prim::U8 => "u8",
            Prim::I16 => "i16",
            Prim::U16 | Prim::Half | Prim::Bf16 => "u16",
            Prim::I32 => "i32",
            Prim::U32 => "u32",
            Prim::I64 => "i64",
            Prim::U64 => "u64",
            Prim::F32 => "f32",
            Prim::F64 => "f64",
            Prim::Bool => "bool",
            Prim::Usize => "usize",
        }
    }
}

/// What a kernel parameter is, as far as a launcher is concerned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParamKind {
    /// A global-memory pointer (`__gm__ T*`, `GM_ADDR`, any pointer).
    Gm {
        /// False when the pointee is `const`.
        writable: bool,
        /// The element type; `None` for `GM_ADDR`, `void` and types the generator does not know.
        elem: Option<Prim>,
    },
    /// A scalar passed by value.
    Scalar(Prim),
    /// Anything else (a struct by value, a reference, an array, a pointer to pointer): only the
    /// launch builder can pass it, as raw bytes.
    Other,
}

/// One kernel parameter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Param {
    /// Its name, when the declaration gives one.
    pub name: Option<String>,
    /// Its type as written, without the name (for the generated C++ that unpacks arguments).
    pub ty: String,
    /// Its classification.
    pub kind: ParamKind,
}

/// A kernel: a `__global__` function at file scope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kernel {
    /// The function name.
    pub name: String,
    /// Its parameters, in order.
    pub params: Vec<Param>,
    /// 1-based line of the name.
    pub line: usize,
    /// Whether it was declared `extern "C"`.
    pub extern_c: bool,
}

/// A `callee<<<config>>>` launch site.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchSite {
    /// Byte range of `callee<<<config>>>` in the source.
    pub span: (usize, usize),
    /// The callee as written (`add_custom`, `ns::k`, `k<half>`).
    pub callee: String,
    /// The text between `<<<` and `>>>`.
    pub config: String,
    /// 1-based line of `<<<`.
    pub line: usize,
}

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
    /// Kernels, in order of first appearance (a declaration followed by its definition counts once).
    pub kernels: Vec<Kernel>,
    /// Launch sites, in source order.
    pub launches: Vec<LaunchSite>,
    /// Things skipped, with the reason.
    pub notes: Vec<Note>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tk {
    Ident,
    Number,
    Str,
    Char,
    Punct(u8),
    /// `<<<`
    Open3,
    /// `>>>`
    Close3,
    /// `::`
    Scope,
}

#[derive(Debug, Clone, Copy)]
struct Tok {
    kind: Tk,
    start: usize,
    end: usize,
}

fn tokenize(src: &str) -> Vec<Tok> {
    let b = src.as_bytes();
    let mut toks = Vec::new();
    let mut i = 0;
    let mut line_start = true;
    while i < b.len() {
        let c = b[i];
        if c == b'\n' {
            line_start = true;
            i += 1;
            continue;
        }
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if c == b'#' && line_start {
            // A preprocessor line, with backslash continuations.
            while i < b.len() && b[i] != b'\n' {
                if b[i] == b'\\' && b.get(i + 1) == Some(&b'\n') {
                    i += 2;
                } else if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                    i = skip_block_comment(b, i);
                } else {
                    i += 1;
                }
            }
            continue;
        }
        line_start = false;
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'*') {
            i = skip_block_comment(b, i);
            continue;
        }
        let start = i;
        if c.is_ascii_alphabetic() || c == b'_' {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            let word = &src[start..i];
            if b.get(i) == Some(&b'"') && word.ends_with('R') {
                i = skip_raw_string(b, i);
                toks.push(Tok {
                    kind: Tk::Str,
                    start,
                    end: i,
                });
            } else if b.get(i) == Some(&b'"') && matches!(word, "u8" | "u" | "U" | "L") {
                i = skip_quoted(b, i, b'"');
                toks.push(Tok {
                    kind: Tk::Str,
                    start,
                    end: i,
                });
            } else {
                toks.push(Tok {
                    kind: Tk::Ident,
                    start,
                    end: i,
                });
            }
            continue;
        }
        if c.is_ascii_digit() || (c == b'.' && b.get(i + 1).is_some_and(u8::is_ascii_digit)) {
            while i < b.len()
                && (b[i].is_ascii_alphanumeric()
                    || b[i] == b'.'
                    || b[i] == b'\''
                    || ((b[i] == b'+' || b[i] == b'-')
                        && matches!(b[i - 1], b'e' | b'E' | b'p' | b'P')))
            {
                i += 1;
            }
            toks.push(Tok {
                kind: Tk::Number,
                start,
                end: i,
            });
            continue;
        }
        if c == b'"' || c == b'\'' {
            i = skip_quoted(b, i, c);
            toks.push(Tok {
                kind: if c == b'"' { Tk::Str } else { Tk::Char },
                start,
                end: i,
            });
            continue;
        }
        let three = |x: u8| b.get(i + 1) == Some(&x) && b.get(i + 2) == Some(&x);
        let (kind, len) = if c == b'<' && three(b'<') {
            (Tk::Open3, 3)
        } else if c == b'>' && three(b'>') {
            (Tk::Close3, 3)
        } else if c == b':' && b.get(i + 1) == Some(&b':') {
            (Tk::Scope, 2)
        } else {
            (Tk::Punct(c), 1)
        };
        i += len;
        toks.push(Tok {
            kind,
            start,
            end: i,
        });
    }
    toks
}

fn skip_block_comment(b: &[u8], mut i: usize) -> usize {
    i += 2;
    while i < b.len() && !(b[i] == b'*' && b.get(i + 1) == Some(&b'/')) {
        i += 1;
    }
    (i + 2).min(b.len())
}

fn skip_quoted(b: &[u8], mut i: usize, quote: u8) -> usize {
    i += 1;
    while i < b.len() && b[i] != quote && b[i] != b'\n' {
        if b[i] == b'\\' {
            i += 1;
        }
        i += 1;
    }
    (i + 1).min(b.len())
}

/// `R"delim( ... )delim"`, starting at the opening quote.
fn skip_raw_string(b: &[u8], mut i: usize) -> usize {
    i += 1;
    let delim_start = i;
    while i < b.len() && b[i] != b'(' && b[i] != b'\n' {
        i += 1;
    }
    let delim = &b[delim_start..i.min(b.len())];
    let mut close = Vec::with_capacity(delim.len() + 2);
    close.push(b')');
    close.extend_from_slice(delim);
    close.push(b'"');
    while i < b.len() {
        if b[i..].starts_with(&close) {
            return i + close.len();
        }
        i += 1;
    }
    b.len()
}

fn line_of(src: &str, pos: usize) -> usize {
    src.as_bytes()[..pos.min(src.len())]
        .iter()
        .filter(|&&c| c == b'\n')
        .count()
        + 1
}

/// Reads the kernels and launch sites of a source.
pub fn scan(src: &str) -> Scan {
    let toks = tokenize(src);
    let text = |t: &Tok| &src[t.start..t.end];
    let mut out = Scan::default();
    // Brace stack: true for an `extern "C" {` block, which does not open a scope.
    let mut braces: Vec<bool> = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        let t = toks[i];
        match t.kind {
            Tk::Punct(b'{') => {
                let extern_block = i >= 2
                    && text(&toks[i - 2]) == "extern"
                    && toks[i - 1].kind == Tk::Str
                    && text(&toks[i - 1]) == "\"C\"";
                braces.push(extern_block);
            }
            Tk::Punct(b'}') => {
                braces.pop();
            }
            Tk::Open3 => {
                if let Some(site) = launch_site(src, &toks, i) {
                    out.launches.push(site);
                }
            }
            Tk::Ident if text(&t) == "__global__" => {
                let depth = braces.iter().filter(|e| !**e).count();
                match kernel_at(src, &toks, i) {
                    Ok(Some((kernel, _))) if depth > 0 => out.notes.push(Note {
                        line: kernel.line,
                        message: format!(
                            "kernel `{}` is not at file scope (inside a namespace or class): no launcher is generated for it",
                            kernel.name
                        ),
                    }),
                    Ok(Some((kernel, _))) => {
                        match out.kernels.iter().find(|k| k.name == kernel.name) {
                            Some(seen) if seen.params.len() != kernel.params.len() => {
                                out.notes.push(Note {
                                    line: kernel.line,
                                    message: format!(
                                        "kernel `{}` is declared again with {} parameter(s) instead of {}: overloaded kernels get no launcher",
                                        kernel.name,
                                        kernel.params.len(),
                                        seen.params.len()
                                    ),
                                });
                            }
                            Some(_) => {}
                            None => out.kernels.push(kernel),
                        }
                    }
                    Ok(None) => {}
                    Err(note) => out.notes.push(note),
                }
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// The kernel whose declaration contains the `__global__` token at `at`.
fn kernel_at(src: &str, toks: &[Tok], at: usize) -> Result<Option<(Kernel, usize)>, Note> {
    let text = |t: &Tok| &src[t.start..t.end];
    // Back to the start of the declaration.
    let mut s = at;
    while s > 0 {
        let p = toks[s - 1];
        if matches!(p.kind, Tk::Punct(b';') | Tk::Punct(b'}') | Tk::Punct(b'{')) {
            break;
        }
        s -= 1;
    }
    let head = &toks[s..at];
    let extern_c = head
        .windows(2)
        .any(|w| text(&w[0]) == "extern" && w[1].kind == Tk::Str && text(&w[1]) == "\"C\"");
    let line = line_of(src, toks[at].start);
    if head.iter().any(|t| text(t) == "template") {
        return Err(Note {
            line,
            message: "template kernel: no launcher is generated for it".into(),
        });
    }
    // Forward to the parameter list.
    let mut j = at + 1;
    while j < toks.len() && toks[j].kind != Tk::Punct(b'(') {
        if matches!(toks[j].kind, Tk::Punct(b';') | Tk::Punct(b'{')) {
            return Ok(None);
        }
        j += 1;
    }
    if j >= toks.len() || j == 0 || toks[j - 1].kind != Tk::Ident {
        return Ok(None);
    }
    let name = text(&toks[j - 1]).to_string();
    let line = line_of(src, toks[j - 1].start);
    let open = j;
    let mut depth = 0usize;
    let mut close = None;
    for (k, t) in toks.iter().enumerate().skip(open) {
        match t.kind {
            Tk::Punct(b'(') => depth += 1,
            Tk::Punct(b')') => {
                depth -= 1;
                if depth == 0 {
                    close = Some(k);
                    break;
                }
            }
            _ => {}
        }
    }
    let Some(close) = close else {
        return Err(Note {
            line,
            message: format!("kernel `{name}`: unbalanced parameter list"),
        });
    };
    let params = split_params(src, &toks[open + 1..close]);
    Ok(Some((
        Kernel {
            name,
            params,
            line,
            extern_c,
        },
        close,
    )))
}

fn split_params(src: &str, toks: &[Tok]) -> Vec<Param> {
    let mut groups: Vec<Vec<Tok>> = vec![Vec::new()];
    let (mut paren, mut angle) = (0i32, 0i32);
    for t in toks {
        match t.kind {
            Tk::Punct(b'(') | Tk::Punct(b'[') | Tk::Punct(b'{') => paren += 1,
            Tk::Punct(b')') | Tk::Punct(b']') | Tk::Punct(b'}') => paren -= 1,
            Tk::Punct(b'<') => angle += 1,
            Tk::Punct(b'>') => angle -= 1,
            Tk::Close3 => angle -= 3,
            Tk::Punct(b',') if paren == 0 && angle <= 0 => {
                groups.push(Vec::new());
                continue;
            }
            _ => {}
        }
        if let Some(g) = groups.last_mut() {
            g.push(*t);
        }
    }
    let text = |t: &Tok| &src[t.start..t.end];
    if groups.len() == 1 {
        let g = &groups[0];
        if g.is_empty() || (g.len() == 1 && text(&g[0]) == "void") {
            return Vec::new();
        }
    }
    groups
        .into_iter()
        .map(|mut g| {
            // A default value is not part of the type.
            if let Some(eq) = g.iter().position(|t| t.kind == Tk::Punct(b'=')) {
                g.truncate(eq);
            }
            param(src, &g)
        })
        .collect()
}

/// Words that end a type rather than name a parameter.
const TYPE_WORDS: [&str; 16] = [
    "int",
    "unsigned",
    "signed",
    "short",
    "long",
    "char",
    "float",
    "double",
    "bool",
    "void",
    "const",
    "volatile",
    "__gm__",
    "__restrict__",
    "__restrict",
    "GM_ADDR",
];

fn param(src: &str, toks: &[Tok]) -> Param {
    let text = |t: &Tok| &src[t.start..t.end];
    let named = toks.len() >= 2
        && toks[toks.len() - 1].kind == Tk::Ident
        && !TYPE_WORDS.contains(&text(&toks[toks.len() - 1]))
        && toks[toks.len() - 2].kind != Tk::Scope;
    let (ty_toks, name) = if named {
        (
            &toks[..toks.len() - 1],
            Some(text(&toks[toks.len() - 1]).to_string()),
        )
    } else {
        (toks, None)
    };
    let mut ty = String::new();
    for t in ty_toks {
        let word = text(t);
        let glue = matches!(t.kind, Tk::Punct(b'*') | Tk::Punct(b'&') | Tk::Scope)
            || ty.ends_with("::")
            || ty.is_empty();
        if !glue {
            ty.push(' ');
        }
        ty.push_str(word);
    }
    Param {
        name,
        kind: classify(src, ty_toks),
        ty,
    }
}

const QUALIFIERS: [&str; 7] = [
    "const",
    "volatile",
    "__gm__",
    "__restrict__",
    "__restrict",
    "struct",
    "class",
];

fn classify(src: &str, toks: &[Tok]) -> ParamKind {
    let text = |t: &Tok| &src[t.start..t.end];
    if toks.is_empty()
        || toks.iter().any(|t| {
            matches!(
                t.kind,
                Tk::Punct(b'&') | Tk::Punct(b'[') | Tk::Punct(b'<') | Tk::Punct(b'(')
            )
        })
    {
        return ParamKind::Other;
    }
    let stars: Vec<usize> = toks
        .iter()
        .enumerate()
        .filter(|(_, t)| t.kind == Tk::Punct(b'*'))
        .map(|(i, _)| i)
        .collect();
    let words = |ts: &[Tok]| -> Option<String> {
        let mut w = Vec::new();
        for t in ts {
            if t.kind != Tk::Ident {
                return None;
            }
            let s = text(t);
            if !QUALIFIERS.contains(&s) {
                w.push(s);
            }
        }
        Some(w.join(" "))
    };
    match stars.as_slice() {
        [] => {
            let Some(name) = words(toks) else {
                return ParamKind::Other;
            };
            if name == "GM_ADDR" {
                ParamKind::Gm {
                    writable: true,
                    elem: None,
                }
            } else {
                Prim::from_cpp(&name).map_or(ParamKind::Other, ParamKind::Scalar)
            }
        }
        [star] => {
            let pointee = &toks[..*star];
            let Some(name) = words(pointee) else {
                return ParamKind::Other;
            };
            if name == "GM_ADDR" {
                return ParamKind::Other;
            }
            let writable = !pointee.iter().any(|t| text(t) == "const");
            ParamKind::Gm {
                writable,
                elem: Prim::from_cpp(&name),
            }
        }
        _ => ParamKind::Other,
    }
}

/// The launch site whose `<<<` token is at `at`, if it is followed by `>>>` and an argument list.
fn launch_site(src: &str, toks: &[Tok], at: usize) -> Option<LaunchSite> {
    // The callee: identifiers joined by `::`, optionally followed by template arguments.
    let mut s = at;
    if s > 0 && toks[s - 1].kind == Tk::Punct(b'>') {
        let mut depth = 0i32;
        while s > 0 {
            s -= 1;
            match toks[s].kind {
                Tk::Punct(b'>') => depth += 1,
                Tk::Punct(b'<') => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                _ => {}
            }
        }
        if depth != 0 {
            return None;
        }
    }
    if s == 0 || toks[s - 1].kind != Tk::Ident {
        return None;
    }
    s -= 1;
    while s >= 2 && toks[s - 1].kind == Tk::Scope && toks[s - 2].kind == Tk::Ident {
        s -= 2;
    }
    if s >= 1 && toks[s - 1].kind == Tk::Scope {
        s -= 1;
    }
    let mut depth = 0i32;
    let mut close = None;
    for (k, t) in toks.iter().enumerate().skip(at + 1) {
        match t.kind {
            Tk::Punct(b'(') | Tk::Punct(b'[') | Tk::Punct(b'{') => depth += 1,
            Tk::Punct(b')') | Tk::Punct(b']') | Tk::Punct(b'}') => {
                depth -= 1;
                if depth < 0 {
                    return None;
                }
            }
            Tk::Punct(b';') => return None,
            Tk::Close3 if depth == 0 => {
                close = Some(k);
                break;
            }
            _ => {}
        }
    }
    let close = close?;
    if toks.get(close + 1)?.kind != Tk::Punct(b'(') {
        return None;
    }
    let callee = src[toks[s].start..toks[at].start].trim().to_string();
    Some(LaunchSite {
        span: (toks[s].start, toks[close].end),
        callee,
        config: src[toks[at].end..toks[close].start].to_string(),
        line: line_of(src, toks[at].start),
    })
}

/// Rewrites every launch site of `src` into a call of the host launcher:
/// `k<<<a, b, c>>>(args)` becomes `::ascendc_host::launcher(k, "k", a, b, c)(args)`. Line breaks
/// inside a site are kept, so line numbers do not move.
pub fn rewrite_launches(src: &str, launches: &[LaunchSite]) -> String {
    let mut out = String::with_capacity(src.len() + launches.len() * 48);
    let mut last = 0;
    for site in launches {
        let (start, end) = site.span;
        out.push_str(&src[last..start]);
        let callee_name = site.callee.replace(char::is_whitespace, "");
        out.push_str("::ascendc_host::launcher(");
        out.push_str(&site.callee);
        out.push_str(", \"");
        out.push_str(&callee_name.replace('"', ""));
        out.push_str("\", ");
        out.push_str(&site.config);
        out.push(')');
        let config_lines = site.config.matches('\n').count();
        let span_lines = src[start..end].matches('\n').count();
        for _ in config_lines..span_lines {
            out.push('\n');
        }
        last = end;
    }
    out.push_str(&src[last..]);
    out
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
    fn skips_templates_and_nested_kernels() {
        let src = "template <typename T> __global__ __aicore__ void t(T* p) {}\n\
                   namespace ns { extern \"C\" __global__ void inner(int x) {} }\n\
                   extern \"C\" { __global__ __aicore__ void in_block(int x) {} }\n\
                   extern \"C\" __global__ void none(void) {}";
        let s = scan(src);
        let names: Vec<_> = s.kernels.iter().map(|k| k.name.as_str()).collect();
        assert_eq!(names, ["in_block", "none"]);
        assert!(s.kernels[1].params.is_empty());
        assert_eq!(s.notes.len(), 2, "{:?}", s.notes);
        assert!(s.notes[0].message.contains("template"));
        assert!(s.notes[1].message.contains("`inner`"));
    }

    #[test]
    fn rewrites_launches_keeping_lines() {
        let s = scan(ADD);
        assert_eq!(s.launches.len(), 1);
        let site = &s.launches[0];
        assert_eq!(site.callee, "add_custom");
        assert_eq!(site.line, 18);
        let out = rewrite_launches(ADD, &s.launches);
        assert!(
            out.contains(
                "::ascendc_host::launcher(add_custom, \"add_custom\", blockDim, nullptr,\n                 stream)(x, y, z);"
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
        let src =
            "void f(void* s) { ns::k<<<8, nullptr, s>>>(a); t<half><<<2, nullptr, s>>>(b, c); }";
        let s = scan(src);
        let callees: Vec<_> = s.launches.iter().map(|l| l.callee.as_str()).collect();
        assert_eq!(callees, ["ns::k", "t<half>"]);
        let out = rewrite_launches(src, &s.launches);
        assert_eq!(
            out,
            "void f(void* s) { ::ascendc_host::launcher(ns::k, \"ns::k\", 8, nullptr, s)(a); \
             ::ascendc_host::launcher(t<half>, \"t<half>\", 2, nullptr, s)(b, c); }"
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
}
