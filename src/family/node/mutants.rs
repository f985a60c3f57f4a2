//! Mutation points of JavaScript and TypeScript files, after Stryker's mutators, on a hand-written
//! lexer: the mutators need only token patterns, and a lexer that knows comments, strings,
//! templates and regexes keeps every mutant in code. TypeScript types are masked by token rules.

use std::collections::HashSet;

use crate::family::mutants::point::{line_of, Point};

/// Punctuators, longest first so the lexer takes the longest match.
const PUNCTS: &str = ">>>= === !== **= <<= >>= >>> ... &&= ||= ??= => == != <= >= && || ?? ?. \
    ++ -- += -= *= /= %= &= |= ^= ** << >>";
/// Keywords that are not values: after one a `/` opens a regex and a `-` or `!` is a prefix.
const KEYWORDS: &str = "return typeof case do else in of new delete void throw yield await \
    instanceof if while for switch catch with function class const let var extends export \
    import default static async try finally break continue";
/// Operator swaps: each operator followed by its replacements (comma-separated).
const SWAPS: &str = "< <=,>= <= <,> > >=,<= >= >,< === !== !== === == != != == + - - + * / / * \
    % * && || || && ?? && ++ -- -- ++ += -= -= += *= /= /= *= &&= ||= ||= &&= ??= &&=";
/// Swapped operators that are mutated only as binary operators (after an operand).
const BINARY_ONLY: &str = "< <= > >= + - * / %";
/// Arithmetic on a string literal is concatenation; Stryker leaves it alone.
const ARITHMETIC: &str = "+ - * / % += -= *= /=";
/// Strings passed to these are names, not behaviour: modules, symbols, tests.
const NAMING_CALLS: &str = "require import resolve Symbol describe it test suite context only skip";
/// Bytes that could fuse with a neighbouring operator into another token (`a+-b` → `a--b`).
const OP_BYTES: &[u8] = b"+-*/%<>=!&|?^~";

#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
enum Kind {
    Ident,
    Num,
    Str,
    Regex,
    #[default]
    Punct,
    /// A template without substitutions; the others are its text around `${…}` code.
    TplFull,
    TplHead,
    TplMid,
    TplTail,
}

#[derive(Clone, Copy, Debug, Default)]
struct Tok<'a> {
    kind: Kind,
    text: &'a str,
    start: usize,
    end: usize,
    /// A line break precedes the token (automatic semicolon insertion depends on it).
    nl: bool,
}

/// Every mutation point of `source`, in source order; `typescript` masks type syntax.
pub fn points(source: &str, typescript: bool) -> Vec<Point> {
    let toks = lex(source);
    let (partner, skip) = (partners(&toks), vec![false; toks.len()]);
    let mut cx = Ctx {
        src: source,
        toks,
        partner,
        skip,
        ts: typescript,
        out: Vec::new(),
    };
    cx.mask_tokens();
    cx.body_points();
    for i in 0..cx.toks.len() {
        cx.token_points(i);
    }
    cx.range_points();
    finish(source, cx.out)
}

/// Drops no-op and duplicate points, sorts the rest and numbers their lines.
fn finish(source: &str, mut out: Vec<Point>) -> Vec<Point> {
    out.retain(|p| source.get(p.start..p.end) != Some(p.replacement.as_str()));
    out.sort_by_key(|p| (p.start, p.end));
    let mut seen = HashSet::new();
    out.retain(|p| seen.insert((p.start, p.end, p.replacement.clone())));
    // Counted from the previous point rather than the file's start: linear, not quadratic.
    let (mut line, mut from) = (1, 0);
    for p in &mut out {
        line += line_of(source.get(from..p.start).unwrap_or(""), usize::MAX) - 1;
        (from, p.line) = (p.start, line);
    }
    out
}

fn listed(list: &str, word: &str) -> bool {
    list.split_whitespace().any(|w| w == word)
}

fn is_word_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80
}

/// Splits `src` into tokens, dropping whitespace, comments and a hashbang line.
fn lex(src: &str) -> Vec<Tok<'_>> {
    let mut lx = Lexer {
        src,
        ..Lexer::default()
    };
    while lx.skip_trivia() {
        lx.token();
    }
    lx.toks
}

#[derive(Default)]
struct Lexer<'a> {
    src: &'a str,
    pos: usize,
    nl: bool,
    toks: Vec<Tok<'a>>,
    /// Open braces: `true` for a template's `${`, whose `}` resumes the template text.
    braces: Vec<bool>,
}

