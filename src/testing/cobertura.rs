//! Cobertura XML as coverage.py's `coverage xml` writes it. `<line>` elements are read under each
//! `<class filename=...>`; a file spread over several `<class>` elements (or with lines repeated
//! under `<methods>`, as other Cobertura writers do) is merged by line number.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use quick_xml::events::BytesStart;

use super::junit::{attr, open_report, walk_xml, walk_xml_from, Node, XmlProblem};
use super::report::{CoverageReport, FileCoverage, ReportParseError};

/// What one source line showed over every `<line>` that names it.
#[derive(Default, Clone, Copy)]
struct LineAcc {
    hits: u64,
    /// (covered, total) from `condition-coverage="50% (1/2)"`.
    branches: Option<(usize, usize)>,
}

/// Why a Cobertura report cannot be read, before it is known which file it is.
#[derive(Debug, thiserror::Error)]
enum CoberturaProblem {
    #[error(transparent)]
    Xml(#[from] XmlProblem),
    #[error("<class name=\"{class}\"> has no filename")]
    NoFilename { class: String },
    #[error("<line> with bad number \"{number}\"")]
    BadNumber { number: String },
    #[error("line {line}: bad hits \"{hits}\"")]
    BadHits { line: u32, hits: String },
}

#[derive(Default)]
struct Parser {
    root: Option<String>,
    saw_coverage: bool,
    order: Vec<String>,
    files: HashMap<String, BTreeMap<u32, LineAcc>>,
    /// The filename of the `<class>` being read.
    class: Option<String>,
}

/// Reads a Cobertura XML coverage report.
pub fn parse_cobertura(path: &Path) -> Result<CoverageReport, ReportParseError> {
    let mut parser = Parser::default();
    walk_xml_from(open_report(path)?, |node| parser.node(node))
        .map_err(|p| ReportParseError::new(path, p))?;
    checked(parser, path)
}

/// Parses Cobertura XML text; `path` only names the source in errors.
pub fn parse_cobertura_str(text: &str, path: &Path) -> Result<CoverageReport, ReportParseError> {
    let mut parser = Parser::default();
    walk_xml(text, |node| parser.node(node)).map_err(|p| ReportParseError::new(path, p))?;
    checked(parser, path)
}

fn checked(parser: Parser, path: &Path) -> Result<CoverageReport, ReportParseError> {
    if !parser.saw_coverage {
        let root = parser.root.unwrap_or_default();
        let problem = format!("not a Cobertura report: no <coverage> element (root is <{root}>)");
        return Err(ReportParseError::new(path, problem));
    }
    Ok(parser.finish())
}

impl Parser {
    fn node(&mut self, node: Node<'_>) -> Result<(), CoberturaProblem> {
        match node {
            Node::Start(e) | Node::Empty(e) => self.element(&e),
            Node::End(name) if name == "class" => {
                self.class = None;
                Ok(())
            }
            Node::End(_) | Node::Text(_) => Ok(()),
        }
    }

    fn element(&mut self, e: &BytesStart) -> Result<(), CoberturaProblem> {
        let name = e.local_name().as_ref().to_string();
        self.root.get_or_insert_with(|| name.clone());
        match name.as_str() {
            "coverage" => self.saw_coverage = true,
            "class" => self.class = Some(self.open_class(e)?),
            "line" if self.saw_coverage => self.line(e)?,
            _ => {}
        }
        Ok(())
    }

    fn open_class(&mut self, e: &BytesStart) -> Result<String, CoberturaProblem> {
        let filename = attr(e, "filename")?.filter(|f| !f.is_empty());
        let class = attr(e, "name")?.unwrap_or_default();
        let filename = filename.ok_or(CoberturaProblem::NoFilename { class })?;
        if !self.files.contains_key(&filename) {
            self.order.push(filename.clone());
            self.files.insert(filename.clone(), BTreeMap::new());
        }
        Ok(filename)
    }

    /// A `<line number hits [branch condition-coverage]>` inside the open class.
    fn line(&mut self, e: &BytesStart) -> Result<(), CoberturaProblem> {
        let Some(lines) = self.class.as_ref().and_then(|c| self.files.get_mut(c)) else {
            return Ok(());
        };
        let number = attr(e, "number")?.unwrap_or_default();
        let number: u32 = number
            .trim()
            .parse()
            .map_err(|_| CoberturaProblem::BadNumber { number })?;
        let hits = attr(e, "hits")?.unwrap_or_default();
        let hits = parse_hits(&hits).ok_or(CoberturaProblem::BadHits { line: number, hits })?;
        let branches = match attr(e, "branch")?.as_deref() {
            Some("true") => attr(e, "condition-coverage")?
                .as_deref()
                .and_then(condition_coverage),
            _ => None,
        };
        let acc = lines.entry(number).or_default();
        acc.hits = acc.hits.max(hits);
        acc.branches = match (acc.branches, branches) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        Ok(())
    }

