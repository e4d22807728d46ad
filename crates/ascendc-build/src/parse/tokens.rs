//! The tokenizer: identifiers, numbers, literals and punctuation of a C++ source, with comments,
//! string and character literals (raw strings included) and preprocessor lines skipped.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tk {
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
pub(crate) struct Tok {
    pub kind: Tk,
    pub start: usize,
    pub end: usize,
}

pub(crate) fn tokenize(src: &str) -> Vec<Tok> {
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

pub(crate) fn line_of(src: &str, pos: usize) -> usize {
    src.as_bytes()[..pos.min(src.len())]
        .iter()
        .filter(|&&c| c == b'\n')
        .count()
        + 1
}

impl Tok {
    /// The token's text in `src`.
    pub(crate) fn text<'a>(&self, src: &'a str) -> &'a str {
        &src[self.start..self.end]
    }

    /// Whether the token is the identifier `word`.
    pub(crate) fn is(&self, src: &str, word: &str) -> bool {
        self.kind == Tk::Ident && self.text(src) == word
    }
}

/// The index of the token that closes the group opened at `open` (`(`, `[`, `{` or `<`, the
/// latter counting only angle brackets), or `None` when the source ends first.
pub(crate) fn matching(toks: &[Tok], open: usize) -> Option<usize> {
    let (o, c) = match toks.get(open)?.kind {
        Tk::Punct(b'(') => (b'(', b')'),
        Tk::Punct(b'[') => (b'[', b']'),
        Tk::Punct(b'{') => (b'{', b'}'),
        Tk::Punct(b'<') => (b'<', b'>'),
        _ => return None,
    };
    let mut depth = 0i32;
    for (k, t) in toks.iter().enumerate().skip(open) {
        match t.kind {
            Tk::Punct(x) if x == o => depth += 1,
            Tk::Punct(x) if x == c => {
                depth -= 1;
                if depth == 0 {
                    return Some(k);
                }
            }
            // `>>` closes two template argument lists.
            Tk::Close3 if o == b'<' => {
                depth -= 3;
                if depth <= 0 {
                    return Some(k);
                }
            }
            // An angle bracket group ends at the end of a statement or an unbalanced bracket.
            Tk::Punct(b';' | b'{' | b'}') if o == b'<' => return None,
            _ => {}
        }
    }
    None
}
