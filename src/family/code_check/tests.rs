//! The checks run for real: the helper with this machine's python3, node and gofmt when they are
//! installed, on small projects in temporary folders.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use super::check;
use crate::family::python::code_check as python;
use crate::testing::code_check::text::{lex, Lang};
use crate::testing::code_check::*;
use crate::testing::framework::Family;
use crate::testing::toolchain::Toolchain;

fn project(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

fn run_within(root: &Path, changed: &[&str], family: Family, budget: Duration) -> CodeCheck {
    let scratch = tempfile::tempdir().unwrap();
    let tools = Toolchain {
        interpreter: "python3".into(),
        ..Default::default()
    };
    let changed: Vec<String> = changed.iter().map(|s| s.to_string()).collect();
    let input = CheckInput {
        root,
        changed: &changed,
        family,
        tools: &tools,
        sandbox: None,
        scratch: scratch.path(),
        deadline: Instant::now() + budget,
    };
    check(&input).unwrap_or_else(|e| panic!("{e}"))
}

fn run(root: &Path, changed: &[&str], family: Family) -> CodeCheck {
    run_within(root, changed, family, Duration::from_secs(120))
}

fn of_kind(check: &CodeCheck, kind: IssueKind) -> Vec<&CodeIssue> {
    check.issues.iter().filter(|i| i.kind == kind).collect()
}

fn installed(argv: &[&str]) -> bool {
    Command::new(argv[0])
        .args(&argv[1..])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// No bytecode, no cache: the project's copy is left as it was.
fn assert_untouched(root: &Path) {
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            assert!(
                name != "__pycache__" && name != ".mypy_cache",
                "{} was written",
                e.path().display()
            );
            if e.path().is_dir() {
                stack.push(e.path());
            }
        }
    }
}

const CLEAN_CORE: &str = r#""""Arithmetic."""
import os
from typing import Protocol

from .util import helper
from pkg import util


class Sized(Protocol):
    def size(self) -> int: ...


def add(a: int, b: int) -> int:
    """Adds."""
    return a + b + helper() + len(os.sep) + util.helper()
"#;

#[test]
fn clean_code_gives_no_issue() {
    let dir = project(&[
        ("pkg/__init__.py", "from .core import add\n"),
        ("pkg/core.py", CLEAN_CORE),
        ("pkg/util.py", "def helper() -> int:\n    return 0\n"),
    ]);
    let check = run(dir.path(), &["pkg/core.py", "pkg/util.py"], Family::Python);
    assert!(check.issues.is_empty(), "{:#?}", check.issues);
    assert!(check.critical().is_empty());
    assert!(
        check.checked.iter().any(|c| c == "compile: 3 Python files"),
        "{:?}",
        check.checked
    );
    assert!(
        check
            .checked
            .iter()
            .any(|c| c.starts_with("import: 2 changed modules")),
        "{:?}",
        check.checked
    );
    assert_untouched(dir.path());
}

#[test]
fn a_file_that_does_not_compile_is_critical_even_unchanged() {
    let dir = project(&[
        ("pkg/__init__.py", ""),
        ("pkg/old.py", "x = 1\ndef f(:\n    pass\n"),
        ("pkg/new.py", "y = 2\n"),
        // Tests are not the code under check.
        ("tests/test_broken.py", "def test(:\n"),
    ]);
    let check = run(dir.path(), &["pkg/new.py"], Family::Python);
    let broken = of_kind(&check, IssueKind::DoesNotCompile);
    assert_eq!(broken.len(), 1, "{:#?}", check.issues);
    assert_eq!(
        (broken[0].file.as_str(), broken[0].line, broken[0].severity),
        ("pkg/old.py", Some(2), Severity::Critical)
    );
    assert!(
        broken[0].message.starts_with("SyntaxError"),
        "{}",
        broken[0].message
    );
}

