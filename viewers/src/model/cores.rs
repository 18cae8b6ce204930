//! Work spread over the machine's cores.

/// Runs `f` on every job, on as many threads as there are cores, each
/// taking the next job left when it is done with one. Jobs differ by
/// orders of magnitude (a busy thread's changes across the split, beside
/// threads that barely ran), so that halves of the list given to two
/// threads could leave one with most of the work.
pub(crate) fn on_cores<J: Send>(jobs: &mut [J], f: impl Fn(&mut J) + Sync) {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = cores.min(jobs.len()).max(1);
    let next = std::sync::Mutex::new(jobs.iter_mut());
    let take = || {
        next.lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .next()
    };
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                while let Some(job) = take() {
                    f(job);
                }
            });
        }
    });
}
