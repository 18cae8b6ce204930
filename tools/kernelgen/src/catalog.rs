//! The event classes the generator declares, with the field layouts
//! lttng-modules 2.11 produces on x86-64.
//!
//! Every field is byte-aligned (`align = 8`): on x86-64 LTTng packs the ring
//! buffer without natural alignment, and the metadata says so. The payload
//! encoders in `sim.rs` must write exactly these fields in this order; in
//! debug builds `Sim::emit` checks the size of every fixed-size payload
//! against [`fixed_payload_size`].

/// The type of one event field, named after the C type LTTng records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ty {
    /// `int` / `pid_t`: 32-bit signed, decimal.
    Int,
    /// `unsigned int` / `u32`: 32-bit unsigned, decimal.
    UInt,
    /// `long`: 64-bit signed, decimal.
    Long,
    /// `size_t` and pointers recorded with `ctf_integer`: 64-bit unsigned, decimal.
    ULong,
    /// Pointers and flags recorded with `ctf_integer_hex`: 64-bit unsigned, base 16.
    ULongHex,
    /// `umode_t`: 16-bit unsigned, decimal.
    UShort,
    /// `char comm[16]` recorded with `ctf_array_text`.
    Comm,
    /// NUL-terminated string (`ctf_string`, `ctf_user_string`).
    Str,
    /// `ctf_sequence(pid_t, vtids, ..., u8, ...)`: a `u8` length field
    /// (`__vtids_length`) followed by that many `pid_t`.
    PidSeqU8,
}

/// One event class: its name and its payload fields.
#[derive(Debug)]
pub(crate) struct EventDesc {
    pub name: &'static str,
    pub fields: &'static [(&'static str, Ty)],
}

use Ty::*;

const COMM_TID_PRIO: &[(&str, Ty)] = &[("comm", Comm), ("tid", Int), ("prio", Int)];
const WAKEUP: &[(&str, Ty)] = &[
    ("comm", Comm),
    ("tid", Int),
    ("prio", Int),
    ("target_cpu", Int),
];
const SOFTIRQ: &[(&str, Ty)] = &[("vec", UInt)];
const RET: &[(&str, Ty)] = &[("ret", Long)];

// Event ids. LTTng numbers events in the order they were enabled; the
// scheduler/IRQ/statedump tracepoints come first here, so they get the
// compact header (ids 0..=30), and the syscalls after them partly spill
// into the extended-header range, as in real kernel traces where most
// syscall events have ids above 30.
pub(crate) const SCHED_SWITCH: u32 = 0;
pub(crate) const SCHED_WAKING: u32 = 1;
pub(crate) const SCHED_WAKEUP: u32 = 2;
pub(crate) const SCHED_WAKEUP_NEW: u32 = 3;
pub(crate) const SCHED_MIGRATE_TASK: u32 = 4;
pub(crate) const SCHED_PROCESS_FORK: u32 = 5;
pub(crate) const SCHED_PROCESS_EXEC: u32 = 6;
pub(crate) const SCHED_PROCESS_EXIT: u32 = 7;
pub(crate) const SCHED_PROCESS_FREE: u32 = 8;
pub(crate) const IRQ_HANDLER_ENTRY: u32 = 9;
pub(crate) const IRQ_HANDLER_EXIT: u32 = 10;
pub(crate) const IRQ_SOFTIRQ_RAISE: u32 = 11;
pub(crate) const IRQ_SOFTIRQ_ENTRY: u32 = 12;
pub(crate) const IRQ_SOFTIRQ_EXIT: u32 = 13;
pub(crate) const STATEDUMP_START: u32 = 14;
pub(crate) const STATEDUMP_END: u32 = 15;
pub(crate) const STATEDUMP_PROCESS_STATE: u32 = 16;
pub(crate) const STATEDUMP_INTERRUPT: u32 = 17;
/// Id of `syscall_entry_<first syscall>`; entry/exit pairs follow in
/// [`Sc`] order (entry = base + 2 * index, exit = entry + 1).
pub(crate) const SYSCALL_BASE: u32 = 18;

/// The syscalls the generator uses, in event-id order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Sc {
    Read = 0,
    Write,
    Openat,
    Close,
    Futex,
    Ioctl,
    Nanosleep,
    Clone,
    Execve,
    ExitGroup,
}

impl Sc {
    pub(crate) fn entry_id(self) -> u32 {
        SYSCALL_BASE + 2 * self as u32
    }
    pub(crate) fn exit_id(self) -> u32 {
        self.entry_id() + 1
    }
}

