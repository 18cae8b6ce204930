//! Damaged traces through every command (issue 19): the committed corpus
//! of inputs that once crashed, hung or took gigabytes, replayed; then a
//! bounded, seeded mutation loop over the bundled traces — bit flips,
//! truncations and header damage in stream files, TSDL mutations, Pajé line
//! mutations — through `dump`, `count`, `stats` and `export`.
//!
//! Every case runs in a capped child process ([`isolated`]): no case may
//! panic, abort, take longer than 10 s, or use 1 GB. A failing case is
//! printed as a corpus line (`tests/corpus/mutations.txt`) to replay.
//!
//! `TRACELOOM_FUZZ_CASES` sets the number of generated cases (default
//! [`DEFAULT_CASES`]), `TRACELOOM_FUZZ_SEED` the seed.

mod isolated;

use std::ffi::OsString;
use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use isolated::{Limits, Outcome};

/// Generated cases of a normal test run.
const DEFAULT_CASES: usize = 2000;
/// The seed of a normal test run (a fixed one: the run is reproducible).
const DEFAULT_SEED: u64 = 0x7419_0019;
/// Peak memory allowed to a case.
const MAX_RSS: u64 = 1 << 30;

#[test]
fn isolated_child() {
    isolated::child_main_with(materialize);
}

/// A damaged input and the command run on it.
#[derive(Debug, Clone, PartialEq)]
struct Case {
    /// The bundled trace, under `traces/` (`ctf/...` or `paje/...`).
    trace: String,
    /// What is done to the copy.
    damage: Vec<Damage>,
    /// The command line, `{}` standing for the damaged trace and `{out}`
    /// for an output file outside it.
    command: Vec<String>,
}

/// One change to a copy of a trace.
#[derive(Debug, Clone, PartialEq)]
enum Damage {
    /// Bytes of `file` (relative to the trace) at `offset` set to `bytes`.
    Set {
        file: String,
        offset: u64,
        bytes: Vec<u8>,
    },
    /// `file` cut to `len` bytes.
    Truncate { file: String, len: u64 },
    /// Line `line` (0-based) of text file `file` replaced by `text`
    /// (`None`: removed).
    Line {
        file: String,
        line: usize,
        text: Option<String>,
    },
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
        .collect()
}

impl fmt::Display for Case {
    /// The corpus line: `TRACE | DAMAGE; DAMAGE | ARG ARG ...`, texts in
    /// hex so that any byte fits.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} |", self.trace)?;
        for (i, d) in self.damage.iter().enumerate() {
            let sep = if i == 0 { " " } else { "; " };
            match d {
                Damage::Set {
                    file,
                    offset,
                    bytes,
                } => write!(f, "{sep}set {file} {offset} {}", hex(bytes))?,
                Damage::Truncate { file, len } => write!(f, "{sep}truncate {file} {len}")?,
                Damage::Line { file, line, text } => match text {
                    Some(t) if t.is_empty() => write!(f, "{sep}line {file} {line} ~")?,
                    Some(t) => write!(f, "{sep}line {file} {line} {}", hex(t.as_bytes()))?,
                    None => write!(f, "{sep}line {file} {line} -")?,
                },
            }
        }
        write!(f, " | {}", self.command.join(" "))
    }
}

impl Case {
    /// Parses a corpus line (see [`Display`](fmt::Display)).
    fn parse(line: &str) -> Case {
        let parts: Vec<&str> = line.split(" | ").collect();
        let [trace, damage, command] = parts[..] else {
            panic!("corpus line {line:?}: expected TRACE | DAMAGE | COMMAND");
        };
        let damage = damage
            .trim()
            .split("; ")
            .filter(|d| !d.is_empty())
            .map(|d| {
                let w: Vec<&str> = d.split(' ').collect();
                match w[..] {
                    ["set", file, offset, bytes] => Damage::Set {
                        file: file.into(),
                        offset: offset.parse().expect("offset"),
                        bytes: unhex(bytes),
                    },
                    ["truncate", file, len] => Damage::Truncate {
                        file: file.into(),
                        len: len.parse().expect("length"),
                    },
                    ["line", file, line, text] => Damage::Line {
                        file: file.into(),
                        line: line.parse().expect("line number"),
                        text: match text {
                            "-" => None,
                            "~" => Some(String::new()),
                            t => Some(String::from_utf8_lossy(&unhex(t)).into_owned()),
                        },
                    },
                    _ => panic!("corpus damage {d:?}"),
                }
            })
            .collect();
        Case {
            trace: trace.trim().into(),
            damage,
            command: command.split_whitespace().map(str::to_string).collect(),
        }
    }
}

