//! Prioritized hook lists, as LTTV has them.
//!
//! A *hook* is a closure called for every event (or every boundary
//! notification) a consumer asked for. Hooks live in a [`Hooks`] list, kept
//! sorted by [`Priority`]: a lower value runs first, and hooks of equal
//! priority run in the order they were added. LTTV's four landmarks are
//! [`Priority::HIGH`] (0), [`Priority::STATE`] (25), [`Priority::DEFAULT`]
//! (50) and [`Priority::LOW`] (99): state computation runs at `STATE`, so a
//! `HIGH` hook sees the state *before* the event is applied and a `DEFAULT`
//! hook sees it *after*.
//!
//! [`HooksById`] keeps one list per event-class id, so a consumer interested
//! in a few event classes is not called for the others.
//!
//! Every hook receives a [`HookContext`]: the event, its position, the
//! traceset state and the hook owner's own data. The context is generic over
//! all four types because this crate must not know the engine's types.
//!
//! A hook returns a [`Flow`]; [`Flow::Stop`] asks whoever drives the hooks to
//! stop delivering (for an events request: raise its stop flag once the
//! current event has been delivered to every hook).
//!
//! Hooks are removed by the [`HookHandle`] returned when they were added.
//! Handles are unique in the whole process and increase with creation time,
//! which also gives a total "insertion order" across several lists — the
//! engine relies on it to merge lists of different owners.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

/// Priority of a hook: lower values run first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Priority(pub i32);

impl Priority {
    /// Runs before everything else, in particular before the state is
    /// updated for the current event.
    pub const HIGH: Priority = Priority(0);
    /// The priority of state computation hooks.
    pub const STATE: Priority = Priority(25);
    /// The usual priority of viewer hooks; they see the state after the
    /// current event was applied.
    pub const DEFAULT: Priority = Priority(50);
    /// Runs after everything else.
    pub const LOW: Priority = Priority(99);
}

impl Default for Priority {
    fn default() -> Self {
        Priority::DEFAULT
    }
}

/// What a hook asks of its caller after it ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Flow {
    /// Keep delivering.
    #[default]
    Continue,
    /// Stop delivering to this hook's owner.
    Stop,
}

impl Flow {
    /// `true` for [`Flow::Stop`].
    pub fn is_stop(self) -> bool {
        self == Flow::Stop
    }

    /// `Stop` if either is `Stop` (LTTV ORs the return values of a list).
    pub fn or(self, other: Flow) -> Flow {
        if self.is_stop() || other.is_stop() {
            Flow::Stop
        } else {
            Flow::Continue
        }
    }
}

/// Event-class identifier used to key [`HooksById`].
pub type EventClassId = u64;

/// What a hook is called with.
///
/// * `E` — the event (or boundary notification) being delivered,
/// * `P` — its position in the traceset,
/// * `S` — the traceset state, read-only,
/// * `D` — the hook owner's own data, mutable.
pub struct HookContext<'a, E: ?Sized, P: ?Sized, S: ?Sized, D: ?Sized> {
    /// The event being delivered.
    pub event: &'a E,
    /// Position of `event`.
    pub position: &'a P,
    /// The traceset state at this point of the read.
    pub state: &'a S,
    /// The data of the hook's owner (for an events request: the request's
    /// own data).
    pub data: &'a mut D,
}

impl<'a, E: ?Sized, P: ?Sized, S: ?Sized, D: ?Sized> HookContext<'a, E, P, S, D> {
    /// Builds a context from its parts.
    pub fn new(event: &'a E, position: &'a P, state: &'a S, data: &'a mut D) -> Self {
        HookContext {
            event,
            position,
            state,
            data,
        }
    }
}

