//! The analysis store: a round trip gives the in-memory analysis back on
//! every bundled kernel trace and a generated one; damaged, truncated and
//! stale stores are detected and rebuilt; concurrent writers leave one
//! valid store; nothing is written into the trace directory.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use traceloom_base::TimeRange;
use traceloom_testdata::copy_trace;
use traceloom_viewers::model::kernel::ThreadRecord;
use traceloom_viewers::model::{
    ControlFlowModel, KernelAnalysis, KernelData, ResourcesModel, Session,
};
use traceloom_viewers::store::identity::{store_path, TracesetIdentity};
use traceloom_viewers::store::{self, StoreError, StoreOutcome};
use traceloom_viewers::TimeGraphRender;

fn generated(dir: &Path) -> PathBuf {
    generated_with(dir, 0.002)
}

/// A generated trace whose threads fork short-lived processes at
/// `fork_rate`.
fn generated_with(dir: &Path, fork_rate: f64) -> PathBuf {
    let cfg = traceloom_kernelgen::GeneratorConfig {
        events: 60_000,
        seed: 17,
        cpus: 3,
        processes: 5,
        threads_per_process: 3,
        fork_rate,
        overwrite: true,
        ..Default::default()
    };
    let out = dir.join(format!("gen-{fork_rate}"));
    traceloom_kernelgen::generate(&cfg, &out).expect("generate");
    out
}

/// Every file under `dir` with its size and modification time.
fn listing(dir: &Path) -> Vec<(PathBuf, u64, std::time::SystemTime)> {
    let mut out = Vec::new();
    for e in fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let m = e.metadata().unwrap();
        if m.is_dir() {
            out.extend(listing(&e.path()));
        } else {
            out.push((e.path(), m.len(), m.modified().unwrap()));
        }
    }
    out.sort();
    out
}

fn session(paths: &[PathBuf]) -> Session {
    Session::open(paths).unwrap()
}

/// A render as text, in a canonical order (its row index is a hash map).
fn canon(r: &TimeGraphRender) -> String {
    let mut out = format!("{:?}\n{}\n", r.tree().rows(), r.content_hash());
    for k in 0..r.tree().len() {
        out += &format!("{:?}\n{:?}\n", r.states(k), r.events(k));
    }
    out + &format!("{:?}", r.arrow_series())
}

fn check_round_trip(paths: &[PathBuf], cache: &Path) {
    let name = format!("{paths:?}");
    let before: Vec<_> = paths.iter().map(|p| listing(p)).collect();
    let mut s = session(paths);
    let (built, outcome) = store::load_or_build(&mut s, cache);
    assert!(
        matches!(outcome, StoreOutcome::Built(None)),
        "{name}: {outcome:?}"
    );
    // The in-memory analysis of a fresh session, against what the store
    // gives back.
    let fresh = KernelAnalysis::run(&mut session(paths));
    assert_eq!(*built, *fresh, "{name}: analysis not deterministic");
    let (loaded, outcome) = store::load_or_build(&mut session(paths), cache);
    assert!(
        matches!(outcome, StoreOutcome::Loaded { .. }),
        "{name}: {outcome:?}"
    );
    assert!(loaded.events > 0, "{name}: no events");
    assert_eq!(*loaded, *fresh, "{name}: store round trip");
    // Read in place from the map: no change list on the heap.
    assert!(loaded
        .threads
        .iter()
        .all(|t| t.times.is_mapped() && t.blocks.is_mapped()));
    assert_eq!(
        loaded.heap_bytes(),
        loaded.threads.capacity() * std::mem::size_of::<ThreadRecord>()
    );
    // The same renders, full range and a window.
    let (b, e) = fresh.span;
    for (range, width) in [
        (TimeRange::new(b, e), 1920),
        (
            TimeRange::new(b + (e - b) / 3, b + (e - b) / 3 + (e - b) / 50),
            700,
        ),
    ] {
        let cf =
            |d: &Arc<KernelData>| canon(&ControlFlowModel::new(d.clone()).render(range, width));
        let rs = |d: &Arc<KernelData>| canon(&ResourcesModel::new(d.clone()).render(range, width));
        assert!(
            cf(&loaded) == cf(&fresh),
            "{name}: control flow render differs"
        );
        assert!(
            rs(&loaded) == rs(&fresh),
            "{name}: resources render differs"
        );
    }
    assert_eq!(loaded.histogram.total(), loaded.events, "{name}");
    // The summary alone (meta block only) holds the same statistics.
    let id = TracesetIdentity::of(session(paths).traceset());
    let summary = store::load_summary(cache, &id).unwrap();
    assert_eq!(summary.stats, fresh.stats, "{name}");
    assert_eq!(summary.histogram, fresh.histogram, "{name}");
    // Nothing was written next to the traces.
    let after: Vec<_> = paths.iter().map(|p| listing(p)).collect();
    assert_eq!(before, after, "{name}: trace directory changed");
}

