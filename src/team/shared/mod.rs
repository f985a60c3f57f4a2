//! What more than one built-in role (or a role and its agent-backed variant) reads, so that no
//! role module imports another.

/// The agent-backed work of the generator (a generation round) and of the executor (repairing
/// a test file), with the accept bench both use.
pub(crate) mod agent_gen;
pub(crate) mod baseline;
pub(crate) mod feedback;
pub(crate) mod localise;
pub(crate) mod mutation;
pub(crate) mod python_modules;
