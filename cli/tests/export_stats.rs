//! `traceloom export` and `traceloom stats` end to end, without a display.

mod common;

use common::run;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn shared(rel: &str) -> PathBuf {
    traceloom_testdata::trace(rel)
}

fn sample() -> PathBuf {
    traceloom_testdata::sample_kernel()
}

fn out_dir() -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("export");
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn check_png(path: &Path, width: u32) {
    let f = std::fs::File::open(path).unwrap();
    let mut reader = png::Decoder::new(std::io::BufReader::new(f))
        .read_info()
        .unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!(info.width, width);
    assert!(info.height > 50);
    // Not a blank image: several distinct colours.
    let mut colours = std::collections::HashSet::new();
    for px in buf
        .chunks(info.line_size / info.width as usize)
        .take(2_000_000)
    {
        colours.insert(px.to_vec());
    }
    assert!(colours.len() > 4, "{} colours", colours.len());
}

fn check_svg(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let doc = roxmltree::Document::parse(&text).unwrap();
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    text
}

#[test]
fn export_views_to_png_and_svg_without_display() {
    std::env::remove_var("DISPLAY");
    std::env::remove_var("WAYLAND_DISPLAY");
    let dir = out_dir();
    let trace = shared("ctf/tracecompass/bug446190");
    let t = trace.to_str().unwrap();
    for ext in ["png", "svg"] {
        let out = dir.join(format!("controlflow-bug446190.{ext}"));
        let (code, _, err) = run(&[
            "export",
            t,
            "--view",
            "controlflow",
            "-o",
            out.to_str().unwrap(),
        ]);
        assert_eq!(code, 0, "{err}");
        if ext == "png" {
            check_png(&out, 1920);
        } else {
            let svg = check_svg(&out);
            assert!(svg.contains("<text"), "labels are text");
        }
    }
    let s = sample();
    for view in ["resources", "histogram", "statistics", "controlflow"] {
        let png = dir.join(format!("{view}.png"));
        let (code, _, err) = run(&[
            "export",
            s.to_str().unwrap(),
            "--view",
            view,
            "--width",
            "800",
            "-o",
            png.to_str().unwrap(),
        ]);
        assert_eq!(code, 0, "{view}: {err}");
        check_png(&png, 800);
        let svg = dir.join(format!("{view}.svg"));
        let (code, _, err) = run(&[
            "export",
            s.to_str().unwrap(),
            "--view",
            view,
            "--width",
            "800",
            "-o",
            svg.to_str().unwrap(),
        ]);
        assert_eq!(code, 0, "{view}: {err}");
        check_svg(&svg);
    }
    // A window, and a filter.
    let png = dir.join("window.png");
    let (code, _, err) = run(&[
        "export",
        s.to_str().unwrap(),
        "--view",
        "histogram",
        "--filter",
        "name == \"sched_switch\"",
        "-o",
        png.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    // Bad output extension, bad filter.
    let (code, _, _) = run(&["export", s.to_str().unwrap(), "-o", "/tmp/x.gif"]);
    assert_eq!(code, 1);
    let (code, _, err) = run(&[
        "export",
        s.to_str().unwrap(),
        "--view",
        "histogram",
        "--filter",
        "((",
        "-o",
        png.to_str().unwrap(),
    ]);
    assert_eq!(code, 1, "{err}");
}

#[test]
fn export_paje_trace() {
    let p = shared("paje/native_sample.trace");
    let dir = out_dir();
    for ext in ["png", "svg"] {
        let out = dir.join(format!("paje.{ext}"));
        let (code, _, err) = run(&["export", p.to_str().unwrap(), "-o", out.to_str().unwrap()]);
        assert_eq!(code, 0, "{err}");
        if ext == "png" {
            check_png(&out, 1920);
        } else {
            check_svg(&out);
        }
    }
}

fn count_per_name(path: &str) -> BTreeMap<String, u64> {
    let (code, out, err) = run(&["count", path]);
    assert_eq!(code, 0, "{err}");
    out.lines()
        .skip(1)
        .filter_map(|l| {
            let mut it = l.split_whitespace();
            let n: u64 = it.next()?.parse().ok()?;
            Some((it.next()?.to_string(), n))
        })
        .collect()
}

#[test]
fn stats_counts_match_count_and_babeltrace2() {
    let mut traces: Vec<PathBuf> = [
        "ctf/tracecompass/bug446190",
        "ctf/tracecompass/flipping-endianness",
        "ctf/lttng-ust/ust_pid",
    ]
    .iter()
    .map(|r| shared(r))
    .collect();
    traces.push(sample());
    for t in traces {
        let t = t.to_str().unwrap();
        let (code, out, err) = run(&["stats", t, "--json"]);
        assert_eq!(code, 0, "{err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        let per_name: BTreeMap<String, u64> = v["per_event_name"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, n)| (k.clone(), n.as_u64().unwrap()))
            .collect();
        assert_eq!(per_name, count_per_name(t), "{t}");
        let total = v["events"].as_u64().unwrap();
        assert_eq!(v["tree"]["events"].as_u64().unwrap(), total);
        // Per CPU, CPU time adds up to the duration.
        let duration = v["end"].as_i64().unwrap() - v["begin"].as_i64().unwrap();
        for trace in v["tree"]["children"].as_array().unwrap() {
            for cpu in trace["children"].as_array().unwrap() {
                if cpu["name"] != "CPU ?" {
                    assert_eq!(
                        cpu["cpu_time_ns"].as_i64().unwrap(),
                        duration,
                        "{t} {}",
                        cpu["name"]
                    );
                }
            }
        }
        traceloom_testdata::require(traceloom_testdata::Tool::Babeltrace2);
        let o = Command::new("babeltrace2").arg(t).output().unwrap();
        assert!(o.status.success(), "{t}: babeltrace2 failed");
        let lines = o.stdout.iter().filter(|&&b| b == b'\n').count() as u64;
        assert_eq!(lines, total, "{t}: babeltrace2");
        // Text form, and a range.
        let (code, out, err) = run(&["stats", t]);
        assert_eq!(code, 0, "{err}");
        assert!(out.contains("traceset:"));
        let begin = v["begin"].as_i64().unwrap();
        let mid = begin + duration / 2;
        let (code, out, err) = run(&[
            "stats",
            t,
            "--json",
            "--end",
            &format!("{}.{:09}", mid / 1_000_000_000, mid % 1_000_000_000),
        ]);
        assert_eq!(code, 0, "{err}");
        let r: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert!(r["events"].as_u64().unwrap() <= total);
        assert_eq!(r["end"].as_i64().unwrap(), mid);
    }
}
