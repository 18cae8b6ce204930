//! Presentation and data configuration.
//!
//! As in the Trace Compass proposal, how things look ([`PresentationConfig`]:
//! state key → colour, height; event key → symbol; arrow series → line
//! style) is separate from what is fetched ([`DataConfig`]: which rows, tree
//! flattening and order, which arrow series). Changing the presentation only
//! needs a redraw of the same render; changing the data needs a new render.

use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};

use crate::render::types::{RowId, StyleKey};

/// An sRGB colour with alpha, 8 bits per channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Rgba {
    /// Red.
    pub r: u8,
    /// Green.
    pub g: u8,
    /// Blue.
    pub b: u8,
    /// Alpha (255 = opaque).
    pub a: u8,
}

impl Rgba {
    /// An opaque colour.
    pub const fn rgb(r: u8, g: u8, b: u8) -> Self {
        Rgba { r, g, b, a: 255 }
    }

    /// A colour with alpha.
    pub const fn translucent(r: u8, g: u8, b: u8, a: u8) -> Self {
        Rgba { r, g, b, a }
    }

    /// Opaque colour from a 16-bit-per-channel GdkColor, as LTTV's tables
    /// write them (`0xFF00` → 255).
    pub const fn from_gdk16(r: u16, g: u16, b: u16) -> Self {
        Rgba::rgb((r >> 8) as u8, (g >> 8) as u8, (b >> 8) as u8)
    }

    /// The same colour with another alpha.
    pub const fn with_alpha(self, a: u8) -> Self {
        Rgba { a, ..self }
    }

    /// Channels as cairo wants them (0.0–1.0).
    pub fn to_f64(self) -> (f64, f64, f64, f64) {
        (
            self.r as f64 / 255.0,
            self.g as f64 / 255.0,
            self.b as f64 / 255.0,
            self.a as f64 / 255.0,
        )
    }

    /// `#rrggbb`, for SVG attributes (alpha goes to a separate opacity).
    pub fn hex(self) -> String {
        format!("#{:02x}{:02x}{:02x}", self.r, self.g, self.b)
    }

    /// Relative luminance (0 = black, 1 = white), to pick readable text.
    pub fn luminance(self) -> f64 {
        fn lin(c: u8) -> f64 {
            let c = c as f64 / 255.0;
            if c <= 0.04045 {
                c / 12.92
            } else {
                ((c + 0.055) / 1.055).powf(2.4)
            }
        }
        0.2126 * lin(self.r) + 0.7152 * lin(self.g) + 0.0722 * lin(self.b)
    }

    /// Black or white, whichever reads better on this colour.
    pub fn contrasting_text(self) -> Rgba {
        if self.luminance() > 0.35 {
            Rgba::rgb(0, 0, 0)
        } else {
            Rgba::rgb(255, 255, 255)
        }
    }
}

/// How a line is stroked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum LineStyle {
    /// Continuous.
    #[default]
    Solid,
    /// Long dashes.
    Dashed,
    /// Dots.
    Dotted,
}

impl LineStyle {
    /// Dash pattern for a line of width `w` (empty for solid).
    pub fn dashes(self, w: f64) -> Vec<f64> {
        match self {
            LineStyle::Solid => Vec::new(),
            LineStyle::Dashed => vec![4.0 * w.max(1.0), 3.0 * w.max(1.0)],
            LineStyle::Dotted => vec![w.max(1.0), 2.0 * w.max(1.0)],
        }
    }
}

/// Marker drawn for a drawn event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Symbol {
    /// A disc.
    #[default]
    Circle,
    /// A square.
    Square,
    /// A diamond.
    Diamond,
    /// An upward triangle.
    Triangle,
    /// An `×`.
    Cross,
    /// A `+`.
    Plus,
    /// A five-pointed star.
    Star,
}

/// Look of one state.
#[derive(Debug, Clone, PartialEq)]
pub struct StateStyle {
    /// Name shown in the legend and tooltips.
    pub label: String,
    /// Fill colour.
    pub color: Rgba,
    /// Bar height as a fraction of the row's bar height (0–1]: waiting states
    /// are drawn thinner than running ones, so activity stands out.
    pub height: f64,
}

