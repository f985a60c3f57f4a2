//! analysis/report.html in a real browser: headless Chromium renders the example sessions'
//! pages and the page of a fresh standard run on python-calc, with the network off. Each page
//! must draw something (the screenshot is not one colour), hold the coverage chart, the timeline
//! and the file table in its DOM, ask for nothing outside the file, and show a test named
//! `<script>alert(1)</script>` as text. Screenshots are kept under target/screenshots/.
//!
//! CI installs Chromium (`.ci/run`); without it these tests fail, they never pass silently.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::common::*;

const SCRIPT_NAME: &str = "<script>alert(1)</script>";

/// The browser, or a failure that says how to get it.
fn chromium() -> &'static str {
    let found = Command::new("chromium")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        found,
        "chromium is not installed: the HTML report tests render the page in it \
         (apt-get install -y chromium; .ci/run installs it)"
    );
    "chromium"
}

fn screenshots() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// What the browser made of a page.
struct Rendered {
    dom: String,
    png: PathBuf,
    /// The browser's console and log lines.
    log: String,
    /// The URLs of every request the browser made while it had the page (its own too).
    requests: Vec<String>,
}

/// Renders `html` twice, headless with every request sent to a closed port: once for the DOM
/// (with the net log and the console), once for a screenshot `target/screenshots/<name>.png`.
fn render(html: &Path, name: &str) -> Rendered {
    let browser = chromium();
    let scratch = tempfile::tempdir().unwrap();
    let url = format!("file://{}", html.display());
    let net_log = scratch.path().join("net.json");
    let common = |c: &mut Command, profile: &str| {
        c.args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--proxy-server=127.0.0.1:9",
        ])
        .arg(format!(
            "--user-data-dir={}",
            scratch.path().join(profile).display()
        ))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    };
    let mut c = Command::new(browser);
    common(&mut c, "dom");
    c.args(["--enable-logging=stderr", "--v=0"])
        .arg(format!("--log-net-log={}", net_log.display()))
        .args(["--dump-dom", &url]);
    let dom = wait(c.spawn().expect("chromium starts"));
    assert_eq!(dom.code, 0, "chromium --dump-dom: {}", dom.stderr);

    let png = screenshots().join(format!("{name}.png"));
    let _ = std::fs::remove_file(&png);
    let mut c = Command::new(browser);
    common(&mut c, "shot");
    c.arg(format!("--screenshot={}", png.display()))
        .args(["--window-size=1280,1600", &url]);
    let shot = wait(c.spawn().expect("chromium starts"));
    assert!(png.is_file(), "no screenshot: {}", shot.stderr);

    let log = std::fs::read_to_string(&net_log).unwrap_or_default();
    let mut requests: Vec<String> = log
        .split("\"url\":\"")
        .skip(1)
        .filter_map(|s| s.split('"').next())
        .map(str::to_string)
        .collect();
    requests.sort();
    requests.dedup();
    Rendered {
        dom: dom.stdout,
        png,
        log: dom.stderr,
        requests,
    }
}

/// The screenshot has the window's size and is not one colour: at least 2 % of its pixels differ
/// from the top-left one.
fn assert_not_blank(png: &Path) {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(png).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!((info.width, info.height), (1280, 1600), "{}", png.display());
    let px = info.color_type.samples();
    let pixels: Vec<&[u8]> = buf[..info.buffer_size()].chunks(px).collect();
    let first = pixels[0];
    let other = pixels.iter().filter(|p| *p != &first).count();
    assert!(
        other * 50 > pixels.len(),
        "{} is blank: {other} of {} pixels differ from the first",
        png.display(),
        pixels.len()
    );
}

/// Hosts Chromium itself calls on start (time, updates, accounts, dictionaries), whatever page
/// it opens; a request of the page to one of them would still fail the source check below.
const BROWSER_OWN: [&str; 4] = [
    "google.com/",
    "googleapis.com/",
    "gvt1.com/",
    "gstatic.com/",
];

/// Nothing is fetched: no external `src`/`href`/`url(` in the file, no request of the page in
/// the browser's net log, no Content-Security-Policy refusal in its console.
fn assert_self_contained(html: &str, r: &Rendered) {
    let lower = html.to_ascii_lowercase();
    for attr in ["src=", "href=", "url(", "@import", "action="] {
        for (i, _) in lower.match_indices(attr) {
            let rest = lower[i + attr.len()..].trim_start_matches(['"', '\'', ' ']);
            assert!(
                !rest.starts_with("http:")
                    && !rest.starts_with("https:")
                    && !rest.starts_with("//"),
                "external reference: {}",
                &html[i..(i + 120).min(html.len())]
            );
        }
    }
    let page: Vec<&String> = r
        .requests
        .iter()
        .filter(|u| !u.starts_with("file:"))
        .filter(|u| !BROWSER_OWN.iter().any(|h| u.contains(h)))
        .collect();
    assert!(page.is_empty(), "the page asked for {page:?}");
    assert!(
        !r.log.contains("Content Security Policy"),
        "the page tried something its policy refuses:\n{}",
        r.log
    );
}

