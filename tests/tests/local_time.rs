//! `traceloom dump` without `--clock-gmt` prints local times like
//! babeltrace2, through the C library's time zone rules (`TZ`).
//!
//! This is the only test of this binary: it sets `TZ` for the whole
//! process, which must not race with other tests.

use std::process::Command;

#[test]
fn local_times_and_bounds_follow_tz() {
    let root = traceloom_testdata::ctf_root();
    traceloom_testdata::require(traceloom_testdata::Tool::Babeltrace2);
    // A zone with daylight saving time in effect for one trace (August) and
    // not for the other (November), and a non-whole-hour zone.
    // The ust_uid_discard events are all within 02:55:21 UTC on 2026-11-22.
    for (tz, begin, end) in [
        (
            "America/Montreal",
            "2026-11-21 21:55:21.746",
            "21:55:21.748",
        ),
        ("Asia/Kathmandu", "2026-11-22 08:40:21.746", "08:40:21.748"),
    ] {
        std::env::set_var("TZ", tz);
        for (trace, opts) in [
            ("tracecompass/hello-lost", &[][..]),
            ("lttng-ust/ust_uid_discard", &["--clock-date"][..]),
            (
                "lttng-ust/ust_uid_discard",
                &["--begin", begin, "--end", end][..],
            ),
        ] {
            let path = root.join(trace);
            let reference = Command::new("babeltrace2")
                .args(opts)
                .arg(&path)
                .env("TZ", tz)
                .output()
                .expect("run babeltrace2");
            let mut argv: Vec<std::ffi::OsString> = vec!["traceloom".into(), "dump".into()];
            argv.extend(opts.iter().map(Into::into));
            argv.push(path.clone().into());
            let mut out = Vec::new();
            let mut err = Vec::new();
            let status = traceloom_cli::run(argv, &mut out, &mut err);
            let want = String::from_utf8_lossy(&reference.stdout);
            let got = String::from_utf8_lossy(&out);
            assert!(
                !want.is_empty(),
                "{tz} {trace} {opts:?}: babeltrace2 printed nothing"
            );
            if reference.status.success() {
                assert_eq!(status, 0, "{}", String::from_utf8_lossy(&err));
            }
            // Where babeltrace2 stops early (hello-lost), compare its lines.
            let n = want.lines().count();
            for (i, (a, b)) in got.lines().zip(want.lines()).enumerate() {
                assert_eq!(a, b, "{tz} {trace} {opts:?}: line {}", i + 1);
            }
            assert!(
                got.lines().count() >= n,
                "{tz} {trace} {opts:?}: missing lines"
            );
            if reference.status.success() {
                assert_eq!(got.lines().count(), n, "{tz} {trace} {opts:?}: extra lines");
            }
        }
    }
}