/// The type of a boxed hook.
pub type HookFn<E, P, S, D> = dyn FnMut(&mut HookContext<'_, E, P, S, D>) -> Flow + Send;

/// Identifies one added hook; returned by `add`, accepted by `remove`.
///
/// Handles are unique process-wide and ordered by creation time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct HookHandle(u64);

impl HookHandle {
    fn fresh() -> HookHandle {
        // Relaxed is enough: only uniqueness and per-thread monotonicity
        // matter, and fetch_add is atomic regardless of ordering.
        static NEXT: AtomicU64 = AtomicU64::new(0);
        HookHandle(NEXT.fetch_add(1, Ordering::Relaxed))
    }

    /// The creation rank of this handle (useful to merge several lists in
    /// insertion order).
    pub fn sequence(self) -> u64 {
        self.0
    }
}

struct Entry<E: ?Sized, P: ?Sized, S: ?Sized, D: ?Sized> {
    priority: Priority,
    handle: HookHandle,
    hook: Box<HookFn<E, P, S, D>>,
}

/// A list of hooks kept in calling order: by priority, then insertion.
pub struct Hooks<E: ?Sized, P: ?Sized, S: ?Sized, D: ?Sized> {
    entries: Vec<Entry<E, P, S, D>>,
}

impl<E: ?Sized, P: ?Sized, S: ?Sized, D: ?Sized> Default for Hooks<E, P, S, D> {
    fn default() -> Self {
        Hooks {
            entries: Vec::new(),
        }
    }
}

impl<E: ?Sized, P: ?Sized, S: ?Sized, D: ?Sized> fmt::Debug for Hooks<E, P, S, D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.entries.iter().map(|e| (e.priority.0, e.handle.0)))
            .finish()
    }
}

impl<E: ?Sized, P: ?Sized, S: ?Sized, D: ?Sized> Hooks<E, P, S, D> {
    /// An empty list.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `hook` at `priority`, after every hook of the same priority
    /// already present.
    pub fn add<F>(&mut self, priority: Priority, hook: F) -> HookHandle
    where
        F: FnMut(&mut HookContext<'_, E, P, S, D>) -> Flow + Send + 'static,
    {
        self.add_boxed(priority, Box::new(hook))
    }

    /// Same as [`Hooks::add`] for an already boxed hook.
    pub fn add_boxed(&mut self, priority: Priority, hook: Box<HookFn<E, P, S, D>>) -> HookHandle {
        let handle = HookHandle::fresh();
        // Insert after all entries of priority <= `priority`: this keeps
        // equal priorities in insertion order.
        let at = self.entries.partition_point(|e| e.priority <= priority);
        self.entries.insert(
            at,
            Entry {
                priority,
                handle,
                hook,
            },
        );
        handle
    }

    /// Removes the hook added under `handle`; `false` if it is not in this
    /// list.
    pub fn remove(&mut self, handle: HookHandle) -> bool {
        match self.entries.iter().position(|e| e.handle == handle) {
            Some(i) => {
                self.entries.remove(i);
                true
            }
            None => false,
        }
    }

    /// Whether `handle` designates a hook of this list.
    pub fn contains(&self, handle: HookHandle) -> bool {
        self.entries.iter().any(|e| e.handle == handle)
    }

    /// Number of hooks.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// `true` when the list holds no hook.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Removes every hook.
    pub fn clear(&mut self) {
        self.entries.clear();
    }

    /// `(handle, priority)` of every hook, in calling order. Index `i` of
    /// this iteration is the index [`Hooks::call_at`] accepts.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (HookHandle, Priority)> + '_ {
        self.entries.iter().map(|e| (e.handle, e.priority))
    }

    /// Calls every hook in order. Returns [`Flow::Stop`] if any hook did;
    /// all hooks are called regardless, because one owner's wish to stop
    /// must not deprive the other hooks of the event (LTTV's
    /// `lttv_hooks_call`).
    pub fn call(&mut self, ctx: &mut HookContext<'_, E, P, S, D>) -> Flow {
        let mut flow = Flow::Continue;
        for e in &mut self.entries {
            flow = flow.or((e.hook)(ctx));
        }
        flow
    }

    /// Calls hooks in order until one returns [`Flow::Stop`] (LTTV's
    /// `lttv_hooks_call_check`).
    pub fn call_until_stop(&mut self, ctx: &mut HookContext<'_, E, P, S, D>) -> Flow {
        for e in &mut self.entries {
            if (e.hook)(ctx).is_stop() {
                return Flow::Stop;
            }
        }
        Flow::Continue
    }

    /// Calls only the hook at `index` of the calling order (see
    /// [`Hooks::iter`]); `None` if out of range. Lets a driver interleave
    /// hooks of lists whose contexts have different types.
    pub fn call_at(&mut self, index: usize, ctx: &mut HookContext<'_, E, P, S, D>) -> Option<Flow> {
        self.entries.get_mut(index).map(|e| (e.hook)(ctx))
    }