/// The parts the page is made of are in the rendered DOM.
fn assert_parts(dom: &str) {
    for part in [
        "<svg id=\"coverage-chart\"",
        "<svg id=\"pass-rate-chart\"",
        "<svg id=\"timeline\"",
        "<table id=\"file-table\"",
        "<svg id=\"confidence-chart\"",
    ] {
        assert!(dom.contains(part), "{part} missing from the DOM");
    }
    assert!(
        dom.contains("<polyline") || dom.contains("<circle"),
        "no data point"
    );
    assert!(
        dom.contains("<rect class=\"bar s"),
        "no bar in the timeline"
    );
}

/// The markup name is text: escaped in the DOM, and the only script is the page's own.
fn assert_name_is_text(dom: &str) {
    assert!(
        dom.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
        "the test name is not shown as text"
    );
    assert_eq!(
        dom.matches("<script").count(),
        1,
        "a script besides the page's own"
    );
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

#[test]
fn the_example_sessions_render_in_chromium() {
    let tmp = tempfile::tempdir().unwrap();
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("sessions");
    let mut names: Vec<String> = std::fs::read_dir(&examples)
        .unwrap()
        .flatten()
        .filter(|e| e.path().join("session.json").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names.len(), 2, "{names:?}");
    for name in &names {
        let dir = tmp.path().join(name);
        copy_dir(&examples.join(name), &dir);
        // A test whose name is markup, in the completed session's results.
        let run = dir.join("results/run-001.json");
        if run.is_file() {
            let mut v = read_json(&run);
            v["tests"][0]["id"] = SCRIPT_NAME.into();
            std::fs::write(&run, v.to_string()).unwrap();
        }
        let out = Command::new(BIN)
            .args(["report", dir.to_str().unwrap(), "--format", "html"])
            .env("TEAM_TESTING_SESSIONS", tmp.path())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let out = wait(out);
        out.assert_code(0);
        let html = tmp.path().join(format!("{name}.html"));
        std::fs::write(&html, &out.stdout).unwrap();
        let r = render(&html, name);
        assert_not_blank(&r.png);
        assert_self_contained(&out.stdout, &r);
        assert!(
            r.dom.contains("<svg id=\"timeline\""),
            "{name}: no timeline"
        );
        if run.is_file() {
            assert_parts(&r.dom);
            assert_name_is_text(&r.dom);
        }
    }
}

#[test]
fn a_fresh_standard_run_on_python_calc_renders_in_chromium() {
    let p = Project::fixture("python-calc");
    // One of the project's own tests fails under a name that is markup: the baseline lists it.
    p.write(
        "tests/test_names.py",
        "import pytest\n\n\n@pytest.mark.parametrize(\"name\", [\"x\"], ids=[\"<script>alert(1)</script>\"])\ndef test_markup_name(name):\n    assert name == \"y\"\n",
    );
    git(&p.repo, &["add", "."]);
    git(&p.repo, &["commit", "-q", "-m", "a test named with markup"]);
    let out = p
        .cmd(&[
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            "test the calculator",
            "--pipeline",
            "standard",
            "-y",
        ])
        .run();
    out.assert_code(0);
    let id = out.session_id();
    let html_path = p.session_dir(&id).join("analysis/report.html");
    let html = std::fs::read_to_string(&html_path).expect("the analyst writes report.html");
    // The command serves the same page.
    let served = p.cmd(&["report", &id, "--format", "html"]).run();
    served.assert_code(0);
    assert_eq!(served.stdout, html);

    let r = render(&html_path, "python-calc-standard");
    assert_not_blank(&r.png);
    assert_self_contained(&html, &r);
    assert_parts(&r.dom);
    assert_name_is_text(&r.dom);
    // Sources of the files in scope, from the repository, with their lines coloured.
    assert!(
        r.dom.contains("Source of calc/tokenizer.py"),
        "no source view"
    );
    assert!(
        r.dom.contains("<span class=\"c\">"),
        "no covered line in a source view"
    );
    assert!(
        r.dom.contains("OPERATORS"),
        "the tokenizer's source is not shown"
    );
}
