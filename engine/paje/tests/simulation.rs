//! Simulation semantics on small hand-written traces.

use traceloom_paje::{
    ContainerId, LoadOptions, Model, PjDumpOptions, Severity, Trace, TypeId, ROOT_CONTAINER,
};

const HEADER: &str = "\
%EventDef PajeDefineContainerType 0
% Alias string
% Type string
% Name string
%EndEventDef
%EventDef PajeDefineStateType 1
% Alias string
% Type string
% Name string
%EndEventDef
%EventDef PajeDefineVariableType 2
% Alias string
% Type string
% Name string
%EndEventDef
%EventDef PajeDefineLinkType 3
% Alias string
% Type string
% StartContainerType string
% EndContainerType string
% Name string
%EndEventDef
%EventDef PajeCreateContainer 4
% Time date
% Alias string
% Type string
% Container string
% Name string
%EndEventDef
%EventDef PajeDestroyContainer 5
% Time date
% Type string
% Name string
%EndEventDef
%EventDef PajePushState 6
% Time date
% Container string
% Type string
% Value string
%EndEventDef
%EventDef PajePopState 7
% Time date
% Container string
% Type string
%EndEventDef
%EventDef PajeSetState 8
% Time date
% Container string
% Type string
% Value string
%EndEventDef
%EventDef PajeResetState 9
% Time date
% Container string
% Type string
%EndEventDef
%EventDef PajeSetVariable 10
% Time date
% Container string
% Type string
% Value double
%EndEventDef
%EventDef PajeAddVariable 11
% Time date
% Container string
% Type string
% Value double
%EndEventDef
%EventDef PajeSubVariable 12
% Time date
% Container string
% Type string
% Value double
%EndEventDef
%EventDef PajeStartLink 13
% Time date
% Container string
% Type string
% StartContainer string
% Value string
% Key string
%EndEventDef
%EventDef PajeEndLink 14
% Time date
% Container string
% Type string
% EndContainer string
% Value string
% Key string
%EndEventDef
%EventDef PajeDefineEventType 15
% Alias string
% Type string
% Name string
%EndEventDef
%EventDef PajeNewEvent 16
% Time date
% Container string
% Type string
% Value string
%EndEventDef
0 P 0 Process
1 S P State
2 V P Var
3 L 0 P P Msg
15 E P Ev
4 0 p1 P 0 first
4 0 p2 P 0 second
";

fn load(body: &str) -> Trace {
    Trace::from_bytes(
        "t.trace",
        format!("{HEADER}{body}").into_bytes(),
        &LoadOptions::default(),
    )
}

fn ids(m: &Model, cont: &str, ty: &str) -> (ContainerId, TypeId) {
    (
        m.container_by_ident(cont.as_bytes()).unwrap(),
        m.type_by_ident(ty.as_bytes()).unwrap(),
    )
}

fn value_name(m: &Model, v: traceloom_paje::ValueId) -> String {
    String::from_utf8_lossy(&m.value(v).name).into_owned()
}

/// Line number of the first body line.
fn body_line(i: u64) -> u64 {
    HEADER.lines().count() as u64 + i
}

#[test]
fn push_pop_nest_and_set_replaces_the_stack() {
    let t = load(
        "6 1 p1 S a\n6 2 p1 S b\n6 3 p1 S c\n7 4 p1 S\n7 5 p1 S\n8 6 p1 S d\n6 7 p1 S e\n9 8 p1 S\n6 9 p1 S f\n",
    );
    assert!(t.diagnostics.is_empty(), "{:?}", t.diagnostics.items());
    let (c, s) = ids(&t.model, "p1", "S");
    let got: Vec<(f64, f64, u32, String)> = t
        .entities
        .states(c, s)
        .iter()
        .map(|x| (x.start, x.end, x.imbrication, value_name(&t.model, x.value)))
        .collect();
    let want: Vec<(f64, f64, u32, String)> = [
        (1.0, 6.0, 0, "a"),
        (2.0, 5.0, 1, "b"),
        (3.0, 4.0, 2, "c"),
        (6.0, 8.0, 0, "d"),
        (7.0, 8.0, 1, "e"),
        // Still open at the end of the trace: ended at the last time.
        (9.0, 9.0, 0, "f"),
    ]
    .iter()
    .map(|(a, b, i, v)| (*a, *b, *i, v.to_string()))
    .collect();
    assert_eq!(got, want);
}

