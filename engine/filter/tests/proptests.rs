//! Property tests: printing round-trips, evaluation matches the reference
//! semantics, the per-class and time analyses are sound, and no input panics.

mod common;

use common::{Subject, Val};
use proptest::prelude::*;
use proptest::sample::select;
use traceloom_filter::{
    parse, CmpOp, Expr, FieldOperand, FieldScope, Filter, GlobPattern, GlobPiece, Literal, Operand,
    OperandType, RegexLit, StateKey, Term, STATE_MODES,
};

/// Field operands the generators and subjects share, so lookups hit.
const FIELDS: &[(FieldScope, &str)] = &[
    (FieldScope::Payload, "prev_tid"),
    (FieldScope::Payload, "next_comm"),
    (FieldScope::Payload, "a.b"),
    (FieldScope::Payload, "arr[1]"),
    (FieldScope::Payload, "flag"),
    (FieldScope::Context, "vtid"),
    (FieldScope::Context, "procname"),
    (FieldScope::Packet, "cpu_id"),
];

const NAMES: &[&str] = &[
    "sched_switch",
    "sched_wakeup",
    "irq_handler_entry",
    "syscall_entry_open",
    "",
    "a*b",
    "é?",
];

fn field_operand(i: usize) -> Operand {
    let (scope, p) = FIELDS[i];
    Operand::Field(FieldOperand {
        scope,
        path: common::path(p),
    })
}

fn arb_field() -> impl Strategy<Value = Operand> {
    (0..FIELDS.len()).prop_map(field_operand)
}

fn arb_operand() -> impl Strategy<Value = Operand> {
    prop_oneof![
        Just(Operand::Name),
        Just(Operand::Time),
        Just(Operand::Cpu),
        Just(Operand::Trace),
        select(StateKey::ALL.to_vec()).prop_map(Operand::State),
        arb_field(),
        arb_field(),
        arb_field(),
    ]
}

fn arb_string() -> BoxedStrategy<String> {
    prop_oneof![
        select(NAMES.to_vec()).prop_map(String::from),
        select(vec![
            "bash",
            "kernel",
            "user",
            "syscall",
            "x\"y\\z",
            "tab\there",
            "\u{1}\0",
            "RUN"
        ])
        .prop_map(String::from),
        "\\PC{0,6}",
        ".{0,4}",
    ]
    .boxed()
}

fn arb_float() -> impl Strategy<Value = f64> {
    prop_oneof![
        (-6i32..6).prop_map(|i| f64::from(i) / 2.0),
        any::<f64>().prop_filter("finite", |f| f.is_finite()),
        Just(1e-7),
        Just(9007199254740993.0),
    ]
}

fn arb_literal() -> BoxedStrategy<Literal> {
    prop_oneof![
        (-3i64..40).prop_map(Literal::Int),
        any::<i64>().prop_map(Literal::Int),
        ((1u64 << 63)..=u64::MAX).prop_map(Literal::UInt),
        arb_float().prop_map(Literal::Float),
        arb_string().prop_map(Literal::Str),
        any::<bool>().prop_map(Literal::Bool),
    ]
    .boxed()
}

/// Makes `lit` a literal the parser accepts opposite `operand` with `op`,
/// keeping as much of the random value as possible.
fn fit_literal(operand: &Operand, op: CmpOp, lit: Literal) -> Literal {
    match operand.static_type() {
        OperandType::Str => {
            let s = match lit {
                Literal::Str(s) => s,
                other => other.to_string(),
            };
            if *operand == Operand::State(StateKey::Mode) && !op.is_ordering() {
                Literal::Str(STATE_MODES[s.len() % STATE_MODES.len()].to_string())
            } else {
                Literal::Str(s)
            }
        }
        OperandType::Int => match lit {
            Literal::Float(f) if *operand == Operand::Time => Literal::Int(f as i64),
            Literal::Int(_) | Literal::UInt(_) | Literal::Float(_) => lit,
            Literal::Str(s) => Literal::Int(s.len() as i64),
            Literal::Bool(b) => Literal::Int(i64::from(b)),
        },
        OperandType::Unknown => match lit {
            Literal::Bool(b) if op.is_ordering() => Literal::Int(i64::from(b)),
            other => other,
        },
    }
}

fn compatible(a: &Operand, b: &Operand) -> bool {
    let (ta, tb) = (a.static_type(), b.static_type());
    ta == OperandType::Unknown || tb == OperandType::Unknown || ta == tb
}

