//! Compile-fail tests: the ownership and threading rules the type system enforces.

#[test]
fn compile_fail() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/compile_fail/*.rs");
}