/// Copies `src` (file or directory) to `dst`.
fn copy(src: &Path, dst: &Path) {
    if src.is_dir() {
        fs::create_dir_all(dst).unwrap();
        for e in fs::read_dir(src).unwrap() {
            let e = e.unwrap();
            copy(&e.path(), &dst.join(e.file_name()));
        }
    } else {
        fs::copy(src, dst).unwrap();
    }
}

/// The damaged copy of `case`'s trace in a new temporary directory, and
/// the command line with its paths filled in.
fn prepare(case: &Case) -> (tempfile::TempDir, Vec<OsString>) {
    let t = tempfile::tempdir().unwrap();
    let src = traceloom_testdata::trace(&case.trace);
    let name = src.file_name().unwrap().to_owned();
    let dir = t.path().join("in");
    fs::create_dir(&dir).unwrap();
    let copy_root = dir.join(&name);
    // A Pajé file is copied alone (the multi-file trace names only
    // itself), into a folder of its own.
    let (trace_path, base) = if src.is_dir() {
        copy(&src, &copy_root);
        (copy_root.clone(), copy_root)
    } else {
        let folder = dir.join("paje");
        fs::create_dir(&folder).unwrap();
        copy(&src, &folder.join(&name));
        (folder.join(&name), folder)
    };
    for d in &case.damage {
        match d {
            Damage::Set {
                file,
                offset,
                bytes,
            } => {
                let p = base.join(file);
                let mut b = fs::read(&p).unwrap();
                let at = (*offset as usize).min(b.len());
                let end = (at + bytes.len()).min(b.len());
                b[at..end].copy_from_slice(&bytes[..end - at]);
                fs::write(&p, b).unwrap();
            }
            Damage::Truncate { file, len } => {
                let f = fs::OpenOptions::new()
                    .write(true)
                    .open(base.join(file))
                    .unwrap();
                let cur = f.metadata().unwrap().len();
                f.set_len((*len).min(cur)).unwrap();
            }
            Damage::Line { file, line, text } => {
                let p = base.join(file);
                let b = fs::read(&p).unwrap();
                let mut lines: Vec<Vec<u8>> =
                    b.split(|&c| c == b'\n').map(<[u8]>::to_vec).collect();
                if *line < lines.len() {
                    match text {
                        Some(t) => lines[*line] = t.clone().into_bytes(),
                        None => {
                            lines.remove(*line);
                        }
                    }
                }
                fs::write(&p, lines.join(&b'\n')).unwrap();
            }
        }
    }
    let out = t.path().join("out.svg");
    let args = case
        .command
        .iter()
        .map(|a| match a.as_str() {
            "{}" => trace_path.clone().into_os_string(),
            "{out}" => out.clone().into_os_string(),
            _ => OsString::from(a),
        })
        .collect();
    (t, args)
}

/// The child's side: a case arrives as its corpus line.
fn materialize(args: Vec<OsString>) -> (Box<dyn std::any::Any>, Vec<OsString>) {
    let line = args[0].to_string_lossy().into_owned();
    let (t, args) = prepare(&Case::parse(&line));
    (Box::new(t), args)
}

/// A small deterministic generator (splitmix64): the run is the same on
/// every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next() % n
        }
    }

    fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[self.below(v.len() as u64) as usize]
    }
}

/// The CTF traces mutated: small ones, of every kind the readers meet
/// (kernel and UST, packetized and plain-text TSDL metadata, CTF 2 JSON
/// metadata, both byte orders).
const CTF_TRACES: [&str; 11] = [
    "ctf/tracecompass/CTF2-7.0-trace-with-index",
    "ctf/tracecompass/CTF2-7.0-lttng-crash",
    "ctf/tracecompass/CTF2-vl-ints",
    "ctf/tracecompass/context-switches-ust",
    "ctf/tracecompass/ctf-sequence-empty",
    "ctf/tracecompass/debuginfo-test-app2",
    "ctf/tracecompass/mpi_allreduce",
    "ctf/tracecompass/bandwidth_issue",
    "ctf/tracecompass/perf-taskset2",
    "ctf/tracecompass/flipping-endianness",
    "ctf/tracecompass/bug446190",
];

