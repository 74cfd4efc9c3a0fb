//! Files written whole or not at all.

use std::io::Write;
use std::path::Path;

use crate::error::{Error, Result};

/// Suffix of the temporary files of [`write_atomic`] (`.NAME.PID.N.tmp`), so that leftovers of a
/// killed process can be recognised and removed.
pub const TMP_SUFFIX: &str = ".tmp";

static TMP_COUNTER: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Writes `bytes` to `path` atomically: to a temporary file in the same directory (unique per
/// process and call, so parallel writers never share one), flushed to disk, renamed over `path`,
/// then the directory is synced. A crash leaves either the old file or the new one, never a part.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "out".into());
    let n = TMP_COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = dir.join(format!(".{name}.{}.{n}{TMP_SUFFIX}", std::process::id()));
    let res = (|| -> std::io::Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        drop(f);
        std::fs::rename(&tmp, path)
    })();
    if let Err(e) = res {
        let _ = std::fs::remove_file(&tmp);
        return Err(Error::io(path, e));
    }
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}