impl<'a> Lexer<'a> {
    /// Skips whitespace and comments, noting line breaks; false at the end of the text.
    fn skip_trivia(&mut self) -> bool {
        let b = self.src.as_bytes();
        self.nl = false;
        while let Some(&c) = b.get(self.pos) {
            let rest = &b[self.pos..];
            let hashbang = self.pos == 0 && rest.starts_with(b"#!");
            let len = if rest.starts_with(b"//") || hashbang {
                memchr::memchr(b'\n', rest).unwrap_or(rest.len())
            } else if rest.starts_with(b"/*") {
                memchr::memmem::find(&rest[2..], b"*/").map_or(rest.len(), |k| k + 4)
            } else if c.is_ascii_whitespace() || c == 0x0b {
                1
            } else {
                return true;
            };
            self.nl |= memchr::memchr(b'\n', &rest[..len]).is_some();
            self.pos += len;
        }
        false
    }

    /// Reads the token at `pos`, which holds a byte that is not trivia.
    fn token(&mut self) {
        let (b, start) = (self.src.as_bytes(), self.pos);
        let next = b.get(start + 1).copied().unwrap_or(0);
        let kind = match b[start] {
            q @ (b'\'' | b'"') => {
                let j = self.scan(start + 1, |c, _| c == q || c == b'\n');
                self.pos = j + usize::from(b.get(j) == Some(&q));
                Kind::Str
            }
            b'`' => self.template(start + 1, Kind::TplFull, Kind::TplHead),
            b'}' if self.braces.last() == Some(&true) => {
                self.braces.pop();
                self.template(start + 1, Kind::TplTail, Kind::TplMid)
            }
            b'0'..=b'9' => self.word(start, Kind::Num),
            b'.' if next.is_ascii_digit() => self.word(start, Kind::Num),
            b'#' if is_word_byte(next) => self.word(start + 1, Kind::Ident),
            c if is_word_byte(c) => self.word(start, Kind::Ident),
            b'/' if self.regex_allowed() => self.regex(start),
            _ => self.punct(start),
        };
        let text = self.src.get(start..self.pos).unwrap_or("");
        match (kind, text) {
            (Kind::Punct, "{") => self.braces.push(false),
            (Kind::Punct, "}") => drop(self.braces.pop()),
            _ => {}
        }
        let (end, nl) = (self.pos, self.nl);
        self.toks.push(Tok {
            kind,
            text,
            start,
            end,
            nl,
        });
    }

    /// The first index from `from` on (escapes skipped) where `stop(byte, rest)` holds, or the end.
    fn scan(&self, from: usize, mut stop: impl FnMut(u8, &[u8]) -> bool) -> usize {
        let b = self.src.as_bytes();
        let mut j = from;
        while j < b.len() && !stop(b[j], &b[j..]) {
            j += if b[j] == b'\\' { 2 } else { 1 };
        }
        j.min(b.len())
    }

    /// Template text from `from` to its closing backtick (`done`) or to a `${` (`open`).
    fn template(&mut self, from: usize, done: Kind, open: Kind) -> Kind {
        let j = self.scan(from, |c, rest| c == b'`' || rest.starts_with(b"${"));
        let opened = self.src.as_bytes()[j..].starts_with(b"${");
        self.pos = (j + 1 + usize::from(opened)).min(self.src.len());
        if !opened {
            return done;
        }
        self.braces.push(true);
        open
    }

    /// An identifier or a number: a run of word bytes (a number's also `.` and `e+`/`e-`).
    fn word(&mut self, from: usize, kind: Kind) -> Kind {
        let (b, number) = (self.src.as_bytes(), kind == Kind::Num);
        let mut j = from;
        while j < b.len() && (is_word_byte(b[j]) || number && b[j] == b'.') {
            let exp = number && matches!(b[j], b'e' | b'E');
            j += 1 + usize::from(exp && matches!(b.get(j + 1), Some(b'+' | b'-')));
        }
        self.pos = j.min(b.len());
        kind
    }

    fn punct(&mut self, start: usize) -> Kind {
        let rest = &self.src.as_bytes()[start..];
        let digit_after = rest.get(2).is_some_and(u8::is_ascii_digit); // `a?.5:1` is a ternary
        let fits = |p: &&str| rest.starts_with(p.as_bytes()) && !(*p == "?." && digit_after);
        self.pos = start + PUNCTS.split_whitespace().find(fits).map_or(1, str::len);
        Kind::Punct
    }

    /// Whether a `/` here opens a regex rather than a division, judged by the previous token.
    fn regex_allowed(&self) -> bool {
        let prev = self.toks.last().copied().unwrap_or_default();
        match prev.kind {
            Kind::Ident => listed(KEYWORDS, prev.text),
            Kind::Punct => !listed(") ] ++ --", prev.text),
            kind => matches!(kind, Kind::TplHead | Kind::TplMid),
        }
    }

    /// A regex literal at `start`, or the `/` punctuator when none closes on this line.
    fn regex(&mut self, start: usize) -> Kind {
        let mut class = false;
        let j = self.scan(start + 1, |c, _| {
            let end = c == b'\n' || c == b'/' && !class;
            class = (class || c == b'[') && c != b']';
            end
        });
        let b = self.src.as_bytes();
        if b.get(j) != Some(&b'/') {
            return self.punct(start);
        }
        self.pos = j + 1 + b[j + 1..].iter().take_while(|&&c| is_word_byte(c)).count();
        Kind::Regex
    }
}