fn arb_compare() -> impl Strategy<Value = Expr> {
    (
        arb_operand(),
        select(CmpOp::ALL.to_vec()),
        arb_literal(),
        any::<bool>(),
        prop::option::weighted(0.2, arb_operand()),
    )
        .prop_map(|(operand, op, lit, literal_left, other)| {
            let other = match other {
                Some(o) if compatible(&operand, &o) => Term::Operand(o),
                Some(_) => Term::Operand(field_operand(0)),
                None => Term::Literal(fit_literal(&operand, op, lit)),
            };
            let operand = Term::Operand(operand);
            if literal_left {
                Expr::Compare {
                    lhs: other,
                    op: op.flipped(),
                    rhs: operand,
                }
            } else {
                Expr::Compare {
                    lhs: operand,
                    op,
                    rhs: other,
                }
            }
        })
}

fn arb_glob_pattern() -> impl Strategy<Value = GlobPattern> {
    let piece = prop_oneof![
        select(vec![
            "sched_", "irq", "_entry", "a", "b", "é", "*", "?", "\"", "\\"
        ])
        .prop_map(|s| GlobPiece::Literal(s.to_string())),
        Just(GlobPiece::AnyChar),
        Just(GlobPiece::AnyString),
    ];
    prop::collection::vec(piece, 1..5).prop_map(|mut pieces| {
        if pieces.iter().all(|p| matches!(p, GlobPiece::Literal(_))) {
            pieces.push(GlobPiece::AnyString);
        }
        GlobPattern::new(pieces)
    })
}

fn string_operand(op: Operand) -> Operand {
    if op.static_type() == OperandType::Int {
        Operand::Name
    } else {
        op
    }
}

