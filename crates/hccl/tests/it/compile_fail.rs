//! Compile-fail tests: the borrowing rules of groups, batch items and V-collective layouts.

#[test]
fn compile_fail() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/compile_fail/*.rs");
}