/// Look of one kind of drawn event.
#[derive(Debug, Clone, PartialEq)]
pub struct EventStyle {
    /// Name shown in the legend.
    pub label: String,
    /// Fill colour of the marker.
    pub color: Rgba,
    /// Marker shape.
    pub symbol: Symbol,
}

/// Look of one arrow series.
#[derive(Debug, Clone, PartialEq)]
pub struct ArrowStyle {
    /// Name shown in the legend.
    pub label: String,
    /// Line and head colour.
    pub color: Rgba,
    /// Line pattern.
    pub line: LineStyle,
    /// Line width in pixels.
    pub width: f64,
}

/// Look of one counter.
#[derive(Debug, Clone, PartialEq)]
pub struct CounterStyle {
    /// Name shown in the legend.
    pub label: String,
    /// Line colour; the area under it is the same colour, translucent.
    pub color: Rgba,
}

/// A style resolved for a key: the configured one, or a generated one for a
/// key the configuration does not know (Pajé values, new event names...).
#[derive(Debug, Clone, PartialEq)]
pub struct Resolved<'a, S: Clone> {
    /// The style.
    pub style: std::borrow::Cow<'a, S>,
    /// Whether it came from the configuration.
    pub configured: bool,
}

/// An ordered key → style table (the order is the legend's).
#[derive(Debug, Clone, PartialEq)]
pub struct StyleTable<S> {
    entries: Vec<(StyleKey, S)>,
    index: HashMap<StyleKey, usize>,
}

impl<S> Default for StyleTable<S> {
    fn default() -> Self {
        StyleTable {
            entries: Vec::new(),
            index: HashMap::new(),
        }
    }
}

impl<S> StyleTable<S> {
    /// Sets the style of `key`, keeping its place if it was already there.
    pub fn set(&mut self, key: impl Into<StyleKey>, style: S) {
        let key = key.into();
        match self.index.get(&key) {
            Some(&i) => self.entries[i].1 = style,
            None => {
                self.index.insert(key.clone(), self.entries.len());
                self.entries.push((key, style));
            }
        }
    }

    /// The configured style of `key`.
    pub fn get(&self, key: &str) -> Option<&S> {
        self.index.get(key).map(|&i| &self.entries[i].1)
    }