const PAJE_TRACES: [&str; 7] = [
    "paje/states.trace",
    "paje/containers.trace",
    "paje/events.trace",
    "paje/links.trace",
    "paje/variables.trace",
    "paje/categories.trace",
    "paje/multiple_files/root.trace",
];

fn ctf_command(rng: &mut Rng) -> Vec<String> {
    let c: &[&str] = match rng.below(8) {
        0 | 1 => &["dump", "{}"],
        2 | 3 => &["count", "{}"],
        4 | 5 => &["stats", "{}"],
        6 => &["export", "--view", "controlflow", "-o", "{out}", "{}"],
        _ => match rng.below(3) {
            0 => &["export", "--view", "resources", "-o", "{out}", "{}"],
            1 => &["export", "--view", "histogram", "-o", "{out}", "{}"],
            _ => &["export", "--view", "statistics", "-o", "{out}", "{}"],
        },
    };
    c.iter().map(|s| s.to_string()).collect()
}

fn paje_command(rng: &mut Rng) -> Vec<String> {
    let c: &[&str] = if rng.below(2) == 0 {
        &["dump", "--format", "pj_dump", "{}"]
    } else {
        &["export", "--view", "controlflow", "-o", "{out}", "{}"]
    };
    c.iter().map(|s| s.to_string()).collect()
}

/// Files of a trace directory, by name, with their sizes.
fn files(dir: &Path) -> Vec<(String, u64)> {
    let mut v: Vec<(String, u64)> = fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let e = e.ok()?;
            let md = e.metadata().ok()?;
            md.is_file()
                .then(|| (e.file_name().to_string_lossy().into_owned(), md.len()))
        })
        .collect();
    v.sort();
    v
}

/// Interesting values for a damaged field.
fn field_bytes(rng: &mut Rng) -> Vec<u8> {
    let n = [1usize, 2, 4, 8][rng.below(4) as usize];
    match rng.below(4) {
        0 => vec![0xFF; n],
        1 => vec![0; n],
        2 => {
            let mut v = vec![0; n];
            v[n - 1] = 0x80;
            v
        }
        _ => (0..n).map(|_| rng.next() as u8).collect(),
    }
}

/// A damaged TSDL line: a token removed, a number made huge, nesting
/// opened, or the line cut.
fn tsdl_line(rng: &mut Rng, line: &str) -> Option<String> {
    let words: Vec<&str> = line.split(' ').collect();
    Some(match rng.below(6) {
        0 => return None,
        1 => {
            let mut w = words.clone();
            if !w.is_empty() {
                w.remove(rng.below(w.len() as u64) as usize);
            }
            w.join(" ")
        }
        2 => {
            let mut w: Vec<String> = words.iter().map(|s| s.to_string()).collect();
            for x in &mut w {
                if x.trim_end_matches(';').chars().all(|c| c.is_ascii_digit()) && !x.is_empty() {
                    const HUGE: [&str; 4] = ["4294967295", "18446744073709551615", "0", "99999999"];
                    let by: &str = HUGE[rng.below(HUGE.len() as u64) as usize];
                    *x = x.replace(x.trim_end_matches(';'), by);
                }
            }
            w.join(" ")
        }
        3 => format!("{}{}", "struct { ".repeat(rng.below(100) as usize), line),
        4 => line[..line.len() / 2].to_string(),
        _ => format!("{line} {line}"),
    })
}

/// A damaged line of CTF 2 JSON metadata: removed, a number made huge or
/// negative, a string made unknown, an array opened deeply, or the line
/// cut or doubled.
fn json_line(rng: &mut Rng, line: &str) -> Option<String> {
    Some(match rng.below(7) {
        0 => return None,
        1 => {
            const HUGE: [&str; 5] = ["18446744073709551616", "-1", "0", "4294967296", "1e400"];
            let by = HUGE[rng.below(HUGE.len() as u64) as usize];
            let digits: String = line.chars().filter(char::is_ascii_digit).collect();
            if digits.is_empty() {
                format!("{line}{by}")
            } else {
                line.replacen(
                    &digits[..1 + rng.below(digits.len() as u64) as usize],
                    by,
                    1,
                )
            }
        }
        2 => match line.rfind(": \"") {
            Some(i) => format!("{}: \"x-unknown\",", &line[..i]),
            None => format!("{line} \"x\""),
        },
        3 => format!("{}{}", "[".repeat(rng.below(300) as usize), line),
        4 => line[..line.len() / 2].to_string(),
        5 => "\u{1e}".to_string(),
        _ => format!("{line}\n{line}"),
    })
}

