//! The traceloom command-line commands.
//!
//! * `traceloom dump PATH...`: one line per event in babeltrace2's text
//!   format (`sink.text.pretty`), byte for byte, with its clock options and
//!   `--begin`/`--end` time range;
//! * `traceloom count PATH...`: the number of events, in total and per
//!   event name;
//! * `traceloom export PATH... --view VIEW -o OUT.svg|.png`: a view drawn
//!   to an image without a display ([`export`]);
//! * `traceloom stats PATH...`: the statistics tree ([`stats`]);
//! * `traceloom index PATH...`, `traceloom cache list|clear [PATH]`: the
//!   analysis store, built ahead of time, listed, removed ([`cache`]).
//!
//! The benchmarks are not part of the product: they are `traceloom-bench`
//! (`tools/bench`).
//!
//! The `traceloom` binary (the workspace's root package) calls [`main`]
//! when its first argument is a subcommand ([`subcommand_names`]), and
//! opens the window otherwise (`traceloom [PATH...]`), which is why the
//! subcommand is optional rather than required.

pub mod cache;
pub mod clock;
pub mod export;
pub mod filter;
pub mod num;
pub mod paje;
pub mod pretty;
pub mod progress;
mod session;
pub mod stats;

use std::collections::HashMap;
use std::io::{self, Write};
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use traceloom_ctf::event::{Event, Message};
use traceloom_ctf::{Cursor, Traceset};
use traceloom_viewers::model::damage::StreamDamage;

use crate::clock::WallOptions;
use crate::filter::EventFilter;
use crate::pretty::{ClockRangeError, Colors, FieldOptions, NameOptions, PrettyOptions, Printer};
use traceloom_base::timespec::{self, TimeSpec, TimeSpecError};

/// `traceloom`: a trace viewer for parallel systems.
#[derive(Debug, Parser)]
#[command(
    name = "traceloom",
    version,
    about = "A trace viewer for parallel systems (LTTng CTF 1.8 traces)",
    long_about = None
)]
pub struct Cli {
    /// What to do; without one, the help is printed.
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print every event, one per line, in babeltrace2's text format.
    Dump(DumpArgs),
    /// Count the events, in total and per event name.
    Count(CountArgs),
    /// Draw a view (control flow, resources, histogram, statistics) to an
    /// SVG or PNG file, without a display.
    Export(export::ExportArgs),
    /// Print the statistics tree: events and CPU time per trace, CPU,
    /// process, thread, mode and event name.
    Stats(stats::StatsArgs),
    /// Analyse the traces and keep the result in the analysis store, so
    /// that `stats` and `export` open them at once.
    Index(cache::IndexArgs),
    /// List or clear the analysis stores and checkpoint caches.
    Cache(cache::CacheArgs),
}

/// Names that `--names` accepts (babeltrace2's `-n`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum NameChoice {
    /// Payload member names.
    Payload,
    /// Context member names.
    Context,
    /// Scope names (`stream.packet.context = ` ...).
    Scope,
    /// Header names (`timestamp = `, `name = ` ...).
    Header,
    /// All of the above.
    All,
    /// None of the above.
    None,
}

/// Header fields that `--fields` accepts (babeltrace2's `-f`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FieldChoice {
    /// The trace name.
    Trace,
    /// The `hostname` environment entry.
    #[value(name = "trace:hostname")]
    TraceHostname,
    /// The `domain` environment entry.
    #[value(name = "trace:domain")]
    TraceDomain,
    /// The `procname` environment entry.
    #[value(name = "trace:procname")]
    TraceProcname,
    /// The `vpid` environment entry.
    #[value(name = "trace:vpid")]
    TraceVpid,
    /// The event log level.
    Loglevel,
    /// The event EMF URI.
    Emf,
    /// The callsite (accepted for babeltrace2 compatibility; babeltrace2
    /// 2.0 prints nothing for it either).
    Callsite,
    /// All of the above.
    All,
    /// None of the above.
    None,
}

/// When `dump` colors its output (`--color`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum ColorWhen {
    /// Never.
    Never,
    /// When standard output and standard error are terminals that support
    /// colors (babeltrace2's rule, `BABELTRACE_TERM_COLOR` included).
    #[default]
    Auto,
    /// Whenever the terminal supports colors (like babeltrace2, which has
    /// no color codes otherwise).
    Always,
}

