//! The report as a neutral document: sections of headings, paragraphs, key figures, tables and
//! lists, their text as spans (plain, code, strong; a tone and a tooltip the HTML shows).
//! `sections/` builds it once from a [`super::Report`]; `markdown.rs` and `html/` only render
//! it, so the two can never state different words or figures.
//!
//! What only the page can show (charts, the timeline, source views, the list of every test) is
//! an [`Extra`]: a marker where it goes, drawn by `html/` and left out of the Markdown.

/// The whole report: its title and its sections in order.
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    pub title: String,
    pub sections: Vec<Section>,
}

/// One section: a heading (none for the opening figures) and its blocks.
#[derive(Debug, Clone, PartialEq)]
pub struct Section {
    pub heading: Option<Heading>,
    pub blocks: Vec<Block>,
    /// Only the page has it (the timeline, the per-file table, every test result): what it
    /// shows is read from the session besides the report, so the Markdown leaves it out.
    pub html_only: bool,
}

impl Section {
    /// A section under a level-2 heading.
    pub fn new(title: impl Into<String>, anchor: &'static str) -> Section {
        Section {
            heading: Some(Heading::new(2, title, anchor)),
            blocks: Vec::new(),
            html_only: false,
        }
    }

    /// Named in the page's navigation as `label`.
    pub fn nav(mut self, label: &'static str) -> Section {
        if let Some(h) = &mut self.heading {
            h.nav = Some(label);
        }
        self
    }

    pub fn push(&mut self, block: Block) {
        self.blocks.push(block);
    }

    pub fn para(&mut self, text: impl Into<Text>) {
        self.blocks.push(Block::Paragraph(text.into()));
    }