/// All event classes, indexed by id.
pub(crate) static EVENTS: &[EventDesc] = &[
    EventDesc {
        name: "sched_switch",
        fields: &[
            ("prev_comm", Comm),
            ("prev_tid", Int),
            ("prev_prio", Int),
            ("prev_state", Long),
            ("next_comm", Comm),
            ("next_tid", Int),
            ("next_prio", Int),
        ],
    },
    EventDesc {
        name: "sched_waking",
        fields: WAKEUP,
    },
    EventDesc {
        name: "sched_wakeup",
        fields: WAKEUP,
    },
    EventDesc {
        name: "sched_wakeup_new",
        fields: WAKEUP,
    },
    EventDesc {
        name: "sched_migrate_task",
        fields: &[
            ("comm", Comm),
            ("tid", Int),
            ("prio", Int),
            ("orig_cpu", Int),
            ("dest_cpu", Int),
        ],
    },
    EventDesc {
        name: "sched_process_fork",
        fields: &[
            ("parent_comm", Comm),
            ("parent_tid", Int),
            ("parent_pid", Int),
            ("parent_ns_inum", UInt),
            ("child_comm", Comm),
            ("child_tid", Int),
            ("vtids", PidSeqU8),
            ("child_pid", Int),
            ("child_ns_inum", UInt),
        ],
    },
    EventDesc {
        name: "sched_process_exec",
        fields: &[("filename", Str), ("tid", Int), ("old_tid", Int)],
    },
    EventDesc {
        name: "sched_process_exit",
        fields: COMM_TID_PRIO,
    },
    EventDesc {
        name: "sched_process_free",
        fields: COMM_TID_PRIO,
    },
    EventDesc {
        name: "irq_handler_entry",
        fields: &[("irq", Int), ("name", Str)],
    },
    EventDesc {
        name: "irq_handler_exit",
        fields: &[("irq", Int), ("ret", Int)],
    },
    EventDesc {
        name: "irq_softirq_raise",
        fields: SOFTIRQ,
    },
    EventDesc {
        name: "irq_softirq_entry",
        fields: SOFTIRQ,
    },
    EventDesc {
        name: "irq_softirq_exit",
        fields: SOFTIRQ,
    },
    EventDesc {
        name: "lttng_statedump_start",
        fields: &[],
    },
    EventDesc {
        name: "lttng_statedump_end",
        fields: &[],
    },
    EventDesc {
        name: "lttng_statedump_process_state",
        fields: &[
            ("tid", Int),
            ("vtid", Int),
            ("pid", Int),
            ("vpid", Int),
            ("ppid", Int),
            ("vppid", Int),
            ("name", Comm),
            ("type", Int),
            ("mode", Int),
            ("submode", Int),
            ("status", Int),
            ("ns_level", Int),
            ("ns_inum", UInt),
            ("cpu", UInt),
        ],
    },
    EventDesc {
        name: "lttng_statedump_interrupt",
        fields: &[("irq", UInt), ("name", Str), ("action", Str)],
    },
    // Syscalls: sc_in fields go to the entry event, sc_out to the exit
    // event, sc_inout to both (lttng-modules' x86-64 syscall headers).
    EventDesc {
        name: "syscall_entry_read",
        fields: &[("fd", UInt), ("count", ULong)],
    },
    EventDesc {
        name: "syscall_exit_read",
        fields: &[("ret", Long), ("buf", ULong)],
    },
    EventDesc {
        name: "syscall_entry_write",
        fields: &[("fd", UInt), ("buf", ULong), ("count", ULong)],
    },
    EventDesc {
        name: "syscall_exit_write",
        fields: RET,
    },
    EventDesc {
        name: "syscall_entry_openat",
        fields: &[
            ("dfd", Int),
            ("filename", Str),
            ("flags", Int),
            ("mode", UShort),
        ],
    },
    EventDesc {
        name: "syscall_exit_openat",
        fields: RET,
    },
    EventDesc {
        name: "syscall_entry_close",
        fields: &[("fd", UInt)],
    },
    EventDesc {
        name: "syscall_exit_close",
        fields: RET,
    },
    EventDesc {
        name: "syscall_entry_futex",
        fields: &[
            ("uaddr", ULong),
            ("op", Int),
            ("val", UInt),
            ("utime", ULong),
            ("uaddr2", ULong),
            ("val3", UInt),
        ],
    },
    EventDesc {
        name: "syscall_exit_futex",
        fields: &[("ret", Long), ("uaddr", ULong), ("uaddr2", ULong)],
    },
    EventDesc {
        name: "syscall_entry_ioctl",
        fields: &[("fd", UInt), ("cmd", UInt), ("arg", ULong)],
    },
    EventDesc {
        name: "syscall_exit_ioctl",
        fields: &[("ret", Long), ("arg", ULong)],
    },
    EventDesc {
        name: "syscall_entry_nanosleep",
        fields: &[("rqtp", ULong)],
    },
    EventDesc {
        name: "syscall_exit_nanosleep",
        fields: &[("ret", Long), ("rmtp", ULong)],
    },
    EventDesc {
        name: "syscall_entry_clone",
        fields: &[
            ("clone_flags", ULongHex),
            ("newsp", ULongHex),
            ("parent_tid", ULongHex),
            ("child_tid", ULongHex),
        ],
    },
    EventDesc {
        name: "syscall_exit_clone",
        fields: RET,
    },
    EventDesc {
        name: "syscall_entry_execve",
        fields: &[("filename", Str), ("argv", ULongHex), ("envp", ULongHex)],
    },
    EventDesc {
        name: "syscall_exit_execve",
        fields: RET,
    },
    EventDesc {
        name: "syscall_entry_exit_group",
        fields: &[("error_code", Int)],
    },
    EventDesc {
        name: "syscall_exit_exit_group",
        fields: RET,
    },
];