#[test]
fn round_trip_equals_the_analysis_on_every_kernel_trace() {
    let cache = tempfile::tempdir().unwrap();
    for paths in traceloom_testdata::kernel_tracesets() {
        check_round_trip(&paths, cache.path());
    }
    let listed = store::list(cache.path()).unwrap();
    assert_eq!(
        listed.len(),
        traceloom_testdata::kernel_tracesets().len(),
        "{listed:?}"
    );
    assert!(listed.iter().all(|e| e.head.is_ok() && e.bytes > 0));
}

#[test]
fn round_trip_equals_the_analysis_on_a_generated_trace() {
    let dir = tempfile::tempdir().unwrap();
    let trace = generated(dir.path());
    check_round_trip(&[trace], &dir.path().join("cache"));
}

/// A pass that moves its finished chunks to a spill file (every 1,000
/// events here, so that the small traces spill many times) gives the
/// in-memory pass's analysis, holds less heap, and leaves no file behind.
/// The trace with many forks has hundreds of records of exited threads,
/// sealed into the spill file as their threads exit (kept on the heap
/// without one).
#[test]
fn a_spilled_pass_equals_the_in_memory_one() {
    let dir = tempfile::tempdir().unwrap();
    let mut traces = traceloom_testdata::kernel_tracesets();
    traces.push(vec![generated(dir.path())]);
    let forks = generated_with(dir.path(), 0.03);
    traces.push(vec![forks.clone()]);
    let spill = dir.path().join("spill");
    for paths in traces {
        let name = format!("{paths:?}");
        let fresh = KernelAnalysis::run(&mut session(&paths));
        let mut s = session(&paths);
        s.set_spill_dir(Some(spill.clone()));
        s.set_spill_every(1000);
        let spilled = KernelAnalysis::run(&mut s);
        assert_eq!(*spilled, *fresh, "{name}");
        if fresh.events > 20_000 {
            assert!(
                spilled.heap_bytes() < fresh.heap_bytes(),
                "{name}: {} bytes of heap, {} without spilling",
                spilled.heap_bytes(),
                fresh.heap_bytes()
            );
        }
        assert_eq!(fs::read_dir(&spill).unwrap().count(), 0, "{name}");
        if paths == [forks.clone()] {
            let exited = fresh.threads.iter().filter(|t| t.end < fresh.span.1);
            assert!(exited.count() > 300, "{name}: too few exited threads");
        }
    }
}

/// Builds the store of `trace` in `cache`; returns its file.
fn built_store(trace: &Path, cache: &Path) -> (PathBuf, Arc<KernelData>) {
    let mut s = session(&[trace.to_path_buf()]);
    let (data, outcome) = store::load_or_build(&mut s, cache);
    assert!(matches!(outcome, StoreOutcome::Built(None)), "{outcome:?}");
    let id = TracesetIdentity::of(s.traceset());
    // What load_or_build gives back reads the store file in place, which
    // the tests then damage: compare with an analysis of its own.
    drop(data);
    (
        store_path(cache, &id),
        KernelAnalysis::run(&mut session(&[trace.to_path_buf()])),
    )
}

