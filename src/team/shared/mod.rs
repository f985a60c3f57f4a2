//! What more than one built-in role (or a role and its agent-backed variant) reads, so that no
//! role module imports another.

/// Whether a test file an agent wrote is kept: the accept bench.
pub(crate) mod accept;
/// The agent-backed work of the generator (a generation round) and of the executor (repairing
/// a test file), with the accept bench both use.
pub(crate) mod agent_gen;
/// The agents' prompts in the family's terms.
pub(crate) mod agent_prompt;
/// A planned layer's scenarios written by an agent, one call per scenario, in waves.
pub(crate) mod agent_scenarios;
pub(crate) mod baseline;
/// What the change altered: the search's calls replayed on the base and on HEAD.
pub(crate) mod behaviour;
/// The session's shared board of discoveries (discoveries.ndjson).
pub(crate) mod discoveries;
pub(crate) mod feedback;
/// A long first round's short search ahead of it: tests written in seconds.
pub(crate) mod first_tests;
/// Generated tests reused between sessions: the round's lookup, the entries its tests promote.
pub(crate) mod gen_cache;
pub(crate) mod localise;
pub(crate) mod mutation;
pub(crate) mod python_modules;
/// The reflective strategy's reflection after each run of a layer.
pub(crate) mod reflect;
/// Each scenario's result from a layer's run, written back into scenarios.csv.
pub(crate) mod scenario_results;
/// The tests of a layer's scenarios (scenarios.csv) written from their stated checks.
pub(crate) mod scenario_tests;