/// A damaged Pajé line: fields dropped or added, a field replaced by a
/// huge number, an empty or long word, or the line cut.
fn paje_line(rng: &mut Rng, line: &str) -> Option<String> {
    let mut w: Vec<String> = line.split_whitespace().map(str::to_string).collect();
    if w.is_empty() {
        return Some("0".into());
    }
    let i = rng.below(w.len() as u64) as usize;
    Some(match rng.below(7) {
        0 => return None,
        1 => {
            w.remove(i);
            w.join(" ")
        }
        2 => {
            w[i] = rng
                .pick(&["1e308", "-1", "nan", "inf", "99999999999999999999", "\"\""])
                .to_string();
            w.join(" ")
        }
        3 => {
            w[i] = "x".repeat(rng.below(5000) as usize + 1);
            w.join(" ")
        }
        4 => {
            w.push(w[i].clone());
            w.join(" ")
        }
        5 => line[..line.len() / 2].to_string(),
        _ => {
            w[i] = format!("\"{}", w[i]);
            w.join(" ")
        }
    })
}

/// Case `i` of the seeded loop.
fn generate(rng: &mut Rng) -> Case {
    if rng.below(4) == 0 {
        let trace = *rng.pick(&PAJE_TRACES);
        let path = traceloom_testdata::trace(trace);
        let text = fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        let damage = (0..=rng.below(3))
            .map(|_| {
                let line = rng.below(lines.len() as u64) as usize;
                Damage::Line {
                    file: file.clone(),
                    line,
                    text: paje_line(rng, lines[line]),
                }
            })
            .collect();
        return Case {
            trace: trace.into(),
            damage,
            command: paje_command(rng),
        };
    }
    let trace = *rng.pick(&CTF_TRACES);
    let dir = traceloom_testdata::trace(trace);
    let all = files(&dir);
    let streams: Vec<&(String, u64)> = all.iter().filter(|(n, _)| n != "metadata").collect();
    let metadata_len = all.iter().find(|(n, _)| n == "metadata").map_or(0, |f| f.1);
    let head = fs::read(dir.join("metadata")).unwrap_or_default();
    let text_metadata = head.starts_with(b"/* CTF");
    let json_metadata = head.first() == Some(&0x1E);
    let (name, len) = (*rng.pick(&streams)).clone();
    let damage = match rng.below(6) {
        // Bit flips anywhere in a stream file.
        0 => {
            let bytes = fs::read(dir.join(&name)).unwrap();
            (0..=rng.below(4))
                .map(|_| {
                    let at = rng.below(len);
                    Damage::Set {
                        file: name.clone(),
                        offset: at,
                        bytes: vec![bytes[at as usize] ^ (1u8 << rng.below(8))],
                    }
                })
                .collect()
        }
        // Truncation.
        1 => vec![Damage::Truncate {
            file: name,
            len: rng.below(len),
        }],
        // Header damage: the packet header and context of a packet (LTTng
        // packets are a multiple of 4 KiB; the headers come first).
        2 | 3 => {
            let packet = rng.below(len.div_ceil(4096)) * 4096;
            vec![Damage::Set {
                file: name,
                offset: packet + rng.below(96),
                bytes: field_bytes(rng),
            }]
        }
        // Metadata damage: JSON lines of CTF 2 metadata.
        _ if json_metadata && rng.below(4) != 0 => {
            let text = fs::read_to_string(dir.join("metadata")).unwrap();
            let lines: Vec<&str> = text.lines().collect();
            (0..=rng.below(2))
                .map(|_| {
                    let line = rng.below(lines.len() as u64) as usize;
                    Damage::Line {
                        file: "metadata".into(),
                        line,
                        text: json_line(rng, lines[line]),
                    }
                })
                .collect()
        }
        // Metadata damage.
        _ if text_metadata => {
            let text = fs::read_to_string(dir.join("metadata")).unwrap();
            let lines: Vec<&str> = text.lines().collect();
            (0..=rng.below(2))
                .map(|_| {
                    let line = rng.below(lines.len() as u64) as usize;
                    Damage::Line {
                        file: "metadata".into(),
                        line,
                        text: tsdl_line(rng, lines[line]),
                    }
                })
                .collect()
        }
        _ => {
            if rng.below(2) == 0 {
                vec![Damage::Set {
                    file: "metadata".into(),
                    offset: rng.below(metadata_len),
                    bytes: field_bytes(rng),
                }]
            } else {
                vec![Damage::Truncate {
                    file: "metadata".into(),
                    len: rng.below(metadata_len),
                }]
            }
        }
    };
    Case {
        trace: trace.into(),
        damage,
        command: ctf_command(rng),
    }
}

