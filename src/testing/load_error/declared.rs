//! What the project declares it depends on (requirements files, pyproject.toml, setup.cfg), and
//! the names an import and a distribution go by: a missing module the project declares is the
//! environment's fault, with the command that installs it.

use std::path::Path;

/// A requirement that names the missing module's distribution, and where.
pub(super) struct Declared {
    /// The requirement as declared (`PyYAML>=6`).
    pub(super) requirement: String,
    /// The manifest, relative to the repository.
    pub(super) source: String,
    pub(super) install: String,
}

pub(super) fn python_declared(repo: &Path, module: &str) -> Option<Declared> {
    let wanted = distribution_candidates(module);
    let matches = |req: &str| wanted.contains(&normalise(requirement_name(req)));
    for file in requirement_files(repo) {
        let Ok(text) = std::fs::read_to_string(repo.join(&file)) else {
            continue;
        };
        let found = requirement_lines(&text)
            .find(|r| matches(r))
            .map(str::to_string);
        if let Some(req) = found {
            return Some(Declared {
                requirement: req,
                install: format!(
                    "{} install -r {}",
                    pip(repo),
                    crate::util::quote(&repo.join(&file).to_string_lossy())
                ),
                source: file,
            });
        }
    }
    let manifests = [
        (
            "pyproject.toml",
            pyproject_requirements as fn(&str) -> Vec<String>,
        ),
        ("setup.cfg", setup_cfg_requirements),
    ];
    for (file, parse) in manifests {
        let Ok(text) = std::fs::read_to_string(repo.join(file)) else {
            continue;
        };
        if let Some(req) = parse(&text).into_iter().find(|r| matches(r)) {
            let spec = req.split(';').next().unwrap_or(&req).trim().to_string();
            return Some(Declared {
                install: format!("{} install {}", pip(repo), crate::util::quote(&spec)),
                requirement: req,
                source: file.into(),
            });
        }
    }
    None
}

/// `requirements*.txt` at the root, `requirements.txt` first, then `requirements/*.txt`.
pub(super) fn requirement_files(repo: &Path) -> Vec<String> {
    let mut files = txt_files(repo, "", |n| n.starts_with("requirements"));
    files.sort_by_key(|f| (f != "requirements.txt", f.clone()));
    files.extend(txt_files(
        &repo.join("requirements"),
        "requirements/",
        |_| true,
    ));
    files
}

pub(super) fn txt_files(dir: &Path, prefix: &str, keep: impl Fn(&str) -> bool) -> Vec<String> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<String> = rd
        .flatten()
        .filter(|e| e.path().is_file())
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.ends_with(".txt") && keep(n))
        .map(|n| format!("{prefix}{n}"))
        .collect();
    out.sort();
    out
}

/// Requirement lines of a requirements file: no comments, options, includes or blank lines.
pub(super) fn requirement_lines(text: &str) -> impl Iterator<Item = &str> {
    text.lines()
        .map(|l| l.split(" #").next().unwrap_or(l).trim())
        .filter(|l| !l.is_empty() && !l.starts_with('#') && !l.starts_with('-'))
}

