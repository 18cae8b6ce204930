//! traceloom's export of `g5k.trace` and `simu-mardi.trace` side by side
//! with ViTE's (`vite -f TRACE -e OUT.svg`): the element counts per kind
//! of both SVGs. ViTE's counts are committed in `tests/expected/vite/`
//! (`scripts/vite-counts.sh` regenerates them with the Debian package
//! `vite`), so this test needs no ViTE.
//!
//! What "the same visible" means per kind, given that ViTE 1.2's export
//! draws every container and every variable piece but leaves links out
//! (its links group is empty) and, at its fixed 800 px, draws only part of
//! the states:
//!
//! * containers: one rect per container in ViTE; one row per container in
//!   ours (their sub-rows aside) — equal, and every container's name is
//!   among our SVG's row labels when the SVG holds every row (it is cut at
//!   32,767 px);
//! * variables: ViTE draws one line per variable piece; ours one chart per
//!   variable (container and type) — ViTE's pieces are the reader's, our
//!   charts are the reader's variables, and there are variables in both
//!   exactly when the trace has some;
//! * states: at 1,920 px we draw at least as many state rects as ViTE, in
//!   every colour ViTE uses (the trace's own colours);
//! * links: ours are the reader's links with both ends, an arrow each or,
//!   beyond the arrows a render keeps per pixel, sampled arrows counting
//!   for them all; ViTE's export draws none.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use traceloom_paje::{Trace, TypeNature};
use traceloom_viewers::model::{PajeData, PajeView};

/// ViTE's counts for a trace.
struct Vite {
    containers: usize,
    states: usize,
    links: usize,
    variables: usize,
    state_colors: BTreeSet<String>,
}

fn vite(name: &str) -> Vite {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("expected/vite")
        .join(format!("{name}.counts"));
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (scripts/vite-counts.sh makes it)", path.display()));
    let mut v = Vite {
        containers: 0,
        states: 0,
        links: 0,
        variables: 0,
        state_colors: BTreeSet::new(),
    };
    for line in text.lines() {
        let (k, x) = line.split_once(' ').expect("key value");
        let n = || x.parse::<usize>().expect("a count");
        match k {
            "containers" => v.containers = n(),
            "states" => v.states = n(),
            "links" => v.links = n(),
            "variables" => v.variables = n(),
            "state_color" => {
                v.state_colors.insert(x.to_string());
            }
            _ => panic!("unknown key {k} in {}", path.display()),
        }
    }
    v
}

/// Elements of an SVG per (innermost `class`ed group, tag), with the
/// texts of each group, from a plain scan of its tags (our exports only:
/// one element per tag, attributes in double quotes).
#[derive(Default)]
struct Svg {
    counts: BTreeMap<(String, String), usize>,
    texts: BTreeMap<String, Vec<String>>,
}

fn attr<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let key = format!(" {name}=\"");
    let at = tag.find(&key)? + key.len();
    tag[at..].split('"').next()
}

fn scan(svg: &str) -> Svg {
    let mut out = Svg::default();
    let mut stack: Vec<Option<String>> = Vec::new();
    let mut rest = svg;
    while let Some(open) = rest.find('<') {
        let close = rest[open..].find('>').expect("closed tag") + open;
        let tag = &rest[open + 1..close];
        let after = &rest[close + 1..];
        let group = || {
            stack
                .iter()
                .rev()
                .flatten()
                .next()
                .cloned()
                .unwrap_or_default()
        };
        if let Some(name) = tag.strip_prefix('/') {
            if name.trim() == "g" {
                stack.pop();
            }
        } else if !tag.starts_with('?') && !tag.starts_with('!') {
            let name = tag.split([' ', '/']).next().unwrap_or("").to_string();
            if name == "g" {
                if !tag.ends_with('/') {
                    stack.push(attr(tag, "class").map(str::to_string));
                }
            } else {
                let g = group();
                *out.counts.entry((g.clone(), name.clone())).or_default() += 1;
                if name == "text" {
                    let text = after.split('<').next().unwrap_or("");
                    out.texts.entry(g).or_default().push(
                        text.replace("&lt;", "<")
                            .replace("&gt;", ">")
                            .replace("&quot;", "\"")
                            .replace("&amp;", "&"),
                    );
                }
            }
        }
        rest = after;
    }
    out
}

impl Svg {
    fn count(&self, group: &str, tag: &str) -> usize {
        self.counts
            .get(&(group.to_string(), tag.to_string()))
            .copied()
            .unwrap_or(0)
    }
}

/// The reader's truth: container names, variables (container, type) and
/// pieces, links with both ends.
fn reader(path: &Path) -> (Vec<String>, usize, usize, usize) {
    let t = Trace::open(path).expect("the reader opens it");
    let names = t
        .model
        .containers()
        .iter()
        .skip(1)
        .map(|c| {
            String::from_utf8_lossy(if c.name.is_empty() { &c.alias } else { &c.name }).into_owned()
        })
        .collect();
    let (mut vars, mut pieces, mut links) = (0, 0, 0);
    for ci in 0..t.model.containers().len() {
        let c = traceloom_paje::ContainerId(ci as u32);
        for (ti, ty) in t.model.types().iter().enumerate() {
            let id = traceloom_paje::TypeId(ti as u32);
            match ty.nature {
                TypeNature::Variable => {
                    let v = t.entities.variables(c, id);
                    vars += usize::from(!v.is_empty());
                    pieces += v.len();
                }
                TypeNature::Link { .. } => {
                    links += t
                        .entities
                        .links(c, id)
                        .iter()
                        .filter(|l| {
                            l.start_container.is_some()
                                && l.end_container.is_some()
                                && l.start >= 0.0
                                && l.end >= 0.0
                        })
                        .count()
                }
                _ => {}
            }
        }
    }
    (names, vars, pieces, links)
}

