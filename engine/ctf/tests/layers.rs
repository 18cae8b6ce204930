//! The crate's modules form a one-way stack (the table in `src/lib.rs`):
//! a module imports only modules of its own layer or of layers below, and
//! the modules of one layer import each other without a cycle. Read from
//! the sources: every `crate::` path outside comments and test modules.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers, lowest first: the first path component of a module.
const LAYERS: &[&[&str]] = &[
    &["error", "trace", "classes"],
    &["event"],
    &["decode"],
    &["schema"],
    &["stream"],
    &["fs"],
    &["merge"],
];

/// The module path of a source file (`stream/mod.rs` → `stream`,
/// `decode/plan/fast.rs` → `decode::plan::fast`).
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    parts.join("::")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The `crate::a::b...` paths of `text`, outside comments and before the
/// first test module.
fn crate_paths(text: &str) -> Vec<Vec<String>> {
    let code = text.split("#[cfg(test)]\nmod tests").next().unwrap_or("");
    let mut out = Vec::new();
    for line in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
        let mut rest = line;
        while let Some(i) = rest.find("crate::") {
            rest = &rest[i + "crate::".len()..];
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
                .unwrap_or(rest.len());
            let path = rest[..end]
                .split("::")
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect();
            out.push(path);
        }
    }
    out
}

fn layer_of(module: &str) -> usize {
    let top = module.split("::").next().unwrap();
    LAYERS
        .iter()
        .position(|l| l.contains(&top))
        .unwrap_or_else(|| panic!("module {module} is in no layer of this test's table"))
}

#[test]
fn modules_import_only_downwards_and_without_cycles() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let modules: BTreeMap<String, PathBuf> = files
        .into_iter()
        .map(|f| (module_of(&src, &f), f))
        .filter(|(m, _)| !m.is_empty())
        .collect();
    let mut edges: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    let mut upward = BTreeSet::new();
    for (m, file) in &modules {
        let text = std::fs::read_to_string(file).unwrap();
        for path in crate_paths(&text) {
            // The longest prefix of the path that is a module.
            let target = (1..=path.len())
                .rev()
                .map(|k| path[..k].join("::"))
                .find(|p| modules.contains_key(p));
            let Some(target) = target else { continue };
            let (target, _) = modules.get_key_value(&target).unwrap();
            // A module's own items and its ancestors' (private helpers of
            // the file it sits in) do not count.
            if target == m || m.starts_with(&format!("{target}::")) {
                continue;
            }
            if layer_of(target) > layer_of(m) {
                upward.insert(format!("{m} imports {target}"));
            }
            edges.entry(m).or_default().insert(target);
        }
    }
    assert!(
        upward.is_empty(),
        "imports from a higher layer: {upward:#?}"
    );

    // Depth-first search for a cycle among the remaining edges.
    fn visit<'a>(
        m: &'a str,
        edges: &BTreeMap<&'a str, BTreeSet<&'a str>>,
        state: &mut BTreeMap<&'a str, bool>,
        stack: &mut Vec<&'a str>,
    ) {
        match state.get(m) {
            Some(true) => return,
            Some(false) => panic!("import cycle: {stack:?} -> {m}"),
            None => {}
        }
        state.insert(m, false);
        stack.push(m);
        for &t in edges.get(m).into_iter().flatten() {
            visit(t, edges, state, stack);
        }
        stack.pop();
        state.insert(m, true);
    }
    let mut state = BTreeMap::new();
    for m in modules.keys() {
        visit(m, &edges, &mut state, &mut Vec::new());
    }
    // The test reads what it should: the crate has its layers' modules.
    assert!(edges.len() > 10, "{edges:?}");
}
