//! The probe target's own code: how a candidate's result is observed. `{:?}`, `==` with itself
//! and `to_string()` are used where the type has them and skipped where it does not (the
//! autoref trick picks an impl by the bounds of a concrete type, so one file serves every
//! candidate). Each line a candidate prints is one JSON object after a marker.

/// Markers of the lines a candidate prints.
pub const CALLING: &str = "TTCALL";
pub const RETURNED: &str = "TTRET";
pub const OBSERVED: &str = "TTOBS ";
pub const PANICKED: &str = "TTPANIC ";

pub const HARNESS: &str = r#"#![allow(unused, clippy::all, deprecated)]
// Written by team-testing to observe calls of the crate's API; never delivered.

struct TtObs<'a, T: ?Sized>(&'a T);

trait TtYesDebug { fn tt_debug(&self) -> Option<String>; }
impl<T: ?Sized + std::fmt::Debug> TtYesDebug for &TtObs<'_, T> {
    fn tt_debug(&self) -> Option<String> { Some(format!("{:?}", self.0)) }
}
trait TtNoDebug { fn tt_debug(&self) -> Option<String>; }
impl<T: ?Sized> TtNoDebug for TtObs<'_, T> { fn tt_debug(&self) -> Option<String> { None } }

trait TtYesEq { fn tt_eq(&self) -> Option<bool>; }
impl<T: ?Sized + PartialEq> TtYesEq for &TtObs<'_, T> {
    fn tt_eq(&self) -> Option<bool> { Some(self.0 == self.0) }
}
trait TtNoEq { fn tt_eq(&self) -> Option<bool>; }
impl<T: ?Sized> TtNoEq for TtObs<'_, T> { fn tt_eq(&self) -> Option<bool> { None } }

trait TtYesDisplay { fn tt_display(&self) -> Option<String>; }
impl<T: ?Sized + std::fmt::Display> TtYesDisplay for &TtObs<'_, T> {
    fn tt_display(&self) -> Option<String> { Some(self.0.to_string()) }
}
trait TtNoDisplay { fn tt_display(&self) -> Option<String>; }
impl<T: ?Sized> TtNoDisplay for TtObs<'_, T> { fn tt_display(&self) -> Option<String> { None } }

fn tt_json(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn tt_opt(s: Option<String>) -> String {
    s.map_or("null".to_string(), |s| tt_json(&s))
}

fn tt_print(line: String) {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    // On a line of its own even after a crate's `print!` with no newline.
    let _ = writeln!(out, "\n{line}");
    let _ = out.flush();
}

/// Prints what `{:?}`, `==` and `to_string()` say of a value (each when the type has it).
macro_rules! tt_obs {
    ($label:expr, $value:expr) => {{
        let v = $value;
        let (debug, eq, display) =
            ((&&TtObs(v)).tt_debug(), (&&TtObs(v)).tt_eq(), (&&TtObs(v)).tt_display());
        tt_print(format!(
            "TTOBS {{\"label\":{},\"debug\":{},\"eq\":{},\"display\":{}}}",
            tt_json($label),
            tt_opt(debug),
            eq.map_or("null".to_string(), |e| e.to_string()),
            tt_opt(display)
        ));
    }};
}

/// A getter's value, observed only when it returns (a getter that panics says nothing).
macro_rules! tt_get {
    ($label:expr, $value:expr) => {{
        let got = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| $value));
        if let Ok(got) = got {
            tt_obs!($label, &got);
        }
    }};
}

/// Every panic is printed with where it happened; the first one is the call's.
fn tt_start() {
    std::panic::set_hook(Box::new(|info| {
        let message = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_default();
        let place = info
            .location()
            .map(|l| format!("{}:{}", l.file(), l.line()))
            .unwrap_or_default();
        tt_print(format!(
            "TTPANIC {{\"message\":{},\"place\":{}}}",
            tt_json(&message),
            tt_json(&place)
        ));
    }));
}

fn tt_calling() {
    tt_print("TTCALL".to_string());
}

fn tt_returned() {
    tt_print("TTRET".to_string());
}
"#;
