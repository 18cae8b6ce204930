//! The kernel models on real and generated traces: statistics against
//! plain counting, CPU time adding up, control-flow intervals tiling each
//! thread's life, wake-up arrows joining a `sched_wakeup` to the next run,
//! CPU rows agreeing with the rows of the threads they run.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;
use traceloom_base::TimeRange;

use traceloom_ctf::{Message, Traceset};
use traceloom_engine::state::{CpuMode, ThreadStatus};
use traceloom_tsdl::ir::Scope;
use traceloom_viewers::model::cpu_row::{CpuRecord, CpuRow};
use traceloom_viewers::model::kernel::{
    decode_thread_code, KernelAnalysis, KernelCollector, KernelData, ThreadRecord, NO_THREAD,
};
use traceloom_viewers::model::pack::BLOCK;
use traceloom_viewers::model::stats::{range_request, StatNode, Statistics, EVENT_TYPES};
use traceloom_viewers::model::steps::{blocks_of, Times, NO_CLASS};
use traceloom_viewers::model::{ControlFlowModel, HistogramModel, ResourcesModel, Session};
use traceloom_viewers::style::control_flow as cf;
use traceloom_viewers::{DataConfig, StatRow, StatValue, StatisticsRender};

fn shared(rel: &str) -> PathBuf {
    traceloom_testdata::ctf(rel)
}

fn kernel_traces() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = [
        "tracecompass/bug446190",
        "tracecompass/flipping-endianness",
        "tracecompass/synctraces/scp_src",
    ]
    .iter()
    .map(|r| shared(r))
    .collect();
    v.push(traceloom_testdata::sample_kernel());
    v
}

fn generated(dir: &std::path::Path, events: u64, seed: u64) -> PathBuf {
    generated_forking(dir, events, seed, 0.002)
}

/// A generated trace whose threads fork short-lived processes at
/// `fork_rate`.
fn generated_forking(dir: &std::path::Path, events: u64, seed: u64, fork_rate: f64) -> PathBuf {
    let cfg = traceloom_kernelgen::GeneratorConfig {
        events,
        seed,
        cpus: 3,
        processes: 6,
        threads_per_process: 3,
        fork_rate,
        overwrite: true,
        ..Default::default()
    };
    let out = dir.join(format!("gen{seed}-{fork_rate}"));
    traceloom_kernelgen::generate(&cfg, &out).expect("generate");
    out
}

/// Event names counted by plain reading (what `traceloom count` does).
fn plain_counts(path: &PathBuf) -> BTreeMap<String, u64> {
    let ts = Traceset::open(std::slice::from_ref(path)).unwrap();
    let mut m = BTreeMap::new();
    let mut c = ts.messages();
    while let Some(msg) = c.next() {
        if let Ok(Message::Event(e)) = msg {
            *m.entry(e.name().to_string()).or_insert(0) += 1;
        }
    }
    m
}

/// (time, tid) of every `sched_wakeup`/`sched_wakeup_new`.
fn wakeups(path: &PathBuf) -> HashSet<(i64, i64)> {
    let ts = Traceset::open(std::slice::from_ref(path)).unwrap();
    let mut s = HashSet::new();
    let mut c = ts.messages();
    while let Some(msg) = c.next() {
        if let Ok(Message::Event(e)) = msg {
            if e.name() == "sched_wakeup" || e.name() == "sched_wakeup_new" {
                let tid = e
                    .scope(Scope::EventPayload)
                    .and_then(|p| p.field("tid"))
                    .and_then(|f| f.value())
                    .and_then(|v| v.as_i64())
                    .unwrap();
                s.insert((e.timestamp_ns().unwrap(), tid));
            }
        }
    }
    s
}

fn analyze(path: &PathBuf) -> (Session, Arc<KernelData>) {
    let mut session = Session::open(std::slice::from_ref(path)).unwrap();
    let data = KernelAnalysis::run(&mut session);
    (session, data)
}

/// [`analyze`], with the pass's last snapshot too, its CPU rows recorded
/// whole ([`KernelCollector::keep_whole_cpu_rows`]).
fn analyze_keeping_whole_rows(path: &PathBuf) -> (Session, Arc<KernelData>, KernelData) {
    let mut session = Session::open(std::slice::from_ref(path)).unwrap();
    let owner = session.new_owner();
    let req = KernelAnalysis::request(&mut session, owner);
    let id = session.add(req);
    session
        .peek::<KernelCollector>(id)
        .expect("added")
        .keep_whole_cpu_rows();
    while !session.is_complete(id) {
        session.service(traceloom_engine::request::Budget::events(1 << 20), || false);
    }
    let mut collector = session.take::<KernelCollector>(id).expect("complete");
    let whole = collector.snapshot();
    (session, Arc::new(collector.into_data()), whole)
}

