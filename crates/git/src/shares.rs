//! How many threads a walk over a large checkout is split across.

/// Most threads a walk uses, whatever the processors.
const MAX_THREADS: usize = 4;

/// The threads for `items` items of which one thread takes at least `per_thread`: one below
/// that, else one per processor (at most [`MAX_THREADS`]).
pub(crate) fn threads(items: usize, per_thread: usize) -> usize {
    if items < per_thread {
        return 1;
    }
    std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .clamp(1, MAX_THREADS)
}