/// Arguments of `traceloom dump`.
#[derive(Debug, Clone, Default, Args)]
pub struct DumpArgs {
    /// CTF trace directories, or trees holding several traces.
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Print times in UTC instead of the local time zone.
    #[arg(long)]
    pub clock_gmt: bool,
    /// Print times as seconds since the Epoch (`SEC.nnnnnnnnn`).
    #[arg(long)]
    pub clock_seconds: bool,
    /// Print raw clock values (cycles) instead of times.
    #[arg(long)]
    pub clock_cycles: bool,
    /// Print the date before the time of day.
    #[arg(long)]
    pub clock_date: bool,
    /// Do not print the time since the previous event.
    #[arg(long)]
    pub no_delta: bool,
    /// Print only events at or after this time: `YYYY-MM-DD hh:mm[:ss[.nnnnnnnnn]]`,
    /// `YYYY-MM-DD`, `hh:mm[:ss[.nnnnnnnnn]]` (on the first event's date) or
    /// `[-]SEC[.nnnnnnnnn]` (since the Epoch); local time unless --clock-gmt.
    #[arg(long, value_name = "TIME", allow_hyphen_values = true)]
    pub begin: Option<String>,
    /// Print only events at or before this time (same formats as --begin).
    #[arg(long, value_name = "TIME", allow_hyphen_values = true)]
    pub end: Option<String>,
    /// Field names to print (default: payload,context).
    #[arg(short = 'n', long, value_name = "NAME", value_delimiter = ',')]
    pub names: Vec<NameChoice>,
    /// Header fields to print (default: trace:hostname,trace:procname,trace:vpid).
    #[arg(short = 'f', long, value_name = "FIELD", value_delimiter = ',')]
    pub fields: Vec<FieldChoice>,
    /// When to color the output.
    #[arg(long, value_name = "WHEN", default_value = "auto")]
    pub color: ColorWhen,
    /// Print only the events this filter expression accepts (see
    /// docs/filter.md), e.g. `event.name == "sched_switch" && cpu == 1`.
    #[arg(long, value_name = "EXPR")]
    pub filter: Option<String>,
    /// Output format: babeltrace2's text (CTF traces) or pj_dump's CSV
    /// (one Pajé trace file).
    #[arg(long, value_name = "FORMAT", default_value = "text")]
    pub format: DumpFormat,
}

/// What `traceloom dump` prints.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum DumpFormat {
    /// babeltrace2's `sink.text.pretty` lines.
    #[default]
    Text,
    /// `pj_dump`'s CSV rows, for a Pajé trace.
    #[value(name = "pj_dump")]
    PjDump,
}

/// What the output streams are connected to, for babeltrace2's color
/// rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Terminal {
    /// Standard output is a terminal.
    pub stdout_tty: bool,
    /// Standard error is a terminal.
    pub stderr_tty: bool,
}

impl Terminal {
    /// The process's standard output and error.
    pub fn detect() -> Terminal {
        // SAFETY: isatty only inspects the file descriptor.
        let tty = |fd| unsafe { libc::isatty(fd) == 1 };
        Terminal {
            stdout_tty: tty(libc::STDOUT_FILENO),
            stderr_tty: tty(libc::STDERR_FILENO),
        }
    }

    /// The color codes babeltrace2 would use here, `None` when it would
    /// not color (`bt_common_colors_supported`): `BABELTRACE_TERM_COLOR`
    /// `always`/`never` decides if set; otherwise `TERM` must be a known
    /// color terminal and both streams terminals. Bright colors are bold
    /// normal colors unless `TERM=xterm-kitty` or
    /// `BABELTRACE_TERM_COLOR_BRIGHT_MEANS_BOLD=0`.
    pub fn colors(&self, env: &dyn Fn(&str) -> Option<String>) -> Option<Colors> {
        let forced = env("BABELTRACE_TERM_COLOR").map(|v| v.to_ascii_lowercase());
        let term = env("TERM");
        let supported = match forced.as_deref() {
            Some("always") => true,
            Some("never") => false,
            _ => {
                const KNOWN: [&str; 7] = [
                    "xterm", "rxvt", "konsole", "gnome", "screen", "tmux", "putty",
                ];
                let known = term
                    .as_deref()
                    .is_some_and(|t| KNOWN.iter().any(|k| t.starts_with(k)));
                known && self.stdout_tty && self.stderr_tty
            }
        };
        if !supported {
            return None;
        }
        let bright_means_bold = match env("BABELTRACE_TERM_COLOR_BRIGHT_MEANS_BOLD") {
            Some(v) => v != "0",
            None => term.as_deref() != Some("xterm-kitty"),
        };
        Some(Colors::ansi(bright_means_bold))
    }
}

/// Arguments of `traceloom count`.
#[derive(Debug, Clone, Default, Args)]
pub struct CountArgs {
    /// CTF trace directories, or trees holding several traces.
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Count only the events this filter expression accepts.
    #[arg(long, value_name = "EXPR")]
    pub filter: Option<String>,
}

