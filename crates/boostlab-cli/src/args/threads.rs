//! `--threads N` and the local worker pool a command runs on.

use anyhow::Result;
use clap::Args;

/// `--threads N`, on every command: the worker threads of its computation.
#[derive(Args, Debug, Clone, Default)]
pub struct ThreadsArg {
    /// Worker threads (0 = one per logical CPU). Results are bit-identical whatever the number
    /// [default: one per logical CPU].
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
}

/// Runs `f` on a local pool of `threads` worker threads (`None` or 0: one per logical
/// CPU), not on rayon's global pool.
pub fn with_threads<T: Send>(threads: Option<usize>, f: impl FnOnce() -> Result<T> + Send) -> Result<T> {
    let n = match threads {
        None | Some(0) => std::thread::available_parallelism().map_or(1, |n| n.get()),
        Some(n) => n,
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(n)
        .build()
        .map_err(|e| anyhow::anyhow!("--threads {n}: cannot start the worker threads: {e}"))?;
    pool.install(f)
}
