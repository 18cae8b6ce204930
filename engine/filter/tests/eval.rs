//! Evaluation of parsed filters against test events.

mod common;

use common::Subject;
use traceloom_base::TimeRange;
use traceloom_filter::{
    Expr, FieldOperand, FieldScope, Filter, GlobPattern, Literal, Operand, PathElem, StateKey, Term,
};

fn f(src: &str) -> Filter {
    Filter::new(src).unwrap_or_else(|e| panic!("{src:?}: {e}"))
}

fn m(src: &str, s: &Subject) -> bool {
    let filter = f(src);
    let result = filter.matches(s);
    // Every test doubles as a check of the reference semantics.
    assert_eq!(
        result,
        common::reference_eval(filter.expr(), s),
        "reference disagrees on {src}"
    );
    result
}

fn switch(prev_tid: i64, cpu: u64) -> Subject {
    Subject::new("sched_switch")
        .cpu(Some(cpu))
        .field("prev_tid", prev_tid)
        .field("prev_comm", "bash")
}

#[test]
fn example_from_the_docs() {
    let src = r#"event.name == "sched_switch" && (event.field.prev_tid == 42 || cpu == 1)"#;
    assert!(m(src, &switch(42, 0)));
    assert!(m(src, &switch(7, 1)));
    assert!(!m(src, &switch(7, 0)));
    assert!(!m(src, &Subject::new("sched_wakeup").cpu(Some(1))));
}

#[test]
fn integer_comparisons() {
    let s = switch(42, 0);
    for (src, expected) in [
        ("event.field.prev_tid == 42", true),
        ("event.field.prev_tid != 42", false),
        ("event.field.prev_tid < 42", false),
        ("event.field.prev_tid <= 42", true),
        ("event.field.prev_tid > 41", true),
        ("event.field.prev_tid >= 43", false),
        ("42 == event.field.prev_tid", true),
        ("43 > event.field.prev_tid", true),
        ("event.field.prev_tid == 0x2a", true),
        ("event.field.prev_tid > -1", true),
        ("event.field.prev_tid == 42.0", true),
        ("event.field.prev_tid < 42.5", true),
        ("event.field.prev_tid > 41.9", true),
        ("event.field.prev_tid == 18446744073709551615", false),
        ("event.field.prev_tid < 18446744073709551615", true),
    ] {
        assert_eq!(m(src, &s), expected, "{src}");
    }
}

#[test]
fn unsigned_and_float_fields() {
    let s = Subject::new("e")
        .field("big", u64::MAX)
        .field("ratio", 0.5)
        .field("neg", -1i64);
    assert!(m("event.field.big == 18446744073709551615", &s));
    assert!(m("event.field.big > 9223372036854775807", &s));
    assert!(m("event.field.big > event.field.neg", &s));
    assert!(m("event.field.ratio == 0.5", &s));
    assert!(m("event.field.ratio < 1", &s));
    assert!(m("event.field.ratio > 0", &s));
    assert!(m("event.field.ratio >= 5e-1", &s));
    assert!(!m("event.field.ratio == 0", &s));
    let nan = Subject::new("e").field("x", f64::NAN);
    for op in ["==", "!=", "<", "<=", ">", ">="] {
        assert!(!m(&format!("event.field.x {op} 1"), &nan), "NaN {op}");
    }
}