fn env_number(name: &str) -> Option<u64> {
    let v = std::env::var(name).ok()?;
    let v = v.trim();
    match v.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => v.parse().ok(),
    }
}

/// Runs `cases`, asserting the bounds; returns the peak RSS.
fn check(what: &str, cases: &[Case]) -> u64 {
    let lines: Vec<Vec<OsString>> = cases
        .iter()
        .map(|c| vec![OsString::from(c.to_string())])
        .collect();
    let limits = Limits::default();
    let start = Instant::now();
    let batch = isolated::run_batch(&lines, limits);
    let mut failures = Vec::new();
    let mut slowest = Duration::ZERO;
    for (case, r) in cases.iter().zip(&batch.cases) {
        slowest = slowest.max(r.elapsed);
        let bad = match &r.outcome {
            Outcome::Exit(0 | 1) => None,
            Outcome::Exit(c) => Some(format!("exit status {c}")),
            Outcome::Died(how) => Some(format!("died: {how}")),
            Outcome::Hung => Some(format!("over {:?}", limits.case_timeout)),
        };
        if let Some(why) = bad {
            failures.push(format!("{why}\n    {case}"));
        }
    }
    eprintln!(
        "{what}: {} cases in {:.1} s, slowest {:.2} s, peak memory {} MB",
        cases.len(),
        start.elapsed().as_secs_f64(),
        slowest.as_secs_f64(),
        batch.peak_rss >> 20
    );
    assert!(
        failures.is_empty(),
        "{what}: {} failing case(s) (add them to tests/corpus/mutations.txt):\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(
        batch.peak_rss < MAX_RSS,
        "{what}: peak memory {} MB",
        batch.peak_rss >> 20
    );
    batch.peak_rss
}

fn corpus() -> Vec<Case> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("corpus/mutations.txt");
    fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(Case::parse)
        .collect()
}

#[test]
fn corpus_cases_pass() {
    let cases = corpus();
    assert!(!cases.is_empty());
    check("corpus", &cases);
}

#[test]
fn seeded_mutations_pass() {
    let n = env_number("TRACELOOM_FUZZ_CASES").map_or(DEFAULT_CASES, |n| n as usize);
    let seed = env_number("TRACELOOM_FUZZ_SEED").unwrap_or(DEFAULT_SEED);
    let mut rng = Rng(seed);
    let cases: Vec<Case> = (0..n).map(|_| generate(&mut rng)).collect();
    // The corpus format round-trips every generated case.
    for c in &cases {
        assert_eq!(&Case::parse(&c.to_string()), c);
    }
    check(&format!("seed {seed:#x}"), &cases);
}

/// `TRACELOOM_FUZZ_REPLAY='CORPUS LINE'`: runs that case in this process,
/// with its output, to debug it (without the variable, does nothing).
#[test]
fn replay_one() {
    let Ok(line) = std::env::var("TRACELOOM_FUZZ_REPLAY") else {
        return;
    };
    let (_t, args) = prepare(&Case::parse(&line));
    let mut argv: Vec<OsString> = vec!["traceloom".into()];
    argv.extend(args);
    let mut out = Vec::new();
    let mut err = Vec::new();
    let code = traceloom_cli::run(argv, &mut out, &mut err);
    eprintln!(
        "exit status {code}\n--- stdout (first 2000 bytes)\n{}\n--- stderr\n{}",
        String::from_utf8_lossy(&out[..out.len().min(2000)]),
        String::from_utf8_lossy(&err)
    );
}
