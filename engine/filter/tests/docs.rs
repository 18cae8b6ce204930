//! Keeps the user documentation honest: every example in `docs/filter.md`
//! must parse, and every documented error message must be the real one.

use traceloom_filter::{parse, Filter};

const DOC: &str = include_str!("../../../docs/filter.md");

/// The lines of every ```text block.
fn example_blocks() -> Vec<Vec<&'static str>> {
    let mut blocks = Vec::new();
    let mut current: Option<Vec<&str>> = None;
    for line in DOC.lines() {
        match (&mut current, line.trim_end()) {
            (None, "```text") => current = Some(Vec::new()),
            (Some(_), "```") => blocks.push(current.take().unwrap()),
            (Some(lines), l) => lines.push(l),
            (None, _) => {}
        }
    }
    blocks
}

#[test]
fn documented_examples_parse_and_errors_are_exact() {
    let mut valid = 0;
    let mut errors = 0;
    for block in example_blocks() {
        let mut i = 0;
        while i < block.len() {
            let line = block[i];
            // `filter    column N: message` on one line ...
            if let Some(pos) = line.find("  column ") {
                let (src, msg) = (line[..pos].trim(), line[pos..].trim());
                assert_eq!(
                    parse(src).unwrap_err().to_string(),
                    msg,
                    "documented error for {src:?}"
                );
                errors += 1;
            // ... or `filter` then `column N: message` on the next line.
            } else if block
                .get(i + 1)
                .is_some_and(|next| next.starts_with("column "))
            {
                assert_eq!(
                    parse(line).unwrap_err().to_string(),
                    block[i + 1],
                    "documented error for {line:?}"
                );
                errors += 1;
                i += 1;
            } else {
                let src = line.split("  #").next().unwrap().trim();
                if !src.is_empty() {
                    Filter::new(src).unwrap_or_else(|e| panic!("documented example {src:?}: {e}"));
                    valid += 1;
                }
            }
            i += 1;
        }
    }
    assert!(valid >= 10, "only {valid} examples found");
    assert!(errors >= 8, "only {errors} error examples found");
}
