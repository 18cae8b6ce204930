//! Issue 18's acceptance on a generated kernel trace (120 MB by default,
//! three times `TRACELOOM_GUI_LATENCY_MB`): during the LOW whole-trace pass the
//! statistics and the histogram grow; a far scroll of the event list (a
//! HIGH request) shows its rows before the pass ends; zooms into parts the
//! pass has not reached show their detail (one ahead of every checkpoint,
//! one where the checkpoint pass has been; the times are printed); Cancel pauses the
//! pass (nothing grows while paused), page moves with a filter matching
//! about one event in 10,000 never hold the main thread over 50 ms of CPU;
//! Resume completes the pass with the totals the generator wrote (with two
//! cores, its second half read on a thread of its own and joined).

use std::path::Path;
use std::time::{Duration, Instant};

use gtk4 as gtk;
use gtk4::prelude::*;
use traceloom_base::{Time, TimeRange};
use traceloom_ctf::{Message, Traceset};
use traceloom_gui::stalls;
use traceloom_gui::tab::{Tab, TabHost};
use traceloom_gui::views::Nav;
use traceloom_viewers::StatValue;

use relm4::{Component, ComponentController};
use traceloom_gui::app::{App, AppInit};

use super::{
    first_tab, info_bar, load_average, pump, pump_until, screenshots_dir, Outcome, CPU_LIMIT,
    DEFAULT_LATENCY_MB,
};

/// Events of the whole trace the statistics show (their root row).
fn stats_total(tab: &Tab) -> u64 {
    tab.statistics
        .shown()
        .and_then(|r| {
            r.rows().next().and_then(|row| match row.values.first() {
                Some(StatValue::Count(n)) => Some(*n),
                _ => None,
            })
        })
        .unwrap_or(0)
}

/// Events the histogram counts.
fn histogram_total(tab: &Tab) -> u64 {
    tab.histogram.render().map_or(0, |r| r.bins().iter().sum())
}

/// Time of the first event at or after `t`.
fn first_event_at(dir: &Path, t: Time) -> Option<Time> {
    let ts = Traceset::open(&[dir.to_path_buf()]).ok()?;
    let mut c = ts.messages_between(Some(t), None);
    while let Some(m) = c.next() {
        if let Ok(Message::Event(e)) = m {
            return e.timestamp_ns();
        }
    }
    None
}