/// Why a command failed.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// A `--begin`/`--end` value is malformed.
    #[error("{0}")]
    Time(#[from] TimeSpecError),
    /// `--begin` is after `--end`.
    #[error("--begin ({begin} ns from the Epoch) is after --end ({end} ns from the Epoch)")]
    EmptyRange {
        /// The beginning, in ns.
        begin: i64,
        /// The end, in ns.
        end: i64,
    },
    /// A time of day bound could not be placed on the first event's date.
    #[error("cannot place the time of day `{0}` on the date of the first event")]
    TimeOfDay(String),
    /// An event's time is out of babeltrace2's range.
    #[error("{path}: packet {packet}, event at bit offset {offset_bits}: {source}")]
    Clock {
        /// The stream file.
        path: String,
        /// Packet index in the stream.
        packet: usize,
        /// Bit offset of the event in its packet.
        offset_bits: u64,
        /// The clock problem.
        source: ClockRangeError,
    },
    /// The traces cannot be opened or decoded (the message names the file
    /// and offset).
    #[error("{0}")]
    Trace(String),
    /// Some streams could not be read to their end; each error was
    /// reported on standard error when it happened.
    #[error("{0} stream(s) could not be read to the end (errors above)")]
    Streams(usize),
    /// The `--filter` expression does not parse (the message gives the column).
    #[error("invalid filter: {0}")]
    Filter(String),
    /// Writing the output failed.
    #[error("cannot write the output: {0}")]
    Io(#[from] io::Error),
}

impl CliError {
    /// Whether this is a closed output pipe (`traceloom dump | head`), which
    /// is not worth an error message.
    pub fn is_broken_pipe(&self) -> bool {
        matches!(self, CliError::Io(e) if e.kind() == io::ErrorKind::BrokenPipe)
    }
}

/// A source of time-ordered messages: the decoder's merged traceset, or a
/// test double. `next` lends each message until the following call.
pub trait MessageSource {
    /// The next message, an error (which ends the stream it comes from; the
    /// others go on), or `None` at the end.
    fn next_message(&mut self) -> Option<Result<Message<'_>, String>>;
}

/// Stream errors met while reading: reported as they come (after the
/// output so far), counted for the exit status.
struct StreamErrors(usize);

impl StreamErrors {
    /// A source returning errors forever would never end: give up after
    /// this many.
    const LIMIT: usize = 1000;

    fn report(
        &mut self,
        e: &str,
        out: &mut dyn Write,
        err: &mut dyn Write,
    ) -> Result<(), CliError> {
        out.flush()?;
        writeln!(err, "traceloom: error: {e}")?;
        self.0 += 1;
        if self.0 >= Self::LIMIT {
            return Err(CliError::Streams(self.0));
        }
        Ok(())
    }

    fn finish(self) -> Result<(), CliError> {
        match self.0 {
            0 => Ok(()),
            n => Err(CliError::Streams(n)),
        }
    }
}

/// babeltrace2's default for `--names`/`--fields`: the last `all` or `none`
/// wins (`is_all` tells which a choice is); naming some choices without
/// either hides the others; no choice at all keeps the built-in defaults.
fn choice_default<T>(choices: &[T], is_all: impl Fn(&T) -> Option<bool>) -> Option<bool> {
    choices
        .iter()
        .rev()
        .find_map(is_all)
        .or_else(|| (!choices.is_empty()).then_some(false))
}

impl DumpArgs {
    /// The text-format options these arguments select.
    ///
    /// As in babeltrace2: `all`/`none` set the default for every name or
    /// field (the last one wins), naming some without `all`/`none` hides the
    /// others, and the named ones are shown whatever the default.
    ///
    /// `colors` are the terminal's color codes, if it has any
    /// ([`Terminal::colors`]).
    pub fn pretty_options(&self, colors: Option<Colors>) -> PrettyOptions {
        let mut names = NameOptions::default();
        let named = |c| self.names.contains(&c);
        let name_default = choice_default(&self.names, |n| match n {
            NameChoice::All => Some(true),
            NameChoice::None => Some(false),
            _ => None,
        });
        if let Some(d) = name_default {
            names = NameOptions {
                payload: d,
                context: d,
                header: d,
                scope: d,
            };
        }
        names.payload |= named(NameChoice::Payload);
        names.context |= named(NameChoice::Context);
        names.scope |= named(NameChoice::Scope);
        names.header |= named(NameChoice::Header);

        let mut fields = FieldOptions::default();
        let field = |c| self.fields.contains(&c);
        let field_default = choice_default(&self.fields, |f| match f {
            FieldChoice::All => Some(true),
            FieldChoice::None => Some(false),
            _ => None,
        });
        if let Some(d) = field_default {
            fields = FieldOptions {
                trace: d,
                hostname: d,
                domain: d,
                procname: d,
                vpid: d,
                loglevel: d,
                emf: d,
            };
        }
        fields.trace |= field(FieldChoice::Trace);
        fields.hostname |= field(FieldChoice::TraceHostname);
        fields.domain |= field(FieldChoice::TraceDomain);
        fields.procname |= field(FieldChoice::TraceProcname);
        fields.vpid |= field(FieldChoice::TraceVpid);
        fields.loglevel |= field(FieldChoice::Loglevel);
        fields.emf |= field(FieldChoice::Emf);
        PrettyOptions {
            clock_cycles: self.clock_cycles,
            wall: WallOptions {
                seconds: self.clock_seconds,
                gmt: self.clock_gmt,
                date: self.clock_date,
            },
            delta: !self.no_delta,
            names,
            fields,
            colors: match (self.color, colors) {
                (ColorWhen::Never, _) | (_, None) => Colors::NONE,
                (_, Some(c)) => c,
            },
        }
    }
}

/// The time of a message for `--begin`/`--end`, in ns from the Epoch.
fn message_ns(msg: &Message<'_>) -> Option<i64> {
    match msg {
        Message::Event(e) => clock::ns_from_origin(e.clock()?, e.timestamp_cycles()?),
        Message::DiscardedEvents(d) | Message::DiscardedPackets(d) => {
            clock::ns_from_origin(d.clock?, d.begin_cycles?)
        }
    }
}

fn clock_error(ev: &Event<'_>, source: ClockRangeError) -> CliError {
    let path = ev
        .stream()
        .name_path()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| ev.trace().path.display().to_string());
    let pos = ev.position();
    CliError::Clock {
        path,
        packet: pos.packet,
        offset_bits: pos.offset_bits,
        source,
    }
}