/// Every change of CPU record `c`'s row, read in place.
fn cpu_changes(c: &CpuRecord, threads: &[Arc<ThreadRecord>]) -> Vec<(i64, u32, u8)> {
    let row = c.row(threads);
    (0..row.len()).map(|k| row.at(k)).collect()
}

/// The analysis' CPU records list only the changes their threads' rows
/// do not imply (`cpu_row`), and give back, read in place, the rows the
/// pass recorded: each change, the changes up to a time, the summaries.
fn cpu_rows_listed_explicit(whole: &KernelData, data: &KernelData, name: &str) {
    assert_eq!(whole.cpus.len(), data.cpus.len(), "{name}");
    let (mut all, mut listed) = (0, 0);
    for (w, c) in whole.cpus.iter().zip(&data.cpus) {
        assert!(w.implied.is_none() && c.implied.is_some(), "{name}");
        let want = cpu_changes(w, &whole.threads);
        assert_eq!(want.len(), w.times.len(), "{name}");
        let got = cpu_changes(c, &data.threads);
        assert!(got == want, "{name}: CPU {} not given back", c.cpu);
        assert_eq!(c.blocks, w.blocks, "{name}: CPU {}", c.cpu);
        let row = c.row(&data.threads);
        // Read through in order, from anywhere.
        for from in [
            0,
            1,
            want.len() / 3,
            want.len().saturating_sub(1),
            want.len(),
        ] {
            let mut through = Vec::new();
            c.row(&data.threads)
                .for_each_from(from, |x| through.push(x));
            assert!(
                through[..] == want[from.min(want.len())..],
                "{name}: CPU {} read through from {from}",
                c.cpu
            );
            // With fewer readers than threads: replaced as they are met,
            // the least recently used (up to 64) or each in turn (more).
            for readers in [1, 2, 65] {
                let mut through = Vec::new();
                CpuRow::scanning(c, &data.threads, readers)
                    .for_each_from(from, |x| through.push(x));
                assert!(
                    through[..] == want[from.min(want.len())..],
                    "{name}: CPU {} read through from {from} with {readers} readers",
                    c.cpu
                );
            }
        }
        let step = (want.len() / 500).max(1);
        for k in (0..want.len()).step_by(step) {
            let t = want[k].0;
            for t in [t - 1, t, t + 1] {
                assert_eq!(
                    row.count_until(t),
                    want.partition_point(|x| x.0 <= t),
                    "{name}: CPU {} until {t}",
                    c.cpu
                );
            }
        }
        all += want.len();
        listed += c.times.len();
    }
    assert!(listed < all, "{name}: every CPU change listed");
    eprintln!("{name}: CPU rows list {listed} of their {all} changes");
}