pub(crate) fn background_pass(out: &mut Outcome) {
    // Three times the latency test's trace: the pass must last a few
    // seconds for its partial results to be seen.
    let mb: u64 = 3 * std::env::var("TRACELOOM_GUI_LATENCY_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_LATENCY_MB);
    let tmp = tempfile::tempdir().expect("temporary directory");
    let dir = tmp.path().join("trace");
    let config = traceloom_kernelgen::GeneratorConfig {
        events: u64::MAX,
        max_bytes: Some(mb << 20),
        overwrite: true,
        ..Default::default()
    };
    let summary = traceloom_kernelgen::generate(&config, &dir).expect("generate a kernel trace");
    // The event class nearest to one event in 10,000.
    let (rare, rare_n) = summary
        .event_counts
        .iter()
        .filter(|(_, n)| *n > 0)
        .min_by(|a, b| {
            let off = |n: u64| (n as f64 * 10_000.0 / summary.events as f64).ln().abs();
            off(a.1).total_cmp(&off(b.1))
        })
        .map(|(name, n)| (name.to_string(), *n))
        .expect("event counts");
    println!(
        "background: {} events, {mb} MB; filter on {rare} ({rare_n} events, 1 in {}); load average {}",
        summary.events,
        summary.events / rare_n.max(1),
        load_average()
    );

    let host = TabHost::open(vec![dir.clone()], |e| eprintln!("background tab: {e}"))
        .expect("open the generated trace");
    let tab = host.tab();
    let window = gtk::Window::new();
    window.set_default_size(1400, 1000);
    window.set_child(Some(host.widget()));
    window.present();
    let span = tab.span();

    // The first partial statistics: the pass is under way.
    let started = pump_until(|| stats_total(&tab) > 0);
    let first = (stats_total(&tab), histogram_total(&tab));
    let caption_so_far = tab.statistics.caption().contains("so far");

    // A far scroll while the pass runs: its rows come first.
    let t = span.start + (span.span() as f64 * 0.9) as Time;
    let want = first_event_at(&dir, t);
    let asked = Instant::now();
    // As if the user dragged the list's scrollbar (the events themselves
    // are not synthesized).
    tab.note_input();
    tab.events.drag_to(t);
    let shown = pump_until(|| {
        tab.events.time_of(0).is_some_and(|x| x >= t) && tab.events.rows_drawn_at().is_some()
    });
    // Until the frame that showed them (the harness looks every 20 ms).
    let latency = tab
        .events
        .rows_drawn_at()
        .map_or_else(|| asked.elapsed(), |at| at - asked);
    let pass_running = tab.busy() && stats_total(&tab) < summary.events;
    out.check(
        "far_scroll_during_the_pass",
        started && shown && tab.events.time_of(0) == want && pass_running,
        || {
            format!(
                "first row {:?}, want {want:?}, after {latency:?}; pass running {pass_running}",
                tab.events.time_of(0)
            )
        },
    );
    println!(
        "background: far scroll to 90 % shown after {:.1} ms, pass still running",
        latency.as_secs_f64() * 1e3
    );

    // A zoom into a part the pass has not reached: the window is analysed
    // alone (HIGH) and its detail drawn before the pass gets there (a
    // preview first, ahead of the checkpoint pass).
    zoom_ahead(
        out,
        (&window, &tab),
        0.95,
        summary.events,
        "zoom_beyond_the_pass_shows_detail",
        "not yet read",
    );
    // Another zoom the pass has not reached, where the checkpoint pass
    // (past 95 % by now) has left a checkpoint: issue 18's "any zoom
    // shows detail within 100 ms even during the pass".
    zoom_ahead(
        out,
        (&window, &tab),
        0.75,
        summary.events,
        "zoom_behind_the_checkpoints_shows_detail",
        "not yet analysed, checkpoints there",
    );
    tab.navigate(Nav::Window(span));

    // Cancel pauses: the views get what was read (more than at first),
    // then nothing grows any more.
    tab.progress.cancel_button.emit_clicked();
    // A snapshot taken before the pause may land after it (its job runs
    // at the background's priority: seconds on a busy machine): the
    // pause's totals are those that stay for 300 ms.
    let mut paused = (stats_total(&tab), histogram_total(&tab));
    let settled_by = Instant::now() + Duration::from_secs(10);
    loop {
        pump(300);
        let now = (stats_total(&tab), histogram_total(&tab));
        if now == paused || Instant::now() > settled_by {
            break;
        }
        paused = now;
    }
    pump(1000);
    let still = (stats_total(&tab), histogram_total(&tab));
    out.check(
        "statistics_and_histogram_grow_during_the_pass",
        started && caption_so_far && first.0 > 0 && first.1 > 0 && paused.0 > first.0 && paused.1 > first.1,
        || format!("statistics and histogram {first:?}, then {paused:?} at the pause, of {}; caption so far: {caption_so_far}", summary.events),
    );
    out.check(
        "cancel_pauses_the_pass",
        tab.background_paused()
            && tab.progress.resume_button.is_visible()
            && paused == still
            && paused.0 < summary.events,
        || {
            format!(
                "paused {} resume visible {}; {paused:?} then {still:?}",
                tab.background_paused(),
                tab.progress.resume_button.is_visible()
            )
        },
    );

    // Page moves with a rare-event filter (while paused: the list's own
    // requests only) never hold the main thread.
    tab.set_filter(&format!("name == \"{rare}\""));
    pump_until(|| !tab.list_reading());
    stalls::start();
    for _ in 0..4 {
        tab.events.key(gtk::gdk::Key::Page_Down);
        pump(30);
    }
    for _ in 0..4 {
        tab.events.key(gtk::gdk::Key::Page_Up);
        pump(30);
    }
    let settled = pump_until(|| !tab.list_reading());
    let (per_source, _) = stalls::stop();
    let worst = per_source
        .iter()
        .max_by_key(|(_, s)| s.worst_cpu)
        .map(|(n, s)| (*n, s.worst_cpu))
        .unwrap_or(("none", Duration::ZERO));
    let names_ok = (0..tab.events.len()).all(|i| {
        tab.events
            .column(i, traceloom_gui::views::eventlist::col::EVENT)
            .as_deref()
            == Some(rare.as_str())
    });
    out.check(
        "rare_filter_page_moves_never_block",
        settled && worst.1 <= CPU_LIMIT && names_ok && !tab.events.is_empty(),
        || format!("heaviest main-thread callback {worst:?}; rows all {rare}: {names_ok}; settled {settled}"),
    );
    println!(
        "background: rare-filter page moves, heaviest callback {} {:.1} ms CPU",
        worst.0,
        worst.1.as_secs_f64() * 1e3
    );
    tab.set_filter("");

    // Resume completes with the generator's totals.
    tab.progress.resume_button.emit_clicked();
    let done = tab.run_until_idle(Duration::from_secs(300));
    pump(300);
    let totals = (stats_total(&tab), histogram_total(&tab));
    out.check(
        "resume_completes_the_pass",
        done && !tab.background_paused()
            && totals == (summary.events, summary.events)
            && !tab.statistics.caption().contains("so far"),
        || {
            format!(
                "done {done}; totals {totals:?}, want {}; caption {}",
                summary.events,
                tab.statistics.caption()
            )
        },
    );
    // With two cores, the pass read its second half on a thread of its
    // own (the checkpoint pass, several times faster, reached the middle
    // first), and the totals above are those of the parts joined.
    // (`TRACELOOM_JOBS=1` asks for the single pass.)
    let parts = traceloom_viewers::model::parallel_pass::parts_wanted();
    out.check(
        "the_pass_is_split_across_cores",
        tab.pass_was_split() == (parts >= 2),
        || format!("split {} with {parts} parts wanted", tab.pass_was_split()),
    );
    // The checkpoint pass's result was cached (the window saves it as
    // soon as that pass completes), so that the next open seeks at once.
    let traceset = Traceset::open(std::slice::from_ref(&dir)).expect("open the generated trace");
    let cached = traceloom_viewers::store::cache_dir()
        .is_some_and(|d| traceloom_engine::checkpoint::is_cached(&d, &traceset));
    out.check("checkpoints_cached", cached, || {
        "no valid checkpoint cache for the trace".into()
    });
    window.close();
    drop(tab);
    drop(host);
    pump(100);

    // Reopened: the analysis comes from the store the pass wrote.
    let opened = Instant::now();
    let host = TabHost::open(vec![dir.clone()], |e| eprintln!("background tab: {e}"))
        .expect("reopen the generated trace");
    let tab = host.tab();
    let window = gtk::Window::new();
    window.set_default_size(1400, 1000);
    window.set_child(Some(host.widget()));
    window.present();
    let took = stored_analysis_shown(
        out,
        &tab,
        summary.events,
        opened,
        "reopen_shows_the_stored_analysis",
    );
    println!(
        "background: reopened, complete analysis shown after {:.0} ms (from the store: {})",
        took.as_secs_f64() * 1e3,
        tab.analysis_from_store()
    );
    // The store's statistics, read ahead of its data, are the data's:
    // their tree is made once (an 8 GB trace's takes 0.3 s of a core).
    pump(300);
    out.check(
        "reopen_builds_the_statistics_once",
        tab.statistics_renders() == 1,
        || format!("{} statistics trees made", tab.statistics_renders()),
    );
    // The window is as large as the first: the time graphs are rendered
    // once, at the width they are shown at (the last run's tree column
    // was saved), not first at a guessed width and again once laid out.
    let widths = |v: &traceloom_gui::views::timegraph::TimeGraphView| {
        (v.graph_width(), v.render().map(|r| r.scale().width))
    };
    let (cf, res) = (widths(&tab.control_flow), widths(&tab.resources));
    out.check(
        "reopen_renders_the_time_graphs_once",
        tab.time_graph_renders() == 1 && cf.1 == Some(cf.0) && res.1 == Some(res.0),
        || {
            format!(
                "{} renders; control flow shown at {} px, rendered at {:?}; resources {} px, {:?}",
                tab.time_graph_renders(),
                cf.0,
                cf.1,
                res.0,
                res.1
            )
        },
    );
    window.close();
    drop(tab);
    drop(host);
    pump(100);
    damaged_store_rebuilt(out, &dir, &traceset, summary.events);
}

/// Issue 17: a damaged analysis store is named in the window's info bar
/// with what is wrong, the trace is analysed again (the views complete,
/// not from the store), and a valid store replaces the damaged one.
fn damaged_store_rebuilt(out: &mut Outcome, dir: &Path, traceset: &Traceset, events: u64) {
    use std::io::{Read, Seek, SeekFrom, Write};
    use traceloom_viewers::store::{self, identity};

    let cache = store::cache_dir().expect("the tests' cache directory");
    let id = identity::TracesetIdentity::of(traceset);
    let path = identity::store_path(&cache, &id);
    // 64 bytes flipped in the middle of the file: inside a column, whose
    // checksum then fails.
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&path)
        .expect("the store the pass wrote");
    let middle = file.metadata().expect("the store's size").len() / 2;
    let mut bytes = [0u8; 64];
    file.seek(SeekFrom::Start(middle))
        .expect("seek in the store");
    file.read_exact(&mut bytes).expect("read the store");
    bytes.iter_mut().for_each(|b| *b = !*b);
    file.seek(SeekFrom::Start(middle))
        .expect("seek in the store");
    file.write_all(&bytes).expect("damage the store");
    drop(file);

    let controller = App::builder()
        .launch(AppInit {
            paths: vec![dir.to_path_buf()],
        })
        .detach();
    let window: gtk::Window = controller.widget().clone().upcast();
    window.set_default_size(1400, 1000);
    window.present();
    let Some(tab) = first_tab(&controller) else {
        out.check("damaged_store_rebuilt", false, || {
            format!("no tab: {:?}", info_bar(&window))
        });
        return;
    };
    let named = || {
        info_bar(&window).is_some_and(|(_, text)| {
            text.contains("analysis store is unusable")
                && text.contains(&path.display().to_string())
                && text.contains("checksum")
        })
    };
    let said = pump_until(named);
    // The pass done (its parts joined), every event counted.
    let done = tab.run_until_idle(Duration::from_secs(300));
    let analysed = done && stats_total(&tab) == events && histogram_total(&tab) == events;
    let shot = screenshots_dir().join("damaged-store.png");
    if let Err(e) = super::rows::save_when_drawn(&window, &shot) {
        println!("damaged store: no screenshot: {e}");
    }
    // The trace was shown before in a window without the application's
    // header and info bars, and its layout saved on close: the panes
    // nobody placed are placed again for this window. (Kept in pixels,
    // they left the histogram frame 84 px high here, its bars a few
    // pixels, where the layout gives it 144.)
    let histogram = tab.layout.frame(4).height();
    println!("damaged store: histogram frame {histogram} px high");
    out.check(
        "a_reopened_layout_fits_the_window",
        histogram >= 110,
        || format!("histogram frame {histogram} px high"),
    );
    let rebuilt = pump_until(|| store::load(&cache, &id).is_ok());
    out.check(
        "damaged_store_rebuilt",
        said && analysed && !tab.analysis_from_store() && rebuilt,
        || {
            format!(
                "info bar {:?}; analysed {analysed} (from the store {}); a valid store again {rebuilt}",
                info_bar(&window),
                tab.analysis_from_store()
            )
        },
    );
    window.close();
    pump(100);
}

