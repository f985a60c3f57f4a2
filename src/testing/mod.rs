//! Facts about the target project and its test tools, shared by the built-in roles: change scope,
//! framework detection, and the parsers of the reports test and coverage tools write.

pub mod detect;
pub mod report;
pub mod session_scope;
