//! The kernel pass in parallel parts gives exactly what the single pass
//! gives, on every bundled kernel trace and on generated ones (thread
//! creation, TID reuse and wake-ups pending across the part boundaries).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use traceloom_engine::checkpoint::{self, Checkpoints};
use traceloom_engine::request::Budget;
use traceloom_viewers::model::kernel::{KernelCollector, KernelData};
use traceloom_viewers::model::parallel_pass::{TailPart, TailSplit};
use traceloom_viewers::model::steps::BlockSummary;
use traceloom_viewers::model::{checkpoint_pass, parallel_pass, KernelAnalysis, Session};

fn generated(dir: &Path, seed: u64, fork_rate: f64) -> PathBuf {
    let cfg = traceloom_kernelgen::GeneratorConfig {
        events: 80_000,
        seed,
        cpus: 3,
        processes: 6,
        threads_per_process: 3,
        fork_rate,
        overwrite: true,
        ..Default::default()
    };
    let out = dir.join(format!("gen-{seed}"));
    traceloom_kernelgen::generate(&cfg, &out).expect("generate");
    out
}

/// Field by field, so that a failure says where the two differ.
fn assert_same(single: &KernelData, parallel: &KernelData, what: &str) {
    assert_eq!(single.span, parallel.span, "{what}: span");
    assert_eq!(single.events, parallel.events, "{what}: events");
    assert_eq!(
        single.threads.len(),
        parallel.threads.len(),
        "{what}: thread records"
    );
    for (k, (a, b)) in single.threads.iter().zip(&parallel.threads).enumerate() {
        assert_eq!(a, b, "{what}: thread record {k} (TID {})", a.tid);
    }
    // The join may list more changes of a CPU row explicit than the
    // single pass (`cpu_row`): the rows read through them are the same.
    assert!(
        cpu_rows(single) == cpu_rows(parallel),
        "{what}: CPU records"
    );
    assert_eq!(
        single.lines, parallel.lines,
        "{what}: IRQ and softirq records"
    );
    assert_eq!(single.switches, parallel.switches, "{what}: CPU hand-offs");
    assert_eq!(single.wakeups, parallel.wakeups, "{what}: wake-ups");
    assert_eq!(
        single.max_wakeup_span, parallel.max_wakeup_span,
        "{what}: longest wake-up"
    );
    assert_eq!(
        single.wakeup_events, parallel.wakeup_events,
        "{what}: wake-up events"
    );
    assert_eq!(single.histogram, parallel.histogram, "{what}: histogram");
    assert_eq!(single.stats, parallel.stats, "{what}: statistics");
    assert_eq!(single.damage, parallel.damage, "{what}: damage");
    let without_cpus = |d: &KernelData| KernelData {
        cpus: Vec::new(),
        ..d.clone()
    };
    assert_eq!(without_cpus(single), without_cpus(parallel), "{what}");
}

/// Each CPU record's trace and CPU, every change of its row, and the
/// row's summary.
type CpuRow = (u32, u32, Vec<(i64, u32, u8)>, Vec<BlockSummary>);

fn cpu_rows(d: &KernelData) -> Vec<CpuRow> {
    d.cpus
        .iter()
        .map(|c| {
            let row = c.row(&d.threads);
            let changes = (0..row.len()).map(|k| row.at(k)).collect();
            (c.trace, c.cpu, changes, c.blocks.to_vec())
        })
        .collect()
}

/// Checkpoint by checkpoint (rank, position, state), then the seek index.
fn assert_same_checkpoints(want: &Checkpoints, found: &Checkpoints, what: &str) {
    for (a, b) in found.states.iter().zip(&want.states) {
        assert_eq!(
            (a.rank, a.position),
            (b.rank, b.position),
            "{what}: checkpoint"
        );
        assert!(a.state == b.state, "{what}: state at rank {}", a.rank);
    }
    assert_eq!(found.states.len(), want.states.len(), "{what}: checkpoints");
    assert_eq!(found.seek_index, want.seek_index, "{what}: seek index");
    assert!(found == want, "{what}: checkpoints");
}

