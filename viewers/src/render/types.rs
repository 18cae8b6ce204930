//! The items render objects are made of: style keys, tooltip properties,
//! row ids, state intervals, drawn events, arrows and counter samples. A
//! leaf: the level-of-detail builders (`lod`) and the styles (`style`)
//! build on these, and the render objects (`render`) on those.

use std::borrow::Cow;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;
use std::sync::Arc;

use traceloom_base::Time;

/// Key into the presentation configuration: a state, an event kind, an
/// arrow series or a counter. Cheap to clone (an `Arc<str>`).
#[derive(Clone, Eq, PartialOrd, Ord)]
pub struct StyleKey(Arc<str>);

impl StyleKey {
    /// The key `s`.
    pub fn new(s: &str) -> Self {
        StyleKey(Arc::from(s))
    }

    /// The key as a string.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl PartialEq for StyleKey {
    fn eq(&self, other: &Self) -> bool {
        // Models reuse one Arc per state, so the pointer test usually decides.
        Arc::ptr_eq(&self.0, &other.0) || self.0 == other.0
    }
}

impl Hash for StyleKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.hash(state)
    }
}

impl std::borrow::Borrow<str> for StyleKey {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl Deref for StyleKey {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for StyleKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl fmt::Display for StyleKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&str> for StyleKey {
    fn from(s: &str) -> Self {
        StyleKey::new(s)
    }
}

impl From<String> for StyleKey {
    fn from(s: String) -> Self {
        StyleKey(Arc::from(s))
    }
}

impl From<&StyleKey> for StyleKey {
    fn from(s: &StyleKey) -> Self {
        s.clone()
    }
}

/// Name → value pairs shown in tooltips (and a properties view). Empty by
/// default; shared, so copying an interval does not copy its properties.
///
/// The pairs are one allocation of bytes: each name and value as its
/// length (LEB128) and its UTF-8 bytes. A control flow model has five
/// pairs for each of its rows (80,434 on an 8 GB trace); as a slice of
/// (name, `String`) pairs they took six allocations and about 400 bytes a
/// row, 25 MB a model, where the bytes take about 80.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Properties(Option<Arc<[u8]>>);

impl Properties {
    /// No properties.
    pub fn none() -> Self {
        Properties(None)
    }

    /// Properties from pairs, in display order.
    pub fn new<K: Into<Cow<'static, str>>, V: Into<String>>(
        pairs: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        let mut bytes = Vec::new();
        for (k, v) in pairs {
            put_text(&mut bytes, &k.into());
            put_text(&mut bytes, &v.into());
        }
        if bytes.is_empty() {
            Properties(None)
        } else {
            Properties(Some(bytes.into()))
        }
    }

    /// The pairs.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        let mut rest: &[u8] = self.0.as_deref().unwrap_or_default();
        std::iter::from_fn(move || {
            let k = take_text(&mut rest)?;
            let v = take_text(&mut rest)?;
            Some((k, v))
        })
    }

    /// The value of `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
    }

    /// Whether there is no pair.
    pub fn is_empty(&self) -> bool {
        self.0.is_none()
    }
}

/// Makes [`Properties`] one after another in the same buffer: one
/// allocation each, where [`Properties::new`] takes one more a value
/// (a control flow model makes five pairs for each of its 80,434 rows on
/// an 8 GB trace, each time its data changes).
#[derive(Debug, Default)]
pub struct PropertiesWriter {
    bytes: Vec<u8>,
}

impl PropertiesWriter {
    /// A writer with nothing added.
    pub fn new() -> Self {
        PropertiesWriter::default()
    }

    /// Adds the pair `key`, `value`.
    pub fn text(&mut self, key: &str, value: &str) -> &mut Self {
        put_text(&mut self.bytes, key);
        put_text(&mut self.bytes, value);
        self
    }

    /// Adds the pair `key`, `value` written in decimal.
    pub fn int(&mut self, key: &str, value: i64) -> &mut Self {
        let mut digits = itoa::Buffer::new();
        let value = digits.format(value);
        self.text(key, value)
    }

    /// The pairs added since the last call, as properties.
    pub fn finish(&mut self) -> Properties {
        let p = (!self.bytes.is_empty()).then(|| Arc::from(&self.bytes[..]));
        self.bytes.clear();
        Properties(p)
    }
}