#[test]
fn pop_of_empty_stack_is_reported_and_skipped() {
    let t = load("7 1 p1 S\n6 2 p1 S a\n");
    let errors: Vec<_> = t
        .diagnostics
        .items()
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .collect();
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].location.line, body_line(1));
    assert!(errors[0].message.contains("PajePopState"), "{}", errors[0]);
    let (c, s) = ids(&t.model, "p1", "S");
    assert_eq!(t.entities.states(c, s).len(), 1);
}

#[test]
fn links_match_by_key_even_when_the_end_comes_first() {
    let t = load("14 1 0 L p2 m k1\n13 2 0 L p1 m k2\n13 3 0 L p2 m k1\n14 4 0 L p1 m k2\n");
    assert!(t.diagnostics.is_empty(), "{:?}", t.diagnostics.items());
    let (_, l) = ids(&t.model, "p1", "L");
    let links = t.entities.links(ROOT_CONTAINER, l);
    let name = |c: Option<ContainerId>| {
        String::from_utf8_lossy(&t.model.container(c.unwrap()).name).into_owned()
    };
    let got: Vec<(f64, f64, String, String, String)> = links
        .iter()
        .map(|k| {
            (
                k.start,
                k.end,
                name(k.start_container),
                name(k.end_container),
                String::from_utf8_lossy(t.entities.link_key(k)).into_owned(),
            )
        })
        .collect();
    // In completion order, as pj_dump lists them.
    assert_eq!(
        got,
        [
            (3.0, 1.0, "second".into(), "second".into(), "k1".into()),
            (2.0, 4.0, "first".into(), "first".into(), "k2".into()),
        ]
    );
}

#[test]
fn unmatched_and_reused_link_keys_are_reported() {
    let t = load("13 1 0 L p1 m k1\n14 2 0 L p2 m k1\n13 3 0 L p1 m k1\n13 4 0 L p1 m lonely\n");
    let msgs: Vec<(u64, &str)> = t
        .diagnostics
        .items()
        .iter()
        .map(|d| (d.location.line, d.message.as_str()))
        .collect();
    assert_eq!(msgs.len(), 2, "{msgs:?}");
    assert_eq!(msgs[0].0, body_line(3));
    assert!(msgs[0].1.contains("already used"));
    assert_eq!(msgs[1].0, body_line(4));
    assert!(msgs[1].1.contains("lonely"));
}

#[test]
fn variables_are_piecewise_constant() {
    let t = load("10 1 p1 V 10\n11 2 p1 V 5\n11 2 p1 V 1\n12 3 p1 V 0.5\n10 4 p1 V 2\n5 6 P p1\n");
    assert!(t.diagnostics.is_empty(), "{:?}", t.diagnostics.items());
    let (c, v) = ids(&t.model, "p1", "V");
    let got: Vec<(f64, f64, f64)> = t
        .entities
        .variables(c, v)
        .iter()
        .map(|x| (x.start, x.end, x.value))
        .collect();
    assert_eq!(
        got,
        [
            (1.0, 2.0, 10.0),
            (2.0, 3.0, 16.0),
            (3.0, 4.0, 15.5),
            (4.0, 6.0, 2.0)
        ]
    );
    // Values are read in single precision, as pj_dump does.
    let t = load("10 1 p1 V 0.1\n");
    let (c, v) = ids(&t.model, "p1", "V");
    assert_eq!(t.entities.variables(c, v)[0].value, f64::from(0.1f32));
}

#[test]
fn add_before_set_and_time_going_back_are_reported() {
    let t = load("11 1 p1 V 5\n10 2 p1 V 1\n10 1.5 p1 V 3\n10 3 p1 V 4\n");
    let lines: Vec<u64> = t
        .diagnostics
        .items()
        .iter()
        .map(|d| d.location.line)
        .collect();
    assert_eq!(lines, [body_line(1), body_line(3)]);
    let (c, v) = ids(&t.model, "p1", "V");
    let got: Vec<f64> = t.entities.variables(c, v).iter().map(|x| x.value).collect();
    assert_eq!(got, [1.0, 4.0]);
}