    /// Entries in legend order.
    pub fn iter(&self) -> impl Iterator<Item = (&StyleKey, &S)> {
        self.entries.iter().map(|(k, s)| (k, s))
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there is no entry.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// Everything about how renders look: styles per key, and the view's own
/// colours. Shared by the GUI and the exports so they look the same.
#[derive(Debug, Clone, PartialEq)]
pub struct PresentationConfig {
    /// State styles, in legend order.
    pub states: StyleTable<StateStyle>,
    /// Drawn-event styles.
    pub events: StyleTable<EventStyle>,
    /// Arrow-series styles.
    pub arrows: StyleTable<ArrowStyle>,
    /// Counter styles.
    pub counters: StyleTable<CounterStyle>,
    /// Colours for keys the tables do not know, picked by a hash of the key
    /// so that a key keeps its colour from one render to the next.
    pub fallback_palette: Vec<Rgba>,
    /// Background of the whole drawing.
    pub background: Rgba,
    /// Text and axis lines.
    pub foreground: Rgba,
    /// Secondary text (tick labels' units, column headers).
    pub muted: Rgba,
    /// Background of the time axis and headers.
    pub header_background: Rgba,
    /// Vertical grid lines at the axis ticks.
    pub grid: Rgba,
    /// Background of every other row.
    pub zebra: Rgba,
    /// Background of the selected row.
    pub selected_row: Rgba,
    /// Fill of the selected time range.
    pub selection: Rgba,
    /// The current-time marker.
    pub current_time: Rgba,
    /// Mark on top of intervals that stand for several merged intervals
    /// (LTTV's "collision indicator").
    pub mixed_marker: Rgba,
    /// Histogram bars.
    pub histogram_bar: Rgba,
    /// Lost-events marks.
    pub lost_events: Rgba,
}

/// State key of an interval without data (a damaged stream's rows after
/// the last event read from it): drawn hatched, whatever its colour.
pub const NO_DATA: &str = "no-data";

/// Keys of the control-flow view's states, events and arrow series.
pub mod control_flow {
    use traceloom_engine::state::{ExecMode, ThreadStatus};

    /// Running in user mode.
    pub const RUN_USER: &str = "run-user";
    /// Running in a system call.
    pub const RUN_SYSCALL: &str = "run-syscall";
    /// Running a trap / exception handler.
    pub const RUN_TRAP: &str = "run-trap";
    /// Running a hardware interrupt handler.
    pub const RUN_IRQ: &str = "run-irq";
    /// Running a softirq handler.
    pub const RUN_SOFTIRQ: &str = "run-softirq";
    /// Running, mode not known yet.
    pub const RUN_UNKNOWN: &str = "run-unknown";
    /// A CPU's idle thread (`swapper/N`, TID 0) running: the CPU is idle.
    pub const IDLE: &str = "idle";
    /// Runnable, waiting for a CPU.
    pub const WAIT_CPU: &str = "wait-cpu";
    /// Blocked.
    pub const WAIT_BLOCKED: &str = "wait-blocked";
    /// Forked, not run yet.
    pub const WAIT_FORK: &str = "wait-fork";
    /// Exiting.
    pub const EXIT: &str = "exit";
    /// Exited, not reaped.
    pub const ZOMBIE: &str = "zombie";
    /// Reaped.
    pub const DEAD: &str = "dead";
    /// Known only by id.
    pub const UNNAMED: &str = "unnamed";

    /// Drawn event: a wake-up.
    pub const EV_WAKEUP: &str = "wakeup";
    /// Drawn event: a fork.
    pub const EV_FORK: &str = "fork";
    /// Drawn event: an exec.
    pub const EV_EXEC: &str = "exec";
    /// Drawn event: an exit.
    pub const EV_EXIT: &str = "exit";
    /// Drawn event: any other event the user marked.
    pub const EV_MARK: &str = "mark";

    /// Arrow series: execution flow of each CPU (thread switches).
    pub const ARROWS_CPU: &str = "cpu";
    /// Arrow series: who woke whom.
    pub const ARROWS_WAKEUP: &str = "wakeup";

    /// State key of thread `tid` in `status` with execution mode `mode`:
    /// [`state_key`], except that a CPU's idle thread (TID 0, `swapper/N`)
    /// running is [`IDLE`] — its running is the CPU's idleness, not work —
    /// while the interrupts it takes stay interrupts.
    pub fn thread_state_key(tid: i64, status: ThreadStatus, mode: ExecMode) -> &'static str {
        let interrupted = matches!(mode, ExecMode::Irq | ExecMode::SoftIrq);
        if tid == 0 && status == ThreadStatus::Run && !interrupted {
            IDLE
        } else {
            state_key(status, mode)
        }
    }

    /// State key of a thread in `status` with execution mode `mode`, as
    /// LTTV's control flow viewer colours it (`prepare_s_e_line`).
    pub fn state_key(status: ThreadStatus, mode: ExecMode) -> &'static str {
        match status {
            ThreadStatus::Run => match mode {
                ExecMode::User => RUN_USER,
                ExecMode::Syscall => RUN_SYSCALL,
                ExecMode::Trap => RUN_TRAP,
                ExecMode::Irq => RUN_IRQ,
                ExecMode::SoftIrq => RUN_SOFTIRQ,
                ExecMode::Unknown => RUN_UNKNOWN,
            },
            ThreadStatus::WaitCpu => WAIT_CPU,
            ThreadStatus::WaitBlocked => WAIT_BLOCKED,
            ThreadStatus::WaitFork => WAIT_FORK,
            ThreadStatus::Exit => EXIT,
            ThreadStatus::Zombie => ZOMBIE,
            ThreadStatus::Dead => DEAD,
            ThreadStatus::Unnamed => UNNAMED,
        }
    }
}

