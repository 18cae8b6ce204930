//! `traceloom dump --format pj_dump FILE` prints exactly what `pj_dump FILE`
//! prints, on every bundled Pajé trace pj_dump reads.

use std::process::Command;

#[test]
fn dump_format_pj_dump_equals_pj_dump() {
    let root = traceloom_testdata::paje_root();
    traceloom_testdata::require(traceloom_testdata::Tool::PjDump);
    let mut files: Vec<_> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "trace"))
        .collect();
    files.push(root.join("multiple_files/root.trace"));
    files.sort();
    let mut compared = 0;
    for f in &files {
        let reference = Command::new("pj_dump").arg(f).output().unwrap();
        if !reference.status.success() {
            eprintln!("note: pj_dump refuses {}: not compared", f.display());
            continue;
        }
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
        assert_eq!(
            status,
            0,
            "{}: {}",
            f.display(),
            String::from_utf8_lossy(&err)
        );
        assert!(
            out == reference.stdout,
            "{}: output differs from pj_dump",
            f.display()
        );
        compared += 1;
    }
    assert!(compared >= 15, "only {compared} traces compared");
}

#[test]
fn a_pajé_error_names_the_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("bad.trace");
    std::fs::write(
        &f,
        "%EventDef PajeDefineContainerType 0\n% Alias string\n% Type string\n% Name string\n%EndEventDef\n0 CT 0 \"T\"\n42 what is this\n",
    )
    .unwrap();
    let mut out = Vec::new();
    let mut err = Vec::new();
    let status = traceloom_cli::run(
        [
            "traceloom",
            "dump",
            "--format",
            "pj_dump",
            f.to_str().unwrap(),
        ],
        &mut out,
        &mut err,
    );
    let err = String::from_utf8_lossy(&err);
    assert_eq!(status, 1, "{err}");
    assert!(err.contains("bad.trace") && err.contains('7'), "{err}");
}