/// Zooms `tab` into a thousandth of its span at `at` (a fraction of it),
/// checks (as `check`) that both time graphs show detail there, then the
/// exact detail (not a preview), while the pass (of `events` in all) is
/// still short of it, and prints how long each took (`what`: where the
/// zoom went).
fn zoom_ahead(
    out: &mut Outcome,
    (window, tab): (&gtk::Window, &Tab),
    at: f64,
    events: u64,
    check: &str,
    what: &str,
) {
    let span = tab.span();
    let zoom = TimeRange::new(
        span.start + (span.span() as f64 * at) as Time,
        span.start + (span.span() as f64 * (at + 0.001)) as Time,
    );
    let asked = Instant::now();
    // As if the user zoomed with the mouse or keys.
    tab.note_input();
    tab.navigate(Nav::Window(zoom));
    let drawn = |r: Option<std::sync::Arc<traceloom_viewers::TimeGraphRender>>| {
        r.is_some_and(|r| {
            r.range() == zoom
                && (0..r.tree().len())
                    .filter(|&i| !r.states(i).is_empty())
                    .count()
                    > 3
        })
    };
    // Drawn by a frame (a view paints its render on a thread, and a frame
    // draws the picture once it landed).
    let on_screen = || {
        tab.control_flow
            .shown()
            .zip(tab.resources.shown())
            .filter(|((c, _), (r, _))| drawn(Some(c.clone())) && drawn(Some(r.clone())))
            .map(|((_, a), (_, b))| a.max(b))
    };
    let shown =
        || on_screen().is_some() && !tab.control_flow.painting() && !tab.resources.painting();
    let detailed = pump_until(shown);
    // Until that frame (the harness looks every 20 ms).
    let latency = on_screen().map_or_else(|| asked.elapsed(), |at| at - asked);
    // Ahead of the checkpoint pass the first detail is a preview (read
    // with no state), which the exact analysis of the window replaces
    // once the checkpoints get there.
    let previewed = tab.window_previewed();
    // The render shown now: the exact one must replace it (captured
    // before the screenshot, during which the exact one may arrive).
    let first = tab.control_flow.render();
    let shot = |name: &str| {
        let path = super::screenshots_dir().join(format!("zoom-{:.0}-{name}.png", at * 100.0));
        // What the window shows once laid out and painted (between a
        // layout and its frame it draws nothing, or a stale label).
        pump(100);
        let mut saved = traceloom_gui::screenshot::save_png(window, &path);
        for _ in 0..5 {
            if saved.is_ok() {
                break;
            }
            pump(20);
            saved = traceloom_gui::screenshot::save_png(window, &path);
        }
        if let Err(e) = saved {
            println!("background: no screenshot {}: {e}", path.display());
        }
    };
    if previewed {
        shot("preview");
    }
    // The exact render, not the preview's still shown while the exact
    // one is on its way to the view.
    let exact = pump_until(|| {
        !tab.window_previewed()
            && shown()
            && (!previewed
                || !tab
                    .control_flow
                    .render()
                    .zip(first.clone())
                    .is_some_and(|(a, b)| std::sync::Arc::ptr_eq(&a, &b)))
    });
    let exact_after = asked.elapsed();
    let not_reached = (stats_total(tab) as f64) < events as f64 * at;
    shot("exact");
    out.check(check, detailed && exact && not_reached, || {
        format!(
            "detail {detailed} after {latency:?} (preview {previewed}), exact {exact} after \
             {exact_after:?}; pass short of the window: {not_reached}"
        )
    });
    println!(
        "background: zoom into {:.0} % ({what}) drawn after {:.1} ms{}, exact after {:.1} ms",
        at * 100.0,
        latency.as_secs_f64() * 1e3,
        if previewed { " as a preview" } else { "" },
        exact_after.as_secs_f64() * 1e3
    );
}

