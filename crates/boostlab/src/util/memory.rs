//! The memory a read may plan for: what the operating system reports as available (Linux's
//! `MemAvailable`; unknown elsewhere, and then no read is refused for it).

/// Bytes of memory available to this process now, if the system says.
pub fn available_bytes() -> Option<u64> {
    #[cfg(test)]
    if let Some(b) = PRETEND.with(std::cell::Cell::get) {
        return Some(b);
    }
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    parse_meminfo(&text)
}

/// `MemAvailable` of a `/proc/meminfo` text, in bytes.
fn parse_meminfo(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let mut words = line.split_whitespace().skip(1);
    let kib: u64 = words.next()?.parse().ok()?;
    (words.next() == Some("kB")).then(|| kib.saturating_mul(1024))
}

/// A byte count for a message: `512 B`, `3.2 MB`, `41.0 GB` (powers of 1000).
pub fn human(bytes: u64) -> String {
    const UNITS: [&str; 6] = ["B", "kB", "MB", "GB", "TB", "PB"];
    let mut x = bytes as f64;
    let mut u = 0;
    while x >= 1000.0 && u + 1 < UNITS.len() {
        x /= 1000.0;
        u += 1;
    }
    if u == 0 {
        format!("{bytes} B")
    } else {
        format!("{x:.1} {}", UNITS[u])
    }
}

#[cfg(test)]
thread_local! {
    static PRETEND: std::cell::Cell<Option<u64>> = const { std::cell::Cell::new(None) };
}

/// Runs `f` with [`available_bytes`] reporting `bytes` on this thread (tests of the checks that
/// use it, which cannot fill a machine's memory).
#[cfg(test)]
pub(crate) fn pretending_available<T>(bytes: u64, f: impl FnOnce() -> T) -> T {
    PRETEND.with(|p| p.set(Some(bytes)));
    let r = f();
    PRETEND.with(|p| p.set(None));
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meminfo_available_is_read_in_bytes() {
        let text = "MemTotal:       24000000 kB\nMemFree:         1000 kB\nMemAvailable:   22000000 kB\n";
        assert_eq!(parse_meminfo(text), Some(22_000_000 * 1024));
        assert_eq!(parse_meminfo("MemTotal: 5 kB\n"), None);
        assert_eq!(parse_meminfo("MemAvailable: x kB\n"), None);
    }

    #[test]
    fn byte_counts_read_as_people_write_them() {
        assert_eq!(human(512), "512 B");
        assert_eq!(human(3_200_000), "3.2 MB");
        assert_eq!(human(41_000_000_000), "41.0 GB");
        assert_eq!(human(u64::MAX), "18446.7 PB");
    }
}