/// Appends `text` as its length (a varint) and its bytes.
fn put_text(out: &mut Vec<u8>, text: &str) {
    crate::varint::put(out, text.len() as u64);
    out.extend_from_slice(text.as_bytes());
}

/// The text [`put_text`] wrote at the start of `bytes`, which then start
/// after it; `None` at the end.
fn take_text<'a>(bytes: &mut &'a [u8]) -> Option<&'a str> {
    let n = usize::try_from(crate::varint::take(bytes)?).ok()?;
    let (text, rest) = bytes.split_at_checked(n)?;
    *bytes = rest;
    // Written from `&str`s by `put_text`: always UTF-8.
    std::str::from_utf8(text).ok()
}

/// Tooltip properties of a render's items made on demand from the model
/// rather than stored with every item: a render of a large trace holds
/// up to rows × width intervals, whose property strings would outweigh
/// the intervals themselves. A model whose items' properties vary per
/// item (a Pajé state's container, type, value, level and times) sets
/// one on its render ([`crate::render::TimeGraphRenderBuilder::set_details`]);
/// the tooltips ask it for the item hovered.
pub trait ItemDetails: Send + Sync + fmt::Debug {
    /// Properties of `interval`, drawn in row `row`.
    fn interval(&self, row: RowId, interval: &StateInterval) -> Properties;
    /// Properties of `event`, drawn in row `row`.
    fn event(&self, row: RowId, event: &DrawnEvent) -> Properties;
}

/// Identifier of a tree row, stable from one render to the next (e.g. a TID,
/// a Pajé container's index). Arrows and counters refer to rows by id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RowId(pub u64);

/// A state interval of one row: `[start, end)` in `state`.
///
/// When level of detail merged several sub-pixel intervals into one,
/// `merged > 1`, `state` is the dominant state (longest total time),
/// `covered` is the time the merged intervals really covered (the extent
/// may bridge sub-pixel gaps) and there is no label nor properties.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct StateInterval {
    /// Start time.
    pub start: Time,
    /// End time (`> start`).
    pub end: Time,
    /// State (colour key).
    pub state: StyleKey,
    /// Text drawn inside the bar when it fits (e.g. the syscall name).
    pub label: Option<Arc<str>>,
    /// Number of input intervals this one stands for (1 = not merged).
    pub merged: u32,
    /// Nanoseconds covered by the input intervals.
    pub covered: u64,
    /// Tooltip information.
    pub properties: Properties,
}

impl StateInterval {
    /// A plain interval `[start, end)` in `state`.
    pub fn new(start: Time, end: Time, state: impl Into<StyleKey>) -> Self {
        StateInterval {
            start,
            end,
            state: state.into(),
            label: None,
            merged: 1,
            covered: end.abs_diff(start),
            properties: Properties::none(),
        }
    }

    /// With a label drawn inside the bar.
    pub fn with_label(mut self, label: impl Into<Arc<str>>) -> Self {
        self.label = Some(label.into());
        self
    }

    /// With tooltip properties.
    pub fn with_properties(mut self, properties: Properties) -> Self {
        self.properties = properties;
        self
    }

    /// Whether this interval stands for several input intervals.
    pub fn is_mixed(&self) -> bool {
        self.merged > 1
    }
}

/// A point of interest of a row, drawn as a symbol.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DrawnEvent {
    /// Time of the (first) event.
    pub time: Time,
    /// Event name shown in the tooltip.
    pub name: Arc<str>,
    /// Event kind (symbol and colour key).
    pub kind: StyleKey,
    /// Number of events collapsed into this marker (1 = one event).
    pub count: u32,
    /// Tooltip information (of the first event).
    pub properties: Properties,
}

impl DrawnEvent {
    /// One event `name` of kind `kind` at `time`.
    pub fn new(time: Time, name: impl Into<Arc<str>>, kind: impl Into<StyleKey>) -> Self {
        DrawnEvent {
            time,
            name: name.into(),
            kind: kind.into(),
            count: 1,
            properties: Properties::none(),
        }
    }

