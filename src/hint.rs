//! Commands printed for the user to run next. Each must work pasted as it is, from the folder the
//! user is in: the program as it was invoked, and the session by its id only when the default
//! sessions root (from this folder and the environment) finds that very session, else by its path.

use std::path::{Path, PathBuf};

use crate::session::{sessions_root, SessionDir, ARCHIVE_DIR};

/// `<program> <verb> <session> <args…>`, every word quoted for a POSIX shell where it needs it.
/// `verb` is one or more fixed words of ours (`roles list`), never user text.
pub fn command(session: &SessionDir, verb: &str, args: &[&str]) -> String {
    let mut words = vec![program(), verb.to_string(), session_ref(session)];
    words.extend(args.iter().map(|a| quote(a)));
    words.join(" ")
}

/// The same command in backticks, the form every hint uses (tests find them by it).
pub fn quoted(session: &SessionDir, verb: &str, args: &[&str]) -> String {
    format!("`{}`", command(session, verb, args))
}

/// `<program> <words…> --session <session>`, for the commands that take the session as an
/// option (`roles add`). `words` are quoted as needed.
pub fn with_session_option(session: &SessionDir, words: &[&str]) -> String {
    let mut all = vec![program()];
    all.extend(words.iter().map(|w| quote(w)));
    all.extend(["--session".to_string(), session_ref(session)]);
    format!("`{}`", all.join(" "))
}

/// `<program> <words…> [FLAG PATH]…` for a command that names no session: each path given is
/// passed on, absolute, so the command finds the same place from any folder.
pub fn with_paths(words: &[&str], paths: &[(&str, Option<&Path>)]) -> String {
    let mut all = vec![program()];
    all.extend(words.iter().map(|w| quote(w)));
    for (flag, path) in paths {
        if let Some(p) = path {
            let abs = std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
            all.push(flag.to_string());
            all.push(quote(&abs.to_string_lossy()));
        }
    }
    format!("`{}`", all.join(" "))
}

/// How to name the session on a command line typed in this folder.
pub fn session_ref(session: &SessionDir) -> String {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let root = sessions_root(None, &cwd);
    let by_id = [
        root.join(&session.id),
        root.join(ARCHIVE_DIR).join(&session.id),
    ]
    .iter()
    .any(|p| same_file(p, &session.root));
    if by_id {
        session.id.clone()
    } else {
        quote(&session.root.to_string_lossy())
    }
}

/// The program as the user can type it: `team-testing` when that is what PATH finds, else the
/// path it was started by (absolute, so it works from any folder).
pub fn program() -> String {
    let exe = std::env::current_exe().ok();
    let on_path = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join("team-testing"))
            .find(|p| p.is_file())
    });
    match (&exe, on_path) {
        (Some(exe), Some(found)) if same_file(exe, &found) => "team-testing".into(),
        (Some(exe), _) => quote(&exe.to_string_lossy()),
        (None, _) => "team-testing".into(),
    }
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

pub use crate::util::quote;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_with_spaces_or_quotes_are_quoted_for_the_shell() {
        assert_eq!(quote("plain-id"), "plain-id");
        assert_eq!(quote("/tmp/my sessions/x"), "'/tmp/my sessions/x'");
        let tricky = "it's";
        assert_eq!(shlex::split(&quote(tricky)).unwrap(), vec![tricky]);
    }
}
