use super::*;

fn p(text: &str) -> Requirement {
    parse(Path::new("specs/REQ-001.md"), text).unwrap()
}

fn err(text: &str) -> String {
    parse(Path::new("specs/REQ-001.md"), text)
        .unwrap_err()
        .to_string()
}

fn eq(call: &str, v: &str) -> Example {
    Example {
        call: call.into(),
        expect: Expect::Equals(v.into()),
    }
}

#[test]
fn list_criteria_in_three_styles_with_ids_and_priorities() {
    let r = p("# REQ-001: Discounts\n\
               Priority: High (customer facing)\n\
               \n\
               Some intro prose.\n\
               \n\
               ## Acceptance Criteria\n\
               - AC-1: `apply_discount(100, 10)` returns `90`\n\
               1. **AC-2** A discount above 100% is refused (priority: critical)\n\
               - [ ] AC-3 — The discount applies\n  \
                 when the cart is not empty\n\
               - [x] ac-4. Done ones count too\n\
               \n\
               Closing prose with `f(1)` returns `2` is not a criterion's.\n");
    assert_eq!(r.id, "REQ-001");
    assert_eq!(r.title, "Discounts");
    assert_eq!(r.priority, Some(Priority::High));
    let ids: Vec<&str> = r.criteria.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["AC-1", "AC-2", "AC-3", "AC-4"]);
    let c = &r.criteria;
    assert_eq!(c[0].line, 7);
    assert_eq!(c[0].examples, [eq("apply_discount(100, 10)", "90")]);
    assert_eq!(c[1].text, "A discount above 100% is refused");
    assert_eq!(c[1].priority, Some(Priority::Critical));
    assert!(c[1].examples.is_empty(), "a prose criterion has no example");
    assert_eq!(c[2].text, "The discount applies when the cart is not empty");
    assert_eq!(c[2].when, None);
    assert_eq!(c[3].text, "Done ones count too");
    assert!(c[3].examples.is_empty());
}

#[test]
fn given_when_then_blocks_under_headings_and_bold_ids() {
    let r = p("---\n\
               title: Stock\n\
               priority: medium\n\
               ---\n\
               ### AC-1: Stock never goes negative\n\
               \n\
               The shelf count is never below zero.\n\
               \n\
               **Priority:** critical\n\
               Given a product with stock 3\n\
               And a reserved unit\n\
               WHEN 5 units are taken\n\
               Then an error is raised\n\
               but the stock stays 3\n\
               \n\
               **AC-2**\n\
               \n\
               - Given stock 3\n\
               - When `take(3, 3)` is called\n\
               - Then the result is `0`\n\
               \n\
               #### AC-3\n\
               when `take(1, 5)` is called\n\
               then `ValueError` is raised\n");
    assert_eq!(r.title, "Stock");
    assert_eq!(r.priority, Some(Priority::Medium));
    let c = &r.criteria;
    assert_eq!(
        c[0].text,
        "Stock never goes negative The shelf count is never below zero."
    );
    assert_eq!(c[0].priority, Some(Priority::Critical));
    assert_eq!(
        c[0].given.as_deref(),
        Some("a product with stock 3 and a reserved unit")
    );
    assert_eq!(c[0].when.as_deref(), Some("5 units are taken"));
    assert_eq!(
        c[0].then.as_deref(),
        Some("an error is raised and the stock stays 3")
    );
    assert_eq!(c[0].line, 5);
    assert!(c[0].examples.is_empty());
    assert_eq!(c[1].id, "AC-2");
    assert_eq!(c[1].line, 16);
    assert_eq!(
        c[1].text,
        "Given stock 3, when `take(3, 3)` is called, then the result is `0`"
    );
    assert_eq!(c[1].examples, [eq("take(3, 3)", "0")]);
    assert_eq!(
        c[2].examples,
        [Example {
            call: "take(1, 5)".into(),
            expect: Expect::Raises("ValueError".into())
        }]
    );
}

