//! Parse errors.

use thiserror::Error;

/// A filter that could not be parsed, with the place to point at.
///
/// Displays as `column N: message`, e.g.
/// `column 15: expected a value after '==', found '&&'`.
#[derive(Debug, Clone, PartialEq, Error)]
#[error("column {column}: {kind}")]
pub struct ParseError {
    /// 1-based column, counted in characters (Unicode scalar values) of the
    /// filter text. One past the last character for "end of input" errors.
    pub column: usize,
    /// How many characters the offending token spans (at least 1), for
    /// underlining in the GUI.
    pub width: usize,
    /// What went wrong.
    pub kind: ParseErrorKind,
}

/// What went wrong while parsing a filter.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum ParseErrorKind {
    /// A character that starts no token.
    #[error("unexpected character '{0}'")]
    UnexpectedChar(char),
    /// A character that looks like a mistyped operator (`=`, `&`, `|`, `~`).
    #[error("'{found}' is not an operator; did you mean '{suggestion}'?")]
    MistypedOperator {
        /// What was written.
        found: char,
        /// The operator probably meant.
        suggestion: &'static str,
    },
    /// A string literal without its closing quote.
    #[error("unterminated string (missing closing '\"')")]
    UnterminatedString,
    /// An unknown or malformed escape sequence in a string.
    #[error(
        "invalid escape '{0}' in string (valid: \\\" \\\\ \\n \\t \\r \\0 \\u{{HEX}} \\* \\?)"
    )]
    BadEscape(String),
    /// A malformed or out-of-range number.
    #[error("invalid number '{text}': {reason}")]
    BadNumber {
        /// The number as written.
        text: String,
        /// Why it is invalid.
        reason: &'static str,
    },
    /// A malformed operand path (`event.`, `a[x]`, ...).
    #[error("{0}")]
    BadPath(String),
    /// The parser needed something else here.
    #[error("expected {expected}, found {found}")]
    Expected {
        /// What was expected, e.g. `a value after '=='`.
        expected: String,
        /// The offending token, quoted, or `end of input`.
        found: String,
    },
    /// A name that is no operand.
    #[error("unknown operand '{name}'{hint}")]
    UnknownOperand {
        /// The name as written.
        name: String,
        /// A suggestion, starting with `; ` (may be empty).
        hint: String,
    },
    /// `!x == y`: `!` binds tighter than comparisons.
    #[error("'!' binds tighter than '{op}'; write '!(… {op} …)' to negate a comparison")]
    NegatedComparison {
        /// The comparison operator that followed.
        op: &'static str,
    },
    /// `a == b == c`.
    #[error("comparisons cannot be chained; join them with '&&'")]
    ChainedComparison,
    /// Both sides of a comparison are constants.
    #[error("both sides of '{op}' are constants; one side must be an event operand")]
    ConstantComparison {
        /// The operator.
        op: &'static str,
    },
    /// A comparison whose sides can never be compared (known statically).
    #[error("{0}")]
    TypeMismatch(String),
    /// `state.mode == "..."` with a mode that does not exist.
    #[error("unknown mode \"{0}\"; state.mode is one of user, syscall, trap, irq, softirq, idle, unknown")]
    UnknownStateMode(String),
    /// A regular expression the `regex` crate rejects.
    #[error("invalid regular expression: {0}")]
    BadRegex(String),
    /// Parentheses and `!` nested deeper than [`crate::MAX_DEPTH`].
    #[error("expression nested too deeply (more than {0} levels of parentheses and '!')")]
    TooDeep(usize),
}

impl ParseError {
    pub(crate) fn new(column: usize, width: usize, kind: ParseErrorKind) -> ParseError {
        ParseError {
            column,
            width: width.max(1),
            kind,
        }
    }
}
