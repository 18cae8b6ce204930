//! Traces written by `traceloom-pajegen` are valid for `pj_dump`, and
//! `traceloom dump --format pj_dump` prints exactly what pj_dump prints
//! for them.

use std::process::Command;

use traceloom_pajegen::{generate, GeneratorConfig};

fn pj_dump_installed() -> bool {
    Command::new("pj_dump").arg("--help").output().is_ok()
}

#[test]
fn generated_traces_dump_like_pj_dump() {
    if !pj_dump_installed() {
        eprintln!("note: pj_dump is not installed: test skipped");
        return;
    }
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
