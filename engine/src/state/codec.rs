//! Bytes for a [`TracesetState`]: what the checkpoint cache stores.
//!
//! The encoding is postcard (compact, varint-based); the cache file adds
//! its own version and checksum around it. [`encode`] writes a whole state;
//! [`StateDelta`] is what the cache stores per checkpoint: only what changed
//! since the previous checkpoint, because between two checkpoints a few
//! thousand events apart most threads keep their name, ids and modes and
//! repeating them made the cache too big for dense checkpoints.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::{Cpu, Line, ModeFrame, Thread, ThreadKey, ThreadStatus, TraceState, TracesetState};

/// A state could not be decoded from bytes.
#[derive(Debug, thiserror::Error)]
#[error("cannot decode a saved state: {0}")]
pub struct DecodeError(#[from] postcard::Error);

/// Appends the encoding of `state` to `out`.
pub fn encode(state: &TracesetState, out: &mut Vec<u8>) {
    // Serializing plain data into a Vec cannot fail.
    let bytes = postcard::to_stdvec(state).expect("state serialization is infallible");
    out.extend_from_slice(&bytes);
}

/// Decodes a state encoded by [`encode`].
pub fn decode(bytes: &[u8]) -> Result<TracesetState, DecodeError> {
    Ok(postcard::from_bytes(bytes)?)
}

/// A thread as a [`StateDelta`] stores it: its times relative to the
/// trace's time (small varints instead of absolute nanoseconds) and its
/// name only when it differs from the base thread's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct ThreadPatch {
    key: ThreadKey,
    /// The thread id when it is not the key's (never, for states the
    /// engine computes).
    tid: Option<i64>,
    pid: i64,
    ppid: i64,
    name: Option<Arc<str>>,
    status: ThreadStatus,
    modes: Vec<ModeFrame>,
    cpu: Option<u32>,
    created: Option<i64>,
    age: i64,
}

/// What changed in one trace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct TraceDelta {
    time: i64,
    /// Every CPU (a handful), each as (number, running thread, time -
    /// since).
    cpus: Vec<(u32, Option<ThreadKey>, i64)>,
    /// Lines that changed; `None`: removed.
    irqs: Vec<(u64, Option<Line>)>,
    softirqs: Vec<(u64, Option<Line>)>,
    removed: Vec<ThreadKey>,
    /// Threads that are new or changed, in key order.
    changed: Vec<ThreadPatch>,
}

/// The difference between a state and a base state (the previous
/// checkpoint's, or the empty state): applying it to the base with
/// [`StateDelta::apply`] gives the state back exactly.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StateDelta {
    traces: Vec<TraceDelta>,
}

fn line_changes(
    base: Option<&BTreeMap<u64, Line>>,
    now: &BTreeMap<u64, Line>,
) -> Vec<(u64, Option<Line>)> {
    let mut out: Vec<(u64, Option<Line>)> = now
        .iter()
        .filter(|(k, l)| base.and_then(|b| b.get(k)) != Some(l))
        .map(|(k, l)| (*k, Some(l.clone())))
        .collect();
    if let Some(b) = base {
        out.extend(
            b.keys()
                .filter(|k| !now.contains_key(k))
                .map(|k| (*k, None)),
        );
    }
    out
}

fn apply_lines(lines: &mut BTreeMap<u64, Line>, changes: &[(u64, Option<Line>)]) {
    for (k, l) in changes {
        match l {
            Some(l) => {
                lines.insert(*k, l.clone());
            }
            None => {
                lines.remove(k);
            }
        }
    }
}