/// For each bracket (and template head/tail) its partner's index; unpaired ones map to themselves.
fn partners(toks: &[Tok]) -> Vec<usize> {
    let mut partner: Vec<usize> = (0..toks.len()).collect();
    let mut stack: Vec<usize> = Vec::new();
    for (i, t) in toks.iter().enumerate() {
        if t.kind == Kind::TplHead || t.kind == Kind::Punct && listed("( [ {", t.text) {
            stack.push(i);
        }
        let opener = match (t.kind, t.text) {
            (Kind::Punct, ")") => "(",
            (Kind::Punct, "]") => "[",
            (Kind::Punct, "}") => "{",
            (Kind::TplTail, _) => "`",
            _ => continue,
        };
        let head = |o: &usize| toks[*o].text.starts_with(opener);
        if let Some(at) = stack.iter().rposition(head) {
            (partner[stack[at]], partner[i]) = (i, stack[at]);
            stack.truncate(at);
        }
    }
    partner
}

struct Ctx<'a> {
    src: &'a str,
    toks: Vec<Tok<'a>>,
    partner: Vec<usize>,
    /// Tokens never mutated: module specifiers, fixed strings, TypeScript types.
    skip: Vec<bool>,
    ts: bool,
    out: Vec<Point>,
}

impl<'a> Ctx<'a> {
    /// Token `i`; past the end an empty punctuator, so callers need no bounds checks.
    fn tok(&self, i: usize) -> Tok<'a> {
        self.toks.get(i).copied().unwrap_or_default()
    }

    fn text(&self, i: usize) -> &'a str {
        self.tok(i).text
    }

    /// The text `k` tokens before `i` ("" before the start).
    fn back(&self, i: usize, k: usize) -> &'a str {
        i.checked_sub(k).map_or("", |j| self.text(j))
    }

    /// The identifier `w` used as a keyword (not a property name after `.`).
    fn word(&self, i: usize, w: &str) -> bool {
        self.text(i) == w && !matches!(self.back(i, 1), "." | "?.")
    }

    fn keyword(&self, i: usize) -> bool {
        listed(KEYWORDS, self.text(i)) && self.word(i, self.text(i))
    }

    /// Whether token `i` ends an operand, so that an operator after it is binary.
    fn operand_end(&self, i: usize) -> bool {
        match self.tok(i).kind {
            Kind::Ident => !self.keyword(i),
            Kind::Punct => matches!(self.text(i), ")" | "]"),
            kind => !matches!(kind, Kind::TplHead | Kind::TplMid),
        }
    }

    /// Whether automatic semicolon insertion ends a statement before token `i`.
    fn asi_before(&self, i: usize) -> bool {
        let ended = i > 0 && (self.operand_end(i - 1) || listed("} ++ --", self.back(i, 1)));
        let (t, kind) = (self.text(i), self.tok(i).kind);
        let starts = match kind {
            Kind::Ident => !listed("instanceof in of as satisfies extends is", t),
            Kind::Punct => listed("! ~ ++ -- { @", t),
            _ => matches!(kind, Kind::Num | Kind::Str | Kind::Regex),
        };
        ended && starts && self.tok(i).nl
    }

    /// The index after token `i`, past its whole group when `i` opens one.
    fn after(&self, i: usize) -> usize {
        let p = self.partner.get(i).copied().unwrap_or(i);
        p.max(i) + 1
    }

    /// The closer of the group opening at `i` (`i` itself when unpaired).
    fn close(&self, i: usize) -> usize {
        self.after(i) - 1
    }

    fn mask(&mut self, from: usize, to: usize) {
        let to = to.min(self.skip.len());
        self.skip[from.min(to)..to].fill(true);
    }

    /// Masks what is never mutated: module specifiers, fixed strings and (TypeScript) types.
    fn mask_tokens(&mut self) {
        for i in 0..self.toks.len() {
            let end = match self.tok(i).kind {
                _ if self.skip[i] => None,
                Kind::Str => self.fixed_string(i).then_some(i + 1),
                Kind::Ident if self.word(i, "class") => self.mask_class(i),
                Kind::Ident if self.ts => self.module_end(i).or_else(|| self.type_syntax_end(i)),
                Kind::Ident => self.module_end(i),
                Kind::Punct if self.ts && self.text(i) == "<" => self.type_args_end(i),
                _ => None,
            };
            if let Some(end) = end {
                self.mask(i, end);
            }
        }
    }

    /// End of an `import …` or `export … from …` statement at `i` (after its specifier or `;`).
    fn module_end(&self, i: usize) -> Option<usize> {
        let is_end = |j: &usize| self.tok(*j).kind == Kind::Str || self.text(*j) == ";";
        let specifier_end = |j: usize| (j..self.toks.len()).find(is_end).map_or(j, |e| e + 1);
        let import = self.word(i, "import") && !listed("( .", self.text(i + 1));
        let j = i + 1 + usize::from(self.text(i + 1) == "type");
        let from = usize::from(self.text(self.after(j)) == "from");
        match self.text(j) {
            _ if import => Some(specifier_end(i)),
            _ if !self.word(i, "export") => None,
            "*" => Some(specifier_end(j)),
            "{" => Some(self.after(j) + 2 * from),
            _ => None,
        }
    }

    /// Strings whose value is not behaviour: module names, directives, keys, test names.
    fn fixed_string(&self, i: usize) -> bool {
        let (prev, next) = (self.back(i, 1), self.text(i + 1));
        let ends = self.tok(i + 1).nl || matches!(next, ";" | "}" | "");
        let statement = matches!(prev, "" | ";" | "{" | "}") && ends;
        let key = matches!(prev, "{" | ",") && next == ":";
        let named = prev == "(" && listed(NAMING_CALLS, self.back(i, 2));
        statement || key || named
    }

    /// End of the type syntax the identifier at `i` starts: a declaration, annotation or cast.
    fn type_syntax_end(&self, i: usize) -> Option<usize> {
        let t = self.text(i);
        let prev = self.back(i, 1);
        let first = i == 0 || self.tok(i).nl || listed("; { } export declare const default", prev);
        let named = first && self.tok(i + 1).kind == Kind::Ident;
        match t {
            "interface" if named => {
                let brace = (i..self.toks.len()).find(|&j| self.text(j) == "{");
                brace.map(|b| self.after(b))
            }
            "enum" if named && self.text(i + 2) == "{" => Some(self.after(i + 2)),
            "type" if named && matches!(self.text(i + 2), "=" | "<") => Some(self.decl_end(i)),
            "declare" if named => Some(self.decl_end(i)),
            "as" | "satisfies" if i > 0 && self.operand_end(i - 1) => Some(self.type_end(i + 1)),
            "let" | "const" | "var" if self.word(i, t) => {
                let pattern = matches!(self.text(i + 1), "{" | "[");
                let mut k = if pattern { self.after(i + 1) } else { i + 2 };
                k += usize::from(self.text(k) == "!");
                let typed = self.text(k) == ":" && (pattern || self.tok(i + 1).kind == Kind::Ident);
                typed.then(|| self.type_end(k + 1))
            }
            _ => None,
        }
    }

    /// End of a type-level statement: after its `;`, or a line break where it is complete.
    fn decl_end(&self, i: usize) -> usize {
        let mut j = i + 1;
        while j < self.toks.len() {
            let (t, prev) = (self.text(j), self.tok(j - 1));
            let open = matches!(prev.kind, Kind::Punct | Kind::TplHead | Kind::TplMid);
            let complete = !open || listed(") ] } >", prev.text);
            let goes_on = listed("| & . ? : => extends [ < > = ( { ?.", t);
            if t == ";" || listed(") ] }", t) || self.tok(j).nl && complete && !goes_on {
                return j + usize::from(t == ";");
            }
            j = self.after(j);
        }
        self.toks.len()
    }

    /// End of a type argument or parameter list at `<`: `Array<string>`, `f<T>(x)`, `<T>x`.
    fn type_args_end(&self, i: usize) -> Option<usize> {
        let after_name = i > 0 && self.tok(i - 1).kind == Kind::Ident && !self.keyword(i - 1);
        if i > 0 && self.operand_end(i - 1) && !after_name {
            return None;
        }
        let close = self.angle_close(i)?;
        let next = self.tok(close + 1);
        let follow = "( ) , ; = { } > [ ] | & . ?. : ? => extends implements";
        let tagged = matches!(next.kind, Kind::TplFull | Kind::TplHead);
        let follows = next.nl || tagged || listed(follow, next.text);
        (!after_name || follows || next.text.is_empty()).then_some(close + 1)
    }

    /// The token closing the `<` at `i` when every token up to it could belong to a type.
    fn angle_close(&self, i: usize) -> Option<usize> {
        let (mut angle, mut group) = (0i64, 0i64);
        for j in i..self.toks.len().min(i + 256) {
            let (t, kind) = (self.text(j), self.tok(j).kind);
            let statement = listed("return if for while let var function class", t);
            match t {
                _ if kind == Kind::Ident && statement || kind == Kind::Regex => return None,
                _ if kind != Kind::Punct => {} // names, literals, template literal types
                "<" => angle += 1,
                ">" | ">>" | ">>>" => {
                    angle -= t.len() as i64;
                    if angle <= 0 {
                        return (angle == 0 && group == 0).then_some(j);
                    }
                }
                "(" | "[" | "{" => group += 1,
                ")" | "]" | "}" | ";" if group == 0 => return None,
                ")" | "]" | "}" => group -= 1,
                _ if !listed(". , | & ? => : ; = ... - ?.", t) => return None,
                _ => {}
            }
        }
        None
    }

    /// End of the type expression starting at `j` (an annotation's, a cast's).
    fn type_end(&self, mut j: usize) -> usize {
        const PREFIX: &str = "keyof typeof readonly unique infer new asserts abstract";
        let (mut need, mut fn_like, mut conditional) = (true, false, 0);
        while j < self.toks.len() {
            let (t, kind) = (self.text(j), self.tok(j).kind);
            let opens = listed("( [ {", t) || kind == Kind::TplHead;
            let operand = matches!(kind, Kind::Ident | Kind::Str | Kind::Num | Kind::TplFull);
            let fn_arrow = t == "=>" && fn_like && self.back(j, 1) == ")";
            let branch = conditional > 0 && listed("? :", t); // `A extends B ? C : D`
            let goes_on = fn_arrow || branch || listed("| & . is extends", t);
            if t == "<" {
                fn_like |= need;
                j = self.angle_close(j).unwrap_or(j);
            } else if need && opens || !need && t == "[" {
                fn_like |= need && t == "(";
                (need, j) = (false, self.close(j));
            } else if need && kind == Kind::Ident && listed(PREFIX, t) {
                fn_like |= t == "new";
            } else if need && operand {
                need = false;
            } else if need && !listed("| & -", t) || !need && !goes_on {
                return j;
            } else {
                conditional = conditional + usize::from(t == "extends") - usize::from(t == ":");
                need = true;
            }
            j += 1;
        }
        self.toks.len()
    }

    /// Masks the method names (`if(c) {}` is a method there) and member annotations of the class
    /// at `i`, past type parameters (`A<T extends { id: K }>`); None: the class stays mutable.
    fn mask_class(&mut self, i: usize) -> Option<usize> {
        let mut j = i + 1;
        while j < self.toks.len() && !listed("{ ;", self.text(j)) {
            let generic = (self.text(j) == "<").then(|| self.angle_close(j)).flatten();
            j = generic.map_or(self.after(j), |c| c + 1);
        }
        if self.text(j) == "{" {
            self.mask_annotations(j, self.close(j));
        }
        None
    }

    /// Masks names before `(` and (TypeScript) `: T` annotations directly inside `open..close`:
    /// parameters (`a?: T = x`) or class members (`x!: T;`), not colons in initialisers.
    fn mask_annotations(&mut self, open: usize, close: usize) {
        let (mut j, mut init) = (open + 1, false);
        while j < close {
            let (t, tok) = (self.text(j), self.tok(j));
            let member = tok.nl && matches!(tok.kind, Kind::Ident | Kind::Str);
            init = (init || t == "=") && !(listed(", ;", t) || member);
            let named = self.tok(j - 1).kind == Kind::Ident || listed("? ! ] }", self.back(j, 1));
            let typed = self.ts && t == ":" && !init && named;
            let method = tok.kind == Kind::Ident && self.text(j + 1) == "(";
            let end = if typed { self.type_end(j + 1) } else { j };
            self.mask(j, end.max(j + usize::from(method)));
            j = if end > j { end } else { self.after(j) };
        }
    }

    /// A non-empty body of a function, method or arrow → `{}`; finding the bodies also masks
    /// parameter and return annotations.
    fn body_points(&mut self) {
        for i in 0..self.toks.len() {
            let body = match self.text(i) {
                _ if self.skip[i] => None,
                "=>" if self.text(i + 1) == "{" => Some(i + 1),
                "(" if self.close(i) > i => self.param_list(i, self.close(i)),
                _ => None,
            };
            let close = body.map_or(0, |b| self.close(b));
            if let Some(open) = body.filter(|&b| close > b + 1 && !self.skip[b]) {
                self.push(open, close, "{}", "body → {}".into());
            }
        }
    }

    /// When `open..=close` is a parameter list: masks its types and returns the body's `{`.
    fn param_list(&mut self, open: usize, close: usize) -> Option<usize> {
        let before = self.back(open, 1);
        let control = listed("if for while switch catch with await", before);
        if open > 0 && self.keyword(open - 1) && control {
            return None;
        }
        let named = open > 0 && self.tok(open - 1).kind == Kind::Ident;
        let declared = before == "function" || named && listed("function *", self.back(open, 2));
        let next = close + 1;
        let (params, body) = match self.text(next) {
            "=>" | "{" => (true, next),
            ":" if self.ts => {
                let end = self.type_end(next + 1);
                (declared || listed("{ =>", self.text(end)), end)
            }
            _ => (declared, next),
        };
        if params && self.ts {
            self.mask_annotations(open, close);
            self.mask(next, body);
        }
        (params && self.text(body) == "{").then_some(body)
    }

    /// Records a point replacing tokens `first..=last`, spaced where operators would fuse
    /// (`a+-b` → `a- -b`); `line` is set by `finish`.
    fn push(&mut self, first: usize, last: usize, rep: &str, operator: String) {
        let (start, end) = (self.tok(first).start, self.tok(last).end);
        let b = self.src.as_bytes();
        let op = |k: usize| b.get(k).is_some_and(|c| OP_BYTES.contains(c));
        let (left, right) = (start > 0 && op(start - 1), op(end));
        let first_byte = rep.bytes().next();
        let glue = first_byte.map_or(left && right, |c| OP_BYTES.contains(&c));
        let pad = |side: bool| if glue && side { " " } else { "" };
        let replacement = match rep {
            "" => pad(left && right).to_string(),
            _ => format!("{}{rep}{}", pad(left), pad(right)),
        };
        let point = Point {
            line: 0,
            start,
            end,
            replacement,
            operator,
        };
        self.out.push(point);
    }

    /// The single-token mutators: booleans, string literals and operators.
    fn token_points(&mut self, i: usize) {
        let tok = self.tok(i);
        let quoted = tok.kind == Kind::Str && tok.text.len() >= 2;
        let rep = match tok.text {
            _ if self.skip[i] => return,
            _ if tok.kind == Kind::Punct => return self.operator_points(i, tok),
            "true" | "false" if !self.word(i, tok.text) => return,
            "true" => "false",
            "false" => "true",
            _ if !quoted || !tok.text.ends_with(&tok.text[..1]) => return,
            t if t.len() == 2 => "\"mutated\"",
            _ => "\"\"",
        };
        let name = if quoted { "string" } else { tok.text };
        self.push(i, i, rep, format!("{name} → {rep}"));
    }

    /// Operator swaps (binary ones only after an operand), and a prefix `!` or `-` removed.
    fn operator_points(&mut self, i: usize, tok: Tok) {
        let binary = i > 0 && self.operand_end(i - 1);
        let next = self.tok(i + 1);
        let removable = match tok.text {
            "!" => !listed("! function class {", next.text) && self.back(i, 1) != "!",
            "-" => next.text == "(" || next.kind == Kind::Num || self.operand_end(i + 1),
            _ => false,
        };
        if removable && !binary && !next.text.is_empty() {
            self.push(i, i, "", format!("{}x → x", tok.text));
        }
        let stringy = |t: Tok| t.kind != Kind::Punct && t.text.starts_with(['\'', '"', '`', '}']);
        let on_string = stringy(next) || i > 0 && stringy(self.tok(i - 1));
        let skipped = listed(BINARY_ONLY, tok.text) && !binary
            || listed(ARITHMETIC, tok.text) && on_string
            || tok.text == "??" && self.nullish_chain(i);
        let words: Vec<&str> = SWAPS.split_whitespace().collect();
        let fits = |w: &&[&str]| w[0] == tok.text && w.len() == 2 && !skipped;
        let swap = words.chunks(2).find(fits);
        for rep in swap.map_or("", |w| w[1]).split_terminator(',') {
            self.push(i, i, rep, format!("{} → {rep}", tok.text));
        }
    }

    /// Whether the `??` at `i` chains with another `??`, where an `&&` would not parse.
    fn nullish_chain(&self, i: usize) -> bool {
        let (mut j, last) = (self.test_start(i), self.expression_last(i + 1));
        while j <= last && (j == i || self.text(j) != "??") {
            j = self.after(j);
        }
        j <= last
    }

    /// `if (…)` conditions and ternary tests → true and false (a `while (…)` only → false: true
    /// never ends), and `return <expr>` → `return`.
    fn range_points(&mut self) {
        for i in 0..self.toks.len() {
            let (t, next, close) = (self.text(i), self.tok(i + 1), self.close(i + 1));
            let bare = listed("; } ) ] : , =", next.text) || next.text.is_empty();
            let head = listed("if while", t) && self.word(i, t) && next.text == "(";
            if self.skip[i] {
                continue;
            } else if head && close > i + 2 {
                for rep in &["true", "false"][usize::from(t == "while")..] {
                    self.push(i + 2, close - 1, rep, format!("{t} (…) → {rep}"));
                }
            } else if t == "?" && !bare && self.test_start(i) < i {
                for rep in ["true", "false"] {
                    self.push(self.test_start(i), i - 1, rep, format!("?: test → {rep}"));
                }
            } else if self.word(i, "return") && !bare && !next.nl {
                let last = self.expression_last(i + 1);
                self.push(i + 1, last, "", "return value removed".into());
            }
        }
    }

    /// First token of the expression (a ternary's test) that ends before the token at `q`.
    fn test_start(&self, q: usize) -> usize {
        let mut k = q;
        while k > 0 && !self.asi_before(k) {
            let (j, t) = (k - 1, self.text(k - 1));
            let assign = t.ends_with('=') && !listed("== === != !== <= >=", t);
            let stop_word = listed("return case throw yield else do default of", t);
            let stop = match self.tok(j).kind {
                Kind::Ident => stop_word && self.word(j, t),
                Kind::Punct => assign || listed(", ; ? : => ... ( [ { }", t),
                kind => matches!(kind, Kind::TplHead | Kind::TplMid),
            };
            if stop {
                break;
            }
            k = self.partner[j].min(j);
        }
        k
    }

    /// Last token of the expression starting at `j`: before a `;`, a closer or a statement break.
    fn expression_last(&self, j: usize) -> usize {
        let (mut k, mut last) = (j, j);
        while k < self.toks.len() {
            let tpl = matches!(self.tok(k).kind, Kind::TplMid | Kind::TplTail);
            if tpl || listed("; ) ] }", self.text(k)) || k > j && self.asi_before(k) {
                break;
            }
            k = self.after(k);
            last = k - 1;
        }
        last
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Asserts each `source ⇒ points` case, points shown as `original→replacement` (trimmed).
    fn expect(ts: bool, cases: &[&str]) {
        for case in cases {
            let (src, want) = case.split_once(" ⇒ ").unwrap_or((case, ""));
            let shown = points(src, ts).into_iter();
            let shown =
                shown.map(|p| format!("{}→{}", src[p.start..p.end].trim(), p.replacement.trim()));
            assert_eq!(shown.collect::<Vec<_>>().join(" "), want, "{src}");
        }
    }

    fn applied(src: &str) -> Vec<String> {
        let found = points(src, false);
        found.iter().filter_map(|p| p.apply(src)).collect()
    }

    const CJS: &str = r#"'use strict';
const { inspect } = require('util');
const NUM = /^(\d+)\.(\d+)\.(\d+)(?:-([\w.]+))?$/;

/** Splits a version string into its numeric parts. */
function parse(version) {
  if (typeof version !== 'string' || version.length > 256) return null;
  const m = version.trim().replace(/\s+/g, '').match(NUM);
  if (!m) return null;
  return { major: +m[1], minor: +m[2], patch: +m[3], pre: m[4] ? m[4].split('.') : [] };
}
function compare(a, b) {
  const [x, y] = [parse(a), parse(b)];
  for (const k of ['major', 'minor', 'patch']) {
    if (x[k] !== y[k]) return x[k] < y[k] ? -1 : 1;
  }
  return x.pre.length === 0 && y.pre.length > 0 ? 1 : -1;
}
const tokens = (text) => {
  const out = [];
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '"') { out.push({ kind: 'str', at: i }); i += 2; continue; }
    out.push(`${text[i]}:${i * 2 + 1}`);
  }
  return out.length >= 1 && !out.includes('') ? out : [''];
};
module.exports = { parse, compare, tokens, label: (v) => v ?? inspect(v) };
"#;

    const TS: &str = r#"import type { Options } from './options';