    /// Calls the hooks of `self` and `other` merged into one calling order:
    /// by priority, then by insertion order across both lists (LTTV's
    /// `lttv_hooks_call_merge`, used for the general and by-id hooks of one
    /// owner). Returns [`Flow::Stop`] if any hook did; all are called.
    pub fn call_merged(&mut self, other: &mut Self, ctx: &mut HookContext<'_, E, P, S, D>) -> Flow {
        let mut flow = Flow::Continue;
        let (mut i, mut j) = (0, 0);
        while i < self.entries.len() || j < other.entries.len() {
            let take_self = match (self.entries.get(i), other.entries.get(j)) {
                (Some(a), Some(b)) => (a.priority, a.handle) <= (b.priority, b.handle),
                (Some(_), None) => true,
                _ => false,
            };
            let e = if take_self {
                i += 1;
                &mut self.entries[i - 1]
            } else {
                j += 1;
                &mut other.entries[j - 1]
            };
            flow = flow.or((e.hook)(ctx));
        }
        flow
    }
}

/// Hooks keyed by event-class id: one [`Hooks`] list per id.
pub struct HooksById<E: ?Sized, P: ?Sized, S: ?Sized, D: ?Sized> {
    lists: BTreeMap<EventClassId, Hooks<E, P, S, D>>,
}

impl<E: ?Sized, P: ?Sized, S: ?Sized, D: ?Sized> Default for HooksById<E, P, S, D> {
    fn default() -> Self {
        HooksById {
            lists: BTreeMap::new(),
        }
    }
}

impl<E: ?Sized, P: ?Sized, S: ?Sized, D: ?Sized> fmt::Debug for HooksById<E, P, S, D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.lists.iter()).finish()
    }
}

impl<E: ?Sized, P: ?Sized, S: ?Sized, D: ?Sized> HooksById<E, P, S, D> {
    /// No hooks for any id.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `hook` for events of class `id`.
    pub fn add<F>(&mut self, id: EventClassId, priority: Priority, hook: F) -> HookHandle
    where
        F: FnMut(&mut HookContext<'_, E, P, S, D>) -> Flow + Send + 'static,
    {
        self.lists.entry(id).or_default().add(priority, hook)
    }

    /// Removes the hook added under `handle`, whatever its id; `false` if it
    /// is not here.
    pub fn remove(&mut self, handle: HookHandle) -> bool {
        let found = self
            .lists
            .iter_mut()
            .find_map(|(id, list)| list.remove(handle).then_some(*id));
        match found {
            Some(id) => {
                // Drop emptied lists so `ids()` only reports ids with hooks.
                if self.lists.get(&id).is_some_and(Hooks::is_empty) {
                    self.lists.remove(&id);
                }
                true
            }
            None => false,
        }
    }

    /// The hooks of class `id`, if any.
    pub fn get(&self, id: EventClassId) -> Option<&Hooks<E, P, S, D>> {
        self.lists.get(&id)
    }

    /// The hooks of class `id`, if any, mutably.
    pub fn get_mut(&mut self, id: EventClassId) -> Option<&mut Hooks<E, P, S, D>> {
        self.lists.get_mut(&id)
    }

    /// Ids that have at least one hook, ascending.
    pub fn ids(&self) -> impl Iterator<Item = EventClassId> + '_ {
        self.lists.keys().copied()
    }

    /// Total number of hooks over all ids.
    pub fn len(&self) -> usize {
        self.lists.values().map(Hooks::len).sum()
    }

    /// `true` when no id has a hook.
    pub fn is_empty(&self) -> bool {
        self.lists.values().all(Hooks::is_empty)
    }