impl StateDelta {
    /// The delta from `base` (`None`: the empty state) to `state`.
    pub fn diff(base: Option<&TracesetState>, state: &TracesetState) -> StateDelta {
        let traces = state
            .traces
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let b = base.and_then(|b| b.traces.get(i));
                let time = t.time;
                let mut changed: Vec<ThreadPatch> = t
                    .threads
                    .iter()
                    .filter(|(k, th)| b.and_then(|b| b.threads.get(k)) != Some(th))
                    .map(|(k, th)| {
                        let old_name = b.and_then(|b| b.threads.get(k)).map(|o| &o.name);
                        let same_name = match old_name {
                            Some(o) => *o == th.name,
                            None => th.name.is_empty(),
                        };
                        ThreadPatch {
                            key: *k,
                            tid: (th.tid != k.tid).then_some(th.tid),
                            pid: th.pid,
                            ppid: th.ppid,
                            name: (!same_name).then(|| th.name.clone()),
                            status: th.status,
                            modes: th.modes.clone(),
                            cpu: th.cpu,
                            created: th.created,
                            age: time.wrapping_sub(th.since),
                        }
                    })
                    .collect();
                // Hash-map order is arbitrary: sorting makes the bytes
                // deterministic.
                changed.sort_by_key(|p| p.key);
                let mut removed: Vec<ThreadKey> = b
                    .map(|b| {
                        b.threads
                            .keys()
                            .filter(|k| !t.threads.contains_key(k))
                            .copied()
                            .collect()
                    })
                    .unwrap_or_default();
                removed.sort();
                TraceDelta {
                    time,
                    cpus: t
                        .cpus
                        .iter()
                        .map(|(n, c)| (n, c.running, time.wrapping_sub(c.since)))
                        .collect(),
                    irqs: line_changes(b.map(|b| &b.irqs), &t.irqs),
                    softirqs: line_changes(b.map(|b| &b.softirqs), &t.softirqs),
                    removed,
                    changed,
                }
            })
            .collect();
        StateDelta { traces }
    }

    /// The state this delta was taken of, given the same `base` as
    /// [`StateDelta::diff`].
    pub fn apply(&self, base: Option<&TracesetState>) -> TracesetState {
        let mut state = base.cloned().unwrap_or_default();
        state.traces.truncate(self.traces.len());
        for (i, d) in self.traces.iter().enumerate() {
            let t: &mut TraceState = state.trace_mut(i);
            t.time = d.time;
            t.cpus = d
                .cpus
                .iter()
                .map(|&(n, running, age)| {
                    let cpu = Cpu {
                        running,
                        since: d.time.wrapping_sub(age),
                    };
                    (n, cpu)
                })
                .collect();
            apply_lines(&mut t.irqs, &d.irqs);
            apply_lines(&mut t.softirqs, &d.softirqs);
            for k in &d.removed {
                t.threads.remove(k);
            }
            for p in &d.changed {
                let name = match (&p.name, t.threads.get(&p.key)) {
                    (Some(n), _) => n.clone(),
                    (None, Some(old)) => old.name.clone(),
                    (None, None) => Arc::from(""),
                };
                t.threads.insert(
                    p.key,
                    Thread {
                        tid: p.tid.unwrap_or(p.key.tid),
                        pid: p.pid,
                        ppid: p.ppid,
                        name,
                        status: p.status,
                        modes: p.modes.clone(),
                        cpu: p.cpu,
                        created: p.created,
                        since: d.time.wrapping_sub(p.age),
                    },
                );
            }
        }
        state
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::ExecMode;

    #[test]
    fn round_trip() {
        let mut s = TracesetState::new(2);
        let t = s.trace_mut(1);
        t.time = 42;
        t.cpu_mut(3).running = Some(ThreadKey::new(7, 3));
        t.threads.insert(
            ThreadKey::new(7, 3),
            Thread {
                tid: 7,
                pid: 7,
                ppid: 1,
                name: Arc::from("bash"),
                status: ThreadStatus::Run,
                modes: vec![
                    ModeFrame {
                        mode: ExecMode::User,
                        sub: 0,
                    },
                    ModeFrame {
                        mode: ExecMode::Syscall,
                        sub: 12,
                    },
                ],
                cpu: Some(3),
                created: None,
                since: 40,
            },
        );
        let mut bytes = Vec::new();
        encode(&s, &mut bytes);
        assert_eq!(decode(&bytes).unwrap(), s);
        assert!(decode(&bytes[..bytes.len() - 3]).is_err());
    }

    fn thread(tid: i64, name: &str, since: i64) -> Thread {
        Thread {
            tid,
            pid: tid,
            ppid: 1,
            name: Arc::from(name),
            status: ThreadStatus::WaitCpu,
            modes: vec![ModeFrame {
                mode: ExecMode::User,
                sub: 0,
            }],
            cpu: Some(0),
            created: None,
            since,
        }
    }

    #[test]
    fn delta_applied_to_its_base_gives_the_state_back() {
        let mut a = TracesetState::new(2);
        let t = a.trace_mut(0);
        t.time = 1_000_000_000;
        t.cpu_mut(1).running = Some(ThreadKey::new(5, 1));
        t.threads
            .insert(ThreadKey::new(5, 0), thread(5, "sshd", 999));
        t.threads
            .insert(ThreadKey::new(6, 0), thread(6, "bash", 900));
        t.threads
            .insert(ThreadKey::new(0, 1), thread(0, "swapper/1", 10));
        t.irqs.insert(
            19,
            Line {
                busy_on: Some(1),
                pending: false,
                name: Some(Arc::from("eth0")),
            },
        );
        t.softirqs.insert(3, Line::default());

        let mut b = a.clone();
        let t = b.trace_mut(0);
        t.time = 2_000_000_000;
        // Changed thread (renamed, new mode), freed thread, new thread with
        // and without a name, a thread whose tid is not its key's.
        let sshd = t.threads.get_mut(&ThreadKey::new(5, 0)).unwrap();
        sshd.name = Arc::from("sshd-child");
        sshd.modes.push(ModeFrame {
            mode: ExecMode::Syscall,
            sub: 7,
        });
        sshd.since = 1_999_999_000;
        t.threads.remove(&ThreadKey::new(6, 0));
        // Changed but keeps its name: the delta does not repeat it.
        t.threads.get_mut(&ThreadKey::new(0, 1)).unwrap().status = ThreadStatus::Run;
        t.threads
            .insert(ThreadKey::new(8, 0), thread(8, "", 1_500_000_000));
        t.threads
            .insert(ThreadKey::new(9, 0), thread(9, "cc1", i64::MIN));
        t.threads
            .insert(ThreadKey::new(10, 0), thread(11, "odd", 5));
        t.irqs.remove(&19);
        t.softirqs.get_mut(&3).unwrap().pending = true;
        t.softirqs.insert(9, Line::default());
        t.cpu_mut(3).since = 1_234;
        b.trace_mut(1).time = 77;

        for (base, state) in [(None, &a), (Some(&a), &b), (None, &b), (Some(&b), &a)] {
            let d = StateDelta::diff(base, state);
            let bytes = postcard::to_stdvec(&d).unwrap();
            let back: StateDelta = postcard::from_bytes(&bytes).unwrap();
            assert_eq!(&back.apply(base), state);
        }
        // Fewer traces than the base: the extra ones go.
        let one = TracesetState::new(1);
        assert_eq!(StateDelta::diff(Some(&b), &one).apply(Some(&b)), one);
        // Unchanged threads are not repeated.
        let same = StateDelta::diff(Some(&b), &b);
        assert!(same.traces.iter().all(|t| t.changed.is_empty()));
    }
}
