//! Node projects: `node --check` parses each changed .js/.mjs/.cjs file (unless the project
//! compiles its JavaScript with Babel or JSX, which node cannot parse), the project's own `tsc`
//! type-checks when TypeScript changed, and the changed files' imports must resolve: a relative
//! specifier to a file, a bare one to an installed (or declared) package or a node builtin.

use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use regex::Regex;

use crate::testing::code_check::text::{is_test_file, js_imports, lang_of, lex, package_of, Lang};
use crate::testing::code_check::{
    exec, relative, tool_note, CheckInput, CodeCheck, IssueKind, Severity,
};
use crate::util::tail_lines;

const NODE_BUILTINS: [&str; 44] = [
    "assert",
    "async_hooks",
    "buffer",
    "child_process",
    "cluster",
    "console",
    "constants",
    "crypto",
    "dgram",
    "diagnostics_channel",
    "dns",
    "domain",
    "events",
    "fs",
    "http",
    "http2",
    "https",
    "inspector",
    "module",
    "net",
    "os",
    "path",
    "perf_hooks",
    "process",
    "punycode",
    "querystring",
    "readline",
    "repl",
    "stream",
    "string_decoder",
    "sys",
    "timers",
    "tls",
    "trace_events",
    "tty",
    "url",
    "util",
    "v8",
    "vm",
    "wasi",
    "worker_threads",
    "zlib",
    "test",
    "sqlite",
];
const TS_EXTENSIONS: [&str; 4] = ["ts", "tsx", "mts", "cts"];
/// What a specifier without an extension may name, in the order bundlers and tsc try them.
const RESOLVE_EXTENSIONS: [&str; 11] = [
    "ts", "tsx", "js", "jsx", "mjs", "cjs", "mts", "cts", "json", "node", "d.ts",
];

pub fn check(input: &CheckInput, changed: &[String], out: &mut CodeCheck) {
    let code: Vec<&String> = changed
        .iter()
        .filter(|f| lang_of(f) == Some(Lang::Js) && !is_test_file(f, Lang::Js))
        .collect();
    syntax(input, &code, out);
    imports(input.root, &code, out);
    typescript(input, &code, out);
}

fn extension(path: &str) -> &str {
    path.rsplit_once('.').map_or("", |(_, e)| e)
}

/// The project runs its JavaScript through Babel, JSX or Flow: plain node cannot parse it.
fn compiles_js(root: &Path) -> bool {
    let package = std::fs::read_to_string(root.join("package.json")).unwrap_or_default();
    let babel = [
        ".babelrc",
        ".babelrc.json",
        "babel.config.js",
        "babel.config.json",
        "babel.config.cjs",
    ]
    .iter()
    .any(|f| root.join(f).is_file());
    babel
        || [
            "\"react\"",
            "\"preact\"",
            "\"@babel/core\"",
            "\"babel-jest\"",
            "\"flow-bin\"",
            "\"solid-js\"",
        ]
        .iter()
        .any(|d| package.contains(d))
}

static NODE_LINE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r":(\d+)\s*$").unwrap());

fn syntax(input: &CheckInput, code: &[&String], out: &mut CodeCheck) {
    let plain: Vec<&String> = code
        .iter()
        .copied()
        .filter(|f| matches!(extension(f), "js" | "mjs" | "cjs"))
        .collect();
    if plain.is_empty() {
        return;
    }
    if compiles_js(input.root) {
        out.notes.push(
            "syntax (node --check): not run, the project compiles its JavaScript (Babel, JSX or Flow)"
                .into(),
        );
        return;
    }
    let run = exec(input, Vec::new());
    let mut checked = 0;
    for file in plain {
        let argv = vec!["node".to_string(), "--check".to_string(), file.clone()];
        let ran = match run.run(&argv) {
            Ok(ran) => ran,
            Err(e) => {
                out.notes.push(tool_note("syntax (node --check)", &e));
                break;
            }
        };
        checked += 1;
        if ran.success() {
            continue;
        }
        let line = ran
            .stderr
            .lines()
            .next()
            .and_then(|l| NODE_LINE.captures(l))
            .and_then(|c| c[1].parse().ok());
        let message = ran
            .stderr
            .lines()
            .find(|l| l.contains("Error"))
            .unwrap_or_else(|| ran.stderr.lines().last().unwrap_or("node --check failed"))
            .trim()
            .to_string();
        out.push(
            Severity::Critical,
            IssueKind::DoesNotCompile,
            file,
            line,
            message,
        );
    }
    out.checked.push(format!(
        "syntax: node --check on {checked} changed JavaScript files"
    ));
}