#[test]
fn a_module_whose_import_raises_does_not_import_with_the_exception() {
    let dir = project(&[
        ("app/__init__.py", ""),
        (
            "app/boom.py",
            "x = 1\nraise RuntimeError('boom at import')\n",
        ),
        ("app/quits.py", "import sys\nsys.exit(3)\n"),
        ("app/fine.py", "print('noise on stdout')\nVALUE = 1\n"),
    ]);
    let check = run(
        dir.path(),
        &["app/boom.py", "app/quits.py", "app/fine.py"],
        Family::Python,
    );
    let failed = of_kind(&check, IssueKind::DoesNotImport);
    assert_eq!(failed.len(), 2, "{:#?}", check.issues);
    let boom = failed.iter().find(|i| i.file == "app/boom.py").unwrap();
    assert_eq!((boom.line, boom.severity), (Some(2), Severity::Critical));
    assert!(
        boom.message.contains("RuntimeError: boom at import"),
        "{}",
        boom.message
    );
    let quits = failed.iter().find(|i| i.file == "app/quits.py").unwrap();
    assert!(quits.message.contains("sys.exit(3)"), "{}", quits.message);
    assert_untouched(dir.path());
}

#[test]
fn an_import_that_hangs_is_stopped_within_the_deadline() {
    let dir = project(&[("slow.py", "while True:\n    pass\n")]);
    let started = Instant::now();
    let check = run_within(
        dir.path(),
        &["slow.py"],
        Family::Python,
        Duration::from_secs(6),
    );
    assert!(started.elapsed() < Duration::from_secs(10));
    let failed = of_kind(&check, IssueKind::DoesNotImport);
    assert_eq!(failed.len(), 1, "{:#?}", check);
    assert!(
        failed[0].message.contains("did not finish"),
        "{}",
        failed[0].message
    );
}

const HALLUCINATED: &str = r#"import sys
from typing import TYPE_CHECKING
import numpyy_not_a_module
from pkg.util import helper, nothere
from .missing_module import thing
from . import util
try:
    import ujson_optional_backend
except ImportError:
    ujson_optional_backend = None
if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli_backport_not_installed
if TYPE_CHECKING:
    from _typeshed_like_stub_only import Thing
"#;

#[test]
fn hallucinated_modules_and_names_are_critical_and_optional_imports_are_not() {
    let dir = project(&[
        ("pkg/__init__.py", ""),
        ("pkg/core.py", HALLUCINATED),
        ("pkg/util.py", "def helper():\n    return 1\n"),
    ]);
    let check = run(dir.path(), &["pkg/core.py"], Family::Python);
    let found = of_kind(&check, IssueKind::HallucinatedImport);
    let lines: Vec<Option<u32>> = found.iter().map(|i| i.line).collect();
    assert_eq!(lines, [Some(3), Some(4), Some(5)], "{:#?}", check.issues);
    assert!(found.iter().all(|i| i.severity == Severity::Critical));
    assert!(found[0].message.contains("numpyy_not_a_module"));
    assert!(
        found[1].message.contains("defines no `nothere`"),
        "{}",
        found[1].message
    );
    assert!(found[2].message.contains("missing_module"));
    // The import check fails on the same module: reported once, as the hallucination.
    assert!(
        of_kind(&check, IssueKind::DoesNotImport).is_empty(),
        "{:#?}",
        check.issues
    );
}

const PLACEHOLDERS: &str = r#"def only_docstring(a):
    """Compute the thing."""


def only_pass():
    pass


def only_ellipsis():
    ...


def only_raise(x):
    raise NotImplementedError("later")


def real(x):
    # TODO: handle negative numbers
    return x
"#;

#[test]
fn placeholder_bodies_are_critical_and_todo_comments_warnings() {
    let dir = project(&[("mod.py", PLACEHOLDERS)]);
    let check = run(dir.path(), &["mod.py"], Family::Python);
    let found = of_kind(&check, IssueKind::Placeholder);
    let critical: Vec<(Option<u32>, &str)> = found
        .iter()
        .filter(|i| i.severity == Severity::Critical)
        .map(|i| (i.line, i.message.as_str()))
        .collect();
    assert_eq!(
        critical,
        [
            (
                Some(1),
                "`only_docstring` is a placeholder: its body is only a docstring"
            ),
            (
                Some(5),
                "`only_pass` is a placeholder: its body is only `pass`"
            ),
            (
                Some(9),
                "`only_ellipsis` is a placeholder: its body is only `...`"
            ),
            (
                Some(13),
                "`only_raise` is a placeholder: its body is only `raise NotImplementedError`"
            ),
        ],
        "{:#?}",
        check.issues
    );
    let todo: Vec<_> = found
        .iter()
        .filter(|i| i.severity == Severity::Warning)
        .collect();
    assert_eq!(todo.len(), 1);
    assert_eq!(todo[0].line, Some(18));
    assert!(todo[0].message.contains("handle negative numbers"));
}

