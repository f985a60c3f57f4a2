//! The lines of a Rust source file that are test code: items under `#[cfg(test)]` (a unit-test
//! module) and `#[test]` functions. LLVM's coverage counts them like any other line, so without
//! this a unit test's own body would rank among the suspects of its failure.
//!
//! A small lexer, not a parser: comments, strings and character literals are skipped so their
//! braces do not count; an item whose end cannot be found is left as code.

use std::collections::BTreeSet;

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Punct(char),
    Ident(String),
}

/// Every line of every test item of `source` (1-based).
pub(super) fn test_lines(source: &str) -> BTreeSet<u32> {
    let toks = lex(source);
    let mut lines = BTreeSet::new();
    let mut i = 0;
    while i < toks.len() {
        let Some((inner, attr, after)) = attribute(&toks, i) else {
            i += 1;
            continue;
        };
        if !is_test_attr(&attr) {
            i = after;
            continue;
        }
        // `#![cfg(test)]` at the top: the whole file is test code.
        if inner {
            let last = toks.last().map_or(1, |(_, l)| *l);
            return (1..=last).collect();
        }
        match item_end(&toks, after) {
            Some(end) => {
                lines.extend(toks[i].1..=toks[end].1);
                i = end + 1;
            }
            None => i = after,
        }
    }
    lines
}

/// `#[...]` or `#![...]` at `i`: whether inner, its tokens, and the index after its `]`.
fn attribute(toks: &[(Tok, u32)], i: usize) -> Option<(bool, Vec<Tok>, usize)> {
    if toks.get(i)?.0 != Tok::Punct('#') {
        return None;
    }
    let inner = toks.get(i + 1)?.0 == Tok::Punct('!');
    let open = if inner { i + 2 } else { i + 1 };
    if toks.get(open)?.0 != Tok::Punct('[') {
        return None;
    }
    let close = matching(toks, open, '[', ']')?;
    let attr = toks[open + 1..close]
        .iter()
        .map(|(t, _)| t.clone())
        .collect();
    Some((inner, attr, close + 1))
}

/// `test`, `tokio::test` and the like, or a `cfg` that needs `test` (not `not(test)`).
fn is_test_attr(attr: &[Tok]) -> bool {
    let ident = |t: &Tok, s: &str| matches!(t, Tok::Ident(i) if i == s);
    match attr.first() {
        Some(first) if ident(first, "cfg") => {
            attr.iter().any(|t| ident(t, "test")) && !attr.iter().any(|t| ident(t, "not"))
        }
        // A path alone: `test`, `tokio::test`.
        _ => {
            attr.iter()
                .all(|t| matches!(t, Tok::Ident(_) | Tok::Punct(':')))
                && attr.last().is_some_and(|t| ident(t, "test"))
        }
    }
}

/// The index of the token that ends the item starting at `from`: its body's `}` or its `;`.
fn item_end(toks: &[(Tok, u32)], from: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = from;
    while i < toks.len() {
        match toks[i].0 {
            Tok::Punct('(' | '[') => depth += 1,
            Tok::Punct(')' | ']') => depth = depth.checked_sub(1)?,
            Tok::Punct('{') if depth == 0 => return matching(toks, i, '{', '}'),
            Tok::Punct(';') if depth == 0 => return Some(i),
            // An enclosing block ends first: no item here.
            Tok::Punct('}') if depth == 0 => return None,
            _ => {}
        }
        i += 1;
    }
    None
}

/// The index of the `close` that matches the `open` at `at`.
fn matching(toks: &[(Tok, u32)], at: usize, open: char, close: char) -> Option<usize> {
    let mut depth = 0usize;
    for (i, (t, _)) in toks.iter().enumerate().skip(at) {
        if *t == Tok::Punct(open) {
            depth += 1;
        } else if *t == Tok::Punct(close) {
            depth -= 1;
            if depth == 0 {
                return Some(i);
            }
        }
    }
    None
}

/// Identifiers and punctuation with their lines; comments, strings and characters dropped.
fn lex(source: &str) -> Vec<(Tok, u32)> {
    let cs: Vec<char> = source.chars().collect();
    let mut toks = Vec::new();
    let mut line = 1u32;
    let mut i = 0;
    while i < cs.len() {
        let c = cs[i];
        let next = cs.get(i + 1).copied();
        let start_line = line;
        i = if c == '\n' {
            line += 1;
            i + 1
        } else if c == '/' && next == Some('/') {
            skip_while(&cs, i, |c| c != '\n')
        } else if c == '/' && next == Some('*') {
            skip_block_comment(&cs, i, &mut line)
        } else if c == '"' {
            skip_string(&cs, i + 1, &mut line)
        } else if c == '\'' {
            skip_char(&cs, i)
        } else if c.is_alphanumeric() || c == '_' {
            let end = skip_while(&cs, i, |c| c.is_alphanumeric() || c == '_');
            let word: String = cs[i..end].iter().collect();
            match raw_string(&cs, &word, end) {
                Some(hashes) => skip_raw_string(&cs, end + hashes + 1, hashes, &mut line),
                None => {
                    toks.push((Tok::Ident(word), start_line));
                    end
                }
            }
        } else {
            if !c.is_whitespace() {
                toks.push((Tok::Punct(c), start_line));
            }
            i + 1
        };
    }
    toks
}

