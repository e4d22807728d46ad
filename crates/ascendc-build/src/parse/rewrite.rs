//! The source edits of host mode: `kernel<<<blockDim, dyn, stream>>>(args)` launches become
//! calls of the host launcher, `asm("trap")` in kernels a trap of the block, and (for kernel
//! libraries linked into a Rust crate) a program's `main` is renamed out of the way. Every edit
//! keeps the line breaks it replaces, so compiler messages point at the original lines.

use super::tokens::{Tk, Tok, line_of};

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

/// The launch site whose `<<<` token is at `at`, if it is followed by `>>>` and an argument list.
pub(crate) fn launch_site(src: &str, toks: &[Tok], at: usize) -> Option<LaunchSite> {
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

/// A replacement of a byte range of a source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    /// The byte range replaced.
    pub span: (usize, usize),
    /// What replaces it.
    pub text: String,
}

impl LaunchSite {
    /// The launch as a call of the host launcher: `k<<<a, b, c>>>` becomes
    /// `::ascendc_host::launch<k>(a, b, c)`, whose call with the kernel's arguments converts them
    /// to the parameter types, packs them and launches on `c`; it has the value of the
    /// runtime's return code, as the real launch has (`static_cast<int32_t>(k<<<...>>>(...))`).
    pub fn edit(&self) -> Edit {
        Edit {
            span: self.span,
            text: format!(
                "::ascendc_host::launch<{}>({})",
                self.callee.trim(),
                self.config
            ),
        }
    }
}

/// Applies `edits` (sorted by position, not overlapping) to `src`. Each replaced range's line
/// breaks are kept: a replacement with fewer lines is followed by the missing ones.
pub fn rewrite(src: &str, edits: &[Edit]) -> String {
    let mut out = String::with_capacity(src.len() + edits.len() * 48);
    let mut last = 0;
    for e in edits {
        let (start, end) = e.span;
        if start < last {
            continue;
        }
        out.push_str(&src[last..start]);
        out.push_str(&e.text);
        let new_lines = e.text.matches('\n').count();
        let old_lines = src[start..end].matches('\n').count();
        for _ in new_lines..old_lines {
            out.push('\n');
        }
        last = end;
    }
    out.push_str(&src[last..]);
    out
}

/// The `asm("trap")` statements of a source (any `asm`/`__asm__` spelling, `volatile` or not, a
/// string that says `trap`): the device's trap instruction, which stops the core.
pub(crate) fn trap_sites(src: &str, toks: &[Tok]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for (i, t) in toks.iter().enumerate() {
        if !(t.kind == Tk::Ident && matches!(t.text(src), "asm" | "__asm__" | "__asm")) {
            continue;
        }
        let mut j = i + 1;
        while toks.get(j).is_some_and(|q| {
            q.kind == Tk::Ident && matches!(q.text(src), "volatile" | "__volatile__" | "__volatile")
        }) {
            j += 1;
        }
        let (Some(open), Some(s), Some(close)) = (toks.get(j), toks.get(j + 1), toks.get(j + 2))
        else {
            continue;
        };
        if open.kind != Tk::Punct(b'(') || s.kind != Tk::Str || close.kind != Tk::Punct(b')') {
            continue;
        }
        let body = s
            .text(src)
            .trim_matches('"')
            .trim()
            .trim_end_matches(';')
            .trim();
        if body == "trap" {
            out.push((t.start, close.end));
        }
    }
    out
}

/// The `main` of a program at file scope, if the source defines one: the byte range of its name.
pub(crate) fn main_site(src: &str, toks: &[Tok], file_scope: &[bool]) -> Option<(usize, usize)> {
    for (i, t) in toks.iter().enumerate() {
        if !t.is(src, "main") || !file_scope[i] {
            continue;
        }
        let typed = i > 0 && toks[i - 1].kind == Tk::Ident;
        let call = toks.get(i + 1).is_some_and(|n| n.kind == Tk::Punct(b'('));
        if !(typed && call) {
            continue;
        }
        let close = super::tokens::matching(toks, i + 1)?;
        if toks
            .get(close + 1)
            .is_some_and(|n| n.kind == Tk::Punct(b'{'))
        {
            return Some((t.start, t.end));
        }
    }
    None
}

/// Calls inside device code (bodies of `__global__` and `__aicore__` functions) that mean the
/// device's function there: unqualified `printf` (the device printf of `utils/debug/
/// asc_printf.h`) and `assert` (the device assert). Byte ranges of the names, with what each
/// becomes.
pub(crate) fn device_calls(src: &str, toks: &[Tok]) -> Vec<((usize, usize), &'static str)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        if toks[i].kind != Tk::Punct(b'{') || !device_body(src, toks, i) {
            i += 1;
            continue;
        }
        let end = super::tokens::matching(toks, i).unwrap_or(toks.len());
        for k in i + 1..end {
            let t = toks[k];
            if t.kind != Tk::Ident {
                continue;
            }
            let replacement = match t.text(src) {
                "printf" => "::AscendC::printf",
                "assert" => "ASCENDC_HOST_DEVICE_ASSERT",
                _ => continue,
            };
            let qualified = k > 0
                && matches!(
                    toks[k - 1].kind,
                    Tk::Scope | Tk::Punct(b'.') | Tk::Punct(b'>')
                );
            let call = toks.get(k + 1).is_some_and(|n| n.kind == Tk::Punct(b'('));
            if call && !qualified {
                out.push(((t.start, t.end), replacement));
            }
        }
        i = end;
    }
    out
}

/// Whether the `{` at `at` opens the body of a function declared `__global__` or `__aicore__`.
fn device_body(src: &str, toks: &[Tok], at: usize) -> bool {
    let mut s = at;
    while s > 0 && !matches!(toks[s - 1].kind, Tk::Punct(b';' | b'{' | b'}')) {
        s -= 1;
    }
    let head = &toks[s..at];
    head.iter().any(|t| t.kind == Tk::Punct(b'('))
        && head
            .iter()
            .any(|t| t.is(src, "__aicore__") || t.is(src, "__global__"))
}