    /// With tooltip properties.
    pub fn with_properties(mut self, properties: Properties) -> Self {
        self.properties = properties;
        self
    }
}

/// One end of an arrow: a row at a time. The time may lie outside the
/// render's range (the arrow then leaves through the border).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ArrowEnd {
    /// Row.
    pub row: RowId,
    /// Time.
    pub time: Time,
}

/// An arrow between two rows (CPU hand-over, wake-up, Pajé link).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Arrow {
    /// Where it leaves.
    pub from: ArrowEnd,
    /// Where it arrives.
    pub to: ArrowEnd,
    /// Number of arrows this one stands for after level of detail.
    pub count: u32,
    /// Tooltip information.
    pub properties: Properties,
}

impl Arrow {
    /// An arrow from `(from_row, from_time)` to `(to_row, to_time)`.
    pub fn new(from_row: RowId, from_time: Time, to_row: RowId, to_time: Time) -> Self {
        Arrow {
            from: ArrowEnd {
                row: from_row,
                time: from_time,
            },
            to: ArrowEnd {
                row: to_row,
                time: to_time,
            },
            count: 1,
            properties: Properties::none(),
        }
    }
}

/// A named series of arrows, switched on and off as a whole.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ArrowSeries {
    /// Series name (also its style key).
    pub name: StyleKey,
    /// The arrows.
    pub arrows: Arc<[Arrow]>,
}

/// A counter value over one pixel column (or one raw point when zoomed in):
/// the counter is a step function; `value` holds from `time` until the next
/// sample, `min`/`max` bound the values taken within the pixel.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CounterSample {
    /// Time of the first change in the pixel.
    pub time: Time,
    /// Value at the end of the pixel (held until the next sample).
    pub value: f64,
    /// Smallest value taken in the pixel.
    pub min: f64,
    /// Largest value taken in the pixel.
    pub max: f64,
}

/// A counter (Pajé variable, CPU usage...): per row, or on its own row when
/// `row` is `None`.
#[derive(Debug, Clone, PartialEq)]
pub struct Counter {
    /// Name (also its style key).
    pub name: StyleKey,
    /// Row it is drawn in; `None` for a chart row of its own below the tree.
    pub row: Option<RowId>,
    /// Samples in time order.
    pub samples: Arc<[CounterSample]>,
}

impl Counter {
    /// Smallest and largest value over the samples.
    pub fn value_bounds(&self) -> Option<(f64, f64)> {
        let mut it = self
            .samples
            .iter()
            .filter(|s| s.min.is_finite() && s.max.is_finite());
        let first = it.next()?;
        Some(it.fold((first.min, first.max), |(lo, hi), s| {
            (lo.min(s.min), hi.max(s.max))
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn properties_give_back_their_pairs_in_order() {
        let long = "é".repeat(200);
        let p = Properties::new([
            ("name", "bash".to_string()),
            ("", String::new()),
            ("long", long.clone()),
            ("tid", "42".to_string()),
        ]);
        let pairs: Vec<(&str, &str)> = p.iter().collect();
        assert_eq!(
            pairs,
            [
                ("name", "bash"),
                ("", ""),
                ("long", long.as_str()),
                ("tid", "42")
            ]
        );
        assert_eq!(p.get("tid"), Some("42"));
        assert_eq!(p.get("pid"), None);
        assert!(!p.is_empty());
        let none = Properties::new(Vec::<(&'static str, String)>::new());
        assert!(none.is_empty());
        assert_eq!(none.iter().count(), 0);
        assert_eq!(none, Properties::none());
        assert_ne!(p, Properties::new([("name", "bash")]));
    }

    #[test]
    fn a_writer_makes_the_properties_new_does() {
        let mut w = PropertiesWriter::new();
        for (name, tid) in [("bash", 42), ("", i64::MIN), ("kworker/0:1", -1)] {
            let written = w.text("name", name).int("tid", tid).finish();
            let made = Properties::new([("name", name.to_string()), ("tid", tid.to_string())]);
            assert_eq!(written, made);
        }
        // Each is only the pairs added since the last.
        assert_eq!(w.finish(), Properties::none());
        assert_eq!(w.int("pid", 7).finish(), Properties::new([("pid", "7")]));
    }
}
