//! Tables by event class id: a stream class's compiled event classes
//! (`schema`) and the classes its events point back to ([`crate::event`]).
//! A leaf, so that the event API below the decoders can look an event's
//! class up as cheaply as the decoder looks up its program.

use std::collections::HashMap;

/// Ids below this many go into a vector; a stream class with a larger id
/// uses a hash map.
const DENSE_IDS: u64 = 1 << 16;

/// Values by event class id.
#[derive(Debug)]
pub(crate) enum EventTable<T> {
    /// Ids small enough for a vector.
    Dense(Vec<Option<T>>),
    /// Sparse ids.
    Sparse(HashMap<u64, T>),
}

impl<T> EventTable<T> {
    /// The table of `entries`, whose largest id is `max_id`.
    pub(crate) fn new(max_id: u64, entries: impl IntoIterator<Item = (u64, T)>) -> Self {
        if max_id < DENSE_IDS {
            let mut v: Vec<Option<T>> = Vec::new();
            v.resize_with(max_id as usize + 1, || None);
            for (id, e) in entries {
                if let Some(slot) = v.get_mut(id as usize) {
                    *slot = Some(e);
                }
            }
            EventTable::Dense(v)
        } else {
            EventTable::Sparse(entries.into_iter().collect())
        }
    }

    /// The value of event class `id`.
    #[inline]
    pub(crate) fn get(&self, id: u64) -> Option<&T> {
        match self {
            EventTable::Dense(v) => v.get(usize::try_from(id).ok()?)?.as_ref(),
            EventTable::Sparse(m) => m.get(&id),
        }
    }
}