const NOT_PLACEHOLDERS: &str = r#"import abc
from abc import ABC, abstractmethod
from typing import Protocol, overload


class Reader(Protocol):
    def read(self) -> bytes: ...

    def close(self) -> None:
        pass


class Store(ABC):
    @abstractmethod
    def get(self, key): ...

    def put(self, key, value):
        raise NotImplementedError


class FileStore(Store):
    def get(self, key):
        return key


class Meta(metaclass=abc.ABCMeta):
    def run(self):
        pass


class Shape:
    def area(self):
        raise NotImplementedError


class Square(Shape):
    def area(self):
        return 4


class Resource:
    def __exit__(self, *exc):
        pass

    def on_event(self, event):
        pass  # no-op by default: subclasses override it


def group(fn):
    return fn


@group
def cli():
    """The command group: its commands hang off it."""


@overload
def f(x: int) -> int: ...
@overload
def f(x: str) -> str: ...
def f(x):
    return x
"#;

#[test]
fn abstract_methods_protocols_and_overloads_are_not_placeholders() {
    let dir = project(&[("shapes.py", NOT_PLACEHOLDERS)]);
    let check = run(dir.path(), &["shapes.py"], Family::Python);
    assert!(
        of_kind(&check, IssueKind::Placeholder).is_empty(),
        "{:#?}",
        check.issues
    );
}

#[test]
fn production_code_importing_test_doubles_is_mock_leakage() {
    let dir = project(&[
        (
            "svc/client.py",
            "from unittest import mock\nimport pytest\nfrom tests.helpers import fake\nimport json\n",
        ),
        ("tests/__init__.py", ""),
        ("tests/helpers.py", "fake = 1\n"),
        // Tests may import them.
        ("tests/test_client.py", "from unittest import mock\nimport pytest\n"),
    ]);
    let check = run(
        dir.path(),
        &["svc/client.py", "tests/test_client.py"],
        Family::Python,
    );
    let leaks = of_kind(&check, IssueKind::MockLeakage);
    let lines: Vec<(&str, Option<u32>)> = leaks.iter().map(|i| (i.file.as_str(), i.line)).collect();
    assert_eq!(
        lines,
        [
            ("svc/client.py", Some(1)),
            ("svc/client.py", Some(2)),
            ("svc/client.py", Some(3))
        ],
        "{:#?}",
        check.issues
    );
    assert!(leaks[0].message.contains("unittest.mock"));
    assert!(leaks.iter().all(|i| i.severity == Severity::Critical));
}

#[test]
fn a_pytest_plugin_may_import_pytest() {
    let dir = project(&[
        (
            "pyproject.toml",
            "[project]\nname = \"pytest-thing\"\ndependencies = [\"pytest>=7\"]\n\n[project.entry-points.pytest11]\nthing = \"pytest_thing.plugin\"\n",
        ),
        ("pytest_thing/__init__.py", ""),
        ("pytest_thing/plugin.py", "import pytest\n\n\n@pytest.fixture\ndef thing():\n    return 1\n"),
    ]);
    let check = run(dir.path(), &["pytest_thing/plugin.py"], Family::Python);
    assert!(
        of_kind(&check, IssueKind::MockLeakage).is_empty(),
        "{:#?}",
        check.issues
    );
}