/// Opens `trace` again with the store in `cache`, expecting it rebuilt
/// because of `why`; then the rebuilt store loads.
fn expect_rebuilt(trace: &Path, cache: &Path, why: fn(&StoreError) -> bool, data: &KernelData) {
    let (again, outcome) = store::load_or_build(&mut session(&[trace.to_path_buf()]), cache);
    match &outcome {
        StoreOutcome::Rebuilt(e, None) if why(e) => {}
        other => panic!("expected a rebuild: {other:?}"),
    }
    assert!(!outcome.warnings().is_empty());
    assert_eq!(*again, *data);
    let (_, outcome) = store::load_or_build(&mut session(&[trace.to_path_buf()]), cache);
    assert!(
        matches!(outcome, StoreOutcome::Loaded { .. }),
        "{outcome:?}"
    );
}

fn is_damaged(e: &StoreError) -> bool {
    matches!(e, StoreError::Damaged { .. })
}

#[test]
fn a_corrupted_store_is_detected_and_rebuilt() {
    let cache = tempfile::tempdir().unwrap();
    let trace = traceloom_testdata::ctf("tracecompass/bug446190");
    let (path, data) = built_store(&trace, cache.path());
    let good = fs::read(&path).unwrap();
    let id = TracesetIdentity::of(session(std::slice::from_ref(&trace)).traceset());
    // A byte flipped in the columns, in the meta block, in the header.
    for at in [100, good.len() - 10, 20] {
        let mut bad = good.clone();
        bad[at] ^= 0x40;
        fs::write(&path, &bad).unwrap();
        // The summary reads the header and meta block only.
        assert_eq!(
            store::load_summary(cache.path(), &id).is_ok(),
            at == 100,
            "{at}"
        );
        expect_rebuilt(&trace, cache.path(), is_damaged, &data);
    }
}

#[test]
fn a_store_changed_after_its_check_was_recorded_is_checked_again() {
    let cache = tempfile::tempdir().unwrap();
    let trace = traceloom_testdata::ctf("tracecompass/bug446190");
    let (path, data) = built_store(&trace, cache.path());
    let id = TracesetIdentity::of(session(std::slice::from_ref(&trace)).traceset());
    let record = store::verified::path_for(&path);
    // A small store's open checks it (a few ms) and records nothing.
    std::thread::sleep(store::verified::SETTLED + std::time::Duration::from_millis(100));
    store::load(cache.path(), &id).unwrap();
    assert!(!record.exists());
    // Checked once settled and recorded, as `traceloom index` does for a
    // large store: the record holds.
    store::check_and_record(&path, 0).unwrap();
    assert!(record.exists());
    assert_eq!(store::load(cache.path(), &id).unwrap().data, *data);
    // A column byte flipped in place (same inode, same length): the record
    // no longer names the file's state, so the check runs and fails.
    let mut f = fs::File::options().write(true).open(&path).unwrap();
    use std::io::{Seek, SeekFrom, Write};
    let good = fs::read(&path).unwrap();
    f.seek(SeekFrom::Start(100)).unwrap();
    f.write_all(&[good[100] ^ 0x40]).unwrap();
    drop(f);
    assert!(record.exists());
    let err = store::load(cache.path(), &id).unwrap_err();
    assert!(is_damaged(&err), "{err}");
    // `cache clear` takes the record with the store.
    store::clear(cache.path(), None).unwrap();
    assert!(!record.exists() && !path.exists());
}

#[test]
fn an_index_records_the_check_of_a_large_store_it_wrote() {
    let cache = tempfile::tempdir().unwrap();
    let trace = traceloom_testdata::ctf("tracecompass/bug446190");
    let (path, _) = built_store(&trace, cache.path());
    let record = store::verified::path_for(&path);
    let bytes = fs::metadata(&path).unwrap().len();
    // Small stores are checked at each open (a few ms): no record.
    store::check_and_record(&path, bytes + 1).unwrap();
    assert!(!record.exists());
    // Otherwise the check waits for the store to settle, then holds.
    store::check_and_record(&path, bytes).unwrap();
    assert!(record.exists());
}

#[test]
fn a_truncated_store_is_detected_and_rebuilt() {
    let cache = tempfile::tempdir().unwrap();
    let trace = traceloom_testdata::ctf("tracecompass/bug446190");
    let (path, data) = built_store(&trace, cache.path());
    let good = fs::read(&path).unwrap();
    for len in [good.len() - 1, good.len() / 2, 10, 0] {
        fs::write(&path, &good[..len]).unwrap();
        expect_rebuilt(&trace, cache.path(), is_damaged, &data);
    }
}