fn check_trace(path: &PathBuf) {
    let name = path.display().to_string();
    let (mut session, data, whole) = analyze_keeping_whole_rows(path);
    cpu_rows_listed_explicit(&whole, &data, &name);
    // 1. Statistics counts equal plain counts.
    let counts = plain_counts(path);
    assert_eq!(data.stats.per_name, counts, "{name}");
    assert_eq!(
        data.stats.total_events,
        counts.values().sum::<u64>(),
        "{name}"
    );
    let tree = data.stats.tree();
    assert_eq!(tree.events, data.stats.total_events);
    check_render_is_the_tree(&data.stats, &name);
    // 2. Per CPU, the time of all threads and modes adds up to the duration.
    let duration = data.stats.duration();
    assert!(duration > 0, "{name}");
    assert!(!data.stats.cpus().is_empty(), "{name}");
    for (trace, cpu) in data.stats.cpus() {
        assert_eq!(
            data.stats.cpu_time(trace, cpu),
            duration,
            "{name} cpu {cpu}"
        );
    }
    // 3. Thread records: increasing change times within the life, and the
    //    rendered intervals tile the life without overlap.
    // The summaries built while recording (with same-instant pops) equal
    // summaries computed afresh from the final change lists.
    for t in &data.threads {
        let codes = t.codes.to_vec();
        let fresh = blocks_of(&t.times.to_vec(), |k| codes[k]);
        assert_eq!(t.blocks.to_vec(), fresh.to_vec(), "{name}: {}", t.tid);
    }
    for c in &whole.cpus {
        let (threads, modes) = (c.threads.to_vec(), c.modes.to_vec());
        let fresh = blocks_of(&c.times.to_vec(), |k| {
            if threads[k] == NO_THREAD && modes[k] == 6 {
                NO_CLASS
            } else {
                modes[k]
            }
        });
        assert_eq!(c.blocks.to_vec(), fresh.to_vec(), "{name}: CPU {}", c.cpu);
    }
    for l in &data.lines {
        let codes = l.codes.to_vec();
        let fresh = blocks_of(&l.times.to_vec(), |k| {
            if codes[k] == 0 {
                NO_CLASS
            } else {
                codes[k]
            }
        });
        assert_eq!(
            l.blocks.to_vec(),
            fresh.to_vec(),
            "{name}: line {}",
            l.number
        );
    }
    // With or without the summaries, the full-range render draws every
    // interval of a pixel or more exactly (the summaries only change how
    // dense stretches are merged, see `steps`).
    let model = ControlFlowModel::new(data.clone());
    let mut bare = (*data).clone();
    for t in &mut bare.threads {
        Arc::make_mut(t).blocks = Default::default();
    }
    let bare_model = ControlFlowModel::new(Arc::new(bare));
    let (with, without) = (
        model.render(model.full_range(), 1920),
        bare_model.render(model.full_range(), 1920),
    );
    let scale = with.scale();
    let mut mixed = 0;
    for i in 0..with.tree().len() {
        let (a, b) = (with.states(i), without.states(i));
        mixed += a.iter().filter(|x| x.is_mixed()).count();
        for y in b
            .iter()
            .filter(|y| !y.is_mixed() && scale.at_least_one_pixel(y.end.abs_diff(y.start)))
        {
            assert!(a.contains(y), "{name}: row {i}: {y:?} lost");
        }
    }
    assert!(mixed > 0 || data.events < 10_000, "{name}: nothing merged");
    for t in &data.threads {
        assert!(!t.times.is_empty(), "{name}: {} has no state", t.tid);
        assert_eq!(t.times.at(0), t.birth, "{name}: {}", t.tid);
        assert!(
            t.times.to_vec().windows(2).all(|w| w[0] < w[1]),
            "{name}: {}",
            t.tid
        );
        assert!(
            t.codes.to_vec().windows(2).all(|w| w[0] != w[1]),
            "{name}: {}",
            t.tid
        );
        assert!(t.times.last().unwrap() <= t.end);
    }
    let full = model.full_range();
    for width in [1920u32, 50_000] {
        let r = model.render(full, width);
        assert_eq!(r.tree().len(), data.threads.len());
        for (i, row) in r.tree().rows().iter().enumerate() {
            let t = model.thread(row.id).unwrap();
            let iv = r.states(i);
            if t.end <= t.birth {
                continue;
            }
            assert!(!iv.is_empty(), "{name}: {}", row.label);
            assert_eq!(iv[0].start, t.birth, "{name}: {}", row.label);
            assert_eq!(iv.last().unwrap().end, t.end, "{name}: {}", row.label);
            for w in iv.windows(2) {
                assert_eq!(w[0].end, w[1].start, "{name}: {} overlap or gap", row.label);
            }
        }
    }
    // A zoomed window gives exact intervals.
    let mid = full.start + (full.end - full.start) / 2;
    let win = TimeRange::new(mid, mid + 1_000_000);
    let r = model.render(win, 1920);
    for (i, row) in r.tree().rows().iter().enumerate() {
        let t = model.thread(row.id).unwrap();
        for iv in r.states(i).iter().filter(|iv| !iv.is_mixed()) {
            let k = t.times.partition_point(|&x| x <= iv.start) - 1;
            assert_eq!(t.times.at(k), iv.start);
            let (s, m) = decode_thread_code(t.codes.at(k));
            assert_eq!(iv.state.as_str(), cf::thread_state_key(t.tid, s, m));
        }
    }
    // 4. Wake-up arrows join a sched_wakeup to the wakee's next run.
    let known = wakeups(path);
    assert_eq!(data.wakeup_events.0, known.len() as u64, "{name}");
    let arrivals: Vec<_> = data.wakeups.iter().map(|a| a.to_time).collect();
    assert!(
        arrivals.windows(2).all(|w| w[0] <= w[1]),
        "{name}: wake-ups not sorted by arrival"
    );
    for a in data.wakeups.iter() {
        assert!(a.to_time - a.from_time <= data.max_wakeup_span);
        let wakee = &data.threads[a.to as usize];
        assert!(
            known.contains(&(a.from_time, wakee.tid)),
            "{name}: arrow {a:?}"
        );
        assert!(a.to_time >= a.from_time);
        let k = wakee
            .times
            .to_vec()
            .binary_search(&a.to_time)
            .expect("a change at the arrival");
        assert_eq!(decode_thread_code(wakee.codes.at(k)).0, ThreadStatus::Run);
        // No earlier start of a run after the wake-up.
        for j in wakee.times.partition_point(|&x| x <= a.from_time)..k {
            let run = decode_thread_code(wakee.codes.at(j)).0 == ThreadStatus::Run;
            let was = j > 0 && decode_thread_code(wakee.codes.at(j - 1)).0 == ThreadStatus::Run;
            assert!(
                !run || was,
                "{name}: {a:?} skips a run at {}",
                wakee.times.at(j)
            );
        }
    }
    // Render with arrows: both series present when the trace has them.
    let r = model.render(full, 1920);
    let series: HashMap<&str, usize> = r
        .arrow_series()
        .iter()
        .map(|s| (s.name.as_str(), s.arrows.len()))
        .collect();
    if !data.wakeups.is_empty() {
        assert!(
            series.get(cf::ARROWS_WAKEUP).copied().unwrap_or(0) > 0,
            "{name}"
        );
    }
    // At 40 px a series draws 10 arrows at most: with 640 or more in the
    // range, each one drawn is the first of a packed block (read without
    // decoding it) and stands for a multiple of a block.
    let narrow = model.render(full, 40);
    for s in narrow.arrow_series() {
        let all = if s.name.as_str() == cf::ARROWS_CPU {
            &data.switches
        } else {
            &data.wakeups
        };
        if all.len() < 640 {
            continue;
        }
        let firsts: HashSet<(i64, i64)> = (0..all.len())
            .step_by(BLOCK)
            .map(|k| {
                let a = all.at(k);
                (a.from_time, a.to_time)
            })
            .collect();
        assert!(!s.arrows.is_empty() && s.arrows.len() <= 10, "{name}");
        for a in s.arrows.iter() {
            assert!(
                firsts.contains(&(a.from.time, a.to.time)),
                "{name}: {} arrow {a:?} is no block's first",
                s.name
            );
            assert!(
                a.count as usize >= BLOCK && (a.count as usize).is_multiple_of(BLOCK),
                "{name}: {a:?}"
            );
        }
    }
    cpu_rows_agree_with_thread_rows(&data, &name);
    // Resources: every CPU row has intervals, none overlapping.
    let res = ResourcesModel::new(data.clone());
    let rr = res.render(full, 1920);
    assert!(rr.tree().len() >= data.cpus.len());
    for i in 0..rr.tree().len() {
        for w in rr.states(i).windows(2) {
            assert!(w[0].end <= w[1].start);
        }
    }
    // Range statistics at HIGH priority: CPU times add up to the range.
    let (b, e) = (
        full.start + (full.end - full.start) / 4,
        full.start + (full.end - full.start) / 2,
    );
    let owner = session.new_owner();
    let id = session.add(range_request(owner, b, e, data.trace_names.clone()));
    let st: traceloom_viewers::model::Statistics = session.wait(id).unwrap();
    assert_eq!((st.begin, st.end), (b, e));
    for (trace, cpu) in st.cpus() {
        assert_eq!(
            st.cpu_time(trace, cpu),
            (e - b) as u64,
            "{name} range cpu {cpu}"
        );
    }
    // Histogram of the full range: every event in a bin.
    let mut h = HistogramModel::new();
    let hr = h.compute(&mut session, full, 400);
    assert_eq!(
        hr.bins().iter().sum::<u64>(),
        data.stats.total_events,
        "{name}"
    );
}

