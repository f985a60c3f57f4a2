//! Load errors as real loaders write them (pytest, node, cargo, go), judged.

use super::*;

// Collection errors as pytest 9 writes them into its JUnit report (`<error>` text) for a
// session laid out like the runner's: tests in /s/tests/L1-unit (the cwd), the repository
// mirrored into /s/workspace/python-L1-unit.
const NOWHERE: &str = "ImportError while importing test module '/s/tests/L1-unit/test_calc.py'.
Hint: make sure your test modules/packages have valid Python names.
Traceback:
/usr/lib/python3.11/importlib/__init__.py:126: in import_module
return _bootstrap._gcd_import(name[level:], package, level)
       ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
test_calc.py:3: in <module>
import nosuchmodule
E   ModuleNotFoundError: No module named 'nosuchmodule'";

const TEST_NEEDS_NUMPY: &str =
    "ImportError while importing test module '/s/tests/L1-unit/test_calc.py'.
Hint: make sure your test modules/packages have valid Python names.
Traceback:
/usr/lib/python3.11/importlib/__init__.py:126: in import_module
return _bootstrap._gcd_import(name[level:], package, level)
       ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
test_calc.py:1: in <module>
import numpy as np
E   ModuleNotFoundError: No module named 'numpy'";

const TEST_NEEDS_PIL: &str =
    "ImportError while importing test module '/s/tests/L1-unit/test_img.py'.
Hint: make sure your test modules/packages have valid Python names.
Traceback:
/usr/lib/python3.11/importlib/__init__.py:126: in import_module
return _bootstrap._gcd_import(name[level:], package, level)
       ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
test_img.py:1: in <module>
from PIL import Image
E   ModuleNotFoundError: No module named 'PIL'";

const CODE_NEEDS_NUMPY: &str =
    "ImportError while importing test module '/s/tests/L1-unit/test_stats.py'.
Hint: make sure your test modules/packages have valid Python names.
Traceback:
/usr/lib/python3.11/importlib/__init__.py:126: in import_module
return _bootstrap._gcd_import(name[level:], package, level)
       ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
test_stats.py:1: in <module>
from calc import stats
../../workspace/python-L1-unit/calc/stats.py:1: in <module>
import numpy
E   ModuleNotFoundError: No module named 'numpy'";

const IN_REPO: &str = "ImportError while importing test module '/s/tests/L1-unit/test_pricing.py'.
Hint: make sure your test modules/packages have valid Python names.
Traceback:
/usr/lib/python3.11/importlib/__init__.py:126: in import_module
return _bootstrap._gcd_import(name[level:], package, level)
       ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
test_pricing.py:1: in <module>
from inventory import pricing
E   ModuleNotFoundError: No module named 'inventory'";

const NO_SUBMODULE: &str = "ImportError while importing test module '/s/tests/L1-unit/test_sub.py'.
Hint: make sure your test modules/packages have valid Python names.
Traceback:
/usr/lib/python3.11/importlib/__init__.py:126: in import_module
return _bootstrap._gcd_import(name[level:], package, level)
       ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
test_sub.py:1: in <module>
import calc.nosuch
E   ModuleNotFoundError: No module named 'calc.nosuch'";

const CODE_SYNTAX: &str =
    "/usr/lib/python3.11/site-packages/_pytest/python.py:528: in importtestmodule
