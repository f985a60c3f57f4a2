//! The Landlock ruleset of one sandboxed child, built in the parent (opening the folders needs
//! memory and may fail); the child only enforces it.

use std::os::fd::OwnedFd;
use std::path::PathBuf;

use landlock::{
    path_beneath_rules, Access, AccessFs, AccessNet, BitFlags, Ruleset, RulesetAttr,
    RulesetCreatedAttr, RulesetError, Scope, ABI,
};

/// Device files any program may read and write.
const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
];

/// The ruleset: `read` readable and executable, `write` fully usable, the usual devices.
/// `tcp_off` also blocks TCP connect and bind (when no network
/// namespace can). Signals to processes outside the sandbox are blocked where the kernel can.
/// Returns None when the kernel enforces nothing.
pub fn ruleset(
    kernel_abi: i32,
    read: &[PathBuf],
    write: &[PathBuf],
    tcp_off: bool,
) -> Result<Option<OwnedFd>, RulesetError> {
    let abi = abi_of(kernel_abi);
    let mut ruleset = Ruleset::default().handle_access(AccessFs::from_all(abi))?;
    // Scopes came with ABI 6 and network rules with ABI 4; asking for an empty set is an error.
    if kernel_abi >= 6 {
        ruleset = ruleset.scope(Scope::from_all(abi))?;
    }
    if tcp_off && kernel_abi >= 4 {
        ruleset = ruleset.handle_access(AccessNet::from_all(abi))?;
    }
    // IoctlDev came with ABI 5: a right the ruleset does not handle may not appear in a rule.
    let device: BitFlags<AccessFs> =
        (AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::IoctlDev) & AccessFs::from_all(abi);
    let created = ruleset
        .create()?
        .add_rules(path_beneath_rules(read, AccessFs::from_read(abi)))?
        // Listing /etc (not reading what it hides) and /dev.
        .add_rules(path_beneath_rules(["/etc", "/dev"], AccessFs::ReadDir))?
        .add_rules(path_beneath_rules(DEVICES, device))?
        .add_rules(path_beneath_rules(write, AccessFs::from_all(abi)))?;
    Ok(created.into())
}

fn abi_of(kernel_abi: i32) -> ABI {
    match kernel_abi {
        i32::MIN..=0 => ABI::Unsupported,
        1 => ABI::V1,
        2 => ABI::V2,
        3 => ABI::V3,
        4 => ABI::V4,
        5 => ABI::V5,
        6 => ABI::V6,
        7 => ABI::V7,
        8 => ABI::V8,
        9 => ABI::V9,
        _ => ABI::V10,
    }
}
