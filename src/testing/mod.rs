//! Facts about the target project shared by the built-in roles: change scope and test framework.

pub mod detect;
pub mod session_scope;