/// The resources view and the control flow agree: from each change of a
/// CPU row on, the thread it runs is running in the mode the CPU shows
/// (the idle thread's user mode being the CPU's idle), and changes mode
/// only where the CPU row changes. The one exception: a thread that has
/// exited shows so at once, while its CPU goes on in its exit path (in
/// the system call) until the next switch.
fn cpu_rows_agree_with_thread_rows(data: &KernelData, name: &str) {
    let mut checked = 0u64;
    // Each thread's change list, decoded once.
    let mut lists: HashMap<u32, (Vec<i64>, Vec<u8>)> = HashMap::new();
    for c in &data.cpus {
        let changes = cpu_changes(c, &data.threads);
        let times: Vec<i64> = changes.iter().map(|x| x.0).collect();
        let threads: Vec<u32> = changes.iter().map(|x| x.1).collect();
        let modes: Vec<u8> = changes.iter().map(|x| x.2).collect();
        for k in 0..times.len() {
            let r = threads[k];
            if r == NO_THREAD {
                continue;
            }
            let th = &data.threads[r as usize];
            let (tt, tc) = lists
                .entry(r)
                .or_insert_with(|| (th.times.to_vec(), th.codes.to_vec()));
            let shown = traceloom_viewers::model::kernel::CPU_MODES[modes[k] as usize];
            let agrees = |code: u8| match decode_thread_code(code) {
                (ThreadStatus::Run, mode) => CpuMode::of(mode, th.tid) == shown,
                (ThreadStatus::Exit, _) => true,
                _ => false,
            };
            let from = tt.partition_point(|&x| x <= times[k]);
            assert!(
                from > 0 && agrees(tc[from - 1]),
                "{name}: CPU {} shows {shown:?} at {} with thread {} [{}] in {:?}",
                c.cpu,
                times[k],
                th.name,
                th.tid,
                tc.get(from.wrapping_sub(1)).map(|&x| decode_thread_code(x))
            );
            let end = times.get(k + 1).copied().unwrap_or(i64::MAX);
            let to = tt.partition_point(|&x| x < end);
            for i in from..to {
                assert!(
                    agrees(tc[i]),
                    "{name}: CPU {} shows {shown:?} from {} to {end}, thread {} [{}] changes to {:?} at {}",
                    c.cpu,
                    times[k],
                    th.name,
                    th.tid,
                    decode_thread_code(tc[i]),
                    tt[i]
                );
            }
            checked += 1;
        }
    }
    assert!(checked > 0, "{name}: no CPU ran a known thread");
}

