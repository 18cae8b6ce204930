//! Decoding streams ahead of the merge, on worker threads.
//!
//! Each stream has a *producer* (its decoding state: next packet, position
//! within it, clock, registers) and a small queue of decoded [`Batch`]es.
//! A producer is used by one thread at a time: a worker takes it out of its
//! slot, decodes one batch outside the lock, and puts both back. Workers
//! serve the streams whose queues are shortest, up to [`QUEUE_CAP`] batches
//! ahead. The merging thread takes batches from the queues; when a queue
//! is empty and its producer is idle it decodes the batch itself, so it
//! never waits for a worker that is busy elsewhere, and with no worker at
//! all the same code reads everything on the calling thread. When a worker
//! is decoding the batch it needs, it decodes a batch of another stream
//! ahead meanwhile, and waits only when there is nothing to decode.
//!
//! Streams are decoded sequentially (a packet may depend on the clock left
//! by the previous one), different streams in parallel.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

use crate::decode::DecodeState;
use crate::event::Position;
use crate::fs::traceset::TracesetData;
use crate::stream::batch::{decode_batch, Batch, Resume};
use crate::stream::reader::BatchSource;

/// Decoded batches kept ahead per stream.
pub(crate) const QUEUE_CAP: usize = 3;
/// Events in a stream's first batch: small, so that a seek (which needs the
/// first event of every stream) decodes little.
pub(crate) const FIRST_BATCH_EVENTS: usize = 256;
/// Events per batch while a stream has been read only a little since its
/// producer started (a seek, then a replay of a few thousand events)...
const SHORT_BATCH_EVENTS: usize = 1024;
/// ... which lasts for this many events...
const SHORT_READ_EVENTS: u64 = 2048;
/// ... and beyond: bigger batches cost less per event to hand from a
/// decoding thread to the merge (3 % of a full read). Bounds the memory of
/// a batch whatever the packet size...
pub(crate) const BATCH_EVENTS: usize = 4096;
/// ... as does this bound on all events decoded ahead (`QUEUE_CAP`
/// batches per stream), so that many streams do not multiply the memory.
const EVENTS_AHEAD: usize = 16384 * QUEUE_CAP;

/// The decoding state of one stream.
#[derive(Debug)]
pub(crate) struct Producer {
    stream: usize,
    next_packet: usize,
    resume: Option<Resume>,
    clock: u64,
    st: DecodeState,
    done: bool,
    /// Events in the next batch, and at most.
    batch_events: usize,
    max_batch_events: usize,
    /// Events decoded so far.
    produced: u64,
}

impl Producer {
    /// A producer starting at `pos` (a packet start when `offset_bits` is 0),
    /// one of `streams`.
    pub(crate) fn new(pos: &Position, streams: usize) -> Self {
        Producer {
            stream: pos.stream,
            next_packet: pos.packet,
            resume: (pos.offset_bits != 0).then_some(Resume {
                offset_bits: pos.offset_bits,
                event_index: pos.event_index,
                clock: pos.clock_cycles,
            }),
            clock: pos.clock_cycles,
            st: DecodeState::new(0),
            done: false,
            batch_events: FIRST_BATCH_EVENTS,
            max_batch_events: (EVENTS_AHEAD / QUEUE_CAP / streams.max(1))
                .clamp(FIRST_BATCH_EVENTS, BATCH_EVENTS),
            produced: 0,
        }
    }

    /// Decodes the next batch into `b`; `false` when the stream has no more
    /// packets.
    fn produce(&mut self, data: &TracesetData, b: &mut Batch) -> bool {
        let sd = &data.streams[self.stream];
        if self.done || self.next_packet >= sd.packets.len() {
            self.done = true;
            return false;
        }
        decode_batch(
            &data.traces[sd.info.trace].compiled,
            sd,
            self.next_packet,
            self.clock,
            self.resume,
            self.batch_events,
            &mut self.st,
            b,
        );
        self.produced += b.events.len() as u64;
        self.batch_events = if self.produced < SHORT_READ_EVENTS {
            SHORT_BATCH_EVENTS
        } else {
            BATCH_EVENTS
        }
        .min(self.max_batch_events);
        self.clock = b.end_clock;
        self.resume = b.next;
        if b.next.is_none() {
            self.next_packet += 1;
        }
        if b.error.is_some() {
            self.done = true;
        }
        true
    }
}

