//! The filter expression language used by events requests, the CLI
//! (`traceloom dump --filter EXPR`, `traceloom count --filter EXPR`) and the
//! GUI's filter bar.
//!
//! ```text
//! event.name == "sched_switch" && (event.field.prev_tid == 42 || cpu == 1)
//! ```
//!
//! # The language
//!
//! A filter is a condition on one event. It is built from comparisons,
//! joined with `&&` (and), `||` (or), `!` (not) and parentheses.
//!
//! ## Operands
//!
//! | Operand | Value |
//! |---|---|
//! | `event.name`, `name` | event class name (string) |
//! | `event.time`, `time` | timestamp in nanoseconds (integer) |
//! | `event.cpu`, `cpu`, `stream`, `event.stream` | CPU the event was recorded on (integer; LTTng streams are per CPU) |
//! | `trace`, `event.trace` | name of the trace (string: path or hostname) |
//! | `event.field.NAME` | payload field; nested `event.field.a.b`, arrays `event.field.arr[2]` |
//! | `event.context.NAME` | event or stream context field, e.g. `event.context.vtid`, `event.context.procname` |
//! | `event.packet.NAME` | packet context field, e.g. `event.packet.cpu_id` |
//! | `state.tid`, `state.pid`, `state.ppid`, `state.cpu` | state of the current process (integers) |
//! | `state.name`, `state.status` | process name and status (strings) |
//! | `state.mode` | execution mode: `user`, `syscall`, `trap`, `irq`, `softirq`, `idle` or `unknown` |
//!
//! Field names are C identifiers; any name is allowed after `event.field.`
//! (even `true`). The type of a field depends on the trace.
//!
//! ## Literals
//!
//! * integers: `42`, `-7`, `0x1f`, `-0x10` (up to `u64::MAX`);
//! * floats: `1.5`, `-0.25`, `1e9`, `2.5E-3`;
//! * times: an integer is nanoseconds; a number with a unit `s`, `ms`, `us`
//!   or `ns` is converted exactly to integer nanoseconds: `time >= 12.5s`,
//!   `time < 1234.000056789s`, `event.field.delay > 2ms`. Comparing `time`
//!   with a plain float (`time > 12.5`) is an error, because it would mean
//!   12.5 *nanoseconds* when seconds were almost certainly meant;
//! * strings: `"..."` with escapes `\"`, `\\`, `\n`, `\t`, `\r`, `\0`,
//!   `\u{HEX}`, and `\*`, `\?` for literal `*` and `?`;
//! * booleans: `true`, `false`.
//!
//! ## Operators
//!
//! From tightest to loosest: `!`, then comparisons, then `&&`, then `||`.
//!
//! * `==`, `!=`, `<`, `<=`, `>`, `>=` compare two values. Numbers compare
//!   numerically, exactly, whatever their kind (`event.field.x == 3` holds
//!   for an integer 3 and a float 3.0); strings compare byte-wise; booleans
//!   only with `==`/`!=`. Either side may be an operand or a literal
//!   (`3 < cpu`, `event.field.next_tid == state.tid`), but not both literals.
//! * **Globs**: in a string compared with `==` or `!=`, an unescaped `*`
//!   matches any run of characters and `?` any one character, over the whole
//!   string and case-sensitively: `event.name == "sched_*"`,
//!   `event.name != "syscall_*_open"`. Write `\*` and `\?` for the characters
//!   themselves. `<`, `>`, ... never treat `*` and `?` specially.
//! * `=~` matches a regular expression (Rust `regex` syntax, unanchored:
//!   use `^...$` for a whole-string match): `event.name =~ "^(sched|irq)_"`.
//!   The text between the quotes goes to the regex engine exactly as
//!   written, so `\d`, `\.`, `\w` mean what they mean in a regex; `\"` is a
//!   quote. The regex is compiled once, when the filter is parsed, and an
//!   invalid one is reported at its column.
//! * `&&`, `||` short-circuit; `!` negates.
//! * `!` applies to an atom only: `!event.field.flag`, `!(cpu == 1)`,
//!   `!!true`. `!cpu == 1` is rejected (it would mean `(!cpu) == 1`); write
//!   `!(cpu == 1)` or `cpu != 1`.
//! * A field alone is a condition: `event.field.flag` holds when the field
//!   exists and is `true`, a non-zero number or a non-empty string. Other
//!   operands cannot stand alone.
//!
//! ## Missing fields and mismatched types
//!
//! A comparison with a field the event does not have is **false, for every
//! operator including `!=`** (the babeltrace and Trace Compass convention):
//! `event.field.prev_tid != 42` only matches events that have a `prev_tid`
//! other than 42. To include events without the field, write
//! `!(event.field.prev_tid == 42)`. Likewise a glob or `=~` on a missing or
//! non-string value is false, and `cpu` is missing for events recorded
//! without CPU information.
//!
//! Comparing values that have no order — a string with a number, a boolean
//! with a number, anything with NaN — is false for every operator, too.
//! When both types are known when the filter is parsed (`event.name == 5`,
//! `cpu == "x"`, `state.tid =~ "1"`, `cpu == "1*"`) the filter is rejected
//! instead, with the column of the offending value. `state.mode` compared
//! with `==`/`!=` to a string that is not a mode is rejected as a typo.
//!
//! ## Errors
//!
//! A filter that does not parse gives a [`ParseError`]: a 1-based column
//! (counted in characters), the width of the offending token and a message,
//! e.g. `column 15: expected a value after '==', found '&&'`. No input
//! panics; nesting of parentheses and `!` is limited to [`MAX_DEPTH`].
//!
//! # Using it
//!
//! ```
//! use traceloom_filter::{FieldScope, Filter, FilterSubject, PathElem, StateKey, Value};
//!
//! struct Event { name: &'static str, time: i64, prev_tid: i64 }
//!
//! impl FilterSubject for Event {
//!     fn event_name(&self) -> &str { self.name }
//!     fn time_ns(&self) -> i64 { self.time }
//!     fn cpu(&self) -> Option<u64> { Some(0) }
//!     fn trace_name(&self) -> &str { "kernel" }
//!     fn field(&self, scope: FieldScope, path: &[PathElem]) -> Option<Value<'_>> {
//!         match (scope, path) {
//!             (FieldScope::Payload, [PathElem::Name(n)]) if &**n == "prev_tid" => {
//!                 Some(Value::Int(self.prev_tid))
//!             }
//!             _ => None,
//!         }
//!     }
//!     fn state(&self, _key: StateKey) -> Option<Value<'_>> { None }
//! }
//!
//! let filter = Filter::new(r#"event.name == "sched_*" && event.field.prev_tid == 42"#)?;
//! assert!(filter.matches(&Event { name: "sched_switch", time: 5, prev_tid: 42 }));
//! assert!(!filter.matches(&Event { name: "sched_switch", time: 5, prev_tid: 7 }));
//!
//! // Per event class, the engine can skip events without decoding them:
//! assert_eq!(filter.name_only_decision("irq_handler_entry"), Some(false));
//! assert_eq!(filter.name_only_decision("sched_switch"), None);
//! assert!(!filter.needs_state());
//! # Ok::<(), traceloom_filter::ParseError>(())
//! ```
//!
//! [`Filter::time_bounds`] gives the time range matching events can be in,
//! [`Filter::fields`] and [`Filter::needs_scope`] what must be decoded, and
//! [`Filter::state_keys`] which state attributes are read.

mod ast;
mod compile;
mod error;
mod lexer;
mod parser;
mod value;

pub use ast::{CmpOp, Expr, GlobPattern, GlobPiece, Literal, Operand, OperandType, RegexLit, Term};
pub use compile::Filter;
pub use error::{ParseError, ParseErrorKind};
pub use parser::{parse, MAX_DEPTH};
pub use value::{FieldOperand, FieldScope, FilterSubject, PathElem, StateKey, Value, STATE_MODES};
