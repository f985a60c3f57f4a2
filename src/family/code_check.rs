//! The L0 code check of a project: each family's own checks (Python's helper `ttl0.py` and its
//! type checker, `node --check` and `tsc`, `gofmt -e`; Rust's crate is built by its test run),
//! then the text checks every family gets (`testing::code_check`).

use crate::testing::code_check::{self, CheckInput, CodeCheck, CodeCheckError};

/// Checks the project's code (see `testing::code_check::check`).
pub fn check(input: &CheckInput) -> Result<CodeCheck, CodeCheckError> {
    code_check::check(input, &family_check)
}

fn family_check(
    input: &CheckInput,
    changed: &[String],
    out: &mut CodeCheck,
) -> Result<(), CodeCheckError> {
    super::of(input.family).check_code(input, changed, out)
}

#[cfg(test)]
mod tests;