#[derive(Debug)]
struct Slot {
    queue: VecDeque<Batch>,
    /// `None` while a thread is decoding with it.
    producer: Option<Producer>,
    /// No batch will come any more (after the queue).
    finished: bool,
    /// The merge still reads this stream.
    wanted: bool,
}

#[derive(Debug)]
struct Sched {
    slots: Vec<Slot>,
    free: Vec<Batch>,
    stop: bool,
    /// Threads waiting on the condition variable: a notification costs a
    /// system call even when nobody waits, and there is one per batch.
    waiting: usize,
}

/// State shared between the merging thread and the workers.
#[derive(Debug)]
pub(crate) struct Shared {
    data: Arc<TracesetData>,
    sched: Mutex<Sched>,
    cv: Condvar,
}

impl Shared {
    /// Wakes the waiting threads, if any (`g` is held, so none can start
    /// waiting unseen).
    fn notify(&self, g: &Sched) {
        if g.waiting > 0 {
            self.cv.notify_all();
        }
    }

    /// Waits for a notification.
    fn wait<'g>(&'g self, mut g: MutexGuard<'g, Sched>) -> MutexGuard<'g, Sched> {
        g.waiting += 1;
        let mut g = self.cv.wait(g).unwrap_or_else(|p| p.into_inner());
        g.waiting -= 1;
        g
    }