fn check(paths: &[PathBuf]) {
    let what = format!("{paths:?}");
    let mut session = Session::open(paths).expect("open");
    let single: Arc<KernelData> = KernelAnalysis::run(&mut session);
    assert!(single.events > 0, "{what}: no event read");
    // Checkpoints every 200 events: boundaries fall everywhere, also
    // between events of one instant.
    let checkpoints = checkpoint::build(session.traceset().clone(), 200);
    assert!(
        !checkpoints.states.is_empty(),
        "{what}: no checkpoint to split at"
    );
    for parts in [2, 3, 7] {
        let mut session = Session::open(paths).expect("open");
        let mut reported = 0;
        let parallel =
            parallel_pass::analyse(&mut session, &checkpoints, parts, &mut |n, _| reported = n);
        assert_same(&single, &parallel, &format!("{what} in {parts} parts"));
        assert!(reported <= single.events, "{what}: progress past the end");
    }
    // Split where a checkpoint pass reading ahead finds the parts' starts;
    // it stops at the last part's start, and that part makes the rest of
    // the checkpoints and of the seek index: together, those of a
    // checkpoint pass alone.
    for parts in [2, 4] {
        let mut session = Session::open(paths).expect("open");
        // The parts and the join move their full chunks to spill files.
        let spill = tempfile::tempdir().expect("tempdir");
        session.set_spill_dir(Some(spill.path().to_path_buf()));
        session.set_spill_every(500);
        let (parallel, found) =
            parallel_pass::analyse_cold(&mut session, parts, 200, &mut |_, _| {});
        assert_same(
            &single,
            &parallel,
            &format!("{what} in {parts} parts, cold"),
        );
        assert_same_checkpoints(
            &checkpoints,
            &found,
            &format!("{what} in {parts} parts, cold"),
        );
    }
    // As the window runs it: the head a request of its scheduler, which
    // has read a little when the tail starts on a thread of its own from
    // a checkpoint (near the start, the middle, the end).
    let m = checkpoints.states.len();
    for k in [1, m / 2, m - 1] {
        let mut session = Session::open(paths).expect("open");
        let spill = tempfile::tempdir().expect("tempdir");
        session.set_spill_dir(Some(spill.path().to_path_buf()));
        session.set_spill_every(500);
        let owner = session.new_owner();
        let req = KernelAnalysis::request(&mut session, owner);
        let id = session.add(req);
        session.scheduler().set_chunk_events(50);
        session.service(Budget::events(100), || false);
        let c = &checkpoints.states[k];
        assert!(
            session.scheduler().set_end_position(id, c.position),
            "{what}: the head read past checkpoint {k} (rank {}, {:?}; head at {:?})",
            c.rank,
            c.position,
            session.scheduler().request(id).map(|r| r.start.clone())
        );
        // Paused while the head reads, as the window does while the
        // user's requests are read.
        let tail = TailPart::start(
            &session,
            c.position,
            c.state.clone(),
            TailSplit::one(),
            true,
            || {},
        )
        .expect("tail");
        let control = tail.control();
        while !session.is_complete(id) {
            session.service(Budget::events(1000), || false);
        }
        // It stops after the chunk under way: from the first checkpoint,
        // long before its end.
        let waited = std::time::Instant::now();
        while !control.is_waiting() && !control.is_finished() {
            assert!(
                waited.elapsed().as_secs() < 60,
                "{what}: the tail never paused"
            );
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        if k == 1 {
            assert!(control.is_waiting(), "{what}: the tail did not pause");
            let (read, _) = control.progress();
            std::thread::sleep(std::time::Duration::from_millis(10));
            assert_eq!(
                control.progress().0,
                read,
                "{what}: the tail read while paused"
            );
        }
        control.set_paused(false);
        let head = session.take::<KernelCollector>(id).expect("the head");
        let joined = tail.join(head, None).expect("joined");
        assert!(control.is_finished() && !control.failed());
        assert_eq!(
            control.progress().0 + c.rank,
            single.events,
            "{what}: tail's events"
        );
        assert_same(
            &single,
            &joined,
            &format!("{what}, tail from checkpoint {k}"),
        );
    }
    // As the window runs it cold: the checkpoint pass reads ahead on its
    // own thread, and at the split hands its build over to the tail,
    // which carries it on; the window sees one pass's checkpoints, each
    // once, and the whole set with the seek index at the end. The pass
    // is asked before it reads (its thread waits for `go`), so that it
    // cannot be over first, however small the trace.
    // With more cores, the tail reads in parts itself: a splitter carries
    // the build on and hands it over to the last part.
    for (k, parts) in [
        (1, 1),
        (m / 2, 1),
        (m - 1, 1),
        (1, 3),
        (m / 3, 2),
        (m - 1, 3),
    ] {
        let mut session = Session::open(paths).expect("open");
        let spill = tempfile::tempdir().expect("tempdir");
        session.set_spill_dir(Some(spill.path().to_path_buf()));
        session.set_spill_every(500);
        let (go, wait) = std::sync::mpsc::channel::<()>();
        let mut ahead =
            checkpoint_pass::CheckpointsAhead::start(session.traceset(), 200, move || {
                let _ = wait.recv();
            })
            .expect("the checkpoint pass");
        let owner = session.new_owner();
        let req = KernelAnalysis::request(&mut session, owner);
        let id = session.add(req);
        let c = &checkpoints.states[k];
        assert!(session.scheduler().set_end_position(id, c.position));
        let handover = ahead.hand_over(c.position);
        go.send(()).expect("the checkpoint pass waits");
        let tail = TailPart::start(
            &session,
            c.position,
            c.state.clone(),
            TailSplit::Carrying(handover, parts),
            false,
            || {},
        )
        .expect("tail");
        let control = tail.control();
        assert_eq!(control.in_parts(), parts > 1);
        while !session.is_complete(id) {
            session.service(Budget::events(1000), || false);
        }
        let head = session.take::<KernelCollector>(id).expect("the head");
        let joined = tail.join(head, None).expect("joined");
        let what = format!("{what}, tail in {parts} parts carrying from {k}");
        assert_same(&single, &joined, &what);
        assert_eq!(
            control.span_read(),
            single.span.1 - c.position.time,
            "{what}: the time read"
        );
        let what = format!("{what}, checkpoints handed over");
        assert!(control.carries_checkpoints(), "{what}: not handed over");
        let mut seen = Vec::new();
        let mut done = None;
        while !ahead.is_over() {
            let (new, d) = ahead.poll();
            seen.extend(new);
            done = done.or(d);
        }
        let done = done.expect("the whole set");
        assert_same_checkpoints(&checkpoints, &done, &what);
        let positions: Vec<_> = seen.iter().map(|(p, _)| *p).collect();
        let want: Vec<_> = checkpoints.states.iter().map(|c| c.position).collect();
        assert_eq!(positions, want, "{what}: checkpoints as they came");
        for ((_, s), c) in seen.iter().zip(&checkpoints.states) {
            assert!(*s == c.state, "{what}: state at rank {}", c.rank);
        }
    }
    // The tail in parts at checkpoints known at once (a cache's), each
    // part on a thread of its own.
    for splits in [
        vec![m / 4, m / 2, 3 * m / 4],
        vec![1, 2],
        vec![m / 2, m - 1],
    ] {
        let mut session = Session::open(paths).expect("open");
        let owner = session.new_owner();
        let req = KernelAnalysis::request(&mut session, owner);
        let id = session.add(req);
        let c = &checkpoints.states[splits[0]];
        assert!(session.scheduler().set_end_position(id, c.position));
        let later = splits[1..]
            .iter()
            .map(|&i| {
                let c = &checkpoints.states[i];
                (c.position, c.state.clone())
            })
            .collect();
        let tail = TailPart::start(
            &session,
            c.position,
            c.state.clone(),
            TailSplit::At(later),
            false,
            || {},
        )
        .expect("tail");
        let control = tail.control();
        assert!(control.in_parts());
        assert!(!control.end_at(checkpoints.states[m - 1].position));
        while !session.is_complete(id) {
            session.service(Budget::events(1000), || false);
        }
        let head = session.take::<KernelCollector>(id).expect("the head");
        let joined = tail.join(head, None).expect("joined");
        assert_eq!(control.progress().0 + c.rank, single.events);
        assert_same(
            &single,
            &joined,
            &format!("{what}, tail split at {splits:?}"),
        );
    }
    // The tail ended early, at a later checkpoint, and what follows read
    // on the session's scheduler once the head is done (the window does
    // so when the head ends first).
    if m >= 4 {
        let (k1, k2) = (m / 4, 3 * m / 4);
        let mut session = Session::open(paths).expect("open");
        let owner = session.new_owner();
        let req = KernelAnalysis::request(&mut session, owner);
        let id = session.add(req);
        let (c1, c2) = (&checkpoints.states[k1], &checkpoints.states[k2]);
        assert!(session.scheduler().set_end_position(id, c1.position));
        // Paused from its start: it ends at c2, which it has not passed.
        let tail = TailPart::start(
            &session,
            c1.position,
            c1.state.clone(),
            TailSplit::one(),
            true,
            || {},
        )
        .expect("tail");
        let control = tail.control();
        assert!(control.end_at(c2.position), "{what}: ended twice");
        assert!(!control.end_at(c2.position), "{what}: ended twice");
        while !session.is_complete(id) {
            session.service(Budget::events(1000), || false);
        }
        let head = session.take::<KernelCollector>(id).expect("the head");
        session
            .scheduler()
            .add_checkpoints([(c2.position, c2.state.clone())]);
        let req = TailPart::after_request(&mut session, owner, c2.position);
        let id = session.add(req);
        control.set_paused(false);
        while !session.is_complete(id) {
            session.service(Budget::events(1000), || false);
        }
        let after = session.take::<KernelCollector>(id).expect("what follows");
        let joined = tail.join(head, Some(after)).expect("joined");
        assert!(!control.failed());
        assert_same(&single, &joined, &format!("{what}, tail from {k1} to {k2}"));
    }
    // As `traceloom index` runs it (a checkpoint every so many events, as
    // the cache keeps them): the checkpoints of the single pass joined to
    // a checkpoint pass.
    let mut session = Session::open(paths).expect("open");
    let (_, want) = checkpoint_pass::analyse_with_checkpoints(&mut session, |_, _| {});
    for parts in [2, 4] {
        let mut session = Session::open(paths).expect("open");
        let mut found = None;
        let parallel = checkpoint_pass::analyse_in_parts(
            &mut session,
            None,
            parts,
            &mut |_, _| {},
            &mut |c| found = Some(c),
        );
        let found = found.expect("the checkpoints");
        let what = format!("{what} in {parts} parts, cold, as indexed");
        assert_same(&single, &parallel, &what);
        assert_same_checkpoints(&want, &found, &what);
    }
}

#[test]
fn parallel_pass_equals_single_pass_on_bundled_traces() {
    for paths in traceloom_testdata::kernel_tracesets() {
        check(&paths);
    }
}

#[test]
fn parallel_pass_equals_single_pass_on_generated_traces() {
    let dir = tempfile::tempdir().expect("tempdir");
    for (seed, fork_rate) in [(3, 0.0), (17, 0.002), (29, 0.02)] {
        check(&[generated(dir.path(), seed, fork_rate)]);
    }
}

/// A tail that meets a damaged stream gives up, and its join gives
/// nothing: the window then reads the pass again in one part, whose
/// damage bookkeeping follows the streams across the trace.
#[test]
fn a_tail_meeting_damage_gives_up() {
    // The sample kernel trace, a packet of one stream damaged past the
    // middle (as `no_data.rs` does it, met by a read, not at open).
    let dir = tempfile::tempdir().expect("tempdir");
    let trace = traceloom_testdata::copy_trace(&traceloom_testdata::sample_kernel(), dir.path());
    let checkpoints = checkpoint::build(
        Session::open(std::slice::from_ref(&trace))
            .expect("open")
            .traceset()
            .clone(),
        200,
    );
    let stream = trace.join("channel0_1");
    let mut bytes = std::fs::read(&stream).expect("read the stream");
    let at = bytes.len() / 2 + 1000;
    bytes[at..at + 64].fill(0xFF);
    std::fs::write(&stream, &bytes).expect("damage the stream");

    let mut session = Session::open(std::slice::from_ref(&trace)).expect("open");
    let owner = session.new_owner();
    let req = KernelAnalysis::request(&mut session, owner);
    let id = session.add(req);
    let c = &checkpoints.states[checkpoints.states.len() / 4];
    assert!(session.scheduler().set_end_position(id, c.position));
    let tail = TailPart::start(
        &session,
        c.position,
        c.state.clone(),
        TailSplit::one(),
        false,
        || {},
    )
    .expect("tail");
    let control = tail.control();
    while !session.is_complete(id) {
        session.service(Budget::events(1000), || false);
    }
    assert!(session.errors().is_empty(), "the head met the damage");
    let head = session.take::<KernelCollector>(id).expect("the head");
    assert!(tail.join(head, None).is_none(), "a damaged tail was joined");
    assert!(control.is_finished() && control.failed());
}

#[test]
fn split_points_spread_the_checkpoints() {
    let paths = [traceloom_testdata::sample_kernel()];
    let session = Session::open(&paths).expect("open");
    let checkpoints = checkpoint::build(session.traceset().clone(), 1000);
    let m = checkpoints.states.len();
    assert!(m >= 8, "the sample trace gives {m} checkpoints");
    let at = parallel_pass::split_at(&checkpoints, 4);
    assert_eq!(at.len(), 3);
    assert!(at.windows(2).all(|w| w[0].0 < w[1].0));
    assert!(parallel_pass::split_at(&checkpoints, 1).is_empty());
    assert_eq!(parallel_pass::split_at(&checkpoints, 10 * m).len(), m);
}

/// The window's checkpoint pass on its own thread hands over, a few at a
/// time, exactly the checkpoints a checkpoint pass run alone makes.
#[test]
fn checkpoints_ahead_arrive_as_made_and_equal_a_pass_alone() {
    use traceloom_viewers::model::checkpoint_pass::CheckpointsAhead;
    let tmp = tempfile::tempdir().expect("temporary directory");
    let paths = vec![generated(tmp.path(), 5, 0.01)];
    let session = Session::open(&paths).expect("open");
    let alone = checkpoint::build(session.traceset().clone(), 500);
    let mut ahead = CheckpointsAhead::start(session.traceset(), 500, || {}).expect("thread");
    let (mut got, mut polls_with_some, mut done) = (Vec::new(), 0, None);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while !ahead.is_over() {
        assert!(std::time::Instant::now() < deadline, "the pass never ended");
        let (new, d) = ahead.poll();
        polls_with_some += usize::from(!new.is_empty());
        got.extend(new);
        if d.is_some() {
            done = d;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    let done = done.expect("the pass completed");
    assert!(
        alone.states.len() > 10,
        "{} checkpoints",
        alone.states.len()
    );
    assert_eq!(done, alone);
    let want: Vec<_> = alone
        .states
        .iter()
        .map(|c| (c.position, c.state.clone()))
        .collect();
    assert!(
        got == want,
        "{} checkpoints handed over, {} made",
        got.len(),
        want.len()
    );
    assert_eq!(ahead.reached(), want.last().map(|c| c.0.time));
    println!("{} checkpoints in {polls_with_some} polls", got.len());
}

/// A checkpoint pass from a checkpoint up to a time (the window's way to
/// a zoom ahead of a tail carrying the checkpoint pass on) makes the
/// checkpoints the whole pass makes there, and ends with the first at
/// that time or after.
#[test]
fn checkpoints_read_up_to_a_time_equal_those_of_the_whole_pass() {
    use traceloom_viewers::model::checkpoint_pass::CheckpointsAhead;
    let tmp = tempfile::tempdir().expect("temporary directory");
    let paths = vec![generated(tmp.path(), 7, 0.01)];
    let session = Session::open(&paths).expect("open");
    let alone = checkpoint::build(session.traceset().clone(), 500);
    let m = alone.states.len();
    assert!(m > 20, "{m} checkpoints");
    let (from, to) = (&alone.states[m / 3], &alone.states[m / 3 + 6]);
    // Just past a checkpoint's time: the next one ends it.
    let until = to.position.time - 1;
    let mut reader = CheckpointsAhead::start_until(
        session.traceset(),
        500,
        (from.position, from.state.clone()),
        until,
        || {},
    )
    .expect("thread");
    let mut got = Vec::new();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while !reader.is_over() {
        assert!(std::time::Instant::now() < deadline, "the pass never ended");
        let (new, done) = reader.poll();
        assert!(done.is_none(), "a bounded pass makes no whole set");
        got.extend(new);
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    let want: Vec<_> = alone.states[m / 3..=m / 3 + 6]
        .iter()
        .map(|c| (c.position, c.state.clone()))
        .collect();
    let positions = |v: &[(traceloom_engine::source::CtfPosition, _)]| {
        v.iter().map(|c| c.0).collect::<Vec<_>>()
    };
    assert_eq!(positions(&got), positions(&want));
    assert!(got == want, "the states differ");
    assert_eq!(reader.reached(), Some(to.position.time));
}
