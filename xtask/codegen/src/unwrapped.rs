//! Why a function of the bindings has no safe wrapper: the rows of
//! `xtask/codegen/api-map-unwrapped.tsv` (name pattern, group title, reason), matched against
//! the functions the safe crate does not call.
//!
//! A pattern is a function name, or a name with `*` wildcards (any run of characters). Each
//! unwrapped function is claimed by the first row whose pattern matches it. The file must stay
//! exact: a function no row claims is an error, and so is a row that claims nothing (its
//! functions were wrapped or removed, or an earlier row claims them all).

/// One row of the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reason {
    /// Exact name, or a name with `*` wildcards.
    pub pattern: String,
    /// The heading the functions are listed under.
    pub group: String,
    /// Why they have no safe wrapper.
    pub why: String,
}

/// The functions one row claims, in name order.
#[derive(Debug, PartialEq, Eq)]
pub struct Claim<'a> {
    /// The row.
    pub reason: &'a Reason,
    /// The functions.
    pub names: Vec<&'a str>,
}

/// The rows of one group title, in the order of the file.
#[derive(Debug, PartialEq, Eq)]
pub struct Group<'a> {
    /// The title.
    pub title: &'a str,
    /// The rows with this title that claim functions.
    pub claims: Vec<Claim<'a>>,
}

impl Group<'_> {
    /// How many functions the group lists.
    pub fn len(&self) -> usize {
        self.claims.iter().map(|c| c.names.len()).sum()
    }
}

/// Parses the rows (`[pattern, group, why]` each), refusing empty fields, characters other
/// than those of C identifiers and `*` in a pattern, and a pattern listed twice.
pub fn parse(file: &str, rows: Vec<Vec<String>>) -> Result<Vec<Reason>, String> {
    let mut reasons: Vec<Reason> = Vec::with_capacity(rows.len());
    for (i, mut r) in rows.into_iter().enumerate() {
        let (why, group, pattern) = (
            r.pop().unwrap_or_default(),
            r.pop().unwrap_or_default(),
            r.pop().unwrap_or_default(),
        );
        let row = i + 1;
        if pattern.is_empty() || group.trim().is_empty() || why.trim().is_empty() {
            return Err(format!("{file}: row {row}: an empty field"));
        }
        if !pattern
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '*')
        {
            return Err(format!(
                "{file}: row {row}: `{pattern}` is not a function name or a name with `*`"
            ));
        }
        if reasons.iter().any(|r| r.pattern == pattern) {
            return Err(format!("{file}: row {row}: `{pattern}` is listed twice"));
        }
        reasons.push(Reason {
            pattern,
            group,
            why,
        });
    }
    Ok(reasons)
}