#[test]
fn recognised_example_phrasings() {
    let r = p("- AC-1: `apply_discount(100, 10)` returns `90`, and calling `take(3, 3)` gives `0`\n\
               - AC-2: `can_fulfil(5, 5)` is true and `can_fulfil(6, 5)` is false\n\
               - AC-3: `apply_discount(10, 150)` raises `ValueError`; `shop.take(1, 9)` throws StockError\n\
               - AC-4: `total([1, 2]) == 3` and `total([])` == `0` and `avg(2, 4)` equals `3`\n\
               - AC-5: `price.net(10)` should return 8.5 and `find(1)` is None\n\
               - AC-6: `f(1)` is not `2`; `config` returns `x`; `g(1)` raises an error; `h()` is ready\n\
               - AC-7: `ok(1)` is `True`\n");
    let ex: Vec<Vec<Example>> = r.criteria.iter().map(|c| c.examples.clone()).collect();
    assert_eq!(
        ex[0],
        [eq("apply_discount(100, 10)", "90"), eq("take(3, 3)", "0")]
    );
    let truthy = |call: &str, e| Example {
        call: call.into(),
        expect: e,
    };
    assert_eq!(
        ex[1],
        [
            truthy("can_fulfil(5, 5)", Expect::Truthy),
            truthy("can_fulfil(6, 5)", Expect::Falsy)
        ]
    );
    assert_eq!(
        ex[2],
        [
            truthy(
                "apply_discount(10, 150)",
                Expect::Raises("ValueError".into())
            ),
            truthy("shop.take(1, 9)", Expect::Raises("StockError".into()))
        ]
    );
    assert_eq!(
        ex[3],
        [
            eq("total([])", "0"),
            eq("avg(2, 4)", "3"),
            eq("total([1, 2])", "3")
        ]
    );
    assert_eq!(ex[4], [eq("price.net(10)", "8.5"), eq("find(1)", "None")]);
    assert!(ex[5].is_empty(), "{:?}", ex[5]);
    assert_eq!(ex[6], [eq("ok(1)", "True")]);
}

#[test]
fn id_comes_from_the_file_name_else_a_heading() {
    let r = parse(
        Path::new("REQ-007-login.md"),
        "# Login\n- AC-1: a user logs in\n",
    )
    .unwrap();
    assert_eq!((r.id.as_str(), r.title.as_str()), ("REQ-007", "Login"));
    let r = parse(
        Path::new("REQ-login.md"),
        "## Acceptance criteria\n- AC-1: x\n# REQ-012 — Sign in\n",
    )
    .unwrap();
    assert_eq!((r.id.as_str(), r.title.as_str()), ("REQ-012", "Sign in"));
    let r = parse(Path::new("REQ-x.md"), "AC-1: bare with separator\n").unwrap();
    assert_eq!((r.id.as_str(), r.title.as_str()), ("REQ-x", "REQ-x"));
}

#[test]
fn bold_colon_ids_sub_bullets_indented_priority_and_crlf() {
    let r = p("**AC-5:** Refunds within 30 days\r\n\
               - AC-6: Discount cap\r\n  \
                 Priority: low\r\n  \
                 - Given a cart of `100`\r\n  \
                 - When `cap(100, 150)` is called\r\n  \
                 - Then it raises ValueError\r\n\
               - Priority: critical\r\n");
    let c = &r.criteria;
    assert_eq!(
        (c[0].id.as_str(), c[0].text.as_str()),
        ("AC-5", "Refunds within 30 days")
    );
    assert_eq!(c[1].text, "Discount cap");
    assert_eq!(c[1].priority, Some(Priority::Low));
    assert_eq!(c[1].given.as_deref(), Some("a cart of `100`"));
    assert_eq!(
        c[1].examples,
        [Example {
            call: "cap(100, 150)".into(),
            expect: Expect::Raises("ValueError".into())
        }]
    );
    // A sibling list item after the criteria is the file's priority.
    assert_eq!(r.priority, Some(Priority::Critical));
    assert_eq!(c[1].line, 2);
}

#[test]
fn code_fences_and_prose_mentions_are_not_criteria() {
    let r = p("AC-9 is mentioned in prose without a separator.\n\
               ```\n- AC-1: inside a fence\n```\n\
               - AC-1: the real one\n");
    assert_eq!(r.criteria.len(), 1);
    assert_eq!(r.criteria[0].text, "the real one");
    assert_eq!(r.criteria[0].line, 5);
}

