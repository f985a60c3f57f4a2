//! L0: each package with generated tests is built (and vetted, as `go test` does) without
//! running a test, `go test -run '^$'`. Generated files named in what go printed are load errors
//! and leave the copy, in rounds, until the package builds; a package that does not build
//! without them is an environment problem.

use std::collections::BTreeSet;

use super::ctx::{package_arg, Ctx};
use super::stage::{stage, Staged};
use crate::testing::exec::ExecError;
use crate::testing::load_error::LoadError;
use crate::testing::runner::RunOutput;
use crate::util::tail_lines;

/// Error lines kept per unloadable file.
const ERROR_LINES: usize = 8;

pub(super) fn gate(
    ctx: &Ctx,
    staged: &mut Vec<Staged>,
    out: &mut RunOutput,
) -> Result<(), ExecError> {
    let dirs: BTreeSet<String> = staged.iter().map(|s| s.dir.clone()).collect();
    let mut log = String::new();
    for dir in dirs {
        let argv = ctx.argv(&["test", "-count=1", "-run", "^$", &package_arg(&dir)]);
        out.command = argv.clone();
        // Each round that fails leaves out at least one file, or ends the gate.
        while staged.iter().any(|s| s.dir == dir) {
            let spec = ctx.spec;
            stage(spec.repo, &ctx.copy, &spec.test_dir, staged).map_err(|cause| {
                ExecError::Copy {
                    from: spec.repo.to_path_buf(),
                    to: ctx.copy.clone(),
                    cause,
                }
            })?;
            let build = ctx.exec(&argv)?;
            if build.success() {
                break;
            }
            let text = format!("{}{}", build.stderr, build.stdout);
            log.push_str(&text);
            ctx.keep("go-build", "txt", &log, out);
            let ours: Vec<Staged> = staged
                .iter()
                .filter(|s| s.dir == dir && mentions(&text, &s.target))
                .cloned()
                .collect();
            if ours.is_empty() {
                out.output_tail = tail_lines(&text, 60);
                return Err(ExecError::PackageDoesNotBuild {
                    package: package_arg(&dir),
                    errors: first_errors(&text),
                });
            }
            for s in &ours {
                out.load_errors.push(LoadError {
                    file: s.original.clone(),
                    error: file_errors(&text, s),
                    verdict: None,
                });
            }
            staged.retain(|s| !ours.contains(s));
        }
    }
    // The copy without the files that were left out last.
    stage(ctx.spec.repo, &ctx.copy, &ctx.spec.test_dir, staged).map_err(ExecError::Stage)
}

/// Whether `text` names the file `name` (and not merely a file whose name ends with it).
fn mentions(text: &str, name: &str) -> bool {
    text.match_indices(name).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + name.len()..].chars().next();
        let word = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.';
        !before.is_some_and(word) && !after.is_some_and(word)
    })
}

/// The lines that name a staged file, under its name in the layer's folder
/// (`broken_test.go:6:17: cannot use ...`), with the indented lines that go on from them.
fn file_errors(text: &str, s: &Staged) -> String {
    let mut kept = Vec::new();
    let mut following = false;
    for line in text.lines() {
        if following && line.starts_with('\t') {
            kept.push(line.to_string());
            continue;
        }
        following = mentions(line, &s.target);
        if !following {
            continue;
        }
        let at = line.find(&s.target).unwrap_or(0);
        let located = line[at + s.target.len()..].starts_with(':');
        kept.push(if located {
            format!("{}{}", s.original, &line[at + s.target.len()..])
        } else {
            line.replace(&s.target, &s.original)
        });
    }
    kept.truncate(ERROR_LINES);
    kept.join("\n")
}

/// The first located error lines (`file.go:3:5: ...`) of a failed build, else its last lines.
fn first_errors(text: &str) -> String {
    let errors: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with(['\t', ' ']) && l.contains(".go:"))
        .take(ERROR_LINES)
        .collect();
    if errors.is_empty() {
        tail_lines(text, ERROR_LINES)
    } else {
        errors.join("\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn staged(original: &str, target: &str) -> Staged {
        Staged {
            original: original.into(),
            dir: String::new(),
            target: target.into(),
        }
    }

    #[test]
    fn build_errors_are_traced_to_their_generated_files() {
        let text = "# example.com/calc\n\
            ./tt_L1_broken_test.go:6:17: cannot use Add(1, 2) (value of type int) as type string in variable declaration\n\
            ./tt_L1_dup_test.go:5:6: Add redeclared in this block\n\
            \t./calc.go:7:6: other declaration of Add\n\
            found packages calc (calc.go) and other (tt_L1_pkg_test.go) in /w/go-L1-unit\n\
            FAIL\texample.com/calc [build failed]\n";
        let broken = staged("broken_test.go", "tt_L1_broken_test.go");
        assert!(mentions(text, &broken.target));
        assert!(!mentions(text, "L1_broken_test.go"));
        assert!(!mentions(text, "broken_test.go"));
        assert_eq!(
            file_errors(text, &broken),
            "broken_test.go:6:17: cannot use Add(1, 2) (value of type int) as type string in variable declaration"
        );
        let dup = staged("dup_test.go", "tt_L1_dup_test.go");
        assert_eq!(
            file_errors(text, &dup),
            "dup_test.go:5:6: Add redeclared in this block\n\t./calc.go:7:6: other declaration of Add"
        );
        let pkg = staged("pkg_test.go", "tt_L1_pkg_test.go");
        assert_eq!(
            file_errors(text, &pkg),
            "found packages calc (calc.go) and other (pkg_test.go) in /w/go-L1-unit"
        );
        let own = "# example.com/calc\n./calc.go:9:2: undefined: x\nFAIL\texample.com/calc [build failed]\n";
        assert_eq!(first_errors(own), "./calc.go:9:2: undefined: x");
    }
}