#[test]
fn string_comparisons() {
    let s = switch(1, 0);
    assert!(m(r#"event.field.prev_comm == "bash""#, &s));
    assert!(!m(r#"event.field.prev_comm != "bash""#, &s));
    assert!(m(r#"event.field.prev_comm < "bat""#, &s));
    assert!(m(r#"event.field.prev_comm >= "bas""#, &s));
    assert!(
        m(r#"event.field.prev_comm > "Bash""#, &s),
        "byte order: uppercase sorts first"
    );
    assert!(m(r#"trace == "trace""#, &s));
    assert!(m(r#"trace < "u""#, &s.clone().trace("kernel")));
}

#[test]
fn string_versus_number_is_false_at_run_time() {
    let s = Subject::new("e").field("comm", "42").field("n", 42i64);
    for src in [
        "event.field.comm == 42",
        "event.field.comm != 42",
        "event.field.comm < 100",
        r#"event.field.n == "42""#,
        r#"event.field.n != "42""#,
        r#"event.field.n == "4*""#,
        r#"event.field.n != "4*""#,
        r#"event.field.n =~ "4""#,
        "event.field.n == true",
        "event.field.n != true",
        "event.field.comm == event.field.n",
        "event.field.comm != event.field.n",
    ] {
        assert!(!m(src, &s), "{src}");
    }
    // A boolean field is compared as a boolean.
    let b = Subject::new("e").field("flag", true);
    assert!(m("event.field.flag == true", &b));
    assert!(m("event.field.flag != false", &b));
    assert!(!m("event.field.flag == 1", &b));
}

#[test]
fn missing_fields_are_false_for_every_operator() {
    let s = Subject::new("e");
    for op in ["==", "!=", "<", "<=", ">", ">="] {
        assert!(!m(&format!("event.field.nope {op} 1"), &s), "{op}");
        assert!(!m(&format!("event.field.nope {op} \"x\""), &s), "{op}");
        assert!(!m(&format!("1 {op} event.context.nope"), &s), "{op}");
        assert!(!m(&format!("state.tid {op} 1"), &s), "{op}");
    }
    assert!(!m(r#"event.field.nope == "*""#, &s));
    assert!(!m(r#"event.field.nope != "*""#, &s));
    assert!(!m(r#"event.field.nope =~ """#, &s));
    assert!(!m("event.field.nope", &s));
    // Negating the comparison includes the events without the field.
    assert!(m("!(event.field.nope == 1)", &s));
    assert!(m("!(event.field.nope != 1)", &s));
    assert!(m("!event.field.nope", &s));
    // A missing cpu behaves the same.
    let no_cpu = Subject::new("e").cpu(None);
    assert!(!m("cpu == 0", &no_cpu));
    assert!(!m("cpu != 0", &no_cpu));
}

#[test]
fn globs() {
    let s = Subject::new("sched_switch")
        .context("procname", "bash")
        .trace("/traces/host-1/kernel");
    for (src, expected) in [
        (r#"event.name == "sched_*""#, true),
        (r#"event.name == "*_switch""#, true),
        (r#"event.name == "*ed_sw*""#, true),
        (r#"event.name == "sched_?witch""#, true),
        (r#"event.name == "s*h*""#, true),
        (r#"event.name == "*""#, true),
        (r#"event.name == "sched""#, false),
        (r#"event.name == "irq_*""#, false),
        (r#"event.name == "SCHED_*""#, false),
        (r#"event.name == "sched_????""#, false),
        (r#"event.name != "irq_*""#, true),
        (r#"event.name != "sched_*""#, false),
        (r#""sched_*" == event.name"#, true),
        (r#"event.context.procname == "ba?h""#, true),
        (r#"trace == "*host-1*""#, true),
        (r#"state.name == "b*""#, false), // no state: missing
    ] {
        assert_eq!(m(src, &s), expected, "{src}");
    }
    // Escaped wildcards are literal.
    let star = Subject::new("a*b?");
    assert!(m(r#"name == "a\*b\?""#, &star));
    assert!(!m(r#"name == "a\*b\?""#, &Subject::new("aXbY")));
    assert!(m(r#"name == "a\**""#, &star));
    assert!(!m(r#"name == "a\**""#, &Subject::new("ab")));
    // Ordering comparisons never glob.
    assert!(m(r#"name > "a*""#, &Subject::new("ab")));
}

#[test]
fn regexes() {
    let s = Subject::new("sched_switch").field("prev_comm", "kworker/0:1");
    assert!(m(r#"event.name =~ "^sched_""#, &s));
    assert!(m(r#"event.name =~ "switch""#, &s), "unanchored search");
    assert!(!m(r#"event.name =~ "^switch""#, &s));
    assert!(m(r#"event.field.prev_comm =~ "^kworker/\d+:\d+$""#, &s));
    assert!(!m(r#"event.field.prev_comm =~ "^kworker\.""#, &s));
    assert!(m(r#"event.name =~ "(?i)SCHED""#, &s));
    assert!(m(r#"!(event.name =~ "irq")"#, &s));
}

#[test]
fn nested_paths_and_scopes() {
    let s = Subject::new("e")
        .field("a.b", 1i64)
        .field("arr[2]", 7i64)
        .field("arr[2].x", 8i64)
        .context("vtid", 100i64)
        .packet("cpu_id", 3i64);
    assert!(m("event.field.a.b == 1", &s));
    assert!(!m("event.field.a == 1", &s));
    assert!(m("event.field.arr[2] == 7", &s));
    assert!(!m("event.field.arr[1] == 7", &s));
    assert!(m("event.field.arr[2].x == 8", &s));
    assert!(m("event.context.vtid == 100", &s));
    assert!(!m("event.field.vtid == 100", &s), "scopes are distinct");
    assert!(m("event.packet.cpu_id == 3", &s));
    assert!(!m("event.context.cpu_id == 3", &s));
}

#[test]
fn state_operands() {
    let s = Subject::new("e")
        .field("next_tid", 12i64)
        .with_state(StateKey::Tid, 12i64)
        .with_state(StateKey::Pid, 10i64)
        .with_state(StateKey::Ppid, 1i64)
        .with_state(StateKey::Name, "bash")
        .with_state(StateKey::Mode, "syscall")
        .with_state(StateKey::Status, "RUN")
        .with_state(StateKey::Cpu, 3i64);
    assert!(m("state.tid == 12", &s));
    assert!(m(
        "state.pid == 10 && state.ppid == 1 && state.cpu == 3",
        &s
    ));
    assert!(m(r#"state.name == "bash""#, &s));
    assert!(m(r#"state.mode == "syscall""#, &s));
    assert!(m(r#"state.mode != "user""#, &s));
    assert!(m(r#"state.status == "R*""#, &s));
    assert!(m("event.field.next_tid == state.tid", &s));
    assert!(!m("event.field.next_tid != state.tid", &s));

    let filter = f(r#"state.tid == 1 || state.mode == "irq" || state.tid > 5"#);
    assert!(filter.needs_state());
    assert_eq!(filter.state_keys(), &[StateKey::Tid, StateKey::Mode]);
    assert!(!f("event.field.x == 1").needs_state());
}

#[test]
fn time_and_cpu() {
    let s = Subject::new("e").time(12_500_000_000).cpu(Some(2));
    assert!(m("time == 12500000000", &s));
    assert!(m("event.time >= 12.5s", &s));
    assert!(!m("time > 12.5s", &s));
    assert!(m("time < 12500000001ns", &s));
    assert!(m("cpu == 2 && event.cpu == 2 && stream == 2", &s));
    assert!(m("cpu > 1.5", &s));
    assert!(!m("cpu < 0", &s));
}

#[test]
fn bare_fields_test_truthiness() {
    let s = Subject::new("e")
        .field("t", true)
        .field("f", false)
        .field("one", 1i64)
        .field("zero", 0u64)
        .field("half", 0.5)
        .field("empty", "")
        .field("text", "x");
    for (field, expected) in [
        ("t", true),
        ("f", false),
        ("one", true),
        ("zero", false),
        ("half", true),
        ("empty", false),
        ("text", true),
    ] {
        assert_eq!(m(&format!("event.field.{field}"), &s), expected, "{field}");
        assert_eq!(
            m(&format!("!event.field.{field}"), &s),
            !expected,
            "!{field}"
        );
    }
}

#[test]
fn logic() {
    let s = Subject::new("e").field("a", 1i64);
    assert!(m("true", &s));
    assert!(!m("false", &s));
    assert!(m("!false", &s));
    assert!(m("!!true", &s));
    assert!(m("false || event.field.a == 1", &s));
    assert!(!m("true && event.field.a == 2", &s));
    assert!(m(
        "event.field.a == 2 || event.field.a == 3 || event.field.a == 1",
        &s
    ));
    assert!(!m("event.field.a == 1 && event.field.a == 1 && false", &s));
    // Precedence: && before ||.
    assert!(m("true || false && false", &s));
    assert!(!m("(true || false) && false", &s));
}

#[test]
fn there_is_no_arithmetic() {
    assert!(Filter::new("time < 12500ms + 1").is_err());
    assert!(Filter::new("time < 12500ms -1").is_err());
}

#[test]
fn name_only_decisions() {
    let filter = f(r#"event.name == "sched_*" && cpu == 1"#);
    assert_eq!(filter.name_only_decision("irq_handler_entry"), Some(false));
    assert_eq!(filter.name_only_decision("sched_switch"), None);

    let filter = f(r#"event.name == "irq_*" || event.field.x == 1"#);
    assert_eq!(filter.name_only_decision("irq_handler_entry"), Some(true));
    assert_eq!(filter.name_only_decision("sched_switch"), None);

    let filter = f(r#"name =~ "^syscall_" && !(name == "syscall_exit_*")"#);
    assert_eq!(filter.name_only_decision("syscall_entry_open"), Some(true));
    assert_eq!(filter.name_only_decision("syscall_exit_open"), Some(false));
    assert_eq!(filter.name_only_decision("sched_switch"), Some(false));

    let filter = f(r#"name != "a" && name < "m""#);
    assert_eq!(filter.name_only_decision("b"), Some(true));
    assert_eq!(filter.name_only_decision("a"), Some(false));
    assert_eq!(filter.name_only_decision("z"), Some(false));

    assert_eq!(f("cpu == 1").name_only_decision("x"), None);
    assert_eq!(f("true").name_only_decision("x"), Some(true));
    assert_eq!(f("name == trace").name_only_decision("x"), None);
    assert_eq!(f("!(cpu == 1) || true").name_only_decision("x"), Some(true));
}

#[test]
fn time_bounds() {
    let r = |start, end| Some(TimeRange { start, end });
    assert_eq!(f("time >= 10 && time < 20").time_bounds(), r(10, 19));
    assert_eq!(
        f("time > 10 && event.field.x == 1").time_bounds(),
        r(11, i64::MAX)
    );
    assert_eq!(
        f("time <= 10 || time >= 30").time_bounds(),
        Some(TimeRange::ALL)
    );
    assert_eq!(
        f("(time >= 10 && time <= 20) || (time >= 30 && time <= 40)").time_bounds(),
        r(10, 40)
    );
    assert_eq!(f("time == 5").time_bounds(), r(5, 5));
    assert_eq!(f("time != 5").time_bounds(), Some(TimeRange::ALL));
    assert_eq!(f("5 < time").time_bounds(), r(6, i64::MAX));
    assert_eq!(f("!(time < 10)").time_bounds(), r(10, i64::MAX));
    assert_eq!(f("!(time < 10 || time > 20)").time_bounds(), r(10, 20));
    assert_eq!(
        f("time >= 1s && time < 2s").time_bounds(),
        r(1_000_000_000, 1_999_999_999)
    );
    assert_eq!(f("time > 20 && time < 10").time_bounds(), None);
    assert_eq!(f("time < -9223372036854775808").time_bounds(), None);
    assert_eq!(f("time > 9223372036854775807").time_bounds(), None);
    assert_eq!(
        f("time < 18446744073709551615").time_bounds(),
        Some(TimeRange::ALL)
    );
    assert_eq!(f("time >= 18446744073709551615").time_bounds(), None);
    assert_eq!(f("false").time_bounds(), None);
    assert_eq!(f("cpu == 1").time_bounds(), Some(TimeRange::ALL));
    assert_eq!(
        f("time == event.field.t").time_bounds(),
        Some(TimeRange::ALL)
    );
    assert!(TimeRange { start: 1, end: 2 }.contains(2));
    assert!(!TimeRange { start: 1, end: 2 }.contains(3));
}

#[test]
fn referenced_fields() {
    let filter = f("event.field.b == 1 && event.context.vtid == 2 || event.field.a.x[1] > 0 || event.field.b < 5");
    let fields: Vec<String> = filter.fields().iter().map(ToString::to_string).collect();
    assert_eq!(
        fields,
        ["event.field.a.x[1]", "event.field.b", "event.context.vtid"]
    );
    assert!(filter.needs_scope(FieldScope::Payload));
    assert!(filter.needs_scope(FieldScope::Context));
    assert!(!filter.needs_scope(FieldScope::Packet));
    assert!(f(r#"name == "x""#).fields().is_empty());
}

#[test]
fn display_is_canonical() {
    let filter = f(r#"name=="sched_*"&&(stream==1||!event.field.x)   &&   time>=1.5s"#);
    assert_eq!(
        filter.to_string(),
        r#"event.name == "sched_*" && (event.cpu == 1 || !event.field.x) && event.time >= 1500000000"#
    );
    let again = f(&filter.to_string());
    assert_eq!(again.expr(), filter.expr());
}

#[test]
fn hand_built_trees() {
    let s = Subject::new("e").field("x", 1i64);
    assert!(Filter::from_expr(Expr::And(vec![])).matches(&s));
    assert!(!Filter::from_expr(Expr::Or(vec![])).matches(&s));
    // Constants on both sides (rejected by the parser) still evaluate.
    let two_constants = Expr::Compare {
        lhs: Term::Literal(Literal::Int(1)),
        op: traceloom_filter::CmpOp::Lt,
        rhs: Term::Literal(Literal::Float(1.5)),
    };
    assert!(Filter::from_expr(two_constants).matches(&s));
    // A type mismatch the parser would reject is simply false.
    let mismatch = Expr::Compare {
        lhs: Term::Operand(Operand::Name),
        op: traceloom_filter::CmpOp::Ne,
        rhs: Term::Literal(Literal::Int(1)),
    };
    assert!(!Filter::from_expr(mismatch).matches(&s));
    let glob = Expr::Glob {
        operand: Operand::Field(FieldOperand {
            scope: FieldScope::Payload,
            path: vec![PathElem::Name("x".into())],
        }),
        negated: true,
        pattern: GlobPattern::from_wildcards("*"),
    };
    assert!(
        !Filter::from_expr(glob).matches(&s),
        "non-string value never globs"
    );
}

#[test]
fn dyn_subjects_and_thread_safety() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Filter>();
    let filter = f("cpu == 0");
    let s = Subject::new("e");
    let dyn_subject: &dyn traceloom_filter::FilterSubject = &s;
    assert!(filter.matches(dyn_subject));
    assert!(filter.matches(&&s));
}
