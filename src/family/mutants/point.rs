//! One mutant of a source file, as every family's mutator describes it: a byte range of the file
//! and what replaces it. The language-neutral driver applies it to a copy, never to the user's
//! tree.

use serde::{Deserialize, Serialize};

/// A mutant: the bytes `start..end` of the file replaced by `replacement`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Point {
    /// 1-based line of `start`.
    pub line: u32,
    /// Byte offsets into the file's text (`start <= end`, both on char boundaries).
    pub start: usize,
    pub end: usize,
    pub replacement: String,
    /// What the mutant does, as the report names it (`< → <=`, `body → Default::default()`).
    pub operator: String,
}

impl Point {
    /// `source` with this mutant in place; None when the range does not fit the text.
    pub fn apply(&self, source: &str) -> Option<String> {
        if self.start > self.end
            || self.end > source.len()
            || !source.is_char_boundary(self.start)
            || !source.is_char_boundary(self.end)
        {
            return None;
        }
        let mut out = String::with_capacity(source.len() + self.replacement.len());
        out.push_str(&source[..self.start]);
        out.push_str(&self.replacement);
        out.push_str(&source[self.end..]);
        Some(out)
    }
}

/// The 1-based line of byte `offset` in `source`.
pub fn line_of(source: &str, offset: usize) -> u32 {
    let upto = &source.as_bytes()[..offset.min(source.len())];
    1 + memchr::memchr_iter(b'\n', upto).count() as u32
}