/// The statistics table is the summary by event name (most frequent
/// first), then the tree, node by node in depth-first order.
fn check_render_is_the_tree(stats: &Statistics, name: &str) {
    fn walk(n: &StatNode, depth: u16, out: &mut Vec<StatRow>) {
        out.push(StatRow {
            depth,
            label: n.label.clone(),
            values: vec![
                StatValue::Count(n.events),
                n.cpu_time
                    .map_or(StatValue::Empty, |t| StatValue::Duration(t as i64)),
            ],
        });
        for c in &n.children {
            walk(c, depth + 1, out);
        }
    }
    let mut names: Vec<(&String, &u64)> = stats.per_name.iter().collect();
    names.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    let mut want = vec![StatRow {
        depth: 0,
        label: EVENT_TYPES.into(),
        values: vec![StatValue::Count(stats.total_events), StatValue::Empty],
    }];
    for (n, k) in names {
        want.push(StatRow {
            depth: 1,
            label: n.clone(),
            values: vec![StatValue::Count(*k), StatValue::Empty],
        });
    }
    walk(&stats.tree(), 0, &mut want);
    let got = stats.render();
    assert_eq!(got.row_count(), want.len(), "{name}");
    let want = StatisticsRender::from_rows(got.name_title.clone(), got.columns.to_vec(), want);
    assert!(got == want, "{name}: the statistics table is not the tree");
}

#[test]
fn shared_kernel_traces() {
    // Each path exists: `traceloom_testdata` panics otherwise.
    for p in kernel_traces() {
        check_trace(&p);
    }
}

#[test]
fn generated_kernel_traces() {
    let dir = tempfile::tempdir().unwrap();
    for seed in [1, 2] {
        let p = generated(dir.path(), 60_000, seed);
        check_trace(&p);
    }
    // Hundreds of short-lived processes: more threads run on each CPU
    // than a read through its row keeps readers of.
    check_trace(&generated_forking(dir.path(), 60_000, 3, 0.05));
}

#[test]
fn tree_groups_flattens_and_sorts() {
    let p = shared("tracecompass/bug446190");
    let (_s, data) = analyze(&p);
    let mut model = ControlFlowModel::new(data.clone());
    let tree = model.tree().clone();
    assert!(tree.rows().iter().all(|r| r.depth <= 1));

    // Tooltips of state intervals name the thread (from its row), its
    // status (and mode when running) and the interval's times.
    let render = model.render(model.full_range(), 800);
    let config = traceloom_viewers::style::PresentationConfig::control_flow();
    let (mut checked, mut with_status) = (0, 0);
    for (row, r) in tree.rows().iter().enumerate() {
        let t = model.thread(r.id).unwrap();
        for index in 0..render.states(row).len().min(3) {
            let item = traceloom_viewers::draw::HitItem::Interval { row, index };
            let tip = traceloom_viewers::draw::tooltip(&render, &config, &item, Default::default());
            let get = |k: &str| tip.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
            assert_eq!(get("tid"), Some(t.tid.to_string()), "{tip:?}");
            assert_eq!(get("pid"), Some(t.pid.to_string()), "{tip:?}");
            assert_eq!(get("ppid"), Some(t.ppid.to_string()), "{tip:?}");
            assert_eq!(get("name").as_deref(), Some(&*t.name), "{tip:?}");
            // The birth is a time, shown as the other times are.
            assert_eq!(
                get("birth"),
                Some(traceloom_viewers::time::format_absolute(
                    t.birth,
                    Default::default(),
                    9
                )),
                "{tip:?}"
            );
            assert!(
                get("Start").is_some() && get("Duration").is_some(),
                "{tip:?}"
            );
            // (Intervals summarised by the level of detail say their state
            // in the "State" line only.)
            if let Some(status) = get("status") {
                assert_eq!(
                    get("mode").is_some(),
                    status == ThreadStatus::Run.name(),
                    "{tip:?}"
                );
                with_status += 1;
            }
            checked += 1;
        }
    }
    assert!(checked > 10 && with_status > 10, "{checked} {with_status}");
    for r in tree.rows() {
        let t = model.thread(r.id).unwrap();
        assert!(r.label.ends_with(&format!("[{}]", t.tid)));
        if let Some(parent) = r.parent {
            let p = model.thread(parent).unwrap();
            assert_eq!(p.tid, t.pid);
        }
    }
    model.set_config(DataConfig {
        flatten: true,
        order: traceloom_viewers::style::TreeOrder::Id,
        ..Default::default()
    });
    let tids: Vec<i64> = model
        .tree()
        .rows()
        .iter()
        .map(|r| model.thread(r.id).unwrap().tid)
        .collect();
    assert!(tids.windows(2).all(|w| w[0] <= w[1]));
    assert!(model.tree().rows().iter().all(|r| r.depth == 0));
    let mut off = DataConfig::default();
    off.arrows_off.insert(cf::ARROWS_WAKEUP.into());
    off.arrows_off.insert(cf::ARROWS_CPU.into());
    model.set_config(off);
    let r = model.render(model.full_range(), 800);
    assert!(r.arrow_series().is_empty());
}

