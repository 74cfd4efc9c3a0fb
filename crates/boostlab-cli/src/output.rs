//! Writing a command's results and its error messages.

/// `print!` / `println!` for a command's results on standard output. When the reader has gone
/// (`boostlab inspect m.json | head -1`, `boostlab cv ... | head`) the process ends quietly with
/// status 0, as `predict` does, instead of panicking; any other write error ends it with a message.
macro_rules! out {
    ($($arg:tt)*) => { $crate::output::write_stdout(format_args!($($arg)*), false) };
}
macro_rules! outln {
    () => { $crate::output::write_stdout(format_args!(""), true) };
    ($($arg:tt)*) => { $crate::output::write_stdout(format_args!($($arg)*), true) };
}

/// Writes a command's output to standard output (the `out!` / `outln!` macros). A closed pipe
/// ends the process with status 0: the reader has all it wanted. Any other error ends it with
/// status 1 and a message; results already written to files are complete (writes are atomic).
pub fn write_stdout(args: std::fmt::Arguments<'_>, newline: bool) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let res = out.write_fmt(args).and_then(|()| if newline { out.write_all(b"\n") } else { Ok(()) });
    match res {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => std::process::exit(0),
        Err(e) => {
            eprintln!("error: writing to standard output: {e}");
            std::process::exit(1);
        }
    }
}

/// An error with its context chain, leaving out a cause whose text the message already holds (an
/// I/O error's source is part of its own message).
pub fn message(e: &anyhow::Error) -> String {
    let mut msg = e.to_string();
    for cause in e.chain().skip(1) {
        let c = cause.to_string();
        if !msg.contains(&c) {
            msg = format!("{msg}: {c}");
        }
    }
    msg
}
