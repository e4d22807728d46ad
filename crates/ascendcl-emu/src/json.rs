//! A minimal JSON validator for `aclInit`'s configuration file (the content is otherwise ignored).

/// Whether `s` is one well-formed JSON value.
pub(crate) fn is_valid(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    value(b, &mut i, 0) && {
        ws(b, &mut i);
        i == b.len()
    }
}

fn ws(b: &[u8], i: &mut usize) {
    while *i < b.len() && matches!(b[*i], b' ' | b'\t' | b'\n' | b'\r') {
        *i += 1;
    }
}

fn value(b: &[u8], i: &mut usize, depth: u32) -> bool {
    if depth > 128 {
        return false;
    }
    ws(b, i);
    match b.get(*i) {
        Some(b'{') => {
            *i += 1;
            ws(b, i);
            if b.get(*i) == Some(&b'}') {
                *i += 1;
                return true;
            }
            loop {
                ws(b, i);
                if !string(b, i) {
                    return false;
                }
                ws(b, i);
                if b.get(*i) != Some(&b':') {
                    return false;
                }
                *i += 1;
                if !value(b, i, depth + 1) {
                    return false;
                }
                ws(b, i);
                match b.get(*i) {
                    Some(b',') => *i += 1,
                    Some(b'}') => {
                        *i += 1;
                        return true;
                    }
                    _ => return false,
                }
            }
        }
        Some(b'[') => {
            *i += 1;
            ws(b, i);
            if b.get(*i) == Some(&b']') {
                *i += 1;
                return true;
            }
            loop {
                if !value(b, i, depth + 1) {
                    return false;
                }
                ws(b, i);
                match b.get(*i) {
                    Some(b',') => *i += 1,
                    Some(b']') => {
                        *i += 1;
                        return true;
                    }
                    _ => return false,
                }
            }
        }
        Some(b'"') => string(b, i),
        Some(b't') => lit(b, i, b"true"),
        Some(b'f') => lit(b, i, b"false"),
        Some(b'n') => lit(b, i, b"null"),
        Some(c) if *c == b'-' || c.is_ascii_digit() => number(b, i),
        _ => false,
    }
}

fn lit(b: &[u8], i: &mut usize, w: &[u8]) -> bool {
    if b[*i..].starts_with(w) {
        *i += w.len();
        true
    } else {
        false
    }
}

fn string(b: &[u8], i: &mut usize) -> bool {
    if b.get(*i) != Some(&b'"') {
        return false;
    }
    *i += 1;
    while let Some(&c) = b.get(*i) {
        *i += 1;
        match c {
            b'"' => return true,
            b'\\' => match b.get(*i) {
                Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => *i += 1,
                Some(b'u') => {
                    if b.len() < *i + 5 || !b[*i + 1..*i + 5].iter().all(u8::is_ascii_hexdigit) {
                        return false;
                    }
                    *i += 5;
                }
                _ => return false,
            },
            c if c < 0x20 => return false,
            _ => {}
        }
    }
    false
}

fn number(b: &[u8], i: &mut usize) -> bool {
    let start = *i;
    if b.get(*i) == Some(&b'-') {
        *i += 1;
    }
    let digits = |i: &mut usize| {
        let s = *i;
        while b.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        *i > s
    };
    if !digits(i) {
        return false;
    }
    if b.get(*i) == Some(&b'.') {
        *i += 1;
        if !digits(i) {
            return false;
        }
    }
    if matches!(b.get(*i), Some(b'e' | b'E')) {
        *i += 1;
        if matches!(b.get(*i), Some(b'+' | b'-')) {
            *i += 1;
        }
        if !digits(i) {
            return false;
        }
    }
    *i > start
}

#[cfg(test)]
mod tests {
    use super::is_valid;

    #[test]
    fn accepts_and_rejects() {
        assert!(is_valid("{}"));
        assert!(is_valid(
            r#"{"dump": {"dump_list": [1, -2.5e3, "x\n", true, null]}}"#
        ));
        assert!(!is_valid("{"));
        assert!(!is_valid(r#"{"a" 1}"#));
        assert!(!is_valid("{} x"));
        assert!(!is_valid("[1,]"));
    }
}