/// The rows filter, "hide idle", the CPU-time order, and the idle
/// threads drawn as idle, as the control flow's toolbar asks for them.
#[test]
fn rows_filter_hide_idle_and_cpu_time_order() {
    let p = shared("tracecompass/bug446190");
    let (_s, data) = analyze(&p);
    let model = ControlFlowModel::new(data.clone());
    let range = model.full_range();
    let all = model.render(range, 800);
    let thread_of = |r: &traceloom_viewers::render::TreeRow| model.thread(r.id).unwrap();

    // The idle threads (TID 0) run only as "idle" (or interrupted).
    let mut idle_rows = 0;
    for (i, r) in all.tree().rows().iter().enumerate() {
        if thread_of(r).tid == 0 {
            idle_rows += 1;
            for iv in all.states(i).iter() {
                assert!(
                    ![cf::RUN_USER, cf::RUN_SYSCALL, cf::RUN_UNKNOWN].contains(&iv.state.as_str()),
                    "{:?} on {}",
                    iv.state,
                    r.label
                );
            }
        }
    }
    assert!(idle_rows > 0);

    // A name filter keeps the matching threads and their processes only.
    let name = all
        .tree()
        .rows()
        .iter()
        .find(|r| r.depth == 1)
        .map(|r| thread_of(r).name.to_string())
        .expect("a thread under a process");
    let config = DataConfig {
        row_filter: name.to_uppercase(),
        ..Default::default()
    };
    let filtered = model.render_with(&config, range, 800);
    assert!(!filtered.tree().is_empty() && filtered.tree().len() < all.tree().len());
    for r in filtered.tree().rows() {
        let t = thread_of(r);
        let below: Vec<_> = filtered
            .tree()
            .rows()
            .iter()
            .filter(|c| c.parent == Some(r.id))
            .collect();
        assert!(
            t.name.to_lowercase().contains(&name.to_lowercase()) || !below.is_empty(),
            "{} shown for filter {name:?}",
            r.label
        );
    }
    // By TID, as a regex.
    let tid = thread_of(&all.tree().rows()[3]).tid;
    let config = DataConfig {
        row_filter: format!("^{tid}$"),
        flatten: true,
        ..Default::default()
    };
    let by_tid = model.render_with(&config, range, 800);
    assert!(by_tid.tree().rows().iter().any(|r| thread_of(r).tid == tid));
    assert!(by_tid
        .tree()
        .rows()
        .iter()
        .all(|r| thread_of(r).tid == tid || thread_of(r).pid == tid));

    // CPU time order (flattened): non-increasing, and it is what the CPUs ran.
    let cpu = model.cpu_time(range);
    let config = DataConfig {
        flatten: true,
        order: traceloom_viewers::style::TreeOrder::Weight,
        hide_idle: true,
        ..Default::default()
    };
    let busy = model.render_with(&config, range, 800);
    let weights: Vec<u64> = busy
        .tree()
        .rows()
        .iter()
        .map(|r| cpu.get(&r.id).copied().unwrap_or(0))
        .collect();
    assert!(!weights.is_empty());
    assert!(weights.windows(2).all(|w| w[0] >= w[1]), "{weights:?}");
    assert!(
        weights.iter().all(|&w| w > 0),
        "hide idle keeps running threads only"
    );
    assert!(busy.tree().rows().iter().all(|r| thread_of(r).tid != 0));
    let total: u64 = cpu.values().sum();
    let span = (range.end - range.start) as u64;
    let cpus = data.cpus.len() as u64;
    assert!(
        total > 0 && total <= span * cpus,
        "{total} over {cpus} CPUs × {span}"
    );
}