    /// A level-3 heading inside the section.
    pub fn sub(&mut self, title: impl Into<String>, anchor: &'static str) {
        self.blocks
            .push(Block::Heading(Heading::new(3, title, anchor)));
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Heading {
    /// 2 for a section, 3 for a part of one.
    pub level: u8,
    pub title: String,
    /// The page's fragment id.
    pub anchor: &'static str,
    /// The label in the page's navigation, for the sections it lists.
    pub nav: Option<&'static str>,
}

impl Heading {
    pub fn new(level: u8, title: impl Into<String>, anchor: &'static str) -> Heading {
        Heading {
            level,
            title: title.into(),
            anchor,
            nav: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    Heading(Heading),
    Paragraph(Text),
    /// The headline figures (the page's cards).
    Figures(Vec<Figure>),
    Table(Table),
    List(Vec<Text>),
    /// Blocks that belong together (one code defect): a framed box on the page.
    Boxed(Vec<Block>),
    /// Text shown as it is (an excerpt of a failure).
    Pre(String),
    Extra(Extra),
}

/// A headline figure: "Quality score: 67.9 / 100 (needs improvement)".
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    pub label: String,
    pub value: String,
    /// After the value, smaller on the page (" / 100").
    pub unit: String,
    pub tone: Option<Tone>,
    /// What the value is out of, or why; empty for nothing.
    pub note: String,
}

/// A table: header cells, then rows; or groups of rows that share their first cells (the
/// Markdown repeats them on every row, the page spans them).
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// The page's element id, for the tables a reader or a test looks up.
    pub id: Option<&'static str>,
    pub head: Vec<String>,
    pub body: Body,
}

impl Table {
    pub fn new(head: &[&str], rows: Vec<Vec<Text>>) -> Table {
        Table {
            id: None,
            head: head.iter().map(|h| h.to_string()).collect(),
            body: Body::Rows(rows),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Body {
    Rows(Vec<Vec<Text>>),
    Groups(Vec<Group>),
}

/// Rows that share their first cells (a criterion and its scenarios).
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    pub shared: Vec<Text>,
    /// At least one row.
    pub rows: Vec<Vec<Text>>,
}

/// What only the page draws, from the report and what it reads of the session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Extra {
    /// Coverage and pass rate per GC round, by layer.
    LayerCharts,
    /// The pass rate over the test-fix iterations.
    FixCycleChart,
    ConfidenceBars,
    /// Score and coverage across sessions.
    TrendChart,
    /// The tasks' timeline from the message log.
    Timeline,
    /// The per-file coverage table with each file's source.
    Files,
    /// Every test result of every run.
    TestResults,
}

/// Inline text: spans one after the other.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Text(pub Vec<Span>);

#[derive(Debug, Clone, PartialEq)]
pub struct Span {
    pub text: String,
    pub style: Style,
    /// Coloured on the page (pass green, fail red); the Markdown shows the words alone.
    pub tone: Option<Tone>,
    /// A tooltip on the page (a whole commit hash, where a status comes from).
    pub title: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    Plain,
    Code,
    Strong,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    Good,
    Warn,
    Bad,
    Muted,
}

impl Tone {
    /// The page's class for it.
    pub fn class(self) -> &'static str {
        match self {
            Tone::Good => "good",
            Tone::Warn => "warn",
            Tone::Bad => "bad",
            Tone::Muted => "muted",
        }
    }
}

impl Text {
    fn with(mut self, text: impl Into<String>, style: Style, tone: Option<Tone>) -> Text {
        self.0.push(Span {
            text: text.into(),
            style,
            tone,
            title: None,
        });
        self
    }

    pub fn plain(self, text: impl Into<String>) -> Text {
        self.with(text, Style::Plain, None)
    }

    pub fn code(self, text: impl Into<String>) -> Text {
        self.with(text, Style::Code, None)
    }

    pub fn strong(self, text: impl Into<String>) -> Text {
        self.with(text, Style::Strong, None)
    }

    pub fn tone(self, tone: Tone, text: impl Into<String>) -> Text {
        self.with(text, Style::Plain, Some(tone))
    }

    /// A tooltip on the last span.
    pub fn titled(mut self, title: impl Into<String>) -> Text {
        if let Some(last) = self.0.last_mut() {
            last.title = Some(title.into());
        }
        self
    }

    /// Text whose `backquoted` parts are code: the recommendations are written that way.
    pub fn backquoted(s: &str) -> Text {
        s.split('`')
            .enumerate()
            .filter(|(_, part)| !part.is_empty())
            .fold(Text::default(), |t, (i, part)| {
                if i % 2 == 1 {
                    t.code(part)
                } else {
                    t.plain(part)
                }
            })
    }

    /// The words alone, without styles.
    #[cfg(test)]
    pub fn words(&self) -> String {
        self.0.iter().map(|s| s.text.as_str()).collect()
    }
}

impl From<String> for Text {
    fn from(s: String) -> Text {
        Text::default().plain(s)
    }
}

impl From<&str> for Text {
    fn from(s: &str) -> Text {
        Text::default().plain(s)
    }
}

/// One span of code (a path, a call, a command).
pub fn code(s: impl Into<String>) -> Text {
    Text::default().code(s)
}

/// One toned span.
pub fn toned(tone: Tone, s: impl Into<String>) -> Text {
    Text::default().tone(tone, s)
}

/// A percentage with one decimal, or `-`.
pub fn pct(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{v:.1}%"))
}

/// A 0..1 rate as a percentage with one decimal, or `-`.
pub fn rate(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{:.1}%", v * 100.0))
}

/// `v` with its sign and one decimal, or `-`.
pub fn signed(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{v:+.1}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backquoted_parts_become_code() {
        let t = Text::backquoted("run `pip install x` then `y`.");
        let styles: Vec<Style> = t.0.iter().map(|s| s.style).collect();
        assert_eq!(
            styles,
            [
                Style::Plain,
                Style::Code,
                Style::Plain,
                Style::Code,
                Style::Plain
            ]
        );
        assert_eq!(t.words(), "run pip install x then y.");
    }
}
