//! The kernel state computed over the bundled kernel traces is coherent.

use std::path::PathBuf;

use traceloom_ctf::{Message, Traceset};
use traceloom_engine::state::{Handlers, ThreadKey, ThreadStatus, TracesetState};

/// Runs the state over a trace, checking at every `sched_switch` that the
/// outgoing thread is the one the state has running on that CPU, and that
/// no thread runs on two CPUs.
fn check_trace(rel: &str) -> usize {
    check_path(traceloom_testdata::ctf(rel), rel)
}

fn check_path(path: PathBuf, rel: &str) -> usize {
    let ts = Traceset::open(&[path]).expect("open");
    let mut state = TracesetState::new(ts.traces().len());
    let mut handlers = Handlers::new();
    let mut cursor = ts.messages();
    let mut switches = 0;
    let mut checked = 0;
    while let Some(msg) = cursor.next() {
        let Ok(Message::Event(ev)) = msg else {
            continue;
        };
        if ev.name() == "sched_switch" {
            switches += 1;
            let cpu = ev.cpu_id().unwrap() as u32;
            let payload = ev.scope(traceloom_tsdl::ir::Scope::EventPayload).unwrap();
            let names: Vec<String> = payload
                .fields()
                .map(|(n, f)| format!("{n}={:?}", f.value()))
                .collect();
            let prev = payload
                .field("prev_tid")
                .or_else(|| payload.field("_prev_tid"))
                .and_then(|f| f.value())
                .and_then(|v| v.as_i64())
                .unwrap_or_else(|| panic!("{rel}: no prev_tid in {names:?}"));
            if let Some(running) = state.current_thread(ev.trace().index, cpu) {
                assert_eq!(
                    running.tid, prev,
                    "{rel}: prev_tid is not the running thread on cpu {cpu}"
                );
                checked += 1;
            }
        }
        state.apply(&mut handlers, &ev);
        // Every CPU's running thread is in status Run and claims that CPU.
        let t = &state.traces[ev.trace().index];
        for (cpu, c) in t.cpus.iter() {
            if let Some(key) = c.running {
                let th = &t.threads[&key];
                assert_eq!(th.cpu, Some(cpu), "{rel}: thread {key:?} cpu");
                if key.tid != 0 {
                    assert!(
                        matches!(th.status, ThreadStatus::Run | ThreadStatus::Exit),
                        "{rel}: running thread {key:?} has status {:?}",
                        th.status
                    );
                }
            }
        }
        let mut running: Vec<ThreadKey> = t.cpus.values().filter_map(|c| c.running).collect();
        running.sort();
        let n = running.len();
        running.dedup();
        assert_eq!(n, running.len(), "{rel}: a thread runs on two CPUs");
    }
    assert!(switches > 0, "{rel}: no sched_switch");
    assert!(
        checked * 10 >= switches * 9,
        "{rel}: too few switches checked ({checked}/{switches})"
    );
    switches
}

#[test]
fn bug446190_state_is_coherent() {
    check_trace("tracecompass/bug446190");
}

#[test]
fn flipping_endianness_state_is_coherent() {
    check_trace("tracecompass/flipping-endianness");
}

#[test]
fn synctraces_state_is_coherent() {
    check_trace("tracecompass/synctraces/scp_src");
    check_trace("tracecompass/synctraces/scp_dest");
}

#[test]
fn sample_kernel_state_is_coherent() {
    check_path(traceloom_testdata::sample_kernel(), "sample-kernel");
}
