use super::*;
use crate::scenario::req::parse;
use std::path::Path;

fn reqs() -> Vec<Requirement> {
    vec![
        parse(
            Path::new("REQ-001.md"),
            "# REQ-001: Discounts\n\
             Priority: medium\n\
             - AC-1: `apply_discount(100, 10)` returns `90` and `apply_discount(10, 150)` raises `ValueError`\n\
             - AC-2: Orders flow from `cart.total()` to `billing.charge()` (priority: critical)\n\
             - AC-3: A refunded order's status becomes refunded\n",
        )
        .unwrap(),
        parse(
            Path::new("REQ-002.md"),
            "# Stock\n\
             ### AC-1: Taking stock\n\
             Given a product with stock 3 and a cart\n\
             When `take(3, 3)` is called\n\
             Then the result is `0`\n\
             ### AC-2: The API answers 404 for an unknown product\n\
             ### AC-3: A shopper checks out end-to-end in the browser\n",
        )
        .unwrap(),
    ]
}

#[test]
fn spec_scenarios_per_criterion_and_layer() {
    let reqs = reqs();
    let locate = |c: &Criterion| (c.id == "AC-1").then(|| "src/shop.py".to_string());
    let rows = from_requirements(&reqs, &locate);
    let brief: Vec<(&str, &str, &str, Priority, &str)> = rows
        .iter()
        .map(|r| {
            (
                r.id.as_str(),
                r.layer.as_str(),
                r.req_ref.as_str(),
                r.priority,
                r.category.as_str(),
            )
        })
        .collect();
    assert_eq!(
        brief,
        [
            (
                "AT-001",
                "L1",
                "REQ-001:AC-1",
                Priority::Medium,
                "business_rule"
            ),
            (
                "AT-002",
                "L1",
                "REQ-001:AC-2",
                Priority::Critical,
                "business_rule"
            ),
            (
                "AT-003",
                "L2",
                "REQ-001:AC-2",
                Priority::Critical,
                "business_rule"
            ),
            (
                "AT-004",
                "L1",
                "REQ-001:AC-3",
                Priority::Medium,
                "state_transition"
            ),
            (
                "AT-005",
                "L1",
                "REQ-002:AC-1",
                Priority::High,
                "business_rule"
            ),
            (
                "AT-006",
                "L1",
                "REQ-002:AC-2",
                Priority::High,
                "api_contract"
            ),
            ("AT-007", "L3", "REQ-002:AC-3", Priority::High, "user_flow"),
        ]
    );
    assert!(rows
        .iter()
        .all(|r| r.source == "spec" && r.status == "pending"));
    assert_eq!(
        rows[0].test_cases,
        [
            "apply_discount(100, 10) returns 90",
            "apply_discount(10, 150) raises ValueError"
        ]
    );
    assert_eq!(rows[0].target_file, "src/shop.py");
    assert_eq!(rows[1].target_file, "");
    assert_eq!(
        rows[1].name,
        "Orders flow from cart.total() to billing.charge()"
    );
    assert_eq!(
        rows[2].name,
        "Orders flow from cart.total() to... (integration)"
    );
    assert_eq!(
        rows[3].test_cases,
        ["A refunded order's status becomes refunded"]
    );
    assert_eq!(rows[4].test_cases, ["take(3, 3) returns 0"]);
    assert_eq!(rows[4].fixtures, ["product_with_stock_3", "cart"]);
    assert_eq!(
        rows[4].description,
        "REQ-002 AC-1 (Stock): Taking stock (given a product with stock 3 and a cart; \
         when `take(3, 3)` is called; then the result is `0`)"
    );
    assert_eq!(
        rows[0].test_file,
        "tests/L1-unit/test_at_001_apply_discount_100_10_returns_90_and.py"
    );
    assert_eq!(
        rows[6].test_file,
        "tests/L3-e2e/test_at_007_a_shopper_checks_out_end_to_end_in_the.py"
    );
}

#[test]
fn gap_scenarios_group_per_function_and_name_ranges() {
    let gaps = vec![
        Gap {
            file: "src/calc.py".into(),
            function: Some("mean".into()),
            lines: vec![(12, 15)],
            branches: vec![],
        },
        Gap {
            file: "src/calc.py".into(),
            function: None,
            lines: vec![(3, 3)],
            branches: vec![],
        },
        Gap {
            file: "src/calc.py".into(),
            function: Some("mean".into()),
            lines: vec![(16, 16), (30, 40)],
            branches: vec!["20->22".into()],
        },
        Gap {
            file: "src/io.py".into(),
            function: Some("load".into()),
            lines: vec![],
            branches: vec![],
        },
    ];
    let rows = from_gaps(&gaps);
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0].id, "AT-001");
    assert_eq!(rows[0].name, "Cover mean in src/calc.py");
    assert_eq!(rows[0].req_ref, "gap:src/calc.py:mean");
    assert_eq!(
        rows[0].test_cases,
        ["lines 12-16", "lines 30-40", "branch 20->22"]
    );
    assert_eq!(rows[0].priority, Priority::High);
    assert_eq!(rows[0].target_file, "src/calc.py");
    assert_eq!(rows[0].source, "gap");
    assert_eq!(
        (rows[1].req_ref.as_str(), rows[1].priority),
        ("gap:src/calc.py", Priority::Medium)
    );
    assert_eq!(rows[1].test_cases, ["line 3"]);
    let small = from_gaps(&[Gap {
        file: "a.py".into(),
        function: Some("f".into()),
        lines: vec![(1, 4)],
        branches: vec![],
    }]);
    assert_eq!(small[0].priority, Priority::Medium);
}