/// `--begin`/`--end` once resolved against the first message's date.
struct Range {
    begin: Option<TimeSpec>,
    end: Option<TimeSpec>,
    gmt: bool,
    resolved: Option<(i64, i64)>,
}

impl Range {
    fn new(args: &DumpArgs) -> Result<Self, CliError> {
        let begin = args
            .begin
            .as_deref()
            .map(|t| timespec::parse(t, args.clock_gmt))
            .transpose()?;
        let end = args
            .end
            .as_deref()
            .map(|t| timespec::parse(t, args.clock_gmt))
            .transpose()?;
        let mut r = Range {
            begin,
            end,
            gmt: args.clock_gmt,
            resolved: None,
        };
        if r.is_unbounded() {
            r.resolved = Some((i64::MIN, i64::MAX));
        } else if let (None | Some(TimeSpec::Absolute(_)), None | Some(TimeSpec::Absolute(_))) =
            (r.begin, r.end)
        {
            // Absolute bounds are checked before reading anything.
            r.resolve(0)?;
        }
        Ok(r)
    }

    fn is_unbounded(&self) -> bool {
        self.begin.is_none() && self.end.is_none()
    }

    /// Places the bounds using the first timestamped message's time.
    fn resolve(&mut self, first_ns: i64) -> Result<(i64, i64), CliError> {
        if let Some(r) = self.resolved {
            return Ok(r);
        }
        let bound = |t: Option<TimeSpec>, default: i64| -> Result<i64, CliError> {
            match t {
                None => Ok(default),
                Some(t) => t
                    .resolve(first_ns, self.gmt)
                    .ok_or_else(|| CliError::TimeOfDay(format!("{t:?}"))),
            }
        };
        let begin = bound(self.begin, i64::MIN)?;
        let end = bound(self.end, i64::MAX)?;
        if begin > end {
            return Err(CliError::EmptyRange { begin, end });
        }
        self.resolved = Some((begin, end));
        Ok((begin, end))
    }
}

/// Prints the messages of `src` in babeltrace2's text format: events to
/// `out`, discarded-records warnings (and babeltrace2's time warnings) to
/// `err`. A stream that cannot be read to its end is reported on `err` when
/// the reader gives up on it, and the other streams go on (babeltrace2 stops
/// everything there); the result is then an error.
pub fn dump_messages(
    src: &mut dyn MessageSource,
    args: &DumpArgs,
    mut filter: Option<&mut EventFilter>,
    colors: Option<Colors>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<(), CliError> {
    let mut range = Range::new(args)?;
    let mut printer = Printer::new(args.pretty_options(colors));
    printer.set_warning_colors(colors.unwrap_or(Colors::NONE));
    let mut errors = StreamErrors(0);
    while let Some(msg) = src.next_message() {
        let msg = match msg {
            Ok(m) => m,
            Err(e) => {
                errors.report(&e, out, err)?;
                continue;
            }
        };
        // The filter sees every event (its state must), in range or not.
        let rejected = match (&msg, filter.as_deref_mut()) {
            (Message::Event(ev), Some(f)) => !f.accept(ev),
            _ => false,
        };
        if !range.is_unbounded() {
            let Some(ns) = message_ns(&msg) else {
                // babeltrace2's trimmer lets messages without a time through.
                print_message(&mut printer, &msg, out, err)?;
                continue;
            };
            let (begin, end) = range.resolve(ns)?;
            if ns > end {
                // Messages come in time order: nothing after this is in range.
                break;
            }
            if ns < begin {
                continue;
            }
        }
        if rejected {
            continue;
        }
        print_message(&mut printer, &msg, out, err)?;
    }
    out.flush()?;
    err.flush()?;
    errors.finish()
}

fn print_message(
    printer: &mut Printer,
    msg: &Message<'_>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<(), CliError> {
    match msg {
        Message::Event(ev) => {
            printer.event(ev).map_err(|e| clock_error(ev, e))?;
            let w = printer.take_warnings();
            if !w.is_empty() {
                out.flush()?;
                err.write_all(&w)?;
            }
            out.write_all(printer.line())?;
        }
        Message::DiscardedEvents(d) | Message::DiscardedPackets(d) => {
            printer.discarded(d, matches!(msg, Message::DiscardedPackets(_)));
            // Keep the order of the two streams when they share a terminal.
            out.flush()?;
            err.write_all(&printer.take_warnings())?;
        }
    }
    Ok(())
}

/// Event counts of a traceset.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counts {
    /// Events in total.
    pub total: u64,
    /// Events per event name.
    pub per_name: HashMap<String, u64>,
    /// Events the tracers reported as discarded (when they said how many).
    pub discarded_events: u64,
    /// Packets reported lost.
    pub discarded_packets: u64,
    /// Streams that could not be read to their end.
    pub stream_errors: usize,
}