mod = import_path(
/usr/lib/python3.11/importlib/__init__.py:126: in import_module
return _bootstrap._gcd_import(name[level:], package, level)
<frozen importlib._bootstrap>:1204: in _gcd_import
???
/usr/lib/python3.11/site-packages/_pytest/assertion/rewrite.py:185: in exec_module
exec(co, module.__dict__)
test_calc.py:1: in <module>
from calc import core
E     File \"/s/workspace/python-L1-unit/calc/core.py\", line 3
E       def add(a, b:
E              ^
E   SyntaxError: '(' was never closed";

const TEST_SYNTAX: &str =
    "/usr/lib/python3.11/site-packages/_pytest/python.py:528: in importtestmodule
mod = import_path(
<frozen importlib._bootstrap>:1204: in _gcd_import
???
/usr/lib/python3.11/site-packages/_pytest/assertion/rewrite.py:339: in _rewrite_test
tree = ast.parse(source, filename=strfn)
/usr/lib/python3.11/ast.py:50: in parse
return compile(source, filename, mode, flags,
E     File \"/s/tests/L1-unit/test_calc.py\", line 1
E       def test_a(:
E                  ^
E   SyntaxError: invalid syntax";

const TEST_INDENT: &str =
    "/usr/lib/python3.11/site-packages/_pytest/assertion/rewrite.py:339: in _rewrite_test
tree = ast.parse(source, filename=strfn)
/usr/lib/python3.11/ast.py:50: in parse
return compile(source, filename, mode, flags,
E     File \"/s/tests/L1-unit/test_calc.py\", line 3
E       y = 2
E   IndentationError: unexpected indent";

const CODE_RAISES: &str = "test_calc.py:1: in <module>
from calc import config
../../workspace/python-L1-unit/calc/config.py:1: in <module>
RATE = int(\"x\")
       ^^^^^^^^
E   ValueError: invalid literal for int() with base 10: 'x'";

// node 20, as node_runner keeps it (no `at` lines).
const NODE_CODE_NEEDS_LODASH: &str = "node:internal/modules/cjs/loader:1210
  throw err;
  ^
Error: Cannot find module 'lodash'
Require stack:
- /s/workspace/node-L1-unit/src/util.js
- /s/workspace/node-L1-unit/tt-tests/L1-unit/util.test.js";

const NODE_TEST_NEEDS_PKG: &str = "node:internal/modules/esm/resolve:873
  throw new ERR_MODULE_NOT_FOUND(packageName, fileURLToPath(base), null);
    ^
Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'leftpadx' imported from /s/workspace/node-L1-unit/tt-tests/L1-unit/util.test.mjs";

const NODE_RELATIVE: &str = "node:internal/modules/esm/resolve:283
throw new ERR_MODULE_NOT_FOUND(
      ^
Error [ERR_MODULE_NOT_FOUND]: Cannot find module '/s/workspace/node-L1-unit/src/strings.js' imported from /s/workspace/node-L1-unit/tt-tests/L1-unit/util.test.mjs";

const NODE_SYNTAX: &str = "util.test.js:2
SyntaxError: Unexpected end of input";

// cargo build --tests --message-format=short, as cargo_runner keeps a file's lines.
const RUST_UNDECLARED: &str = "tt_L1_a.rs:1:5: error[E0432]: unresolved import `serde_yaml`: use of unresolved module or unlinked crate `serde_yaml`";
const RUST_NO_ITEM: &str =
    "tt_L1_b.rs:1:5: error[E0432]: unresolved import `geom::nosuch`: no `nosuch` in the root";
const RUST_NO_CRATE: &str =
    "tt_L1_c.rs:1:1: error[E0463]: can't find crate for `foo`: can't find crate";
const RUST_SYNTAX: &str = "tt_L1_d.rs:3:18: error: mismatched closing delimiter: `}`: mismatched closing delimiter, unclosed delimiter";

/// Like the executor's `is_test_path`, including its taste for the layer's name, which the
/// runners' mirror folders (`python-L1-unit`) also carry.
fn is_test(p: &str) -> bool {
    let name = p.rsplit('/').next().unwrap_or(p);
    p.contains("L1-unit")
        || p.starts_with("tests/")
        || p.contains("/tests/")
        || name.starts_with("test_")
        || name.contains(".test.")
}

/// A repository holding `files` (path, contents).
fn repo(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    for (path, text) in files {
        let p = dir.path().join(path);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).expect("mkdir");
        }
        std::fs::write(p, text).expect("write");
    }
    dir
}

fn judge(file: &str, error: &str, repo: &Path) -> LoadVerdict {
    let le = LoadError {
        file: file.into(),
        error: error.into(),
        verdict: None,
    };
    classify_load_error(&le, repo, is_test)
}

const CALC: [(&str, &str); 2] = [
    ("calc/__init__.py", ""),
    ("calc/ops.py", "def add(a, b):\n    return a + b\n"),
];

#[test]
fn a_module_that_exists_nowhere_is_a_test_defect() {
    let r = repo(&CALC);
    let v = judge("test_calc.py", NOWHERE, r.path());
    assert_eq!(v.verdict.classification, Classification::TestDefect);
    assert_eq!(v.verdict.location.as_deref(), Some("test_calc.py:3"));
    assert_eq!(v.verdict.error, "ModuleNotFoundError");
    assert!(v.verdict.reason.contains("`nosuchmodule`"), "{v:?}");
    assert_eq!(v.install, None);
}

#[test]
fn an_undeclared_uninstalled_package_the_test_imports_is_a_test_defect() {
    let r = repo(&[("requirements.txt", "requests>=2\n")]);
    let v = judge("test_calc.py", TEST_NEEDS_NUMPY, r.path());
    assert_eq!(v.verdict.classification, Classification::TestDefect);
    assert!(
        v.verdict.reason.contains("not a declared dependency")
            || v.verdict.reason.contains("nor a declared dependency"),
        "{}",
        v.verdict.reason
    );
}

#[test]
fn a_package_requirements_txt_declares_is_an_env_issue() {
    let r = repo(&[(
        "requirements.txt",
        "# runtime\nrequests>=2.31  # http\nnumpy==1.26.4 ; python_version < \"3.13\"\n",
    )]);
    let v = judge("test_calc.py", TEST_NEEDS_NUMPY, r.path());
    assert_eq!(v.verdict.classification, Classification::EnvIssue);
    assert_eq!(v.verdict.criticality, Criticality::Medium);
    // The file by its absolute path: the command works from any folder.
    let file = r.path().join("requirements.txt");
    assert_eq!(
        v.install,
        Some(format!("python3 -m pip install -r {}", file.display()))
    );
    assert!(
        v.verdict.reason.contains("requirements.txt"),
        "{}",
        v.verdict.reason
    );
}

#[test]
fn a_dev_requirements_file_is_named_in_the_command() {
    let r = repo(&[
        ("requirements.txt", "requests\n"),
        (
            "requirements-dev.txt",
            "-r requirements.txt\npytest\nNumPy\n",
        ),
    ]);
    let v = judge("test_calc.py", TEST_NEEDS_NUMPY, r.path());
    let file = r.path().join("requirements-dev.txt");
    assert_eq!(
        v.install,
        Some(format!("python3 -m pip install -r {}", file.display()))
    );
}

#[test]
fn pyproject_dependencies_map_import_names_to_distributions() {
    let pyproject = "[project]\nname = \"img\"\ndependencies = [\"requests\"]\n\n[project.optional-dependencies]\ntest = [\"pytest>=8\", \"pillow[avif]>=10\"]\n";
    let r = repo(&[("pyproject.toml", pyproject)]);
    let v = judge("test_img.py", TEST_NEEDS_PIL, r.path());
    assert_eq!(v.verdict.classification, Classification::EnvIssue);
    assert_eq!(
        v.install.as_deref(),
        Some("python3 -m pip install 'pillow[avif]>=10'")
    );
    assert!(
        v.verdict.reason.contains("pyproject.toml"),
        "{}",
        v.verdict.reason
    );
}

#[test]
fn setup_cfg_install_requires_counts_as_declared() {
    let cfg = "[metadata]\nname = calc\n\n[options]\npackages = find:\ninstall_requires =\n    requests\n    numpy>=1.24\n";
    let r = repo(&[("setup.cfg", cfg)]);
    let v = judge("test_calc.py", TEST_NEEDS_NUMPY, r.path());
    assert_eq!(v.verdict.classification, Classification::EnvIssue);
    assert_eq!(
        v.install.as_deref(),
        Some("python3 -m pip install 'numpy>=1.24'")
    );
}

#[test]
fn a_package_the_projects_own_code_imports_is_an_env_issue() {
    let r = repo(&[
        ("calc/__init__.py", ""),
        ("calc/stats.py", "import numpy\n"),
    ]);
    let v = judge("test_stats.py", CODE_NEEDS_NUMPY, r.path());
    assert_eq!(v.verdict.classification, Classification::EnvIssue);
    assert_eq!(v.verdict.location.as_deref(), Some("calc/stats.py:1"));
    assert_eq!(v.install.as_deref(), Some("python3 -m pip install numpy"));
    assert!(
        v.verdict.reason.contains("calc/stats.py:1"),
        "{}",
        v.verdict.reason
    );
}

#[test]
fn the_project_needing_pil_installs_pillow() {
    let text = CODE_NEEDS_NUMPY
        .replace("import numpy", "from PIL import Image")
        .replace("'numpy'", "'PIL'");
    let r = repo(&[("calc/__init__.py", ""), ("calc/stats.py", "")]);
    let v = judge("test_stats.py", &text, r.path());
    assert_eq!(v.install.as_deref(), Some("python3 -m pip install Pillow"));
}

#[test]
fn a_dependency_an_installed_package_lacks_is_an_env_issue() {
    let text = "ImportError while importing test module '/s/tests/L1-unit/test_frame.py'.
Hint: make sure your test modules/packages have valid Python names.
Traceback:
/usr/lib/python3.11/importlib/__init__.py:126: in import_module
return _bootstrap._gcd_import(name[level:], package, level)
test_frame.py:1: in <module>
import pandas
/usr/lib/python3.11/site-packages/pandas/__init__.py:16: in <module>
import pytz
E   ModuleNotFoundError: No module named 'pytz'";
    let r = repo(&CALC);
    let v = judge("test_frame.py", text, r.path());
    assert_eq!(v.verdict.classification, Classification::EnvIssue);
    assert_eq!(v.install.as_deref(), Some("python3 -m pip install pytz"));
    assert!(
        v.verdict
            .reason
            .contains("site-packages/pandas/__init__.py"),
        "{}",
        v.verdict.reason
    );
}

#[test]
fn a_module_in_the_repository_imported_wrongly_is_a_test_defect() {
    let r = repo(&[
        ("app/__init__.py", ""),
        ("app/inventory/__init__.py", ""),
        ("app/inventory/pricing.py", "def total(): ...\n"),
        (".venv/lib/inventory/__init__.py", ""),
    ]);
    let v = judge("test_pricing.py", IN_REPO, r.path());
    assert_eq!(v.verdict.classification, Classification::TestDefect);
    assert!(
        v.verdict.reason.contains("app/inventory/__init__.py")
            && v.verdict.reason.contains("`app.inventory`"),
        "{}",
        v.verdict.reason
    );
}

#[test]
fn a_module_under_a_folder_that_is_no_identifier_needs_sys_path() {
    let r = repo(&[("my-service/inventory/__init__.py", "")]);
    let v = judge("test_pricing.py", IN_REPO, r.path());
    assert_eq!(v.verdict.classification, Classification::TestDefect);
    assert!(
        v.verdict.reason.contains("put my-service/ on sys.path"),
        "{}",
        v.verdict.reason
    );
}

#[test]
fn a_submodule_the_project_lacks_is_a_test_defect() {
    let r = repo(&CALC);
    let v = judge("test_sub.py", NO_SUBMODULE, r.path());
    assert_eq!(v.verdict.classification, Classification::TestDefect);
    assert!(
        v.verdict.reason.contains("calc/__init__.py"),
        "{}",
        v.verdict.reason
    );
}

#[test]
fn a_syntax_error_in_the_projects_code_is_a_high_code_defect() {
    let r = repo(&[
        ("calc/__init__.py", ""),
        ("calc/core.py", "x = 1\n\ndef add(a, b:\n"),
    ]);
    let v = judge("test_calc.py", CODE_SYNTAX, r.path());
    assert_eq!(v.verdict.classification, Classification::CodeDefect);
    assert_eq!(v.verdict.criticality, Criticality::High);
    assert_eq!(v.verdict.location.as_deref(), Some("calc/core.py:3"));
    assert_eq!(v.verdict.error, "SyntaxError");
    assert!(
        v.verdict.reason.contains("'(' was never closed"),
        "{}",
        v.verdict.reason
    );
}

#[test]
fn a_syntax_error_in_the_test_file_is_a_test_defect() {
    let r = repo(&CALC);
    for (text, kind, loc) in [
        (TEST_SYNTAX, "SyntaxError", "test_calc.py:1"),
        (TEST_INDENT, "IndentationError", "test_calc.py:3"),
    ] {
        let v = judge("test_calc.py", text, r.path());
        assert_eq!(v.verdict.classification, Classification::TestDefect);
        assert_eq!(v.verdict.error, kind);
        assert_eq!(v.verdict.location.as_deref(), Some(loc));
    }
}

#[test]
fn an_error_raised_while_importing_the_code_is_a_code_defect() {
    let r = repo(&[
        ("calc/__init__.py", ""),
        ("calc/config.py", "RATE = int(\"x\")\n"),
    ]);
    let v = judge("test_calc.py", CODE_RAISES, r.path());
    assert_eq!(v.verdict.classification, Classification::CodeDefect);
    assert_eq!(v.verdict.location.as_deref(), Some("calc/config.py:1"));
    assert_eq!(v.verdict.error, "ValueError");
}

#[test]
fn missing_pytest_stays_an_env_issue() {
    let r = repo(&[]);
    let v = judge(
        "test_calc.py",
        "/usr/bin/python3: No module named 'pytest'",
        r.path(),
    );
    assert_eq!(v.verdict.classification, Classification::EnvIssue);
}

#[test]
fn node_packages_declared_or_needed_by_the_project_are_env_issues() {
    let util = ("src/util.js", "const _ = require('lodash');\n");
    let declared = repo(&[
        (
            "package.json",
            r#"{"name":"u","dependencies":{"lodash":"^4.17.21"}}"#,
        ),
        util,
    ]);
    let v = judge("util.test.js", NODE_CODE_NEEDS_LODASH, declared.path());
    assert_eq!(v.verdict.classification, Classification::EnvIssue);
    assert_eq!(
        v.install,
        Some(format!(
            "npm install --prefix {}",
            declared.path().display()
        ))
    );
    let undeclared = repo(&[("package.json", r#"{"name":"u"}"#), util]);
    let v = judge("util.test.js", NODE_CODE_NEEDS_LODASH, undeclared.path());
    assert_eq!(v.verdict.classification, Classification::EnvIssue);
    assert_eq!(
        v.install,
        Some(format!(
            "npm install --prefix {} lodash",
            undeclared.path().display()
        ))
    );
    assert!(
        v.verdict.reason.contains("src/util.js"),
        "{}",
        v.verdict.reason
    );
}

#[test]
fn a_node_package_only_the_test_wants_is_a_test_defect() {
    let r = repo(&[(
        "package.json",
        r#"{"name":"u","devDependencies":{"c8":"^9"}}"#,
    )]);
    let v = judge("util.test.mjs", NODE_TEST_NEEDS_PKG, r.path());
    assert_eq!(v.verdict.classification, Classification::TestDefect);
    assert!(
        v.verdict.reason.contains("`leftpadx`"),
        "{}",
        v.verdict.reason
    );
    assert_eq!(v.verdict.error, "ERR_MODULE_NOT_FOUND");
    assert_eq!(v.install, None);
}

#[test]
fn a_wrong_relative_import_names_where_the_file_is() {
    let r = repo(&[("lib/strings.js", "export const f = 1;\n")]);
    let v = judge("util.test.mjs", NODE_RELATIVE, r.path());
    assert_eq!(v.verdict.classification, Classification::TestDefect);
    assert!(
        v.verdict.reason.contains("lib/strings.js"),
        "{}",
        v.verdict.reason
    );
}

#[test]
fn a_node_syntax_error_in_the_test_is_a_test_defect() {
    let r = repo(&[]);
    let v = judge("util.test.js", NODE_SYNTAX, r.path());
    assert_eq!(v.verdict.classification, Classification::TestDefect);
    assert_eq!(v.verdict.location.as_deref(), Some("util.test.js:2"));
}

#[test]
fn unresolved_rust_imports_are_test_defects() {
    let cargo = "[package]\nname = \"geom\"\nversion = \"0.1.0\"\n\n[dev-dependencies]\nserde_json = \"1\"\n";
    let r = repo(&[("Cargo.toml", cargo), ("src/lib.rs", "")]);
    let v = judge("tt_L1_a.rs", RUST_UNDECLARED, r.path());
    assert_eq!(v.verdict.classification, Classification::TestDefect);
    assert_eq!(v.verdict.location.as_deref(), Some("tt_L1_a.rs:1"));
    assert_eq!(v.verdict.error, "E0432");
    assert!(
        v.verdict.reason.contains("`serde_yaml`") && v.verdict.reason.contains("Cargo.toml"),
        "{}",
        v.verdict.reason
    );
    let v = judge("tt_L1_b.rs", RUST_NO_ITEM, r.path());
    assert!(
        v.verdict.reason.contains("`geom::nosuch`") && v.verdict.reason.contains("does not exist"),
        "{}",
        v.verdict.reason
    );
    let v = judge("tt_L1_c.rs", RUST_NO_CRATE, r.path());
    assert_eq!(v.verdict.classification, Classification::TestDefect);
    assert_eq!(v.verdict.error, "E0463");
}

#[test]
fn a_rust_test_that_does_not_compile_is_a_test_defect() {
    let r = repo(&[("Cargo.toml", "[package]\nname = \"geom\"\n")]);
    let v = judge("tt_L1_d.rs", RUST_SYNTAX, r.path());
    assert_eq!(v.verdict.classification, Classification::TestDefect);
    assert_eq!(v.verdict.location.as_deref(), Some("tt_L1_d.rs:3"));
    assert_eq!(v.verdict.error, "compile error");
}

#[test]
fn requirement_names_are_compared_as_pep_503_says() {
    assert_eq!(normalise("Python_Dateutil"), "python-dateutil");
    assert_eq!(normalise("ruamel.yaml"), "ruamel-yaml");
    assert_eq!(normalise("a-_.b"), "a-b");
    assert_eq!(
        requirement_name("PyYAML[libyaml]>=6.0 ; sys_platform != 'win32'"),
        "PyYAML"
    );
    assert_eq!(requirement_name("requests @ https://x/r.whl"), "requests");
    assert_eq!(distribution("yaml"), "PyYAML");
    assert_eq!(distribution("google.protobuf.message"), "protobuf");
    assert_eq!(distribution("sklearn.linear_model"), "scikit-learn");
    assert_eq!(distribution("numpy"), "numpy");
}

#[test]
fn poetry_and_dependency_groups_are_read() {
    let pyproject = "[tool.poetry.dependencies]\npython = \"^3.11\"\nPyYAML = \"^6\"\n\n[tool.poetry.group.test.dependencies]\nhypothesis = \"*\"\n\n[dependency-groups]\ndev = [\"ruff\", {include-group = \"test\"}]\n";
    let reqs = pyproject_requirements(pyproject);
    for want in ["PyYAML", "hypothesis", "ruff"] {
        assert!(reqs.iter().any(|r| r == want), "{want} in {reqs:?}");
    }
    assert!(!reqs.iter().any(|r| r == "python"));
}

#[test]
fn a_load_verdict_serialises_flat() {
    let r = repo(&[("requirements.txt", "numpy\n")]);
    let v = judge("test_calc.py", TEST_NEEDS_NUMPY, r.path());
    let json = serde_json::to_value(&v).expect("json");
    assert_eq!(json["classification"], "env_issue");
    assert_eq!(
        json["install"],
        format!(
            "python3 -m pip install -r {}",
            r.path().join("requirements.txt").display()
        )
    );
    let back: LoadVerdict = serde_json::from_value(json).expect("back");
    assert_eq!(back, v);
}