#[test]
fn a_stale_store_is_not_used() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let trace = copy_trace(&traceloom_testdata::sample_kernel(), dir.path());
    let (_, data) = built_store(&trace, &cache);
    // A stream file touched: same bytes, another modification time.
    let stream = fs::read_dir(&trace)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.is_file() && p.file_name().unwrap() != "metadata")
        .expect("a stream file");
    let f = fs::File::options().write(true).open(&stream).unwrap();
    f.set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(5))
        .unwrap();
    drop(f);
    let stale = |e: &StoreError| matches!(e, StoreError::Stale { .. });
    let id = TracesetIdentity::of(session(std::slice::from_ref(&trace)).traceset());
    assert!(matches!(
        store::load(&cache, &id),
        Err(StoreError::Stale { .. })
    ));
    expect_rebuilt(&trace, &cache, stale, &data);
}

#[test]
fn concurrent_writers_leave_one_valid_store() {
    let cache = tempfile::tempdir().unwrap();
    let trace = traceloom_testdata::ctf("tracecompass/bug446190");
    let mut s = session(std::slice::from_ref(&trace));
    let data = KernelAnalysis::run(&mut s);
    let id = TracesetIdentity::of(s.traceset());
    // Writers of the same store at once, and readers meanwhile: every
    // read sees a complete store or none.
    std::thread::scope(|scope| {
        for _ in 0..6 {
            scope.spawn(|| {
                for _ in 0..5 {
                    store::save(cache.path(), &id, &data).unwrap();
                }
            });
        }
        scope.spawn(|| {
            for _ in 0..50 {
                match store::load(cache.path(), &id) {
                    Ok(l) => assert_eq!(l.data, *data),
                    Err(StoreError::Missing(_)) => {}
                    Err(e) => panic!("a reader saw a partial store: {e}"),
                }
            }
        });
    });
    let files: Vec<_> = fs::read_dir(cache.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(files.len(), 1, "temporary files left: {files:?}");
    assert_eq!(store::load(cache.path(), &id).unwrap().data, *data);
}

#[test]
fn clear_removes_the_stores_of_a_path_or_all() {
    let cache = tempfile::tempdir().unwrap();
    let a = traceloom_testdata::ctf("tracecompass/bug446190");
    let b = traceloom_testdata::ctf("tracecompass/flipping-endianness");
    built_store(&a, cache.path());
    built_store(&b, cache.path());
    fs::write(cache.path().join("other.checkpoints"), b"x").unwrap();
    let removed = store::clear(cache.path(), Some(&a)).unwrap();
    assert_eq!(removed.len(), 1);
    let left = store::list(cache.path()).unwrap();
    assert_eq!(left.len(), 1);
    assert!(left[0].head.as_ref().unwrap().identity.is_under(&b));
    assert_eq!(store::clear(cache.path(), None).unwrap().len(), 1);
    assert!(store::list(cache.path()).unwrap().is_empty());
    assert!(cache.path().join("other.checkpoints").exists());
}

#[test]
fn a_read_only_trace_directory_works() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let trace = copy_trace(
        &traceloom_testdata::ctf("tracecompass/flipping-endianness"),
        dir.path(),
    );
    let set_mode = |mode: u32| {
        for (p, _, _) in listing(&trace) {
            fs::set_permissions(&p, fs::Permissions::from_mode(mode & 0o444)).unwrap();
        }
        fs::set_permissions(&trace, fs::Permissions::from_mode(mode)).unwrap();
    };
    set_mode(0o555);
    let before = listing(&trace);
    let cache = dir.path().join("cache");
    let (_, outcome) = store::load_or_build(&mut session(std::slice::from_ref(&trace)), &cache);
    let (_, again) = store::load_or_build(&mut session(std::slice::from_ref(&trace)), &cache);
    let after = listing(&trace);
    set_mode(0o755);
    assert!(matches!(outcome, StoreOutcome::Built(None)), "{outcome:?}");
    assert!(matches!(again, StoreOutcome::Loaded { .. }), "{again:?}");
    assert_eq!(before, after);
}