impl Counts {
    /// The per-name counts, most frequent first, then by name.
    pub fn sorted(&self) -> Vec<(&str, u64)> {
        let mut v: Vec<(&str, u64)> = self
            .per_name
            .iter()
            .map(|(k, v)| (k.as_str(), *v))
            .collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        v
    }

    /// Writes the counts: a total line, then one line per event name with
    /// the count right-aligned, then the discarded records if any.
    ///
    /// ```text
    /// 28274 events
    /// 20000 loomdemo:tick
    ///  8274 loomdemo:sample
    /// ```
    pub fn write(&self, out: &mut dyn Write) -> io::Result<()> {
        let width = self.total.to_string().len();
        writeln!(out, "{:>width$} events", self.total)?;
        for (name, n) in self.sorted() {
            writeln!(out, "{n:>width$} {name}")?;
        }
        if self.discarded_events > 0 {
            writeln!(
                out,
                "{} events discarded by the tracer",
                self.discarded_events
            )?;
        }
        if self.discarded_packets > 0 {
            writeln!(out, "{} packets lost", self.discarded_packets)?;
        }
        Ok(())
    }
}

/// Counts the messages of `src`; stream errors are reported on `err` and
/// counted in [`Counts::stream_errors`].
pub fn count_messages(
    src: &mut dyn MessageSource,
    mut filter: Option<&mut EventFilter>,
    err: &mut dyn Write,
) -> Result<Counts, CliError> {
    let mut errors = StreamErrors(0);
    let mut counts = Counts::default();
    // Count by event class first (no string hashing per event), then merge
    // classes that share a name.
    let mut per_class: HashMap<usize, (String, u64)> = HashMap::new();
    while let Some(msg) = src.next_message() {
        let msg = match msg {
            Ok(m) => m,
            Err(e) => {
                errors.report(&e, &mut io::sink(), err)?;
                continue;
            }
        };
        match msg {
            Message::Event(ev) => {
                if let Some(f) = filter.as_deref_mut() {
                    if !f.accept(&ev) {
                        continue;
                    }
                }
                counts.total += 1;
                let class = ev.class();
                per_class
                    .entry(class as *const _ as usize)
                    .or_insert_with(|| (class.name.clone(), 0))
                    .1 += 1;
            }
            // Damaged counters can say anything: the sums saturate.
            Message::DiscardedEvents(d) => {
                counts.discarded_events =
                    counts.discarded_events.saturating_add(d.count.unwrap_or(0))
            }
            Message::DiscardedPackets(d) => {
                counts.discarded_packets = counts
                    .discarded_packets
                    .saturating_add(d.count.unwrap_or(0))
            }
        }
    }
    for (name, n) in per_class.into_values() {
        *counts.per_name.entry(name).or_insert(0) += n;
    }
    counts.stream_errors = errors.0;
    Ok(counts)
}

/// Runs the command line `args` (the program name first) with `out` and
/// `err` as standard output and error, which are not terminals; returns the
/// exit status.
pub fn run<I, T>(args: I, out: &mut dyn Write, err: &mut dyn Write) -> i32
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    run_on(args, out, err, Terminal::default())
}