import { readFileSync } from 'node:fs';

export interface Range<T = number> { low: T; label?: 'open' | 'closed' }
type Pair<K, V> = [K, V];
enum Color { Red = 1, Green = 2 }

export class Store<T extends object> {
  private items: Map<string, T[]> = new Map<string, T[]>();
  readonly limit: number = 10;
  constructor(private readonly name: string) {}
  add(key: string, item: T): boolean {
    const list: Array<T> = this.items.get(key) ?? [];
    if (list.length >= this.limit) return false;
    this.items.set(key, [...list, item]);
    return true;
  }
  count(): number {
    let n = 0;
    for (let i = 0; i < this.items.size; i++) n += 1;
    return n > 0 ? n : -1;
  }
}
export function within<T>(r: Range<T>, x: T, cmp: (a: T, b: T) => number): boolean {
  const v = readFileSync('x', 'utf8') as string;
  return cmp(r.low, x) <= 0 && (r.label === 'open' || cmp(x, r.low) < 0) && v !== '';
}
"#;

    #[test]
    fn operators_get_strykers_replacements() {
        let cases = [
            "a < b; c >= d; ⇒ <→<= <→>= >=→> >=→<",
            "a === b; c != d; ⇒ ===→!== !=→==",
            "for (let i = 0; i < n; i++) {} ⇒ <→<= <→>= ++→--",
            "i++; --i; x += 1; y *= 2; ⇒ ++→-- --→++ +=→-= *=→/=",
            "x = -a - b; y = a * b % c; ⇒ -→ -→+ *→/ %→*",
            "x = !ok; y = !!ok; ⇒ !→",
            "x = a ?? b; y = a ?? b ?? c; ⇒ ??→&&",
            "x = a?.b || 0; y ??= 1; ⇒ ||→&& ??=→&&=",
            "ok = true; o.true = 1; s = 'a' + b; ⇒ true→false 'a'→\"\"",
        ];
        expect(false, &cases);
        assert_eq!(applied("x = a+-b;"), ["x = a- -b;", "x = a+b;"]);
    }

    #[test]
    fn comments_strings_regexes_and_template_text_are_not_code() {
        let cases = [
            "#!/bin/node\n// a < b\n/* c + d */ s = 'x' + \"it's\"; ⇒ 'x'→\"\" \"it's\"→\"\"",
            "r = /a<b+c\\/\\/d[/]/g, q = a / b;\nx = s.split(/,+/).length - 1; ⇒ /→* -→+",
            "const s = `a + b < c ${a + b} d - e ${`in ${x * y}`}`; ⇒ +→- *→/",
        ];
        expect(false, &cases);
    }

    #[test]
    fn conditions_bodies_and_return_values() {
        let cases = [
            "if (a > b) { f(); } ⇒ a > b→true a > b→false >→>= >→<=",
            "while (go()) step(); ⇒ go()→false",
            "const x = a > b ? 1 : 2; ⇒ a > b→true a > b→false >→>= >→<=",
            "f(c ? d : e ? g : h); ⇒ c→true c→false e→true e→false",
            "function f() {}\nclass A { get x() { return 2 } } ⇒ { return 2 }→{} 2→",
        ];
        expect(false, &cases);
        let src = "function f() { return 1; }";
        assert_eq!(
            applied(src),
            ["function f() {}", "function f() { return ; }"]
        );
    }

    #[test]
    fn fixed_strings_and_module_specifiers_are_untouched() {
        let cases = [
            "s = ''; ⇒ ''→\"mutated\"",
            "'use strict';\nconst o = { 'k': 1 };\ndescribe('suite', () => {});",
            "import x from 'lib';\nimport 'side';\ny = require('fs');\ns = 'k'; ⇒ 'k'→\"\"",
            "export * from './z';\nexport { a } from './a';\nconst m = await import('./m');",
        ];
        expect(false, &cases);
    }

    #[test]
    fn typescript_types_are_not_mutated() {
        let cases = [
            "let a: Array<string>;\nfoo<T>(x);\nif (a < b) {} ⇒ a < b→true a < b→false <→<= <→>=",
            "const m = new Map<string, number[]>();",
            "function f<T extends A>(a: T): P<T> { return g(a); } ⇒ { return g(a); }→{} g(a)→",
            "ok = x < y && y > z; ⇒ <→<= <→>= &&→|| >→>= >→<=",
            "for (let i = 0; i < n; i++) {} ⇒ <→<= <→>= ++→--",
            "interface A { x: 'a' | 'b' }\ntype B = 'c' | true;\nenum E { X = 'x' }",
            "const v = w as 'd';\ndeclare module 'm' { const x: 'y'; }",
            "class C { k?: 'z' = 'v'; }\nconst f = (a: 'p'): 'q' => a; ⇒ 'v'→\"\"",
        ];
        expect(true, &cases);
    }

    #[test]
    fn broken_or_jsx_input_does_not_panic() {
        let jsx = "return <div a=\"b\">{x > 1 ? 'y' : 'n'}</div>;";
        for src in ["'abc\n`x${ /* ", "a = /[/", "} ) ] ${", "é + ü < ñ", jsx] {
            let found = [points(src, false), points(src, true)].concat();
            assert!(found.iter().all(|p| p.apply(src).is_some()));
        }
    }

    #[test]
    fn realistic_files_keep_brackets_balanced() {
        for (src, ts) in [(CJS, false), (TS, true)] {
            let found = points(src, ts);
            assert!(found.len() >= 30, "{} points", found.len());
            for p in &found {
                let mutated = p.apply(src).unwrap_or_default();
                let toks = lex(&mutated);
                let partner = partners(&toks);
                let open = |i: usize| listed("( ) [ ] { }", toks[i].text) && partner[i] == i;
                assert!(!(0..toks.len()).any(open), "unbalanced: {p:?}");
                assert_eq!(p.line, line_of(src, p.start));
            }
            let unique: HashSet<_> = found
                .iter()
                .map(|p| (p.start, p.end, &p.replacement))
                .collect();
            assert_eq!(unique.len(), found.len());
            assert!(found.windows(2).all(|w| w[0].start <= w[1].start));
        }
        let ts = points(TS, true);
        let text = |p: &&Point| &TS[p.start..p.end];
        let strings: Vec<_> = ts
            .iter()
            .map(|p| text(&p))
            .filter(|t| t.starts_with('\''))
            .collect();
        assert_eq!(strings, ["'x'", "'utf8'", "'open'", "''"]);
        assert_eq!(
            ts.iter().filter(|p| listed("< > <= >=", text(p))).count(),
            2 * 5
        );
    }
}