impl PresentationConfig {
    /// A configuration with no styles and the default view colours.
    pub fn empty() -> Self {
        PresentationConfig {
            states: StyleTable::default(),
            events: StyleTable::default(),
            arrows: StyleTable::default(),
            counters: StyleTable::default(),
            // Tableau-like qualitative palette: distinct and readable on white.
            fallback_palette: vec![
                Rgba::rgb(0x4e, 0x79, 0xa7),
                Rgba::rgb(0xf2, 0x8e, 0x2b),
                Rgba::rgb(0xe1, 0x57, 0x59),
                Rgba::rgb(0x76, 0xb7, 0xb2),
                Rgba::rgb(0x59, 0xa1, 0x4f),
                Rgba::rgb(0xed, 0xc9, 0x48),
                Rgba::rgb(0xb0, 0x7a, 0xa1),
                Rgba::rgb(0xff, 0x9d, 0xa7),
                Rgba::rgb(0x9c, 0x75, 0x5f),
                Rgba::rgb(0xba, 0xb0, 0xac),
            ],
            background: Rgba::rgb(255, 255, 255),
            foreground: Rgba::rgb(0x20, 0x20, 0x20),
            muted: Rgba::rgb(0x60, 0x60, 0x60),
            header_background: Rgba::rgb(0xee, 0xee, 0xee),
            grid: Rgba::translucent(0, 0, 0, 28),
            zebra: Rgba::rgb(0xf6, 0xf6, 0xf6),
            selected_row: Rgba::rgb(0xd6, 0xe6, 0xfa),
            selection: Rgba::translucent(0x46, 0x82, 0xdc, 48),
            current_time: Rgba::rgb(0xd0, 0x10, 0x10),
            mixed_marker: Rgba::rgb(0x30, 0x30, 0x30),
            histogram_bar: Rgba::rgb(0x4e, 0x79, 0xa7),
            lost_events: Rgba::rgb(0xd0, 0x10, 0x10),
        }
    }

    /// The control flow palette, in Trace Compass's conventions (its
    /// control flow view's `StateValues` colours), which kernel-trace users
    /// read without a legend: running in user mode green, in a system call
    /// blue, interrupted purple-red, waiting for a CPU orange, blocked
    /// yellow, idle (the per-CPU `swapper` threads) light grey. Trace
    /// Compass has no trap, softirq, fork or exit states; those take nearby
    /// shades of the family they belong to. Labels are short: the legend
    /// is one line.
    pub fn control_flow() -> Self {
        use control_flow::*;
        let mut c = PresentationConfig::empty();
        let st = |label: &str, color: Rgba, height: f64| StateStyle {
            label: label.to_string(),
            color,
            height,
        };
        let full = 1.0;
        let wait = 0.6;
        let gone = 0.35;
        let states = [
            (RUN_USER, "user", Rgba::rgb(0, 200, 0), full),
            (RUN_SYSCALL, "syscall", Rgba::rgb(0, 0, 200), full),
            (RUN_TRAP, "trap", Rgba::rgb(0, 150, 170), full),
            (RUN_IRQ, "IRQ", Rgba::rgb(200, 0, 100), full),
            (RUN_SOFTIRQ, "softirq", Rgba::rgb(230, 110, 170), full),
            (RUN_UNKNOWN, "running", Rgba::rgb(120, 170, 120), full),
            (IDLE, "idle", Rgba::rgb(200, 200, 200), wait),
            (WAIT_CPU, "wait for CPU", Rgba::rgb(200, 100, 0), wait),
            (WAIT_BLOCKED, "blocked", Rgba::rgb(200, 200, 0), wait),
            (WAIT_FORK, "forked", Rgba::rgb(150, 150, 90), wait),
            (EXIT, "exiting", Rgba::rgb(120, 60, 120), wait),
            (ZOMBIE, "zombie", Rgba::rgb(90, 50, 90), gone),
            (DEAD, "dead", Rgba::rgb(0, 0, 0), gone),
            (UNNAMED, "unnamed", Rgba::rgb(0xa0, 0xa0, 0xa0), gone),
            (NO_DATA, "no data", Rgba::rgb(0x90, 0x90, 0x90), full),
        ];
        for (key, label, color, height) in states {
            c.states.set(key, st(label, color, height));
        }

        let ev = |label: &str, color: Rgba, symbol: Symbol| EventStyle {
            label: label.to_string(),
            color,
            symbol,
        };
        c.events.set(
            EV_WAKEUP,
            ev("wake-up", Rgba::rgb(0xff, 0xd7, 0x00), Symbol::Triangle),
        );
        c.events.set(
            EV_FORK,
            ev("fork", Rgba::rgb(0x1f, 0x77, 0xb4), Symbol::Diamond),
        );
        c.events.set(
            EV_EXEC,
            ev("exec", Rgba::rgb(0x9e, 0x4a, 0xe0), Symbol::Square),
        );
        c.events.set(
            EV_EXIT,
            ev("exit", Rgba::rgb(0x20, 0x20, 0x20), Symbol::Cross),
        );
        c.events.set(
            EV_MARK,
            ev("mark", Rgba::rgb(0xff, 0x40, 0x80), Symbol::Star),
        );

        c.arrows.set(
            ARROWS_CPU,
            ArrowStyle {
                label: "CPU execution flow".into(),
                color: Rgba::rgb(0x40, 0x40, 0x40),
                line: LineStyle::Solid,
                width: 1.0,
            },
        );
        c.arrows.set(
            ARROWS_WAKEUP,
            ArrowStyle {
                label: "wake-up".into(),
                color: Rgba::rgb(0x1f, 0x5f, 0xc0),
                line: LineStyle::Dashed,
                width: 1.2,
            },
        );
        c
    }