/// Whether `name` matches `pattern` (`*` matches any run of characters, the empty one too).
pub fn matches(pattern: &str, name: &str) -> bool {
    let (p, n) = (pattern.as_bytes(), name.as_bytes());
    // Greedy matching with backtracking to the last `*`.
    let (mut pi, mut ni) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        if pi < p.len() && p[pi] == b'*' {
            star = Some((pi, ni));
            pi += 1;
        } else if pi < p.len() && p[pi] == n[ni] {
            pi += 1;
            ni += 1;
        } else if let Some((sp, sn)) = star {
            pi = sp + 1;
            ni = sn + 1;
            star = Some((sp, sn + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == b'*')
}

/// Assigns every name to the first row that matches it and groups the rows by title (titles in
/// the order they first appear in the file). Fails naming every function no row matches and
/// every row that claims nothing.
pub fn classify<'a>(
    file: &str,
    reasons: &'a [Reason],
    unwrapped: &[&'a str],
) -> Result<Vec<Group<'a>>, String> {
    let mut claimed: Vec<Vec<&'a str>> = vec![Vec::new(); reasons.len()];
    let mut unmatched = Vec::new();
    for &name in unwrapped {
        match reasons.iter().position(|r| matches(&r.pattern, name)) {
            Some(i) => claimed[i].push(name),
            None => unmatched.push(name),
        }
    }
    let idle: Vec<&str> = reasons
        .iter()
        .zip(&claimed)
        .filter(|(_, c)| c.is_empty())
        .map(|(r, _)| r.pattern.as_str())
        .collect();
    let mut problems = Vec::new();
    if !unmatched.is_empty() {
        problems.push(format!(
            "unwrapped functions with no reason (add a row): {}",
            unmatched.join(", ")
        ));
    }
    if !idle.is_empty() {
        problems.push(format!(
            "rows that match no unwrapped function (wrapped, removed, or claimed by an earlier \
             row: remove them): {}",
            idle.join(", ")
        ));
    }
    if !problems.is_empty() {
        return Err(format!("{file}: {}", problems.join("; ")));
    }
    let mut groups: Vec<Group<'a>> = Vec::new();
    for (reason, mut names) in reasons.iter().zip(claimed) {
        names.sort_unstable();
        let claim = Claim { reason, names };
        match groups.iter_mut().find(|g| g.title == reason.group) {
            Some(g) => g.claims.push(claim),
            None => groups.push(Group {
                title: &reason.group,
                claims: vec![claim],
            }),
        }
    }
    Ok(groups)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(rows: &[[&str; 3]]) -> Vec<Vec<String>> {
        rows.iter()
            .map(|r| r.iter().map(|s| s.to_string()).collect())
            .collect()
    }

    #[test]
    fn patterns() {
        assert!(matches("aclrtFoo", "aclrtFoo"));
        assert!(!matches("aclrtFoo", "aclrtFooBar"));
        assert!(!matches("aclrtFooBar", "aclrtFoo"));
        assert!(matches("aclrtFoo*", "aclrtFoo"));
        assert!(matches("aclrtFoo*", "aclrtFooBar"));
        assert!(matches("*Buf*", "aclrtGetBufData"));
        assert!(matches("aclrt*Buf*", "aclrtAllocBuf"));
        assert!(!matches("aclrt*Buf*", "aclGetDataBufferAddr"));
        assert!(matches("acl*Data*Size*", "aclGetDataBufferSizeV2"));
        assert!(matches("a*b*c", "aXbYbZc"));
        assert!(!matches("a*b*c", "aXbYcZ"));
        assert!(matches("*", "anything"));
        assert!(matches("**x", "x"));
    }

    #[test]
    fn parse_refuses_bad_rows() {
        assert!(parse("f", rows(&[["aclrtFoo", "G", "why"]])).is_ok());
        assert!(parse("f", rows(&[["", "G", "why"]])).is_err());
        assert!(parse("f", rows(&[["aclrtFoo", " ", "why"]])).is_err());
        assert!(parse("f", rows(&[["aclrtFoo", "G", ""]])).is_err());
        assert!(parse("f", rows(&[["aclrt Foo", "G", "why"]])).is_err());
        assert!(parse("f", rows(&[["aclrt?", "G", "why"]])).is_err());
        let twice = parse("f", rows(&[["aclrtFoo", "G", "a"], ["aclrtFoo", "H", "b"]]));
        assert!(twice.unwrap_err().contains("listed twice"));
    }

    #[test]
    fn first_matching_row_claims_and_groups_keep_file_order() {
        let reasons = parse(
            "f",
            rows(&[
                ["aclrtBufSpecial", "Second", "special"],
                ["aclrt*Buf*", "First", "mbufs"],
                ["aclrtSnap*", "Second", "snapshots"],
            ]),
        )
        .unwrap();
        let names = [
            "aclrtAllocBuf",
            "aclrtBufSpecial",
            "aclrtFreeBuf",
            "aclrtSnapLock",
        ];
        let groups = classify("f", &reasons, &names).unwrap();
        let titles: Vec<&str> = groups.iter().map(|g| g.title).collect();
        assert_eq!(titles, ["Second", "First"]);
        assert_eq!(groups[0].len(), 2);
        assert_eq!(groups[0].claims[0].names, ["aclrtBufSpecial"]);
        assert_eq!(groups[0].claims[1].names, ["aclrtSnapLock"]);
        assert_eq!(groups[1].claims[0].names, ["aclrtAllocBuf", "aclrtFreeBuf"]);
    }

    #[test]
    fn unmatched_functions_and_idle_rows_fail() {
        let reasons = parse(
            "f",
            rows(&[
                ["aclrtA*", "G", "a"],
                ["aclrtAB", "G", "shadowed by the row above"],
                ["aclrtGone", "G", "wrapped since"],
            ]),
        )
        .unwrap();
        let e = classify("f", &reasons, &["aclrtAB", "aclrtZ"]).unwrap_err();
        assert!(e.contains("no reason (add a row): aclrtZ"), "{e}");
        assert!(e.contains("aclrtAB, aclrtGone"), "{e}");
        assert!(classify("f", &reasons[..1], &["aclrtAB"]).is_ok());
    }
}