    fn lock(&self) -> MutexGuard<'_, Sched> {
        // A worker that panicked leaves consistent data (it only ever
        // swaps whole batches and producers), so poisoning is ignored.
        self.sched.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes the next batch of `stream` into `out` (the previous content of
    /// `out` is recycled). `false` when the stream is finished.
    pub(crate) fn next_batch(&self, stream: usize, out: &mut Batch) -> bool {
        let mut g = self.lock();
        loop {
            let slot = &mut g.slots[stream];
            if let Some(b) = slot.queue.pop_front() {
                let old = std::mem::replace(out, b);
                g.free.push(old);
                self.notify(&g);
                return true;
            }
            if slot.finished {
                return false;
            }
            if let Some(mut p) = slot.producer.take() {
                // Decode it here rather than wait.
                drop(g);
                let ok = p.produce(&self.data, out);
                let mut g = self.lock();
                let slot = &mut g.slots[stream];
                slot.finished = !ok || p.done;
                slot.producer = Some(p);
                self.notify(&g);
                return ok;
            }
            // A worker is decoding this stream. Rather than wait for its
            // batch, decode a batch of another stream ahead, as a worker
            // would; wait only when there is none to decode. (Waiting
            // idled the merging thread a third of the time on two per-CPU
            // streams, while the worker had the decoding of both:
            // `bench decode` went from 0.313 to 0.240 s.)
            match self.pick(&g, Some(stream)) {
                Some(i) => g = self.decode_ahead(g, i),
                None => g = self.wait(g),
            }
        }
    }

    /// Whether [`Shared::next_batch`] for `stream` would wait for a worker:
    /// its queue is empty and a worker holds its producer (an idle producer
    /// is decoded on the calling thread instead, which does not wait).
    pub(crate) fn would_wait(&self, stream: usize) -> bool {
        let g = self.lock();
        let slot = &g.slots[stream];
        slot.queue.is_empty() && !slot.finished && slot.producer.is_none()
    }

    /// The stream to decode ahead, other than `except`: among those whose
    /// producer is free and whose queue is not full, the one with the
    /// shortest queue.
    fn pick(&self, g: &Sched, except: Option<usize>) -> Option<usize> {
        g.slots
            .iter()
            .enumerate()
            .filter(|&(i, s)| {
                Some(i) != except
                    && s.wanted
                    && !s.finished
                    && s.producer.is_some()
                    && s.queue.len() < QUEUE_CAP
            })
            .min_by_key(|(_, s)| s.queue.len())
            .map(|(i, _)| i)
    }

    /// Decodes the next batch of stream `i` into its queue, outside the
    /// lock `g` (released and taken again).
    fn decode_ahead<'g>(&'g self, mut g: MutexGuard<'g, Sched>, i: usize) -> MutexGuard<'g, Sched> {
        let Some(mut p) = g.slots[i].producer.take() else {
            return g;
        };
        let mut b = g.free.pop().unwrap_or_default();
        drop(g);
        let ok = p.produce(&self.data, &mut b);
        let mut g = self.lock();
        let slot = &mut g.slots[i];
        if ok && slot.wanted {
            slot.queue.push_back(b);
        } else {
            g.free.push(b);
        }
        let slot = &mut g.slots[i];
        slot.finished = !ok || p.done;
        slot.producer = Some(p);
        self.notify(&g);
        g
    }

    /// Stops decoding `stream` ahead (the merge is done with it: past the
    /// end of a time range).
    pub(crate) fn drop_stream(&self, stream: usize) {
        let mut g = self.lock();
        let slot = &mut g.slots[stream];
        slot.wanted = false;
        let q: Vec<Batch> = slot.queue.drain(..).collect();
        g.free.extend(q);
    }

    /// The worker loop: serve the stream with the shortest queue.
    fn work(&self) {
        let mut g = self.lock();
        loop {
            if g.stop {
                return;
            }
            match self.pick(&g, None) {
                Some(i) => g = self.decode_ahead(g, i),
                None => g = self.wait(g),
            }
        }
    }
}

impl BatchSource for Shared {
    #[inline]
    fn next_batch(&self, stream: usize, out: &mut Batch) -> bool {
        Shared::next_batch(self, stream, out)
    }
}

/// The decoding side of a cursor: shared state and worker threads.
#[derive(Debug)]
pub(crate) struct Decoders {
    pub(crate) shared: Arc<Shared>,
    workers: Vec<JoinHandle<()>>,
}

impl Decoders {
    /// Producers starting at `starts` (one per stream), with `threads`
    /// worker threads (0: everything is decoded by the merging thread).
    pub(crate) fn new(data: Arc<TracesetData>, starts: &[Position], threads: usize) -> Self {
        let slots = starts
            .iter()
            .map(|p| Slot {
                queue: VecDeque::with_capacity(QUEUE_CAP),
                producer: Some(Producer::new(p, starts.len())),
                finished: false,
                wanted: true,
            })
            .collect();
        let shared = Arc::new(Shared {
            data,
            sched: Mutex::new(Sched {
                slots,
                free: Vec::new(),
                stop: false,
                waiting: 0,
            }),
            cv: Condvar::new(),
        });
        let workers = (0..threads)
            .map(|_| {
                let s = Arc::clone(&shared);
                std::thread::spawn(move || s.work())
            })
            .collect();
        Decoders { shared, workers }
    }
}

impl Drop for Decoders {
    /// Tells the workers to stop and lets them go without waiting: a worker
    /// finishes at most the batch it is decoding (it owns what it uses,
    /// through `shared`) and exits. Joining it here made every seek of a
    /// reader with decoding threads wait for each of them to get a CPU and
    /// notice — milliseconds on a busy machine, on the GUI's main thread.
    fn drop(&mut self) {
        self.shared.lock().stop = true;
        self.shared.cv.notify_all();
        // Dropping a handle detaches its thread.
        self.workers.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn start() -> Position {
        Position {
            stream: 0,
            packet: 0,
            event_index: 0,
            offset_bits: 0,
            clock_cycles: 0,
        }
    }

    /// Batches grow from a small first one, and the events decoded ahead
    /// stay bounded however many streams there are.
    #[test]
    fn batch_sizes_grow_and_stay_bounded() {
        let p = Producer::new(&start(), 2);
        assert_eq!(p.batch_events, FIRST_BATCH_EVENTS);
        assert_eq!(p.max_batch_events, BATCH_EVENTS);
        for streams in [1, 2, 4, 16, 64, 1000] {
            let p = Producer::new(&start(), streams);
            let ahead = p.max_batch_events * QUEUE_CAP * streams;
            assert!(
                ahead <= EVENTS_AHEAD || p.max_batch_events == FIRST_BATCH_EVENTS,
                "{streams} streams: {ahead} events ahead"
            );
            assert!(p.max_batch_events >= FIRST_BATCH_EVENTS);
        }
        assert_eq!(
            Producer::new(&start(), 64).max_batch_events,
            FIRST_BATCH_EVENTS
        );
        assert_eq!(Producer::new(&start(), 16).max_batch_events, 1024);
    }
}
