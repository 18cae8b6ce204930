//! Prioritized hook lists, as LTTV has them.