    fn finish(mut self) -> CoverageReport {
        let files = self
            .order
            .iter()
            .map(|path| file_coverage(path, &self.files.remove(path).unwrap_or_default()))
            .collect();
        CoverageReport {
            format: "cobertura".into(),
            files,
        }
    }
}

fn file_coverage(path: &str, lines: &BTreeMap<u32, LineAcc>) -> FileCoverage {
    let missing_lines: Vec<u32> = lines
        .iter()
        .filter(|(_, a)| a.hits == 0)
        .map(|(n, _)| *n)
        .collect();
    let (branches_covered, branches_total) = lines
        .values()
        .filter_map(|a| a.branches)
        .fold((0, 0), |(c, t), (bc, bt)| (c + bc, t + bt));
    FileCoverage {
        missing_arcs: Vec::new(),
        executed_lines: lines
            .iter()
            .filter(|(_, a)| a.hits > 0)
            .map(|(n, _)| *n)
            .collect(),
        partial_lines: lines
            .iter()
            .filter(|(_, a)| a.hits > 0 && a.branches.is_some_and(|(c, t)| c < t))
            .map(|(n, _)| *n)
            .collect(),
        path: path.to_string(),
        lines_total: lines.len(),
        lines_covered: lines.len() - missing_lines.len(),
        missing_lines,
        branches_total,
        branches_covered,
    }
}

/// Hit counts are integers; some writers use `1.0`.
fn parse_hits(text: &str) -> Option<u64> {
    let text = text.trim();
    text.parse().ok().or_else(|| {
        let f: f64 = text.parse().ok()?;
        (f.is_finite() && f >= 0.0).then_some(f.ceil() as u64)
    })
}

/// `"50% (1/2)"` -> (1, 2); None when there is no `(covered/total)` part.
fn condition_coverage(text: &str) -> Option<(usize, usize)> {
    let inner = text.split_once('(')?.1.split_once(')')?.0;
    let (covered, total) = inner.split_once('/')?;
    let covered: usize = covered.trim().parse().ok()?;
    let total: usize = total.trim().parse().ok()?;
    (covered <= total).then_some((covered, total))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn fixture(name: &str) -> PathBuf {
        crate::testing::report::fixture_report(name)
    }

    fn problem(text: &str) -> String {
        let err = parse_cobertura_str(text, Path::new("c.xml")).expect_err(text);
        assert_eq!(err.path, Path::new("c.xml"));
        err.problem
    }

    #[test]
    fn coveragepy_sample_matches_coverage_py_totals() {
        let report = parse_cobertura(&fixture("coveragepy-cobertura.xml")).expect("parses");
        assert_eq!(report.format, "cobertura");
        let paths: Vec<&str> = report.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(
            paths,
            ["pkg/__init__.py", "pkg/ops.py", "tests/test_ops.py"]
        );
        let sum = |f: fn(&FileCoverage) -> usize| report.files.iter().map(f).sum::<usize>();
        // `coverage json` totals: covered_lines 16, num_statements 20, covered_branches 4, num_branches 8.
        assert_eq!((sum(|f| f.lines_covered), sum(|f| f.lines_total)), (16, 20));
        assert_eq!(
            (sum(|f| f.branches_covered), sum(|f| f.branches_total)),
            (4, 8)
        );
        assert_eq!(report.line_percent(|_| true), Some(80.0));
        assert_eq!(report.files[1].missing_lines, [4, 5, 7, 15]);
        assert_eq!(report.files[0].lines_total, 0);

        let json = std::fs::read_to_string(fixture("coveragepy.json")).expect("json fixture");
        let json: serde_json::Value = serde_json::from_str(&json).expect("json");
        let total = |k: &str| json["totals"][k].as_u64().map(|n| n as usize);
        assert_eq!(total("covered_lines"), Some(sum(|f| f.lines_covered)));
        assert_eq!(total("num_statements"), Some(sum(|f| f.lines_total)));
    }

    #[test]
    fn classes_of_one_file_are_merged() {
        let text = r#"<coverage><packages><package name="p"><classes>
            <class name="A" filename="src/a.py"><methods><method name="f"><lines>
              <line number="3" hits="0"/></lines></method></methods>
              <lines><line number="3" hits="2" branch="true" condition-coverage="50% (1/2)"/>
              <line number="9" hits="0"/></lines></class>
            <class name="B" filename="src/a.py"><lines><line number="5" hits="1.0"/>
              <line number="3" hits="0" branch="true" condition-coverage="100% (2/2)"/></lines></class>
          </classes></package></packages></coverage>"#;
        let report = parse_cobertura_str(text, Path::new("c.xml")).expect("parses");
        let expected = FileCoverage {
            missing_arcs: Vec::new(),
            path: "src/a.py".into(),
            lines_total: 3,
            lines_covered: 2,
            missing_lines: vec![9],
            branches_total: 2,
            branches_covered: 2,
            executed_lines: vec![3, 5],
            partial_lines: vec![],
        };
        assert_eq!(report.files, [expected]);
    }

    #[test]
    fn empty_coverage_is_no_files() {
        let report = parse_cobertura_str("<coverage/>", Path::new("c.xml")).expect("parses");
        assert!(report.files.is_empty());
    }

    #[test]
    fn condition_coverage_forms() {
        assert_eq!(condition_coverage("50% (1/2)"), Some((1, 2)));
        assert_eq!(condition_coverage("100% (4/4)"), Some((4, 4)));
        assert_eq!(condition_coverage("50%"), None);
        assert_eq!(condition_coverage("(3/2)"), None);
    }

    #[test]
    fn broken_input_is_an_error() {
        let text = std::fs::read_to_string(fixture("coveragepy-cobertura.xml")).unwrap_or_default();
        assert!(problem(&text[..text.len() / 2]).contains("truncated"));
        assert!(problem("<html></html>").contains("not a Cobertura report"));
        assert!(problem("").contains("empty file"));
        assert!(problem("\u{1}\u{2} junk {}").contains("not XML"));
        assert!(problem("<coverage><class name=\"x\"/></coverage>").contains("no filename"));
        let bad_hits =
            "<coverage><class filename=\"a\"><line number=\"1\" hits=\"x\"/></class></coverage>";
        assert!(problem(bad_hits).contains("bad hits"));
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("bad.xml");
        std::fs::write(&file, b"<coverage>\xc3\x28</coverage>").expect("write");
        let err = parse_cobertura(&file).expect_err("non-UTF-8");
        assert!(
            err.problem.contains("not UTF-8") && err.path == file,
            "{err}"
        );
    }
}
