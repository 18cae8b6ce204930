//! Traces written by `traceloom-pajegen` are valid for `pj_dump`, and
//! `traceloom dump --format pj_dump` prints exactly what pj_dump prints
//! for them.

use std::process::Command;

use traceloom_pajegen::{generate, GeneratorConfig};

#[test]
fn generated_traces_dump_like_pj_dump() {
    traceloom_testdata::require(traceloom_testdata::Tool::PjDump);
    let dir = tempfile::tempdir().unwrap();
    let configs = [
        GeneratorConfig {
            max_bytes: 3 << 20,
            thread_churn: 0.005,
            ..GeneratorConfig::default()
        },
        GeneratorConfig {
            machines: 1,
            nodes_per_machine: 2,
            procs_per_node: 3,
            threads_per_proc: 1,
            max_bytes: 400_000,
            seed: 99,
            thread_churn: 0.0,
        },
        GeneratorConfig {
            machines: 2,
            nodes_per_machine: 1,
            procs_per_node: 2,
            threads_per_proc: 6,
            max_bytes: 1 << 20,
            seed: 7,
            thread_churn: 0.05,
        },
    ];
    for (i, cfg) in configs.iter().enumerate() {
        let f = dir.path().join(format!("gen{i}.trace"));
        let summary = generate(cfg, std::fs::File::create(&f).unwrap()).unwrap();
        assert!(summary.links > 0 && summary.events > 0, "{summary:?}");
        let reference = Command::new("pj_dump").arg(&f).output().unwrap();
        assert!(
            reference.status.success(),
            "pj_dump refuses {}: {}",
            f.display(),
            String::from_utf8_lossy(&reference.stderr)
        );
        assert!(
            reference.stderr.is_empty(),
            "{}",
            String::from_utf8_lossy(&reference.stderr)
        );
        let mut out = Vec::new();
        let mut err = Vec::new();
        let argv = [
            "traceloom",
            "dump",
            "--format",
            "pj_dump",
            f.to_str().unwrap(),
        ];
        let status = traceloom_cli::run(argv, &mut out, &mut err);
        assert_eq!(status, 0, "{}", String::from_utf8_lossy(&err));
        assert!(err.is_empty(), "{}", String::from_utf8_lossy(&err));
        if out != reference.stdout {
            let ours = String::from_utf8_lossy(&out);
            let theirs = String::from_utf8_lossy(&reference.stdout);
            let first = ours
                .lines()
                .zip(theirs.lines())
                .position(|(a, b)| a != b)
                .unwrap_or(ours.lines().count().min(theirs.lines().count()));
            panic!(
                "{}: output differs from pj_dump at row {}:\n ours:    {:?}\n pj_dump: {:?}",
                f.display(),
                first + 1,
                ours.lines().nth(first),
                theirs.lines().nth(first)
            );
        }
    }
}

/// A generated trace cut in the middle of a line, or with a line
/// corrupted, is read to the end: the problem is reported with the file
/// and line, and every other line is still used.
#[test]
fn truncated_and_corrupted_generated_traces_are_reported_by_line() {
    use traceloom_paje::{stream_file, LoadOptions, NullSink};

    let dir = tempfile::tempdir().unwrap();
    let cfg = GeneratorConfig {
        max_bytes: 1 << 20,
        ..GeneratorConfig::default()
    };
    let mut bytes = Vec::new();
    generate(&cfg, &mut bytes).unwrap();
    let whole = dir.path().join("whole.trace");
    std::fs::write(&whole, &bytes).unwrap();
    let o = stream_file(&whole, &LoadOptions::pj_dump(), &mut NullSink).unwrap();
    assert!(o.diagnostics.is_empty());
    let all_lines = o.events_read;

    // Cut just after the time of a PopState line ("12 <time> ...") in the
    // middle of the file: that last line lacks its container and type.
    let middle = bytes.len() / 2;
    let cut_line = bytes[middle..]
        .windows(4)
        .position(|w| w == b"\n12 ")
        .map(|p| middle + p + 1)
        .unwrap();
    let cut = cut_line
        + 3
        + bytes[cut_line + 3..]
            .iter()
            .position(|&b| b == b' ')
            .unwrap();
    let line_no = bytes[..cut_line].iter().filter(|&&b| b == b'\n').count() + 1;
    let truncated = dir.path().join("truncated.trace");
    std::fs::write(&truncated, &bytes[..cut]).unwrap();
    let o = stream_file(&truncated, &LoadOptions::pj_dump(), &mut NullSink).unwrap();
    // The messages in flight at the cut never end: each is reported where
    // it started, before the cut line (diagnostics are sorted by line).
    let items = o.diagnostics.items();
    assert_eq!(o.diagnostics.error_count(), items.len() as u64);
    let (last, in_flight) = items.split_last().unwrap();
    assert!(
        in_flight
            .iter()
            .all(|d| d.message.contains("has no end before the container ends")),
        "{items:?}"
    );
    let d = last.to_string();
    assert!(
        d.starts_with(&format!("{}:{line_no} ", truncated.display())),
        "{d}"
    );
    assert!(d.contains("PajePopState has 2 field(s)"), "{d}");

    // A corrupted time on one line: that line only is skipped.
    let mut corrupted = bytes.clone();
    let at = cut_line + 3;
    corrupted[at] = b'x';
    let bad = dir.path().join("corrupted.trace");
    std::fs::write(&bad, &corrupted).unwrap();
    let o = stream_file(&bad, &LoadOptions::pj_dump(), &mut NullSink).unwrap();
    assert_eq!(o.events_read, all_lines - 1);
    assert_eq!(
        o.diagnostics.error_count(),
        1,
        "{:?}",
        o.diagnostics.items()
    );
    let d = o.diagnostics.items()[0].to_string();
    assert!(
        d.starts_with(&format!("{}:{line_no} ", bad.display())),
        "{d}"
    );
    assert!(d.contains("malformed date"), "{d}");
}