    fn fallback(&self, key: &str, salt: u64) -> Rgba {
        if self.fallback_palette.is_empty() {
            return Rgba::rgb(0x80, 0x80, 0x80);
        }
        // FNV-1a: stable across runs and platforms, unlike the std hasher's
        // documentation promises.
        let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ salt;
        for b in key.bytes() {
            h ^= b as u64;
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        self.fallback_palette[(h % self.fallback_palette.len() as u64) as usize]
    }

    /// Style of state `key`.
    pub fn state(&self, key: &str) -> Resolved<'_, StateStyle> {
        match self.states.get(key) {
            Some(s) => Resolved {
                style: std::borrow::Cow::Borrowed(s),
                configured: true,
            },
            None => Resolved {
                style: std::borrow::Cow::Owned(StateStyle {
                    label: key.to_string(),
                    color: self.fallback(key, 0),
                    height: 1.0,
                }),
                configured: false,
            },
        }
    }

    /// Style of drawn-event kind `key`.
    pub fn event(&self, key: &str) -> Resolved<'_, EventStyle> {
        match self.events.get(key) {
            Some(s) => Resolved {
                style: std::borrow::Cow::Borrowed(s),
                configured: true,
            },
            None => Resolved {
                style: std::borrow::Cow::Owned(EventStyle {
                    label: key.to_string(),
                    color: self.fallback(key, 1),
                    symbol: Symbol::Circle,
                }),
                configured: false,
            },
        }
    }

    /// Style of arrow series `key`.
    pub fn arrow(&self, key: &str) -> Resolved<'_, ArrowStyle> {
        match self.arrows.get(key) {
            Some(s) => Resolved {
                style: std::borrow::Cow::Borrowed(s),
                configured: true,
            },
            None => Resolved {
                style: std::borrow::Cow::Owned(ArrowStyle {
                    label: key.to_string(),
                    color: self.fallback(key, 2),
                    line: LineStyle::Solid,
                    width: 1.0,
                }),
                configured: false,
            },
        }
    }

    /// Style of counter `key`.
    pub fn counter(&self, key: &str) -> Resolved<'_, CounterStyle> {
        match self.counters.get(key) {
            Some(s) => Resolved {
                style: std::borrow::Cow::Borrowed(s),
                configured: true,
            },
            None => Resolved {
                style: std::borrow::Cow::Owned(CounterStyle {
                    label: key.to_string(),
                    color: self.fallback(key, 3),
                }),
                configured: false,
            },
        }
    }
}

impl Default for PresentationConfig {
    fn default() -> Self {
        PresentationConfig::control_flow()
    }
}

/// Order of sibling rows in a tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum TreeOrder {
    /// The order the model added them (e.g. first seen in the trace).
    #[default]
    Insertion,
    /// By row id (TID for the control flow view).
    Id,
    /// By label, then id.
    Label,
    /// By the model's weight for the rendered window, largest first, then
    /// id (the control flow: CPU time in the window).
    Weight,
}