#[test]
fn type_errors_are_warnings_from_mypy_or_a_note_says_none_is_installed() {
    let dir = project(&[(
        "typed.py",
        "def count(text: str) -> int:\n    return text\n",
    )]);
    let check = run(dir.path(), &["typed.py"], Family::Python);
    assert!(check.critical().is_empty(), "{:#?}", check.issues);
    if installed(&["python3", "-c", "import mypy"]) {
        assert_eq!(check.type_checker.as_deref(), Some("mypy"));
        let errors = of_kind(&check, IssueKind::TypeError);
        assert_eq!(errors.len(), 1, "{check:#?}");
        assert_eq!(
            (errors[0].file.as_str(), errors[0].line, errors[0].severity),
            ("typed.py", Some(2), Severity::Warning)
        );
        assert!(
            errors[0].message.contains("Incompatible return value type"),
            "{}",
            errors[0].message
        );
        assert_untouched(dir.path());
    } else {
        eprintln!("mypy is not installed: only the note is checked");
        assert_eq!(check.type_checker, None);
        assert!(
            check.notes.iter().any(|n| n.contains("no type checker")),
            "{:?}",
            check.notes
        );
    }
}

const RUST_LIB: &str = r#"//! Docs mention todo!() here, which is not code.
pub fn parse(s: &str) -> usize {
    let _ = "todo!() in a string";
    let _c = '}';
    todo!()
}

// TODO: faster path
pub fn later() -> u8 {
    0
}

#[cfg(test)]
mod tests {
    fn helper() {
        unimplemented!()
    }
}

#[test]
fn not_yet() {
    todo!("write it")
}
"#;

#[test]
fn rust_todo_outside_cfg_test_is_a_placeholder() {
    let dir = project(&[
        ("src/lib.rs", RUST_LIB),
        ("tests/it.rs", "fn f() { todo!() }\n"),
    ]);
    let check = run(dir.path(), &["src/lib.rs", "tests/it.rs"], Family::Cargo);
    let found = of_kind(&check, IssueKind::Placeholder);
    let got: Vec<(Severity, Option<u32>)> = found.iter().map(|i| (i.severity, i.line)).collect();
    assert_eq!(
        got,
        [(Severity::Critical, Some(5)), (Severity::Warning, Some(8))],
        "{:#?}",
        check.issues
    );
    assert!(found[0].message.contains("todo!()"));
    assert!(check.notes.iter().any(|n| n.starts_with("Rust:")));
}

const JS_CODE: &str = r#"import fs from 'node:fs';
import path from "path";
import sinon from 'sinon';
import { helper } from './helper';
import { ghost } from './ghost';
import { fixture } from '../test/fixtures';

// a comment that says throw new Error("not implemented") is not code
export function parse(text) {
  throw new Error("Not implemented");
}

export class BaseShape {
  area() { throw new Error('not implemented'); }
}

export function real() {
  return helper(fs, path);
}
"#;

