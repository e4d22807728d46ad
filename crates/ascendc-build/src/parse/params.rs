//! Kernel parameters: their C++ types as written and what a launcher makes of them.

use super::tokens::{Tk, Tok};

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
    /// Marked `__kfc_workspace__`: the system workspace of the kernel (what
    /// `GetSysWorkSpacePtr()` returns inside it).
    pub workspace: bool,
}

pub(crate) fn split_params(src: &str, toks: &[Tok]) -> Vec<Param> {
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
    if groups.len() == 1 {
        let g = &groups[0];
        if g.is_empty() || (g.len() == 1 && g[0].text(src) == "void") {
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

/// Parameter markers that are not part of the type (`__kfc_workspace__`: the system workspace).
const MARKERS: [&str; 1] = ["__kfc_workspace__"];

fn param(src: &str, all: &[Tok]) -> Param {
    let workspace = all.iter().any(|t| t.is(src, "__kfc_workspace__"));
    let kept: Vec<Tok> = all
        .iter()
        .filter(|t| !(t.kind == Tk::Ident && MARKERS.contains(&t.text(src))))
        .copied()
        .collect();
    let toks = &kept[..];
    let named = toks.len() >= 2
        && toks[toks.len() - 1].kind == Tk::Ident
        && !TYPE_WORDS.contains(&toks[toks.len() - 1].text(src))
        && toks[toks.len() - 2].kind != Tk::Scope;
    let (ty_toks, name) = if named {
        (
            &toks[..toks.len() - 1],
            Some(toks[toks.len() - 1].text(src).to_string()),
        )
    } else {
        (toks, None)
    };
    let mut ty = String::new();
    for t in ty_toks {
        let word = t.text(src);
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
        workspace,
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
            let s = t.text(src);
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
            let writable = !pointee.iter().any(|t| t.text(src) == "const");
            ParamKind::Gm {
                writable,
                elem: Prim::from_cpp(&name),
            }
        }
        _ => ParamKind::Other,
    }
}