fn skip_while(cs: &[char], mut i: usize, keep: impl Fn(char) -> bool) -> usize {
    while i < cs.len() && keep(cs[i]) {
        i += 1;
    }
    i
}

/// Past a (nested) `/* */` comment starting at `i`.
fn skip_block_comment(cs: &[char], mut i: usize, line: &mut u32) -> usize {
    let mut depth = 0usize;
    while i < cs.len() {
        match (cs[i], cs.get(i + 1).copied()) {
            ('/', Some('*')) => {
                depth += 1;
                i += 2;
            }
            ('*', Some('/')) => {
                depth -= 1;
                i += 2;
                if depth == 0 {
                    return i;
                }
            }
            (c, _) => {
                if c == '\n' {
                    *line += 1;
                }
                i += 1;
            }
        }
    }
    i
}

/// Past the closing `"` of a string whose body starts at `i`.
fn skip_string(cs: &[char], mut i: usize, line: &mut u32) -> usize {
    while i < cs.len() {
        match cs[i] {
            '\\' => i += 2,
            '"' => return i + 1,
            c => {
                if c == '\n' {
                    *line += 1;
                }
                i += 1;
            }
        }
    }
    i
}

/// `r`/`br` followed by `#`s and `"` opens a raw string: how many `#`s.
fn raw_string(cs: &[char], word: &str, end: usize) -> Option<usize> {
    if word != "r" && word != "br" && word != "cr" {
        return None;
    }
    let hashes = skip_while(cs, end, |c| c == '#') - end;
    (cs.get(end + hashes) == Some(&'"')).then_some(hashes)
}

/// Past a raw string's closing `"` and `hashes` `#`s, its body starting at `i`.
fn skip_raw_string(cs: &[char], mut i: usize, hashes: usize, line: &mut u32) -> usize {
    while i < cs.len() {
        if cs[i] == '"' && (1..=hashes).all(|k| cs.get(i + k) == Some(&'#')) {
            return i + 1 + hashes;
        }
        if cs[i] == '\n' {
            *line += 1;
        }
        i += 1;
    }
    i
}

/// Past a character literal at `i` (`'x'`, `'\n'`, `'\u{1F600}'`), or past the `'` of a
/// lifetime or label.
fn skip_char(cs: &[char], i: usize) -> usize {
    match (cs.get(i + 1), cs.get(i + 2)) {
        (Some('\\'), _) => skip_while(cs, i + 3, |c| c != '\'' && c != '\n') + 1,
        (Some(_), Some('\'')) => i + 3,
        _ => i + 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unit_test_modules_and_test_functions_are_test_code() {
        let src = "pub fn f() -> u32 {\n    1\n}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n    #[test]\n    fn t() {\n        assert_eq!(f(), 1);\n    }\n}\n";
        assert_eq!(test_lines(src), (5..=12).collect());
        let lone = "fn g() {}\n#[test]\nfn t() -> Result<(), std::fmt::Error> {\n    Ok(())\n}\nfn h() {}\n";
        assert_eq!(test_lines(lone), (2..=5).collect());
        let tokio = "#[tokio::test]\nasync fn t() {}\n";
        assert_eq!(test_lines(tokio), (1..=2).collect());
        let file_module = "#[cfg(test)]\nmod tests;\nfn g() {}\n";
        assert_eq!(test_lines(file_module), (1..=2).collect());
        assert_eq!(test_lines("#![cfg(test)]\nfn a() {}\nfn b() {}\n").len(), 3);
    }

    #[test]
    fn braces_in_strings_comments_and_chars_do_not_count() {
        let src = "#[cfg(test)]\nmod tests {\n    // }\n    /* } /* } */ */\n    const A: &str = \"}\\\"}\";\n    const B: &str = r#\"}\"#;\n    const C: char = '}';\n    fn l<'a>(x: &'a str) -> &'a str { x }\n}\nfn code() {}\n";
        assert_eq!(test_lines(src), (1..=9).collect());
    }

    #[test]
    fn other_attributes_and_broken_sources_leave_code_alone() {
        for src in [
            "#[cfg(not(test))]\nfn f() {}\n",
            "#[cfg_attr(test, derive(Debug))]\nstruct S;\n",
            "#[derive(Debug)]\nstruct S;\n",
            "#[cfg(test)]\nmod tests {\n    fn open(",
            "#[cfg(test)",
            "",
        ] {
            assert!(test_lines(src).is_empty(), "{src}");
        }
    }
}