fn export(path: &Path, out: &Path) -> Svg {
    let args = [
        "traceloom",
        "export",
        path.to_str().unwrap(),
        "--width",
        "1920",
        "-o",
        out.to_str().unwrap(),
    ];
    let (mut o, mut e) = (Vec::new(), Vec::new());
    let code = traceloom_cli::run(args.iter().map(|s| s.to_string()), &mut o, &mut e);
    assert_eq!(code, 0, "export failed: {}", String::from_utf8_lossy(&e));
    scan(&std::fs::read_to_string(out).expect("the SVG"))
}

fn compare(name: &str) {
    let path = traceloom_testdata::paje(&format!("{name}.trace"));
    let v = vite(name);
    let (names, vars, pieces, links) = reader(&path);
    let dir = tempfile::tempdir().unwrap();
    let ours = export(&path, &dir.path().join("out.svg"));

    // Containers: ViTE squeezes all of them into 600 px; our export is
    // cut at 32,767 px (g5k's 4,797 containers need more), so they are
    // counted in the render the SVG is drawn from, and their names in the
    // SVG when it holds every row.
    assert_eq!(v.containers, names.len(), "{name}: ViTE's containers");
    let (data, _) = PajeData::open(&path).expect("the pass");
    let render = data.render(data.span, 1920, &PajeView::default());
    let rows = render.tree().rows();
    let container_rows = rows.iter().filter(|r| r.id.0 & 0xFFFF == 0).count();
    assert_eq!(container_rows, v.containers, "{name}: our container rows");
    let labels: BTreeSet<&str> = ours
        .texts
        .get("tree")
        .map(|v| v.iter().map(String::as_str).collect())
        .unwrap_or_default();
    if ours.texts.get("tree").map_or(0, Vec::len) >= rows.len() {
        let missing = names
            .iter()
            .filter(|n| !labels.contains(n.as_str()))
            .count();
        assert_eq!(missing, 0, "{name}: containers missing from our SVG's tree");
    }

    // What our SVG draws, counted in the render it is drawn from (all of
    // it when the SVG is not cut).
    let whole = ours.texts.get("tree").map_or(0, Vec::len) >= rows.len();
    let our_states: usize = (0..rows.len()).map(|i| render.states(i).len()).sum();
    let our_vars = render.counters().len();
    let our_links: usize = render.arrow_series().iter().map(|a| a.arrows.len()).sum();
    if whole {
        assert_eq!(
            ours.count("states", "rect"),
            our_states,
            "{name}: SVG states"
        );
        assert_eq!(
            ours.count("counters", "polyline"),
            our_vars,
            "{name}: SVG charts"
        );
        assert_eq!(
            ours.count("arrows", "line"),
            our_links,
            "{name}: SVG arrows"
        );
    }

    // Variables: one chart (area and line) per variable.
    assert_eq!(v.variables, pieces, "{name}: ViTE's variable pieces");
    assert_eq!(our_vars, vars, "{name}: our variables");
    assert_eq!(v.variables > 0, vars > 0);

    // States: at least ViTE's, in every colour ViTE uses.
    assert!(
        our_states >= v.states,
        "{name}: {our_states} state rects, ViTE {}",
        v.states
    );
    let presentation = data.presentation();
    let colors: BTreeSet<String> = render
        .used_states()
        .iter()
        .map(|k| presentation.state(k.as_str()).style.color.hex()[1..].to_string())
        .collect();
    let missing: Vec<&String> = v.state_colors.difference(&colors).collect();
    assert!(
        missing.is_empty(),
        "{name}: ViTE's state colours {missing:?} not ours"
    );

    // Links: every link with both ends stands in the render (ViTE's
    // export has none): an arrow each, or, beyond the control flow view's
    // arrows per pixel, evenly sampled arrows counting for the others.
    assert_eq!(v.links, 0, "{name}: ViTE 1.2 exports no link");
    let counted: u64 = render
        .arrow_series()
        .iter()
        .flat_map(|s| s.arrows.iter())
        .map(|a| u64::from(a.count))
        .sum();
    assert_eq!(counted, links as u64, "{name}: our links");
    let cap = (1920.0 * traceloom_viewers::model::controlflow::ARROWS_PER_PIXEL) as usize;
    for s in render.arrow_series() {
        assert!(s.arrows.len() <= cap, "{name}: {} arrows", s.arrows.len());
    }
    assert!(links > 0);

    println!(
        "{name}: containers {container_rows} / {}, states {our_states} / {}, links {counted} in {our_links} arrows / {}, variables {our_vars} charts / {} pieces (traceloom / ViTE)",
        v.containers,
        v.states,
        v.links,
        v.variables
    );
}

#[test]
fn g5k_side_by_side_with_vite() {
    compare("g5k");
}

#[test]
fn simu_mardi_side_by_side_with_vite() {
    compare("simu-mardi");
}