/// Waits until `tab` shows the whole analysis of a trace of `events`
/// (statistics and histogram totals, control flow and resources rows,
/// painted and drawn),
/// checks (as `check`) that it came from the store, and returns the time
/// since `opened`.
fn stored_analysis_shown(
    out: &mut Outcome,
    tab: &Tab,
    events: u64,
    opened: Instant,
    check: &str,
) -> Duration {
    // Each view's part, with when it first held (what comes last is
    // what to make faster).
    let parts: [(&str, &dyn Fn() -> bool); 4] = [
        ("statistics", &|| {
            // Shown, not only handed over: arranged, painted and drawn.
            stats_total(tab) == events && tab.statistics.shows_render()
        }),
        ("histogram", &|| histogram_total(tab) == events),
        ("control flow", &|| {
            tab.control_flow
                .render()
                .is_some_and(|r| r.tree().len() > 1)
                && !tab.control_flow.painting()
        }),
        ("resources", &|| {
            tab.resources.render().is_some_and(|r| r.tree().len() > 1) && !tab.resources.painting()
        }),
    ];
    let first: [std::cell::Cell<Option<Duration>>; 4] = Default::default();
    let complete = pump_until(|| {
        for ((_, holds), at) in parts.iter().zip(&first) {
            if at.get().is_none() && holds() {
                at.set(Some(opened.elapsed()));
            }
        }
        // A part may go back (a newer render, not painted yet).
        parts.iter().all(|(_, holds)| holds())
    });
    let took = opened.elapsed();
    let when: Vec<String> = parts
        .iter()
        .zip(&first)
        .map(|((name, _), t)| match t.get() {
            Some(t) => format!("{name} {:.0} ms", t.as_secs_f64() * 1e3),
            None => format!("{name} never"),
        })
        .collect();
    println!("stored analysis: first shown: {}", when.join(", "));
    out.check(check, complete && tab.analysis_from_store(), || {
        format!(
            "complete {complete} after {took:?}, from the store {}",
            tab.analysis_from_store()
        )
    });
    took
}