/// [`run`] with output streams connected as `term` says (for colors).
pub fn run_on<I, T>(args: I, out: &mut dyn Write, err: &mut dyn Write, term: Terminal) -> i32
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let mut text = e.render().to_string();
            if !text.ends_with('\n') {
                text.push('\n');
            }
            let _ = if e.use_stderr() {
                err.write_all(text.as_bytes())
            } else {
                out.write_all(text.as_bytes())
            };
            return e.exit_code();
        }
    };
    let result = match &cli.command {
        None => {
            let mut cmd = <Cli as clap::CommandFactory>::command();
            let help = cmd.render_help().to_string();
            out.write_all(help.as_bytes()).map_err(CliError::from)
        }
        Some(Command::Dump(a)) => {
            let colors = term.colors(&|k| std::env::var(k).ok());
            // A bar only when the events go elsewhere than the terminal.
            let progress = term.stderr_tty && !term.stdout_tty;
            run_dump(a, colors, progress, out, err)
        }
        Some(Command::Count(a)) => run_count(a, term.stderr_tty, out, err),
        Some(Command::Export(a)) => export::run_export(a, term.stderr_tty, out, err),
        Some(Command::Stats(a)) => stats::run_stats(a, term.stderr_tty, out, err),
        Some(Command::Index(a)) => cache::run_index(a, term.stderr_tty, out, err),
        Some(Command::Cache(a)) => cache::run_cache(a, out),
    };
    match result {
        Ok(()) => 0,
        Err(e) if e.is_broken_pipe() => 0,
        Err(e) => {
            let _ = out.flush();
            let _ = writeln!(err, "traceloom: error: {e}");
            1
        }
    }
}

/// The names of the command-line subcommands (and their aliases), so that
/// the binary can tell a command from trace paths to open in the window.
pub fn subcommand_names() -> Vec<String> {
    let cmd = <Cli as clap::CommandFactory>::command();
    let mut names: Vec<String> = cmd
        .get_subcommands()
        .flat_map(|c| std::iter::once(c.get_name()).chain(c.get_all_aliases()))
        .map(str::to_string)
        .collect();
    names.push("help".to_string());
    names
}

/// The `traceloom` program: parses the process arguments, runs the command
/// with buffered standard output, and exits with its status.
pub fn main() {
    let stdout = io::stdout();
    let mut out = io::BufWriter::with_capacity(1 << 16, stdout.lock());
    let mut err = io::stderr();
    let code = run_on(std::env::args_os(), &mut out, &mut err, Terminal::detect());
    let code = match out.flush() {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => {
            let _ = writeln!(err, "traceloom: error: cannot write the output: {e}");
            1
        }
        _ => code,
    };
    std::process::exit(code);
}

impl MessageSource for Cursor<'_> {
    fn next_message(&mut self) -> Option<Result<Message<'_>, String>> {
        self.next().map(|r| r.map_err(|e| e.to_string()))
    }
}

/// The time of the first timestamped message, which time-of-day bounds are
/// placed on (babeltrace2's rule).
fn first_event_ns(ts: &Traceset) -> Option<i64> {
    let mut cursor = ts.messages();
    while let Some(msg) = cursor.next() {
        if let Some(ns) = msg.ok().as_ref().and_then(message_ns) {
            return Some(ns);
        }
    }
    None
}

fn open(paths: &[PathBuf], err: &mut dyn Write) -> Result<Traceset, CliError> {
    let ts = Traceset::open(paths).map_err(|e| CliError::Trace(e.to_string()))?;
    warn_duplicates(&ts, err)?;
    Ok(ts)
}

/// Warns about the paths that led to a trace directory or stream file
/// already read (symbolic links, overlapping inputs): each was read once.
pub(crate) fn warn_duplicates(ts: &Traceset, err: &mut dyn Write) -> Result<(), CliError> {
    for d in ts.duplicates() {
        writeln!(err, "traceloom: warning: {d}")?;
    }
    Ok(())
}

