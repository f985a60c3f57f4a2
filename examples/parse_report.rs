//! Parses one test or coverage report the way the executor does and prints what it found; used
//! by scripts/bench-report-memory.sh to measure the parsers' peak memory on large files.
//!
//!     cargo run --example parse_report -- junit|lcov|cobertura FILE

use std::path::Path;

use team_testing::testing::{cobertura, junit, lcov};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [kind, file] = args.as_slice() else {
        eprintln!("usage: parse_report junit|lcov|cobertura FILE");
        std::process::exit(2);
    };
    let path = Path::new(file);
    let summary = match kind.as_str() {
        "junit" => junit::parse_junit(path).map(|cases| format!("{} test cases", cases.len())),
        "lcov" => lcov::parse_lcov(path).map(|r| format!("{} files", r.files.len())),
        "cobertura" => cobertura::parse_cobertura(path).map(|r| format!("{} files", r.files.len())),
        other => {
            eprintln!("unknown report kind {other}");
            std::process::exit(2);
        }
    };
    match summary {
        Ok(s) => println!("{s}"),
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
}
