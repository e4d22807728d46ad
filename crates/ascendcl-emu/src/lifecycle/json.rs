//! The check of `aclInit`'s configuration file: one well-formed JSON value (the content is
//! otherwise ignored), parsed by `serde_json`.

/// Whether `s` is one well-formed JSON value, with nothing but whitespace around it.
pub(crate) fn is_valid(s: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(s).is_ok()
}

#[cfg(test)]
mod tests {
    use super::is_valid;

    #[test]
    fn accepts_and_rejects() {
        assert!(is_valid("{}"));
        assert!(is_valid(" \n{}\t"));
        assert!(is_valid(
            r#"{"dump": {"dump_list": [1, -2.5e3, "x\n\u00e9", true, null]}}"#
        ));
        assert!(!is_valid(""));
        assert!(!is_valid("{"));
        assert!(!is_valid(r#"{"a" 1}"#));
        assert!(!is_valid("{} x"));
        assert!(!is_valid("[1,]"));
        assert!(!is_valid(r#"{"a": 01}"#));
        assert!(!is_valid(r#"["\x"]"#));
    }

    #[test]
    fn nesting_is_bounded() {
        let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert!(is_valid(&deep(100)));
        assert!(!is_valid(&deep(10_000)));
    }
}