/// Reports the damaged streams a command met, after its output (each
/// error names the file and byte offset), and makes the command fail: what
/// was printed is what could be read.
pub(crate) fn report_stream_errors(
    errors: &[traceloom_ctf::ReadError],
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<(), CliError> {
    let mut report = StreamErrors(0);
    for e in errors {
        report.report(&e.to_string(), out, err)?;
    }
    report.finish()
}

/// [`report_stream_errors`] for a command that may have taken its figures
/// from the analysis store: `stored` is the damage the pass that built the
/// store met (this read may meet none of it). Each damaged stream is
/// reported once.
pub(crate) fn report_damage(
    errors: &[traceloom_ctf::ReadError],
    stored: &[StreamDamage],
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<(), CliError> {
    let mut report = StreamErrors(0);
    let mut seen = std::collections::HashSet::new();
    let texts = errors
        .iter()
        .map(|e| e.to_string())
        .chain(stored.iter().map(|d| d.message.clone()));
    for text in texts {
        if seen.insert(text.clone()) {
            report.report(&text, out, err)?;
        }
    }
    report.finish()
}

/// `traceloom dump`: opens the traces of `args` and prints their events
/// to `out` (warnings to `err`) in babeltrace2's text format, with the
/// terminal's `colors` if any and a progress bar on stderr when
/// `progress` (stderr a terminal, the output a file or pipe).
pub fn run_dump(
    args: &DumpArgs,
    colors: Option<Colors>,
    progress: bool,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<(), CliError> {
    if args.format == DumpFormat::PjDump {
        return dump_paje(args, out, err);
    }
    // Check the time bounds before the (possibly long) opening.
    let mut range = Range::new(args)?;
    let ts = open(&args.paths, err)?;
    let mut filter = args
        .filter
        .as_deref()
        .map(|e| EventFilter::new(e, ts.traces().len()))
        .transpose()?;
    // Seek to --begin through the packet index rather than scanning, unless
    // a state-reading filter needs every event from the start.
    let begin = match (&args.begin, &filter) {
        (Some(_), f) if !f.as_ref().is_some_and(EventFilter::needs_full_read) => {
            first_event_ns(&ts).and_then(|first| range.resolve(first).ok().map(|(b, _)| b))
        }
        _ => None,
    };
    let mut cursor = ts.messages_between(begin, None);
    let span = ts.time_range_ns().unwrap_or((0, 0));
    let span = (begin.unwrap_or(span.0), span.1);
    let mut tracked = progress::Tracked::new(&mut cursor, progress, "dump", span);
    let result = dump_messages(&mut tracked, args, filter.as_mut(), colors, out, err);
    tracked.finish();
    if let Some(c) = colors {
        // babeltrace2 ends its output with a color reset on a color
        // terminal (whatever --color says), and its error output too when
        // it succeeds.
        out.write_all(c.reset.as_bytes())?;
        out.flush()?;
        if result.is_ok() {
            err.write_all(c.reset.as_bytes())?;
        }
    }
    result
}

/// `traceloom dump --format pj_dump FILE`: the CSV `pj_dump FILE` prints.
/// Recoverable problems (malformed lines, unknown event ids) go to `err`
/// with their file and line, and make the exit status 1 after the dump.
fn dump_paje(args: &DumpArgs, out: &mut dyn Write, err: &mut dyn Write) -> Result<(), CliError> {
    let [path] = args.paths.as_slice() else {
        return Err(CliError::Trace(
            "--format pj_dump reads exactly one Pajé trace file".into(),
        ));
    };
    let options = traceloom_paje::PjDumpOptions::default();
    let diagnostics = traceloom_paje::pj_dump(path, &options, &mut *out)
        .map_err(|e| CliError::Trace(e.to_string()))?;
    out.flush()?;
    for d in diagnostics.items() {
        writeln!(err, "traceloom: {d}")?;
    }
    match diagnostics.error_count() {
        0 => Ok(()),
        n => Err(CliError::Trace(format!(
            "{}: {n} error(s) in the trace (reported above)",
            path.display()
        ))),
    }
}

/// `traceloom count`: opens the traces of `args` and writes their event
/// counts to `out` (with a progress bar on stderr when `progress`).
/// The counts are printed even when some streams could not be read to their
/// end (the result is then an error).
pub fn run_count(
    args: &CountArgs,
    progress: bool,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<(), CliError> {
    let ts = open(&args.paths, err)?;
    let mut filter = args
        .filter
        .as_deref()
        .map(|e| EventFilter::new(e, ts.traces().len()))
        .transpose()?;
    let mut cursor = ts.messages();
    let span = ts.time_range_ns().unwrap_or((0, 0));
    let mut tracked = progress::Tracked::new(&mut cursor, progress, "count", span);
    let counts = count_messages(&mut tracked, filter.as_mut(), err);
    tracked.finish();
    let counts = counts?;
    counts.write(out)?;
    out.flush()?;
    StreamErrors(counts.stream_errors).finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dump_args(extra: &[&str]) -> DumpArgs {
        let mut argv = vec!["traceloom", "dump"];
        argv.extend_from_slice(extra);
        argv.push("trace");
        match Cli::try_parse_from(argv).unwrap().command {
            Some(Command::Dump(a)) => a,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn names_and_fields_follow_babeltrace2() {
        let o = dump_args(&[]).pretty_options(None);
        assert_eq!(o.names, NameOptions::default());
        assert_eq!(o.fields, FieldOptions::default());
        assert!(o.delta && !o.clock_cycles && !o.wall.gmt);

        // Naming some hides the others.
        let o = dump_args(&["-n", "header"]).pretty_options(None);
        assert!(o.names.header && !o.names.payload && !o.names.context && !o.names.scope);
        // `none` then a name, or a name then `none`: the name is shown.
        for args in [
            &["-n", "none,payload"][..],
            &["-n", "payload", "-n", "none"],
        ] {
            let o = dump_args(args).pretty_options(None);
            assert!(o.names.payload && !o.names.context, "{args:?}");
        }
        // The last of all/none sets the default.
        let o = dump_args(&["-n", "none,all"]).pretty_options(None);
        assert!(o.names.payload && o.names.context && o.names.header && o.names.scope);

        let o = dump_args(&["-f", "trace:domain,loglevel"]).pretty_options(None);
        assert!(o.fields.domain && o.fields.loglevel);
        assert!(!o.fields.hostname && !o.fields.procname && !o.fields.vpid && !o.fields.trace);
        let o = dump_args(&["-f", "all"]).pretty_options(None);
        assert!(o.fields.trace && o.fields.emf && o.fields.vpid);

        let o = dump_args(&["--clock-gmt", "--no-delta", "--clock-cycles"]).pretty_options(None);
        assert!(o.wall.gmt && !o.delta && o.clock_cycles);
    }

    #[test]
    fn colors_follow_babeltrace2_rules() {
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                vars.iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        let tty = Terminal {
            stdout_tty: true,
            stderr_tty: true,
        };
        let pipe = Terminal {
            stdout_tty: false,
            stderr_tty: true,
        };
        assert_eq!(
            tty.colors(&env(&[("TERM", "xterm-256color")])),
            Some(Colors::ansi(true))
        );
        assert_eq!(
            tty.colors(&env(&[("TERM", "xterm-kitty")])),
            Some(Colors::ansi(false))
        );
        assert_eq!(tty.colors(&env(&[("TERM", "dumb")])), None);
        assert_eq!(tty.colors(&env(&[])), None);
        assert_eq!(pipe.colors(&env(&[("TERM", "xterm")])), None);
        assert_eq!(
            pipe.colors(&env(&[("BABELTRACE_TERM_COLOR", "ALWAYS")])),
            Some(Colors::ansi(true))
        );
        assert_eq!(
            tty.colors(&env(&[
                ("TERM", "tmux"),
                ("BABELTRACE_TERM_COLOR", "never")
            ])),
            None
        );
        assert_eq!(
            tty.colors(&env(&[
                ("TERM", "screen"),
                ("BABELTRACE_TERM_COLOR_BRIGHT_MEANS_BOLD", "0")
            ])),
            Some(Colors::ansi(false))
        );
        // --color=never keeps the events plain.
        let o = dump_args(&["--color", "never"]).pretty_options(Some(Colors::ansi(true)));
        assert_eq!(o.colors, Colors::NONE);
        let o = dump_args(&[]).pretty_options(Some(Colors::ansi(true)));
        assert_eq!(o.colors, Colors::ansi(true));
    }

    #[test]
    fn time_bounds_are_checked_up_front() {
        assert!(matches!(
            Range::new(&dump_args(&["--begin", "10", "--end", "5"])),
            Err(CliError::EmptyRange {
                begin: 10_000_000_000,
                end: 5_000_000_000
            })
        ));
        assert!(matches!(
            Range::new(&dump_args(&["--end", "1e3"])),
            Err(CliError::Time(_))
        ));
        // A time of day waits for the first event's date.
        let mut r = Range::new(&dump_args(&["--clock-gmt", "--begin", "10:00"])).unwrap();
        assert_eq!(r.resolved, None);
        let day = 1_795_316_122_000_000_000; // 2026-11-22 02:55:22 UTC
        let (begin, end) = r.resolve(day).unwrap();
        assert_eq!((begin, end), (1_795_341_600_000_000_000, i64::MAX));
        let mut r = Range::new(&dump_args(&[
            "--clock-gmt",
            "--begin",
            "10:00",
            "--end",
            "09:00",
        ]))
        .unwrap();
        assert!(matches!(r.resolve(day), Err(CliError::EmptyRange { .. })));
    }

    #[test]
    fn count_output() {
        let mut c = Counts {
            total: 1203,
            ..Default::default()
        };
        c.per_name.insert("b".into(), 600);
        c.per_name.insert("a".into(), 600);
        c.per_name.insert("z:y".into(), 3);
        let mut out = Vec::new();
        c.write(&mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "1203 events\n 600 a\n 600 b\n   3 z:y\n"
        );
        c.discarded_events = 7;
        c.discarded_packets = 1;
        let mut out = Vec::new();
        c.write(&mut out).unwrap();
        assert!(String::from_utf8(out)
            .unwrap()
            .ends_with("7 events discarded by the tracer\n1 packets lost\n"));
    }

    #[test]
    fn no_subcommand_prints_help_and_usage_errors_exit_2() {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        assert_eq!(run(["traceloom"], &mut out, &mut err), 0);
        let help = String::from_utf8(out).unwrap();
        assert!(help.contains("Usage: traceloom [COMMAND]") && help.contains("dump"));
        let (mut out, mut err) = (Vec::new(), Vec::new());
        assert_eq!(run(["traceloom", "dump"], &mut out, &mut err), 2);
        assert!(String::from_utf8(err).unwrap().contains("<PATH>"));
        let (mut out, mut err) = (Vec::new(), Vec::new());
        assert_eq!(
            run(
                ["traceloom", "count", "/nonexistent/trace"],
                &mut out,
                &mut err
            ),
            1
        );
        let err = String::from_utf8(err).unwrap();
        assert!(
            err.starts_with("traceloom: error: ") && err.contains("/nonexistent/trace"),
            "{err}"
        );
    }
}