pub(super) fn pyproject_requirements(text: &str) -> Vec<String> {
    let Ok(doc) = text.parse::<toml::Value>() else {
        return Vec::new();
    };
    let strings = |v: Option<&toml::Value>| -> Vec<String> {
        v.and_then(toml::Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    let tables = |v: Option<&toml::Value>| -> Vec<String> {
        v.and_then(toml::Value::as_table)
            .map(|t| t.values().flat_map(|g| strings(Some(g))).collect())
            .unwrap_or_default()
    };
    let keys = |v: Option<&toml::Value>| -> Vec<String> {
        v.and_then(toml::Value::as_table)
            .map(|t| t.keys().filter(|k| *k != "python").cloned().collect())
            .unwrap_or_default()
    };
    let project = doc.get("project");
    let poetry = doc.get("tool").and_then(|t| t.get("poetry"));
    let mut reqs = strings(project.and_then(|p| p.get("dependencies")));
    reqs.extend(tables(project.and_then(|p| p.get("optional-dependencies"))));
    reqs.extend(tables(doc.get("dependency-groups")));
    reqs.extend(keys(poetry.and_then(|p| p.get("dependencies"))));
    reqs.extend(keys(poetry.and_then(|p| p.get("dev-dependencies"))));
    if let Some(groups) = poetry
        .and_then(|p| p.get("group"))
        .and_then(toml::Value::as_table)
    {
        for g in groups.values() {
            reqs.extend(keys(g.get("dependencies")));
        }
    }
    reqs
}

/// `install_requires`, `tests_require` and every `extras_require` entry: one requirement per
/// (continuation) line.
pub(super) fn setup_cfg_requirements(text: &str) -> Vec<String> {
    let mut reqs = Vec::new();
    let mut section = String::new();
    let mut in_list = false;
    for raw in text.lines() {
        let line = raw.split(" #").next().unwrap_or(raw);
        let trimmed = line.trim();
        if trimmed.starts_with('[') {
            section = trimmed.trim_matches(|c| c == '[' || c == ']').to_string();
            in_list = false;
            continue;
        }
        if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with(';') {
            continue;
        }
        let continuation = line.starts_with(|c: char| c.is_whitespace());
        if continuation {
            if in_list {
                reqs.push(trimmed.to_string());
            }
            continue;
        }
        let (key, value) = trimmed.split_once('=').unwrap_or((trimmed, ""));
        let key = key.trim();
        in_list = (section == "options" && matches!(key, "install_requires" | "tests_require"))
            || section == "options.extras_require";
        if in_list && !value.trim().is_empty() {
            reqs.push(value.trim().to_string());
        }
    }
    reqs
}

/// `PyYAML[extra]>=6 ; marker` -> `PyYAML`.
pub(super) fn requirement_name(req: &str) -> &str {
    let req = req.trim();
    let end = req
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
        .unwrap_or(req.len());
    &req[..end]
}

/// PEP 503: case-insensitive, runs of `-`, `_`, `.` are one `-`.
pub(super) fn normalise(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if matches!(c, '-' | '_' | '.') {
            if !out.ends_with('-') {
                out.push('-');
            }
        } else {
            out.push(c.to_ascii_lowercase());
        }
    }
    out
}

/// Import names whose distribution is named differently.
pub(super) const DISTRIBUTIONS: [(&str, &str); 30] = [
    ("yaml", "PyYAML"),
    ("PIL", "Pillow"),
    ("sklearn", "scikit-learn"),
    ("skimage", "scikit-image"),
    ("cv2", "opencv-python"),
    ("bs4", "beautifulsoup4"),
    ("dateutil", "python-dateutil"),
    ("attr", "attrs"),
    ("jwt", "PyJWT"),
    ("Crypto", "pycryptodome"),
    ("dotenv", "python-dotenv"),
    ("magic", "python-magic"),
    ("serial", "pyserial"),
    ("usb", "pyusb"),
    ("git", "GitPython"),
    ("google.protobuf", "protobuf"),
    ("OpenSSL", "pyOpenSSL"),
    ("MySQLdb", "mysqlclient"),
    ("zmq", "pyzmq"),
    ("docx", "python-docx"),
    ("pptx", "python-pptx"),
    ("fitz", "PyMuPDF"),
    ("jose", "python-jose"),
    ("multipart", "python-multipart"),
    ("slugify", "python-slugify"),
    ("dns", "dnspython"),
    ("nacl", "PyNaCl"),
    ("Bio", "biopython"),
    ("websocket", "websocket-client"),
    ("pkg_resources", "setuptools"),
];

/// The distribution that provides `module`: the longest mapped package it is in
/// (`google.protobuf.message` -> protobuf), else its top-level name.
pub(super) fn distribution(module: &str) -> String {
    let top = module.split('.').next().unwrap_or(module);
    let within = |m: &str| module == m || module.starts_with(&format!("{m}."));
    DISTRIBUTIONS
        .iter()
        .filter(|(m, _)| within(m))
        .max_by_key(|(m, _)| m.len())
        .map_or(top, |(_, d)| *d)
        .to_string()
}

/// Normalised names a requirement for `module` could carry: its distribution and the import
/// name itself.
pub(super) fn distribution_candidates(module: &str) -> Vec<String> {
    let top = module.split('.').next().unwrap_or(module);
    vec![normalise(&distribution(module)), normalise(top)]
}

/// The pip of the interpreter the project's tests run with (its .venv, else python3), so the
/// install lands where the tests look.
pub(super) fn pip(repo: &Path) -> String {
    let python = crate::testing::toolchain::python_for(repo);
    format!("{} -m pip", crate::util::quote(&python))
}

/// The repository as an argument: commands must work from wherever they are pasted.
pub(super) fn repo_arg(repo: &Path) -> String {
    crate::util::quote(&repo.to_string_lossy())
}