fn arb_leaf() -> BoxedStrategy<Expr> {
    prop_oneof![
        1 => any::<bool>().prop_map(Expr::Bool),
        2 => arb_field().prop_map(Expr::Test),
        6 => arb_compare(),
        2 => (arb_operand(), any::<bool>(), arb_glob_pattern()).prop_map(|(operand, negated, pattern)| {
            Expr::Glob { operand: string_operand(operand), negated, pattern }
        }),
        1 => (arb_operand(), select(vec!["^sched_", "switch$", "a.b", r"\d+", "^$", r#"a\"b"#, "(?i)SCHED", "é|_"]))
            .prop_map(|(operand, re)| Expr::Regex {
                operand: string_operand(operand),
                regex: RegexLit::new(re).unwrap(),
            }),
    ]
    .boxed()
}

fn arb_expr() -> impl Strategy<Value = Expr> {
    arb_leaf().prop_recursive(5, 40, 4, |inner| {
        prop_oneof![
            inner.clone().prop_map(|e| Expr::Not(Box::new(e))),
            prop::collection::vec(inner.clone(), 2..4).prop_map(Expr::And),
            prop::collection::vec(inner, 2..4).prop_map(Expr::Or),
        ]
    })
}

fn arb_val() -> impl Strategy<Value = Val> {
    prop_oneof![
        (-3i64..40).prop_map(Val::Int),
        any::<i64>().prop_map(Val::Int),
        any::<u64>().prop_map(Val::UInt),
        arb_float().prop_map(Val::Float),
        Just(Val::Float(f64::NAN)),
        arb_string().prop_map(Val::Str),
        any::<bool>().prop_map(Val::Bool),
    ]
}

fn arb_subject() -> impl Strategy<Value = Subject> {
    (
        prop_oneof![select(NAMES.to_vec()).prop_map(String::from), ".{0,4}"],
        prop_oneof![-3i64..40, any::<i64>()],
        prop::option::of(prop_oneof![0u64..4, any::<u64>()]),
        select(vec!["trace", "kernel", "bash"]),
        prop::collection::vec(prop::option::of(arb_val()), FIELDS.len()),
        prop::collection::vec(prop::option::of(arb_val()), StateKey::ALL.len()),
    )
        .prop_map(|(name, time, cpu, trace, fields, state)| {
            let mut s = Subject::new(&name).time(time).cpu(cpu).trace(trace);
            for ((scope, p), v) in FIELDS.iter().zip(fields) {
                if let Some(v) = v {
                    s = s.scoped(*scope, p, v);
                }
            }
            for (key, v) in StateKey::ALL.into_iter().zip(state) {
                if let Some(v) = v {
                    s = s.with_state(key, v);
                }
            }
            s
        })
}

/// Token soup: mostly valid pieces in random order, to reach deep into the
/// parser's error paths.
fn arb_soup() -> impl Strategy<Value = String> {
    let tokens = vec![
        "event.name",
        "name",
        "cpu",
        "time",
        "trace",
        "event.field.a",
        "event.field.arr[1]",
        "event.context.x",
        "state.mode",
        "state.tid",
        "event.",
        "a[",
        "==",
        "!=",
        "<",
        "<=",
        ">",
        ">=",
        "=~",
        "&&",
        "||",
        "!",
        "(",
        ")",
        "\"sched_*\"",
        "\"a\\\"b\"",
        "\"\\d+\"",
        "\"(\"",
        "\"\\u{zz}\"",
        "42",
        "-1",
        "0x1f",
        "1.5",
        "12.5s",
        "1e999",
        "true",
        "false",
        "\"user\"",
        "=",
        "&",
        "|",
        "\"unterminated",
        "é",
        "\\",
        "-",
    ];
    prop::collection::vec((select(tokens), select(vec!["", " "])), 0..12).prop_map(|parts| {
        parts
            .into_iter()
            .map(|(t, sep)| format!("{t}{sep}"))
            .collect()
    })
}

fn check_error_position(src: &str, err: &traceloom_filter::ParseError) {
    let len = src.chars().count();
    assert!(
        err.column >= 1 && err.column <= len + 1,
        "column {} out of 1..={} for {src:?}",
        err.column,
        len + 1
    );
    assert!(err.width >= 1);
    assert!(
        err.column + err.width <= len + 2,
        "width {} overruns {src:?} at {}",
        err.width,
        err.column
    );
    assert!(err
        .to_string()
        .starts_with(&format!("column {}: ", err.column)));
}

/// Whatever parses must print to text that parses to the same tree.
fn check_accepted(src: &str) {
    match parse(src) {
        Ok(expr) => {
            let printed = expr.to_string();
            let again =
                parse(&printed).unwrap_or_else(|e| panic!("{src:?} printed as {printed:?}: {e}"));
            assert_eq!(again, expr, "{src:?} printed as {printed:?}");
        }
        Err(err) => check_error_position(src, &err),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn printed_trees_reparse_to_the_same_tree(expr in arb_expr()) {
        let printed = expr.to_string();
        let parsed = parse(&printed);
        prop_assert!(parsed.is_ok(), "{printed:?}: {}", parsed.unwrap_err());
        prop_assert_eq!(parsed.unwrap(), expr.clone(), "printed: {}", printed);
        // Printing is a fixed point.
        prop_assert_eq!(Filter::new(&printed).unwrap().to_string(), printed);
    }

    #[test]
    fn evaluation_matches_reference_and_survives_printing(
        expr in arb_expr(),
        subjects in prop::collection::vec(arb_subject(), 8),
    ) {
        let direct = Filter::from_expr(expr.clone());
        let reparsed = Filter::new(&expr.to_string()).unwrap();
        for s in &subjects {
            let expected = common::reference_eval(&expr, s);
            prop_assert_eq!(direct.matches(s), expected, "{} on {:?}", expr, s);
            prop_assert_eq!(reparsed.matches(s), expected, "{} on {:?}", expr, s);
        }
    }

    #[test]
    fn name_only_decisions_are_sound(expr in arb_expr(), subjects in prop::collection::vec(arb_subject(), 8)) {
        let filter = Filter::from_expr(expr);
        for s in &subjects {
            if let Some(decided) = filter.name_only_decision(&s.name) {
                prop_assert_eq!(filter.matches(s), decided, "{} on {:?}", filter, s);
            }
        }
    }

    #[test]
    fn time_bounds_are_sound(expr in arb_expr(), subjects in prop::collection::vec(arb_subject(), 8)) {
        let filter = Filter::from_expr(expr);
        let bounds = filter.time_bounds();
        for s in &subjects {
            if filter.matches(s) {
                prop_assert!(bounds.is_some_and(|b| b.contains(s.time)), "{} matched at {} outside {:?}", filter, s.time, bounds);
            }
        }
    }

    #[test]
    fn glob_matcher_agrees_with_regex(pattern in arb_glob_pattern(), text in "[ab_éirqschd*?]{0,12}") {
        let expected = common::glob_as_regex(&pattern).is_match(&text);
        prop_assert_eq!(pattern.matches(&text), expected);
        // And through a compiled filter (shape-specialized matchers).
        let glob = Filter::from_expr(Expr::Glob { operand: Operand::Name, negated: false, pattern });
        prop_assert_eq!(glob.matches(&Subject::new(&text)), expected);
    }

    #[test]
    fn random_text_never_panics(src in any::<String>()) {
        check_accepted(&src);
    }

    #[test]
    fn random_ascii_never_panics(src in "[ -~]{0,40}") {
        check_accepted(&src);
    }

    #[test]
    fn token_soup_never_panics(src in arb_soup()) {
        check_accepted(&src);
    }
}