/// Issue 17's "reopening the 1 GB trace shows the complete control flow,
/// resources, statistics and histogram within 1 s", on the trace at
/// `TRACELOOM_GUI_REOPEN_TRACE`: `traceloom index` writes its store into
/// the test's cache, then a tab opens it; the time until every view shows
/// the whole analysis is printed with the main-thread work by source.
/// Checked: the analysis comes from the store and is complete (the 1 s is
/// a target measured here, not asserted: it depends on the machine).
pub fn reopen_large(out: &mut Outcome, dir: &Path) {
    let indexed = Instant::now();
    let args = vec![
        "traceloom".to_string(),
        "index".into(),
        dir.display().to_string(),
    ];
    let (mut o, mut e) = (Vec::new(), Vec::new());
    let code = traceloom_cli::run(args, &mut o, &mut e);
    assert_eq!(code, 0, "index failed: {}", String::from_utf8_lossy(&e));
    println!(
        "reopen: indexed {} in {:.1} s: {}",
        dir.display(),
        indexed.elapsed().as_secs_f64(),
        String::from_utf8_lossy(&o).trim()
    );
    let (mut o, mut e) = (Vec::new(), Vec::new());
    let args = vec![
        "traceloom".into(),
        "count".into(),
        dir.display().to_string(),
    ];
    let code = traceloom_cli::run(args, &mut o, &mut e);
    assert_eq!(code, 0, "count failed: {}", String::from_utf8_lossy(&e));
    let events: u64 = String::from_utf8_lossy(&o)
        .split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .expect("count prints the number of events first");
    // The window is up first, as in the application.
    let window = super::warmed_window("reopen");
    println!("reopen: load average {}", load_average());
    stalls::start();
    let opened = Instant::now();
    let host = TabHost::open(vec![dir.to_path_buf()], |e| eprintln!("reopen tab: {e}"))
        .expect("reopen the trace");
    let tab = host.tab();
    let open_time = opened.elapsed();
    window.set_child(Some(host.widget()));
    let took = stored_analysis_shown(
        out,
        &tab,
        events,
        opened,
        "reopen_large_shows_the_stored_analysis",
    );
    let (per_source, _) = stalls::stop();
    println!(
        "reopen: Tab::open {:.0} ms; complete analysis shown after {:.0} ms ({events} events)",
        open_time.as_secs_f64() * 1e3,
        took.as_secs_f64() * 1e3,
    );
    println!(
        "reopen: main-thread work until then:\n{}",
        stalls::summary(&per_source)
    );
    pump(500);
    let shot = super::screenshots_dir().join("reopen-large.png");
    if let Err(e) = traceloom_gui::screenshot::save_png(&window, &shot) {
        println!("reopen: no screenshot: {e}");
    }
    window.close();
    pump(100);
}