#[test]
fn malformed_files_name_the_file_and_line() {
    assert_eq!(
        err("# Title\nJust prose.\n"),
        "specs/REQ-001.md:1: no acceptance criterion (expected lines like \"- AC-1: ...\" or a Given/When/Then block under \"### AC-1\")"
    );
    assert_eq!(
        err("- AC-1: a\n- AC-2: b\n- AC-1: c\n"),
        "specs/REQ-001.md:3: duplicate AC-1 (first at line 1)"
    );
    assert_eq!(
        err("### AC-1\nGiven a cart\nWhen it is paid\n### AC-2\nThen fine\n"),
        "specs/REQ-001.md:2: AC-1: Given without Then"
    );
    assert_eq!(
        err("Priority: urgent\n- AC-1: a\n"),
        "specs/REQ-001.md:1: unknown priority 'urgent' (expected critical, high, medium or low)"
    );
    assert_eq!(
        err("- AC-1: a (priority: asap)\n"),
        "specs/REQ-001.md:1: unknown priority 'asap' (expected critical, high, medium or low)"
    );
    assert_eq!(
        err("### AC-1: a\n**Priority:** soon\nThen b\n"),
        "specs/REQ-001.md:2: unknown priority 'soon' (expected critical, high, medium or low)"
    );
    assert_eq!(
        err("- AC-1: fine\n- AC-2:\n\n## Notes\n"),
        "specs/REQ-001.md:2: AC-2 has no text"
    );
    let e = parse(Path::new("r/REQ-001.md"), "- AC-1:\n").unwrap_err();
    assert_eq!((e.path(), e.line()), (Path::new("r/REQ-001.md"), 1));
}

#[test]
fn load_dir_finds_sorts_and_skips() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for (rel, body) in [
        ("REQ-10.md", "- AC-1: ten\n"),
        ("docs/REQ-2-login.md", "- AC-1: two\n"),
        ("docs/REQ-001.md", "- AC-1: one\n"),
        ("node_modules/x/REQ-3.md", "broken"),
        (".workflow/.team/s/workspace/REQ-4.md", "broken"),
        ("env/REQ-5.md", "broken"),
        ("README.md", "- AC-1: not a req file\n"),
    ] {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, body).unwrap();
    }
    std::fs::write(root.join("env/pyvenv.cfg"), "home = /usr\n").unwrap();
    let ids: Vec<String> = load_dir(root, None)
        .unwrap()
        .into_iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(ids, ["REQ-001", "REQ-2", "REQ-10"]);
    let ids: Vec<String> = load_dir(root, Some(Path::new("docs")))
        .unwrap()
        .into_iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(ids, ["REQ-001", "REQ-2"]);

    std::fs::write(root.join("docs/REQ-001-again.md"), "- AC-1: dup\n").unwrap();
    let e = load_dir(root, Some(Path::new("docs"))).unwrap_err();
    assert!(
        e.to_string().contains(":1: REQ-001 is also the id of"),
        "{e}"
    );

    std::fs::write(root.join("docs/REQ-001-again.md"), "- AC-1:\n").unwrap();
    let e = load_dir(root, Some(Path::new("docs"))).unwrap_err();
    assert!(
        e.to_string()
            .ends_with("REQ-001-again.md:1: AC-1 has no text"),
        "{e}"
    );
    assert!(load_dir(root, Some(Path::new("missing"))).is_err());
}

#[test]
fn a_requirement_file_that_is_a_link_is_refused_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    std::fs::create_dir_all(root.join("docs")).unwrap();
    std::fs::write(root.join("docs/REQ-1.md"), "- AC-1: one\n").unwrap();
    let outside = dir.path().join("secret.md");
    std::fs::write(&outside, "- AC-1: not the repository's\n").unwrap();
    std::os::unix::fs::symlink(&outside, root.join("docs/REQ-2.md")).unwrap();
    let e = load_dir(&root, None).unwrap_err();
    assert!(matches!(e, ReqError::Symlink { .. }), "{e}");
    assert_eq!(e.path(), root.join("docs/REQ-2.md"));
    assert!(
        e.to_string().contains("REQ-2.md:0: is a symbolic link"),
        "{e}"
    );
    // A link to a folder is not followed, as before; a link named otherwise is not ours.
    std::fs::remove_file(root.join("docs/REQ-2.md")).unwrap();
    std::os::unix::fs::symlink(&outside, root.join("docs/notes.md")).unwrap();
    let ids: Vec<String> = load_dir(&root, None)
        .unwrap()
        .into_iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(ids, ["REQ-1"]);
    assert!(crate::util::read_regular_nofollow(&root.join("docs/notes.md")).is_err());
}