/// What resolves a bare specifier in this project.
struct Packages {
    node_modules: Option<PathBuf>,
    /// package.json's own name and dependencies of every kind.
    declared: Vec<String>,
    own_name: Option<String>,
    /// Config files' text: an alias a bundler or tsc maps (`@/`, `~`, `paths`) is named there.
    configs: String,
}

impl Packages {
    fn read(root: &Path) -> Packages {
        let package: serde_json::Value = std::fs::read_to_string(root.join("package.json"))
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default();
        let mut declared = Vec::new();
        for key in [
            "dependencies",
            "devDependencies",
            "peerDependencies",
            "optionalDependencies",
        ] {
            if let Some(deps) = package.get(key).and_then(|d| d.as_object()) {
                declared.extend(deps.keys().cloned());
            }
        }
        let mut configs = String::new();
        if let Ok(entries) = std::fs::read_dir(root) {
            for e in entries.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                let config = name.starts_with("tsconfig")
                    || name.starts_with("jsconfig")
                    || name.contains(".config.")
                    || name.starts_with(".babelrc")
                    || name == "package.json";
                if config {
                    configs.push_str(&std::fs::read_to_string(e.path()).unwrap_or_default());
                }
            }
        }
        let node_modules = root.join("node_modules");
        Packages {
            node_modules: node_modules.is_dir().then_some(node_modules),
            declared,
            own_name: package
                .get("name")
                .and_then(|n| n.as_str())
                .map(String::from),
            configs,
        }
    }

    /// Whether a config file names `prefix` as a string (an alias, a `paths` key).
    fn aliased(&self, prefix: &str) -> bool {
        let p = prefix.trim_end_matches('/');
        [
            format!("\"{p}\""),
            format!("\"{p}/"),
            format!("'{p}'"),
            format!("'{p}/"),
            format!("^{p}"),
        ]
        .iter()
        .any(|q| self.configs.contains(q.as_str()))
    }
}

/// The file a relative specifier names, trying what bundlers and tsc try.
fn resolves(base: &Path) -> bool {
    if base.is_file() {
        return true;
    }
    let name = base.to_string_lossy();
    // TypeScript's ESM style: `./x.js` names `./x.ts`.
    for (js, ts) in [
        (".js", &[".ts", ".tsx"][..]),
        (".jsx", &[".tsx"][..]),
        (".mjs", &[".mts"][..]),
        (".cjs", &[".cts"][..]),
    ] {
        if let Some(stem) = name.strip_suffix(js) {
            if ts
                .iter()
                .any(|t| Path::new(&format!("{stem}{t}")).is_file())
            {
                return true;
            }
        }
    }
    RESOLVE_EXTENSIONS
        .iter()
        .any(|e| Path::new(&format!("{name}.{e}")).is_file())
        || (base.is_dir()
            && (base.join("package.json").is_file()
                || RESOLVE_EXTENSIONS
                    .iter()
                    .any(|e| base.join(format!("index.{e}")).is_file())))
}