    /// Calls the hooks of class `id` (none if the id has no list).
    pub fn call(&mut self, id: EventClassId, ctx: &mut HookContext<'_, E, P, S, D>) -> Flow {
        match self.lists.get_mut(&id) {
            Some(list) => list.call(ctx),
            None => Flow::Continue,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    type Log = Vec<u32>;
    type TestHooks = Hooks<u32, u64, (), Log>;

    fn run(hooks: &mut TestHooks, event: u32) -> (Log, Flow) {
        let mut log = Vec::new();
        let flow = hooks.call(&mut HookContext::new(&event, &0, &(), &mut log));
        (log, flow)
    }

    fn tagger(tag: u32) -> impl FnMut(&mut HookContext<'_, u32, u64, (), Log>) -> Flow + Send {
        move |ctx| {
            ctx.data.push(tag);
            Flow::Continue
        }
    }

    #[test]
    fn landmark_priorities_match_lttv() {
        assert_eq!(Priority::HIGH.0, 0);
        assert_eq!(Priority::STATE.0, 25);
        assert_eq!(Priority::DEFAULT.0, 50);
        assert_eq!(Priority::LOW.0, 99);
        assert!(Priority::HIGH < Priority::STATE);
        assert!(Priority::STATE < Priority::DEFAULT);
        assert!(Priority::DEFAULT < Priority::LOW);
    }

    #[test]
    fn lower_priority_value_runs_first_and_ties_keep_insertion_order() {
        let mut hooks = TestHooks::new();
        hooks.add(Priority::LOW, tagger(1));
        hooks.add(Priority::DEFAULT, tagger(2));
        hooks.add(Priority::HIGH, tagger(3));
        hooks.add(Priority::DEFAULT, tagger(4));
        hooks.add(Priority::STATE, tagger(5));
        hooks.add(Priority::HIGH, tagger(6));
        assert_eq!(run(&mut hooks, 0).0, vec![3, 6, 5, 2, 4, 1]);
    }

    #[test]
    fn context_carries_event_position_state_and_data() {
        let mut hooks: Hooks<str, u64, u32, String> = Hooks::new();
        hooks.add(Priority::DEFAULT, |ctx| {
            ctx.data
                .push_str(&format!("{}@{}/{}", ctx.event, ctx.position, ctx.state));
            Flow::Continue
        });
        let mut out = String::new();
        hooks.call(&mut HookContext::new("sched_switch", &7, &3, &mut out));
        assert_eq!(out, "sched_switch@7/3");
    }

    #[test]
    fn call_runs_all_hooks_and_reports_stop() {
        let mut hooks = TestHooks::new();
        hooks.add(Priority::HIGH, tagger(1));
        hooks.add(Priority::DEFAULT, |ctx| {
            ctx.data.push(2);
            if *ctx.event == 42 {
                Flow::Stop
            } else {
                Flow::Continue
            }
        });
        hooks.add(Priority::LOW, tagger(3));
        assert_eq!(run(&mut hooks, 1), (vec![1, 2, 3], Flow::Continue));
        assert_eq!(run(&mut hooks, 42), (vec![1, 2, 3], Flow::Stop));
    }

    #[test]
    fn call_until_stop_short_circuits() {
        let mut hooks = TestHooks::new();
        hooks.add(Priority::HIGH, tagger(1));
        hooks.add(Priority::DEFAULT, |ctx| {
            ctx.data.push(2);
            Flow::Stop
        });
        hooks.add(Priority::LOW, tagger(3));
        let mut log = Vec::new();
        let flow = hooks.call_until_stop(&mut HookContext::new(&0, &0, &(), &mut log));
        assert_eq!((log, flow), (vec![1, 2], Flow::Stop));
    }

    #[test]
    fn removal_by_handle() {
        let mut hooks = TestHooks::new();
        let a = hooks.add(Priority::DEFAULT, tagger(1));
        let b = hooks.add(Priority::DEFAULT, tagger(2));
        let c = hooks.add(Priority::DEFAULT, tagger(3));
        assert!(hooks.remove(b));
        assert!(!hooks.remove(b), "a handle removes at most once");
        assert!(hooks.contains(a) && !hooks.contains(b) && hooks.contains(c));
        assert_eq!(run(&mut hooks, 0).0, vec![1, 3]);
        let mut other = TestHooks::new();
        let d = other.add(Priority::DEFAULT, tagger(4));
        assert!(!hooks.remove(d), "handles of another list are not ours");
        assert_eq!(hooks.len(), 2);
    }

    #[test]
    fn call_at_follows_iter_order() {
        let mut hooks = TestHooks::new();
        hooks.add(Priority::LOW, tagger(1));
        hooks.add(Priority::HIGH, tagger(2));
        let prios: Vec<Priority> = hooks.iter().map(|(_, p)| p).collect();
        assert_eq!(prios, vec![Priority::HIGH, Priority::LOW]);
        let mut log = Vec::new();
        let mut ctx = HookContext::new(&0, &0, &(), &mut log);
        assert_eq!(hooks.call_at(1, &mut ctx), Some(Flow::Continue));
        assert_eq!(hooks.call_at(2, &mut ctx), None);
        assert_eq!(log, vec![1]);
    }

    #[test]
    fn by_id_lists_only_see_their_class() {
        let mut by_id: HooksById<u32, u64, (), Log> = HooksById::new();
        by_id.add(7, Priority::DEFAULT, tagger(70));
        let h = by_id.add(9, Priority::DEFAULT, tagger(90));
        by_id.add(7, Priority::HIGH, tagger(71));
        let mut log = Vec::new();
        let mut ctx = HookContext::new(&0, &0, &(), &mut log);
        by_id.call(7, &mut ctx);
        by_id.call(8, &mut ctx);
        by_id.call(9, &mut ctx);
        assert_eq!(log, vec![71, 70, 90]);
        assert_eq!(by_id.ids().collect::<Vec<_>>(), vec![7, 9]);
        assert!(by_id.remove(h));
        assert_eq!(by_id.ids().collect::<Vec<_>>(), vec![7]);
        assert_eq!(by_id.len(), 2);
        assert!(!by_id.remove(h));
    }

    #[test]
    fn merged_call_interleaves_by_priority_then_insertion() {
        let mut general = TestHooks::new();
        let mut specific = TestHooks::new();
        general.add(Priority::DEFAULT, tagger(1));
        specific.add(Priority::DEFAULT, tagger(2));
        general.add(Priority::DEFAULT, tagger(3));
        specific.add(Priority::HIGH, tagger(4));
        general.add(Priority::LOW, tagger(5));
        let mut log = Vec::new();
        general.call_merged(&mut specific, &mut HookContext::new(&0, &0, &(), &mut log));
        assert_eq!(log, vec![4, 1, 2, 3, 5]);
    }

    #[derive(Debug, Clone)]
    enum Op {
        Add(i32),
        AddById(i32),
        Remove(usize),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            3 => (0..6i32).prop_map(Op::Add),
            2 => (0..6i32).prop_map(Op::AddById),
            1 => any::<usize>().prop_map(Op::Remove),
        ]
    }

    proptest! {
        /// Whatever sequence of additions and removals, a list calls its live
        /// hooks sorted by priority with ties in insertion order, and a merged
        /// call interleaves two lists the same way.
        #[test]
        fn calling_order_is_priority_then_insertion(ops in proptest::collection::vec(op(), 0..60)) {
            let mut general = TestHooks::new();
            let mut by_id: HooksById<u32, u64, (), Log> = HooksById::new();
            // Model: (priority, insertion rank, tag, handle, in by-id list).
            let mut model: Vec<(i32, u32, HookHandle, bool)> = Vec::new();
            let mut next_tag = 0u32;
            for op in ops {
                match op {
                    Op::Add(p) => {
                        let h = general.add(Priority(p), tagger(next_tag));
                        model.push((p, next_tag, h, false));
                        next_tag += 1;
                    }
                    Op::AddById(p) => {
                        let h = by_id.add(3, Priority(p), tagger(next_tag));
                        model.push((p, next_tag, h, true));
                        next_tag += 1;
                    }
                    Op::Remove(i) => {
                        if !model.is_empty() {
                            let (_, _, h, in_by_id) = model.remove(i % model.len());
                            let removed = if in_by_id { by_id.remove(h) } else { general.remove(h) };
                            prop_assert!(removed);
                        }
                    }
                }
            }
            let mut expected_general: Vec<(i32, u32)> =
                model.iter().filter(|m| !m.3).map(|m| (m.0, m.1)).collect();
            expected_general.sort();
            let got = run(&mut general, 0).0;
            prop_assert_eq!(got, expected_general.iter().map(|e| e.1).collect::<Vec<_>>());

            let mut expected_all: Vec<(i32, u32)> = model.iter().map(|m| (m.0, m.1)).collect();
            expected_all.sort();
            let mut log = Vec::new();
            let mut ctx = HookContext::new(&0, &0, &(), &mut log);
            match by_id.get_mut(3) {
                Some(specific) => { general.call_merged(specific, &mut ctx); }
                None => { general.call(&mut ctx); }
            }
            prop_assert_eq!(log, expected_all.iter().map(|e| e.1).collect::<Vec<_>>());
        }
    }
}
