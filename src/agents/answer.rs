//! Test files out of an agent's answer: fenced code blocks named by a first line `# path: NAME`
//! (or `// path: NAME`) or by `path=NAME` after the opening fence, or a JSON answer
//! `{"files": [{"path": ..., "content": ...}]}`. Every name must stay inside the layer's folder.

use std::path::{Component, Path, PathBuf};

use serde::Deserialize;

/// One file the answer gives.
#[derive(Debug, Clone, PartialEq)]
pub struct AnswerFile {
    /// Relative to the layer's folder, checked to stay inside it.
    pub path: PathBuf,
    pub content: String,
}

/// What an answer gave: the usable files, and what was refused (with the reason).
#[derive(Debug, Default, PartialEq)]
pub struct Parsed {
    pub files: Vec<AnswerFile>,
    pub refused: Vec<String>,
}

#[derive(Deserialize)]
struct JsonAnswer {
    files: Vec<JsonFile>,
}

#[derive(Deserialize)]
struct JsonFile {
    path: String,
    content: String,
}

/// The files of `answer`. A later file with the same name replaces an earlier one.
pub fn parse(answer: &str) -> Parsed {
    let mut out = Parsed::default();
    let trimmed = answer.trim();
    let json = trimmed
        .strip_prefix("```json")
        .and_then(|rest| rest.strip_suffix("```"))
        .unwrap_or(trimmed);
    if let Ok(j) = serde_json::from_str::<JsonAnswer>(json) {
        for f in j.files {
            out.add(&f.path, f.content);
        }
        return out;
    }
    for (name, body) in fenced_blocks(answer) {
        match name {
            Some(name) => out.add(&name, body),
            None => out
                .refused
                .push("a code block without a file name (no `# path:` line)".into()),
        }
    }
    out
}

impl Parsed {
    fn add(&mut self, name: &str, content: String) {
        match safe_relative(name) {
            Ok(path) => {
                self.files.retain(|f| f.path != path);
                self.files.push(AnswerFile { path, content });
            }
            Err(why) => self.refused.push(format!("{name}: {why}")),
        }
    }
}

/// Why a file name in an answer cannot be written into the layer's folder.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnsafeName {
    #[error("empty file name")]
    Empty,
    #[error("outside the layer's folder (absolute or `..`)")]
    Outside,
}

/// `name` as a path inside the layer's folder, or why it is not one.
pub fn safe_relative(name: &str) -> Result<PathBuf, UnsafeName> {
    let name = name.trim();
    if name.is_empty() {
        return Err(UnsafeName::Empty);
    }
    let path = Path::new(name);
    let mut clean = PathBuf::new();
    for c in path.components() {
        match c {
            Component::Normal(part) => clean.push(part),
            Component::CurDir => {}
            Component::ParentDir | Component::RootDir | Component::Prefix(_) => {
                return Err(UnsafeName::Outside)
            }
        }
    }
    if clean.as_os_str().is_empty() {
        return Err(UnsafeName::Empty);
    }
    Ok(clean)
}

/// Fenced blocks with their file names: ```` ```python path=tests/test_x.py ```` or a first
/// line `# path: NAME` / `// path: NAME` (which is then left out of the content).
fn fenced_blocks(text: &str) -> Vec<(Option<String>, String)> {
    let mut blocks = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let Some(info) = line.trim_start().strip_prefix("```") else {
            continue;
        };
        let mut name = info.split_whitespace().find_map(|w| {
            w.strip_prefix("path=")
                .map(|p| p.trim_matches('"').to_string())
        });
        let mut body = Vec::new();
        let mut first = true;
        for line in lines.by_ref() {
            if line.trim_start().starts_with("```") {
                break;
            }
            if first {
                first = false;
                let t = line.trim();
                let named = ["# path:", "// path:", "#path:", "//path:"]
                    .iter()
                    .find_map(|p| t.strip_prefix(p));
                if let Some(n) = named {
                    name.get_or_insert_with(|| n.trim().to_string());
                    continue;
                }
            }
            body.push(line);
        }
        let mut content = body.join("\n");
        content.push('\n');
        blocks.push((name, content));
    }
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_naming_forms_and_json_are_accepted() {
        let answer = "Here are the tests.\n\n```python\n# path: test_ops.py\nfrom calc.ops import add\n\ndef test_add():\n    assert add(1, 2) == 3\n```\n\nand\n\n```python path=unit/test_more.py\ndef test_more():\n    assert True\n```\n";
        let p = parse(answer);
        assert_eq!(p.refused, Vec::<String>::new());
        assert_eq!(p.files.len(), 2);
        assert_eq!(p.files[0].path, PathBuf::from("test_ops.py"));
        assert!(p.files[0].content.starts_with("from calc.ops import add\n"));
        assert!(!p.files[0].content.contains("# path:"));
        assert_eq!(p.files[1].path, PathBuf::from("unit/test_more.py"));

        let json =
            r#"{"files": [{"path": "test_j.py", "content": "def test_j():\n    assert 1\n"}]}"#;
        let p = parse(json);
        assert_eq!(p.files[0].path, PathBuf::from("test_j.py"));
        let fenced_json = format!("```json\n{json}\n```");
        assert_eq!(parse(&fenced_json).files.len(), 1);
    }

    #[test]
    fn names_outside_the_folder_and_unnamed_blocks_are_refused_with_the_reason() {
        let answer = "```python\n# path: ../../etc/evil.py\nx = 1\n```\n```python\n# path: /abs.py\nx = 1\n```\n```python\nprint('no name')\n```\n";
        let p = parse(answer);
        assert!(p.files.is_empty());
        assert_eq!(p.refused.len(), 3, "{:?}", p.refused);
        assert!(p.refused[0].contains("outside the layer's folder"));
        assert!(p.refused[2].contains("without a file name"));
        assert!(parse("no code at all").files.is_empty());
    }
}