/// Statistics computed in parts split at checkpoints, on threads, and
/// merged, against the single pass (and, over the whole trace, the kernel
/// pass's): equal, CPU time at the part boundaries included.
fn check_parallel_statistics(paths: &[PathBuf]) {
    use traceloom_engine::checkpoint;
    use traceloom_viewers::model::stats::{ParallelConfig, StatisticsTask};
    use traceloom_viewers::model::Statistics;

    let name = format!("{paths:?}");
    let ts = Arc::new(Traceset::open(paths).unwrap());
    let mut session = Session::new(ts.clone());
    let data = KernelAnalysis::run(&mut Session::new(ts.clone()));
    // Dense checkpoints, so that the small traces split in many parts.
    let cps = checkpoint::build(ts.clone(), 700);
    assert!(
        cps.states.len() >= 6,
        "{name}: {} checkpoints",
        cps.states.len()
    );
    session
        .scheduler()
        .add_checkpoints(cps.states.into_iter().map(|c| (c.position, c.state)));
    let (b, e) = session.time_span().unwrap();
    let names = data.trace_names.clone();
    let ranges = [
        (b, e),
        (b + (e - b) / 5, e - (e - b) / 3),
        (b + (e - b) / 2, e + 1_000),
        (b - 1_000, b + (e - b) / 3),
    ];
    for (k, &(rb, re)) in ranges.iter().enumerate() {
        let owner = session.new_owner();
        let id = session.add(range_request(owner, rb, re, names.clone()));
        let single: Statistics = session.wait(id).unwrap();
        if k == 0 {
            assert_eq!(single, data.stats, "{name}: range request vs kernel pass");
        }
        for parts in [2, 3, 7] {
            for decode_threads in [0, 1] {
                let config = ParallelConfig {
                    parts,
                    decode_threads,
                };
                let task = session.start_statistics_with(owner, rb, re, names.clone(), config);
                assert!(
                    matches!(task, StatisticsTask::Parallel(_)),
                    "{name}: range {k} not split"
                );
                // Fewer parts when the range holds fewer checkpoints.
                assert!(
                    (2..=parts).contains(&task.parts()),
                    "{name}: range {k}, {} parts",
                    task.parts()
                );
                // Its progress, from the parts' threads, only grows, and
                // is the whole range once they are done.
                let mut task = task;
                let mut progress = Vec::new();
                let par = loop {
                    progress.push(task.progress(&mut session));
                    if let Some(s) = session.poll_statistics(&mut task) {
                        break s;
                    }
                    std::thread::sleep(std::time::Duration::from_micros(200));
                };
                assert!(
                    progress.windows(2).all(|w| w[0] <= w[1])
                        && progress.iter().all(|p| (0.0..=1.0).contains(p))
                        && task.progress(&mut session) == 1.0,
                    "{name}: range {k}, {parts} parts: progress {progress:?}, then {}",
                    task.progress(&mut session)
                );
                // The first differing line of the trees, if any (the whole
                // trees would be thousands of lines).
                let diff = par
                    .to_text()
                    .lines()
                    .zip(single.to_text().lines())
                    .find(|(a, b)| a != b)
                    .map(|(a, b)| format!("parallel: {a}\nsingle:   {b}"));
                assert_eq!(diff, None, "{name}: range {k}, {parts} parts");
                assert!(par == single, "{name}: range {k}, {parts} parts");
            }
        }
    }
    // Without checkpoints inside the range: one pass on the scheduler.
    let owner = session.new_owner();
    let task = session.start_statistics_with(
        owner,
        b,
        b,
        names,
        ParallelConfig {
            parts: 4,
            decode_threads: 0,
        },
    );
    assert!(matches!(task, StatisticsTask::Request(_)), "{name}");
    assert_eq!(session.wait_statistics(task).unwrap().total_events, 1);
}