#[test]
fn javascript_placeholders_mock_leakage_and_missing_files() {
    let dir = project(&[
        ("package.json", r#"{"name": "demo", "type": "module"}"#),
        ("src/parse.js", JS_CODE),
        ("src/helper.js", "export function helper() { return 1; }\n"),
        ("src/broken.js", "export function f( {\n"),
        ("src/parse.test.js", "import { vi } from 'vitest';\n"),
        // A type-only import is erased: no leak.
        (
            "src/types.ts",
            "import type { Mock } from 'vitest';\nexport type M = Mock;\n",
        ),
        ("test/fixtures.js", "export const fixture = 1;\n"),
    ]);
    let changed = [
        "src/parse.js",
        "src/broken.js",
        "src/parse.test.js",
        "src/types.ts",
    ];
    let check = run(dir.path(), &changed, Family::Node);
    let placeholders = of_kind(&check, IssueKind::Placeholder);
    assert_eq!(placeholders.len(), 1, "{:#?}", check.issues);
    assert_eq!(placeholders[0].line, Some(10));
    let leaks: Vec<Option<u32>> = of_kind(&check, IssueKind::MockLeakage)
        .iter()
        .map(|i| i.line)
        .collect();
    assert_eq!(leaks, [Some(3), Some(6)], "{:#?}", check.issues);
    let missing: Vec<&str> = of_kind(&check, IssueKind::HallucinatedImport)
        .iter()
        .map(|i| i.message.as_str())
        .collect();
    // sinon is neither installed nor declared; ./ghost is no file.
    assert_eq!(missing.len(), 2, "{missing:?}");
    assert!(missing.iter().any(|m| m.starts_with("`./ghost`")));
    assert!(missing.iter().any(|m| m.contains("no package sinon")));
    if installed(&["node", "--version"]) {
        let broken = of_kind(&check, IssueKind::DoesNotCompile);
        assert_eq!(broken.len(), 1, "{:#?}", check.issues);
        assert_eq!(broken[0].file, "src/broken.js");
        assert!(broken[0].line.is_some());
        assert!(
            broken[0].message.contains("SyntaxError"),
            "{}",
            broken[0].message
        );
    }
    assert!(
        check
            .notes
            .iter()
            .any(|n| n.contains("TypeScript is not installed")),
        "{:?}",
        check.notes
    );
}

const GO_CODE: &str = r#"package shapes

import (
	"fmt"
	"github.com/stretchr/testify/assert"
)

// Area is not done yet.
func Area() int {
	panic("not implemented")
}

func Name() string {
	return fmt.Sprint(assert.True)
}
"#;

#[test]
fn go_placeholders_mock_leakage_and_syntax() {
    let dir = project(&[
        ("shapes.go", GO_CODE),
        ("broken.go", "package shapes\n\nfunc f( {\n"),
        (
            "shapes_test.go",
            "package shapes\n\nfunc TestX() { panic(\"not implemented\") }\n",
        ),
    ]);
    let check = run(
        dir.path(),
        &["shapes.go", "broken.go", "shapes_test.go"],
        Family::Go,
    );
    let placeholders = of_kind(&check, IssueKind::Placeholder);
    assert_eq!(placeholders.len(), 1, "{:#?}", check.issues);
    assert_eq!(
        (placeholders[0].file.as_str(), placeholders[0].line),
        ("shapes.go", Some(10))
    );
    let leaks = of_kind(&check, IssueKind::MockLeakage);
    assert_eq!(leaks.len(), 1);
    assert_eq!(leaks[0].line, Some(5));
    if installed(&["gofmt", "-h"]) || installed(&["go", "version"]) {
        let broken = of_kind(&check, IssueKind::DoesNotCompile);
        if !check.notes.iter().any(|n| n.contains("gofmt")) {
            assert_eq!(broken.len(), 1, "{:#?}", check.issues);
            assert_eq!(
                (broken[0].file.as_str(), broken[0].line),
                ("broken.go", Some(3))
            );
        }
    }
}

/// The compilers judge a change the text checks cannot: go vet and cargo check, when installed.
#[test]
fn go_vet_and_cargo_check_make_a_type_error_critical() {
    if installed(&["go", "version"]) {
        let dir = project(&[
            ("go.mod", "module example.com/shapes\n\ngo 1.19\n"),
            (
                "shapes.go",
                "package shapes\n\nfunc Area(w, h int) int {\n\treturn w * hight\n}\n",
            ),
        ]);
        let check = run(dir.path(), &["shapes.go"], Family::Go);
        let broken = of_kind(&check, IssueKind::DoesNotCompile);
        assert_eq!(broken.len(), 1, "{:#?} {:?}", check.issues, check.notes);
        assert_eq!(
            (broken[0].file.as_str(), broken[0].line),
            ("shapes.go", Some(4))
        );
        assert!(broken[0].message.contains("hight"), "{:#?}", broken[0]);
    }
    if installed(&["cargo", "--version"]) {
        let dir = project(&[
            (
                "Cargo.toml",
                "[package]\nname = \"shapes\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
            ),
            ("src/lib.rs", "pub fn area(w: u32, h: u32) -> u32 {\n    w * hight\n}\n"),
        ]);
        let check = run(dir.path(), &["src/lib.rs"], Family::Cargo);
        let broken = of_kind(&check, IssueKind::DoesNotCompile);
        assert_eq!(broken.len(), 1, "{:#?} {:?}", check.issues, check.notes);
        assert_eq!(
            (broken[0].file.as_str(), broken[0].line),
            ("src/lib.rs", Some(2))
        );
    }
}

#[test]
fn the_markdown_section_has_a_table_per_severity_and_what_was_not_checked() {
    let check = CodeCheck {
        issues: vec![
            CodeIssue {
                severity: Severity::Critical,
                kind: IssueKind::HallucinatedImport,
                file: "pkg/a.py".into(),
                line: Some(3),
                message: "`x | y`: no module".into(),
            },
            CodeIssue {
                severity: Severity::Warning,
                kind: IssueKind::TypeError,
                file: "pkg/b.py".into(),
                line: None,
                message: "bad".into(),
            },
        ],
        checked: vec!["compile: 2 Python files".into()],
        type_checker: Some("mypy".into()),
        notes: vec!["type check: none".into()],
    };
    let md = check.markdown();
    assert!(md.starts_with("## L0 code validation\n"));
    assert!(md.contains("1 critical, 1 warning; type checker: mypy."));
    assert!(md.contains("### Critical (blocks the loop)"));
    assert!(
        md.contains("| `pkg/a.py:3` | hallucinated import | `x \\| y`: no module |"),
        "{md}"
    );
    assert!(md.contains("### Warnings"));
    assert!(md.contains("| `pkg/b.py` | type error | bad |"));
    assert!(md.contains("Not checked:\n\n- type check: none"));
    assert!(CodeCheck::default().markdown().contains("No issue found."));
}

#[test]
fn issues_serialise_in_snake_case_and_read_back() {
    let issue = CodeIssue {
        severity: Severity::Critical,
        kind: IssueKind::DoesNotImport,
        file: "a.py".into(),
        line: Some(1),
        message: "m".into(),
    };
    let json = serde_json::to_value(&issue).unwrap();
    assert_eq!(json["severity"], "critical");
    assert_eq!(json["kind"], "does_not_import");
    assert_eq!(serde_json::from_value::<CodeIssue>(json).unwrap(), issue);
    let old: CodeCheck = serde_json::from_str("{}").unwrap();
    assert!(old.issues.is_empty() && old.type_checker.is_none());
}

#[test]
fn the_lexer_blanks_comments_and_string_contents() {
    let rs = lex(
        "let s = \"a // b { \"; // todo!()\nlet r = r#\"}\"#; /* a /* nested */ todo!() */ let c = '{'; fn f<'a>() {}\n",
        Lang::Rust,
    );
    assert!(!rs.code.contains("todo!"), "{}", rs.code);
    assert!(rs.code.contains("\"a // b { \""));
    assert_eq!(rs.bare.matches('{').count(), 1, "{}", rs.bare);
    assert_eq!(rs.comments.len(), 2);
    assert_eq!(rs.line(rs.code.find("let r").unwrap()), 2);
    let js = lex(
        "const re = /[/\"]+/g; const s = `x ${1} // not a comment`; // real\n",
        Lang::Js,
    );
    assert_eq!(js.comments.len(), 1, "{js:?}");
    assert_eq!(js.comments[0].1, "// real");
}

#[test]
fn declared_dependencies_and_import_folders_come_from_the_manifests() {
    let dir = project(&[
        (
            "pyproject.toml",
            "[project]\ndependencies = [\"requests>=2\", \"PyYAML\"]\n[project.optional-dependencies]\nfast = [\"ujson\"]\n[tool.pytest.ini_options]\npythonpath = [\"lib\"]\n",
        ),
        ("requirements-dev.txt", "pytest==8\n-r requirements.txt\n"),
        ("lib/x.py", ""),
        ("src/y.py", ""),
    ]);
    let d = python::declared(dir.path());
    assert_eq!(d.runtime, ["PyYAML", "requests"]);
    assert_eq!(d.all, ["PyYAML", "pytest", "requests", "ujson"]);
    assert_eq!(python::import_roots(dir.path()), ["", "src", "lib"]);
}

#[test]
fn paths_outside_the_project_are_not_read() {
    let dir = project(&[("a.py", "x = 1\n")]);
    let check = run(
        dir.path(),
        &["../etc/passwd", "/etc/passwd", "a.py"],
        Family::Python,
    );
    assert_eq!(
        check
            .notes
            .iter()
            .filter(|n| n.contains("not a path inside the project"))
            .count(),
        2
    );
    assert!(check.issues.is_empty(), "{:#?}", check.issues);
}
