//! Evaluation must not allocate: it runs once per event.

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use common::Subject;
use traceloom_filter::Filter;

struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // `try_with`: the thread-local may already be gone during thread exit.
        let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn matching_does_not_allocate() {
    let filter = Filter::new(
        r#"(event.name == "sched_*" || name =~ "^irq_[a-z]+$" || name != "a?*b") && !(event.field.prev_tid == 42)
           && event.context.procname < "z" && time >= 1.5s && state.mode == "user" || event.field.arr[2].x
           || event.field.missing != 3 || cpu > 0.5"#,
    )
    .unwrap();
    let subjects = [
        Subject::new("sched_switch")
            .time(2_000_000_000)
            .field("prev_tid", 7i64)
            .context("procname", "bash"),
        Subject::new("irq_handler_entry").field("arr[2].x", 1i64),
        Subject::new("xaxb")
            .cpu(None)
            .with_state(traceloom_filter::StateKey::Mode, "user"),
    ];
    // The regex engine allocates its per-thread search cache on first use.
    for s in &subjects {
        filter.matches(s);
    }
    let mut matched = 0;
    let before = ALLOCATIONS.with(Cell::get);
    for _ in 0..100 {
        for s in &subjects {
            matched += usize::from(filter.matches(s));
        }
    }
    let after = ALLOCATIONS.with(Cell::get);
    assert_eq!(after - before, 0, "allocations during evaluation");
    assert!(matched > 0);
}