/// What a model fetches and shows: rows, tree shape, arrow series. Changing
/// it needs a new render.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DataConfig {
    /// Show every row at the top level (no hierarchy).
    pub flatten: bool,
    /// Sibling order.
    pub order: TreeOrder,
    /// Rows whose children are hidden.
    pub collapsed: HashSet<RowId>,
    /// Rows not shown (with their subtree unless flattened).
    pub hidden: HashSet<RowId>,
    /// Arrow series switched off (all are on unless listed here).
    pub arrows_off: HashSet<String>,
    /// Shows only the rows whose label or a property (name, TID, PID...)
    /// matches this case-insensitive regular expression (a plain substring
    /// when it is not one), with their ancestors; empty: every row.
    pub row_filter: String,
    /// Hides the rows with nothing going on in the rendered window (the
    /// control flow: threads that did not run, and the idle threads).
    pub hide_idle: bool,
}

impl DataConfig {
    /// Whether arrow series `name` is on.
    pub fn arrows_on(&self, name: &str) -> bool {
        !self.arrows_off.contains(name)
    }

    /// A hash of the configuration, for render caches keyed by it.
    pub fn fingerprint(&self) -> u64 {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.flatten.hash(&mut h);
        self.order.hash(&mut h);
        let mut v: Vec<_> = self.collapsed.iter().collect();
        v.sort();
        v.hash(&mut h);
        let mut v: Vec<_> = self.hidden.iter().collect();
        v.sort();
        v.hash(&mut h);
        let mut v: Vec<_> = self.arrows_off.iter().collect();
        v.sort();
        v.hash(&mut h);
        self.row_filter.hash(&mut h);
        self.hide_idle.hash(&mut h);
        h.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_flow_follows_trace_compass_conventions() {
        let c = PresentationConfig::control_flow();
        let colour = |k: &str| {
            let s = c.state(k);
            assert!(s.configured, "{k} has a style");
            s.style.color
        };
        assert_eq!(colour(control_flow::RUN_USER), Rgba::rgb(0, 200, 0));
        assert_eq!(colour(control_flow::RUN_SYSCALL), Rgba::rgb(0, 0, 200));
        assert_eq!(colour(control_flow::WAIT_CPU), Rgba::rgb(200, 100, 0));
        assert_eq!(colour(control_flow::WAIT_BLOCKED), Rgba::rgb(200, 200, 0));
        assert_eq!(colour(control_flow::RUN_IRQ), Rgba::rgb(200, 0, 100));
        assert_eq!(colour(control_flow::IDLE), Rgba::rgb(200, 200, 200));
    }

    #[test]
    fn unknown_keys_get_a_stable_palette_colour() {
        let c = PresentationConfig::control_flow();
        let a = c.state("MPI_Send");
        assert!(!a.configured);
        assert_eq!(a.style.label, "MPI_Send");
        assert_eq!(a.style.color, c.state("MPI_Send").style.color);
        assert!(c.fallback_palette.contains(&a.style.color));
    }

    #[test]
    fn style_table_keeps_legend_order_on_update() {
        let mut t = StyleTable::default();
        t.set("a", 1);
        t.set("b", 2);
        t.set("a", 3);
        let v: Vec<_> = t.iter().map(|(k, v)| (k.to_string(), *v)).collect();
        assert_eq!(v, vec![("a".to_string(), 3), ("b".to_string(), 2)]);
    }

    #[test]
    fn every_engine_state_has_a_configured_colour() {
        use traceloom_engine::state::{ExecMode, ThreadStatus};
        let c = PresentationConfig::control_flow();
        let statuses = [
            ThreadStatus::Unnamed,
            ThreadStatus::WaitFork,
            ThreadStatus::WaitCpu,
            ThreadStatus::Exit,
            ThreadStatus::Zombie,
            ThreadStatus::WaitBlocked,
            ThreadStatus::Run,
            ThreadStatus::Dead,
        ];
        let modes = [
            ExecMode::User,
            ExecMode::Syscall,
            ExecMode::Trap,
            ExecMode::Irq,
            ExecMode::SoftIrq,
            ExecMode::Unknown,
        ];
        for s in statuses {
            for m in modes {
                let key = control_flow::state_key(s, m);
                assert!(c.state(key).configured, "{key}");
            }
        }
    }

    #[test]
    fn text_contrast() {
        assert_eq!(Rgba::rgb(0, 255, 0).contrasting_text(), Rgba::rgb(0, 0, 0));
        assert_eq!(
            Rgba::rgb(0x66, 0, 0).contrasting_text(),
            Rgba::rgb(255, 255, 255)
        );
    }
}