#[test]
fn parallel_statistics_equal_single_pass() {
    for p in kernel_traces() {
        check_parallel_statistics(std::slice::from_ref(&p));
    }
    // Two traces from two machines in one traceset.
    check_parallel_statistics(&[
        shared("tracecompass/synctraces/scp_src"),
        shared("tracecompass/synctraces/scp_dest"),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let p = generated(dir.path(), 60_000, 3);
    check_parallel_statistics(&[p]);
    // Hundreds of short-lived threads, whose records the kernel pass
    // seals as they exit.
    let p = generated_forking(dir.path(), 60_000, 4, 0.03);
    check_parallel_statistics(&[p]);
}

/// A partial snapshot's statistics (`StatsCollector::partial_part`, which
/// leaves out the collector's lookup tables) merge to what a full copy of
/// the collector merges to, mid-pass, on every kernel trace.
#[test]
fn partial_statistics_equal_a_full_copy() {
    use traceloom_engine::request::{Budget, Start};
    use traceloom_hooks::{Flow, Priority};
    use traceloom_viewers::model::stats::merge;
    use traceloom_viewers::model::{KernelRequest, Payload, StatsCollector};
    for path in kernel_traces() {
        let name = path.display().to_string();
        let mut session = Session::open(std::slice::from_ref(&path)).unwrap();
        let owner = session.new_owner();
        let mut req = KernelRequest::new(
            owner,
            Start::Time(0),
            Box::new(StatsCollector::new(None, None)) as Payload,
        );
        req.event.add(Priority::HIGH, |ctx| {
            if let Some(c) = ctx.data.downcast_mut::<StatsCollector>() {
                c.on_event(ctx.event, ctx.state);
            }
            Flow::Continue
        });
        let id = session.add(req);
        let mut checked = 0;
        for _ in 0..4 {
            session.service(Budget::events(1500), || false);
            let Some(c) = session.peek::<StatsCollector>(id) else {
                break;
            };
            let (lean, full) = (c.partial_part(), c.clone().into_part(None));
            assert_eq!(lean.events(), full.events(), "{name}");
            assert_eq!(merge(vec![lean]), merge(vec![full]), "{name}");
            checked += 1;
        }
        assert!(checked > 0, "{name}: the pass was seen mid-way");
    }
}

/// A control-flow render whose rows are filled on several threads equals
/// the one filled on one, for every row and for some rows, over the whole
/// trace and zoomed in.
#[test]
fn render_filled_in_parallel_equals_the_serial_one() {
    let dir = tempfile::tempdir().unwrap();
    let p = generated(dir.path(), 60_000, 5);
    let (_session, data) = analyze(&p);
    let mut serial = ControlFlowModel::new(data.clone());
    serial.set_parallel_blocks(usize::MAX);
    let mut parallel = ControlFlowModel::new(data);
    parallel.set_parallel_blocks(0);
    let config = serial.config().clone();
    let full = serial.full_range();
    let zoom = TimeRange::new(
        full.start + full.span() as i64 / 4,
        full.start + full.span() as i64 / 3,
    );
    for range in [full, zoom] {
        let n = serial.tree().len();
        assert!(n > 20, "{n} rows");
        for rows in [None, Some(3..n / 2)] {
            let a = serial.render_rows_with(&config, range, 900, rows.clone());
            let b = parallel.render_rows_with(&config, range, 900, rows.clone());
            assert_eq!(a, b, "rows {rows:?}");
            let drawn: usize = a.materialized().map(|i| a.states(i).len()).sum();
            assert!(drawn > 100, "{drawn} intervals in rows {rows:?}");
            for i in 0..n {
                assert_eq!(a.states(i), b.states(i), "row {i}");
                assert_eq!(a.events(i), b.events(i), "row {i}");
            }
        }
    }
}

/// A control-flow render made for some rows holds exactly the whole
/// render's states and events there and nothing elsewhere, with the
/// same tree and arrows.
#[test]
fn render_of_some_rows_equals_the_whole_render_there() {
    let dir = tempfile::tempdir().unwrap();
    let p = generated(dir.path(), 60_000, 3);
    let (_session, data) = analyze(&p);
    let m = ControlFlowModel::new(data);
    let config = m.config().clone();
    let full = m.full_range();
    let third = (full.span() / 3) as i64;
    let zoom = TimeRange::new(full.start + third, full.start + third + third / 2);
    for range in [full, zoom] {
        let all = m.render_with(&config, range, 800);
        let n = all.tree().len();
        assert!(n > 20, "{n} rows");
        assert_eq!(all.materialized(), 0..n);
        for rows in [0..10, n / 2..n / 2 + 7, n - 5..n + 10] {
            let part = m.render_rows_with(&config, range, 800, Some(rows.clone()));
            assert_eq!(part.materialized(), rows.start..rows.end.min(n));
            assert_eq!(part.tree(), all.tree());
            assert_eq!(part.arrow_series(), all.arrow_series());
            let mut filled = 0;
            for i in 0..n {
                if part.materialized().contains(&i) {
                    assert_eq!(part.states(i), all.states(i), "row {i}");
                    assert_eq!(part.events(i), all.events(i), "row {i}");
                    filled += part.states(i).len();
                } else {
                    assert!(part.states(i).is_empty() && part.events(i).is_empty());
                }
            }
            // Every thread lives somewhere in the trace.
            assert!(range != full || filled > 0, "rows {rows:?} drew nothing");
        }
    }
}