#[test]
fn code_scenarios_per_boundary() {
    let rows = from_code(&[
        Boundary {
            file: "src/shop.py".into(),
            symbols: vec!["apply_discount".into()],
            kind: BoundaryKind::PublicFunction,
            priority: Priority::High,
        },
        Boundary {
            file: "src/cart.py".into(),
            symbols: vec!["Cart".into()],
            kind: BoundaryKind::Class,
            priority: Priority::Medium,
        },
        Boundary {
            file: "src/checkout.py".into(),
            symbols: vec!["cart.total".into(), "billing.charge".into()],
            kind: BoundaryKind::Integration,
            priority: Priority::Critical,
        },
        Boundary {
            file: "src/cli.py".into(),
            symbols: vec![],
            kind: BoundaryKind::EntryPoint,
            priority: Priority::Low,
        },
    ]);
    let brief: Vec<(&str, &str, &str, Priority)> = rows
        .iter()
        .map(|r| {
            (
                r.id.as_str(),
                r.layer.as_str(),
                r.category.as_str(),
                r.priority,
            )
        })
        .collect();
    assert_eq!(
        brief,
        [
            ("AT-001", "L1", "business_rule", Priority::High),
            ("AT-002", "L1", "state_transition", Priority::Medium),
            ("AT-003", "L2", "api_contract", Priority::Critical),
            ("AT-004", "L3", "user_flow", Priority::Low),
        ]
    );
    assert_eq!(
        rows[0].test_cases,
        [
            "apply_discount: expected result for typical input",
            "apply_discount: boundary and invalid input"
        ]
    );
    assert_eq!(
        rows[2].name,
        "cart.total, billing.charge (integration point)"
    );
    assert_eq!(
        rows[3].test_cases,
        ["src/cli.py: behaviour of the entry point"]
    );
    assert!(rows.iter().all(|r| r.source == "code"));
    assert_eq!(rows[1].test_file, "tests/L1-unit/test_at_002_cart_class.py");
}

#[test]
fn regression_and_localisation_scenarios() {
    let rows = regression(&[(
        "src/calc.py:14".into(),
        "ZeroDivisionError: division by zero\n  more".into(),
        "test_calc::test_mean_empty".into(),
    )]);
    assert_eq!(rows[0].target_file, "src/calc.py");
    assert_eq!(rows[0].priority, Priority::High);
    assert_eq!(rows[0].source, "debug_root_cause");
    assert_eq!(rows[0].req_ref, "defect:test_calc::test_mean_empty");
    assert_eq!(
        rows[0].name,
        "Regression: ZeroDivisionError: division by zero"
    );

    let rows = from_localisation(&[
        ("src/a.py:3".into(), 0.5, "t1".into()),
        ("src/b.py:9".into(), 0.9, "t2".into()),
        ("src/a.py:3".into(), 0.7, "t3".into()),
    ]);
    let brief: Vec<(&str, &str, Priority)> = rows
        .iter()
        .map(|r| (r.id.as_str(), r.req_ref.as_str(), r.priority))
        .collect();
    assert_eq!(
        brief,
        [
            ("AT-001", "suspect:src/b.py:9", Priority::High),
            ("AT-002", "suspect:src/a.py:3", Priority::Medium),
        ]
    );
    assert!(rows[1].description.contains("score 0.70"));
}

#[test]
fn renumber_merges_routes_and_keeps_hand_named_files() {
    let mut rows = from_gaps(&[Gap {
        file: "a.py".into(),
        function: Some("f".into()),
        lines: vec![(1, 2)],
        branches: vec![],
    }]);
    let mut code = from_code(&[Boundary {
        file: "b.py".into(),
        symbols: vec!["g".into()],
        kind: BoundaryKind::PublicFunction,
        priority: Priority::High,
    }]);
    name_tests(&mut code, TestNaming::TypeScript);
    assert_eq!(
        code[0].test_file,
        "tests/L1-unit/at-001-g-public-function.test.ts"
    );
    rows.extend(code);
    rows.extend(regression(&[("c.py:1".into(), "E".into(), "t".into())]));
    rows[2].test_file = "tests/mine.py".into();
    renumber(&mut rows);
    let ids: Vec<&str> = rows.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids, ["AT-001", "AT-002", "AT-003"]);
    assert_eq!(
        rows[0].test_file,
        "tests/L1-unit/test_at_001_cover_f_in_a_py.py"
    );
    assert_eq!(
        rows[1].test_file,
        "tests/L1-unit/at-002-g-public-function.test.ts"
    );
    assert_eq!(rows[2].test_file, "tests/mine.py");
    assert_eq!(scenario_id(1000), "AT-1000");
}