/// Set in the child processes of [`concurrent_processes_leave_one_valid_store`]:
/// the cache directory to write to.
const CHILD_CACHE: &str = "TRACELOOM_STORE_TEST_CHILD_CACHE";

/// A writer process of [`concurrent_processes_leave_one_valid_store`]
/// (does nothing when run on its own).
#[test]
fn child_writer() {
    let Some(cache) = std::env::var_os(CHILD_CACHE) else {
        return;
    };
    let trace = traceloom_testdata::ctf("tracecompass/bug446190");
    let mut s = session(std::slice::from_ref(&trace));
    let data = KernelAnalysis::run(&mut s);
    let id = TracesetIdentity::of(s.traceset());
    for _ in 0..20 {
        store::save(Path::new(&cache), &id, &data).unwrap();
    }
}

#[test]
fn concurrent_processes_leave_one_valid_store() {
    let cache = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = (0..3)
        .map(|_| {
            std::process::Command::new(&exe)
                .args(["--exact", "child_writer", "--test-threads", "1"])
                .env(CHILD_CACHE, cache.path())
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    // This process reads (and writes) meanwhile.
    let trace = traceloom_testdata::ctf("tracecompass/bug446190");
    let mut s = session(std::slice::from_ref(&trace));
    let data = KernelAnalysis::run(&mut s);
    let id = TracesetIdentity::of(s.traceset());
    for k in 0..40 {
        if k % 4 == 0 {
            store::save(cache.path(), &id, &data).unwrap();
        }
        match store::load(cache.path(), &id) {
            Ok(l) => assert_eq!(l.data, *data),
            Err(StoreError::Missing(_)) => {}
            Err(e) => panic!("a reader saw a partial store: {e}"),
        }
    }
    for mut c in children {
        assert!(c.wait().unwrap().success(), "a writer process failed");
    }
    let files: Vec<_> = fs::read_dir(cache.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(files.len(), 1, "temporary files left: {files:?}");
    assert_eq!(store::load(cache.path(), &id).unwrap().data, *data);
}

/// A store built from a damaged stream records the damage its pass met
/// (file, byte offset, message), so that what is shown from it later, with
/// nothing read, still says what is missing.
#[test]
fn a_store_records_the_damage_its_pass_met() {
    let tmp = tempfile::tempdir().unwrap();
    let trace = copy_trace(
        &traceloom_testdata::ctf("tracecompass/bug446190"),
        tmp.path(),
    );
    // Damage in the middle of a packet: met by a full read only, not by
    // opening the trace (which frames packets through its index).
    let stream = trace.join("channel0_1");
    let mut bytes = fs::read(&stream).unwrap();
    let at = bytes.len() / 2 + 1000;
    bytes[at..at + 64].fill(0xFF);
    fs::write(&stream, &bytes).unwrap();
    let paths = [trace.clone()];
    assert!(session(&paths).errors().is_empty());
    let cache = tmp.path().join("cache");
    let (_, built) = built_store(&trace, &cache);
    assert_eq!(built.damage.len(), 1, "{:?}", built.damage);
    let d = &built.damage[0];
    assert_eq!(d.path, stream.display().to_string());
    let offset = d.offset.expect("a byte offset");
    assert!(offset.abs_diff(at as u64) < 64, "{offset}");
    assert!(
        d.message.contains(&d.path) && d.message.contains("byte offset"),
        "{}",
        d.message
    );

    let (loaded, outcome) = store::load_or_build(&mut session(&paths), &cache);
    assert!(
        matches!(outcome, StoreOutcome::Loaded { .. }),
        "{outcome:?}"
    );
    assert_eq!(loaded.damage, built.damage);
    // This session read nothing: only the store knows.
    assert!(loaded.events > 0 && session(&paths).errors().is_empty());
    let id = TracesetIdentity::of(session(&paths).traceset());
    let summary = store::load_summary(&cache, &id).unwrap();
    assert_eq!(summary.damage, built.damage);

    // An undamaged trace's store records none.
    let (_, clean) = built_store(
        &traceloom_testdata::ctf("tracecompass/bug446190"),
        &tmp.path().join("cache2"),
    );
    assert!(clean.damage.is_empty());
}