#[test]
fn destroying_a_container_ends_its_entities_and_ignores_later_events() {
    let t = load("6 1 p1 S a\n10 1 p1 V 3\n5 2 P p1\n6 3 p1 S b\n16 4 p2 E x\n");
    assert!(t.diagnostics.is_empty(), "{:?}", t.diagnostics.items());
    let (c, s) = ids(&t.model, "p1", "S");
    let states = t.entities.states(c, s);
    assert_eq!(states.len(), 1);
    assert_eq!((states[0].start, states[0].end), (1.0, 2.0));
    let p1 = t.model.container(c);
    assert!(p1.destroyed);
    assert_eq!((p1.start, p1.end), (0.0, 2.0));
    // p2 lives until the last event.
    let p2 = t
        .model
        .container(t.model.container_by_ident(b"p2").unwrap());
    assert_eq!(p2.end, 4.0);
}

#[test]
fn unknown_names_are_reported_with_file_and_line() {
    let t = load("6 1 nobody S a\n6 1 p1 Nope a\n99 1 2 3\n");
    let d = t.diagnostics.items();
    assert_eq!(d.len(), 3);
    for (i, x) in d.iter().enumerate() {
        assert_eq!(x.location.line, body_line(i as u64 + 1));
        assert_eq!(&*x.location.file, std::path::Path::new("t.trace"));
        assert!(x.location.byte_offset > 0);
    }
    assert!(d[0].message.contains("nobody"));
    assert!(d[1].message.contains("Nope"));
    assert!(d[2].message.contains("'99'"));
}

#[test]
fn dump_of_a_small_trace() {
    let t = load("6 1 p1 S a\n7 2 p1 S\n13 2 0 L p1 m k\n14 3 0 L p2 m k\n16 3 p2 E x\n");
    let mut out = Vec::new();
    t.write_pj_dump(&PjDumpOptions::default(), &mut out)
        .unwrap();
    let text = String::from_utf8(out).unwrap();
    assert_eq!(
        text,
        "Container, 0, 0, 0, 3, 3, 0\n\
         Link, 0, Msg, 2.000000, 3.000000, 1.000000, m, first, second, k\n\
         Container, 0, Process, 0, 3, 3, second\n\
         Event, second, Ev, 3.000000, x\n\
         Container, 0, Process, 0, 3, 3, first\n\
         State, first, State, 1.000000, 2.000000, 1.000000, 0.000000, a\n"
    );
}

#[test]
fn multi_file_traces_merge_event_files_by_time() {
    let dir = std::env::temp_dir().join(format!("traceloom-paje-multi-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let header = HEADER.replace(
        "15 E P Ev\n",
        "15 E P Ev\n%EventDef PajeTraceFile 17\n% Container string\n% Type string\n% Filename string\n%EndEventDef\n",
    );
    std::fs::write(
        dir.join("root.trace"),
        format!("{header}17 p1 P p1.trace\n17 p2 P sub/p2.trace\n17 0 0 root.trace\n17 p3 P missing.trace\n"),
    )
    .unwrap();
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::fs::write(
        dir.join("p1.trace"),
        "6 1 p1 S a\n13 2 0 L p1 m k\n7 5 p1 S\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("sub/p2.trace"),
        "14 1.5 0 L p2 m k\n6 3 p2 S b\n7 4 p2 S\n",
    )
    .unwrap();
    let t = Trace::open(dir.join("root.trace")).unwrap();
    let _ = std::fs::remove_dir_all(&dir);

    assert_eq!(t.files.len(), 3);
    let d: Vec<(Severity, String)> = t
        .diagnostics
        .items()
        .iter()
        .map(|d| (d.severity, d.message.clone()))
        .collect();
    assert_eq!(d.len(), 2, "{d:?}");
    assert!(d[0].0 == Severity::Warning && d[0].1.contains("definition file itself"));
    assert!(d[1].0 == Severity::Error && d[1].1.contains("missing.trace"));
    let (c1, s) = ids(&t.model, "p1", "S");
    let (c2, _) = ids(&t.model, "p2", "S");
    assert_eq!(t.entities.states(c1, s)[0].end, 5.0);
    assert_eq!(t.entities.states(c2, s)[0].start, 3.0);
    // The link's end (file 2, t=1.5) came before its start (file 1, t=2).
    let (_, l) = ids(&t.model, "p1", "L");
    let link = t.entities.links(ROOT_CONTAINER, l)[0];
    assert_eq!((link.start, link.end), (2.0, 1.5));
    assert_eq!(t.model.container(ROOT_CONTAINER).end, 5.0);
    assert_eq!(t.indexes.len(), 3);
}