/// Payload size in bytes of event `id` when all its fields have a fixed
/// size, `None` when it has a string or a sequence.
pub(crate) fn fixed_payload_size(id: u32) -> Option<usize> {
    EVENTS[id as usize]
        .fields
        .iter()
        .map(|&(_, ty)| match ty {
            Int | UInt => Some(4),
            Long | ULong | ULongHex => Some(8),
            UShort => Some(2),
            Comm => Some(16),
            Str | PidSeqU8 => None,
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_match_table_positions() {
        let named = [
            (SCHED_SWITCH, "sched_switch"),
            (SCHED_WAKING, "sched_waking"),
            (SCHED_WAKEUP, "sched_wakeup"),
            (SCHED_WAKEUP_NEW, "sched_wakeup_new"),
            (SCHED_MIGRATE_TASK, "sched_migrate_task"),
            (SCHED_PROCESS_FORK, "sched_process_fork"),
            (SCHED_PROCESS_EXEC, "sched_process_exec"),
            (SCHED_PROCESS_EXIT, "sched_process_exit"),
            (SCHED_PROCESS_FREE, "sched_process_free"),
            (IRQ_HANDLER_ENTRY, "irq_handler_entry"),
            (IRQ_HANDLER_EXIT, "irq_handler_exit"),
            (IRQ_SOFTIRQ_RAISE, "irq_softirq_raise"),
            (IRQ_SOFTIRQ_ENTRY, "irq_softirq_entry"),
            (IRQ_SOFTIRQ_EXIT, "irq_softirq_exit"),
            (STATEDUMP_START, "lttng_statedump_start"),
            (STATEDUMP_END, "lttng_statedump_end"),
            (STATEDUMP_PROCESS_STATE, "lttng_statedump_process_state"),
            (STATEDUMP_INTERRUPT, "lttng_statedump_interrupt"),
        ];
        for (id, name) in named {
            assert_eq!(EVENTS[id as usize].name, name);
        }
        let scs = [
            (Sc::Read, "read"),
            (Sc::Write, "write"),
            (Sc::Openat, "openat"),
            (Sc::Close, "close"),
            (Sc::Futex, "futex"),
            (Sc::Ioctl, "ioctl"),
            (Sc::Nanosleep, "nanosleep"),
            (Sc::Clone, "clone"),
            (Sc::Execve, "execve"),
            (Sc::ExitGroup, "exit_group"),
        ];
        for (sc, name) in scs {
            assert_eq!(
                EVENTS[sc.entry_id() as usize].name,
                format!("syscall_entry_{name}")
            );
            assert_eq!(
                EVENTS[sc.exit_id() as usize].name,
                format!("syscall_exit_{name}")
            );
        }
        assert_eq!(EVENTS.len() as u32, Sc::ExitGroup.exit_id() + 1);
    }

    #[test]
    fn fixed_sizes() {
        assert_eq!(fixed_payload_size(SCHED_SWITCH), Some(56));
        assert_eq!(fixed_payload_size(SCHED_WAKEUP), Some(28));
        assert_eq!(fixed_payload_size(STATEDUMP_PROCESS_STATE), Some(68));
        assert_eq!(fixed_payload_size(SCHED_PROCESS_FORK), None);
        assert_eq!(fixed_payload_size(Sc::Openat.entry_id()), None);
        assert_eq!(fixed_payload_size(STATEDUMP_START), Some(0));
    }
}