fn imports(root: &Path, code: &[&String], out: &mut CodeCheck) {
    if code.is_empty() {
        return;
    }
    if root.join(".pnp.cjs").is_file() {
        out.notes
            .push("imports: not checked, the project installs with Yarn Plug'n'Play".into());
        return;
    }
    let packages = Packages::read(root);
    if packages.node_modules.is_none() {
        out.notes.push(
            "imports: node_modules is absent, packages are judged against package.json only".into(),
        );
    }
    let mut judged = 0;
    for rel in code {
        let Ok(bytes) = crate::util::read_regular(&root.join(rel)) else {
            continue;
        };
        judged += 1;
        let lexed = lex(&String::from_utf8_lossy(&bytes), Lang::Js);
        let dir = root
            .join(rel)
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default();
        for import in js_imports(&lexed) {
            if import.type_only {
                continue;
            }
            let spec = import.specifier.split(['?', '#']).next().unwrap_or("");
            let line = Some(lexed.line(import.offset));
            if spec.is_empty() {
                continue;
            }
            if spec.starts_with("./") || spec.starts_with("../") || spec == "." || spec == ".." {
                let target = normalise(&dir.join(spec));
                if !target.starts_with(root) || resolves(&target) {
                    continue;
                }
                out.push(
                    Severity::Critical,
                    IssueKind::HallucinatedImport,
                    rel,
                    line,
                    format!("`{spec}`: no such file in the project"),
                );
                continue;
            }
            let aliasy = spec.starts_with('/')
                || spec.starts_with('~')
                || spec.starts_with('#')
                || spec.starts_with("@/")
                || spec.starts_with('$')
                || spec.contains(':');
            let package = package_of(spec);
            if aliasy
                || NODE_BUILTINS.contains(&package.as_str())
                || packages.own_name.as_deref() == Some(package.as_str())
            {
                continue;
            }
            let declared = packages.declared.contains(&package)
                || packages.declared.contains(&format!("@types/{package}"));
            match &packages.node_modules {
                Some(nm) if nm.join(&package).exists() => {}
                Some(_) if declared => out.push(
                    Severity::Warning,
                    IssueKind::HallucinatedImport,
                    rel,
                    line,
                    format!("`{spec}`: {package} is declared in package.json but not installed"),
                ),
                None if declared => {}
                _ if packages.aliased(&package) => {}
                _ => out.push(
                    Severity::Critical,
                    IssueKind::HallucinatedImport,
                    rel,
                    line,
                    format!("`{spec}`: no package {package} in node_modules or package.json, and not a node builtin"),
                ),
            }
        }
    }
    out.checked.push(format!(
        "imports: {judged} changed JavaScript/TypeScript files"
    ));
}

/// `a/./b/../c` -> `a/c`, without touching the file system.
fn normalise(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

static TSC_LINE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(.+?)\((\d+),\d+\): error (TS\d+): (.*)$").unwrap());

fn typescript(input: &CheckInput, code: &[&String], out: &mut CodeCheck) {
    let ts: Vec<&String> = code
        .iter()
        .copied()
        .filter(|f| TS_EXTENSIONS.contains(&extension(f)))
        .collect();
    if ts.is_empty() {
        return;
    }
    let tsc = input.root.join("node_modules/typescript/bin/tsc");
    if !tsc.is_file() {
        out.notes.push(
            "type check: TypeScript is not installed in the project (npm install --save-dev typescript)"
                .into(),
        );
        return;
    }
    let config = input.root.join("tsconfig.json");
    let Ok(config_text) = std::fs::read_to_string(&config) else {
        out.notes
            .push("type check: the project has no tsconfig.json, tsc not run".into());
        return;
    };
    let mut argv: Vec<String> = vec![
        "node".into(),
        tsc.to_string_lossy().into_owned(),
        "--noEmit".into(),
        "--pretty".into(),
        "false".into(),
        "-p".into(),
        "tsconfig.json".into(),
    ];
    if config_text.contains("\"incremental\"") || config_text.contains("\"composite\"") {
        argv.push("--tsBuildInfoFile".into());
        argv.push(
            input
                .scratch
                .join("tsbuildinfo")
                .to_string_lossy()
                .into_owned(),
        );
    }
    let ran = match exec(input, Vec::new()).run(&argv) {
        Ok(ran) => ran,
        Err(e) => return out.notes.push(tool_note("type check (tsc)", &e)),
    };
    out.type_checker = Some("tsc".into());
    let mut elsewhere = 0;
    let mut found = 0;
    for c in ran.stdout.lines().filter_map(|l| TSC_LINE.captures(l)) {
        found += 1;
        let file = relative(input.root, &c[1]);
        if !ts.iter().any(|f| **f == file) && !code.iter().any(|f| **f == file) {
            elsewhere += 1;
            continue;
        }
        out.push(
            Severity::Warning,
            IssueKind::TypeError,
            &file,
            c[2].parse().ok(),
            format!("{}: {}", &c[3], c[4].trim()),
        );
    }
    if found == 0 && !ran.success() {
        out.notes.push(format!(
            "type check (tsc) did not finish (exit {:?}): {}",
            ran.status,
            tail_lines(&format!("{}{}", ran.stdout, ran.stderr), 4)
        ));
    }
    if elsewhere > 0 {
        out.notes.push(format!(
            "type check: {elsewhere} more tsc errors in files that did not change"
        ));
    }
    out.checked.push(format!(
        "type check: tsc --noEmit ({} changed TypeScript files)",
        ts.len()
    ));
}
