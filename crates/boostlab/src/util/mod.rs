//! The bottom layer: deterministic parallel maps ([`par`]), fast scalar maths ([`fastmath`]),
//! cooperative cancellation ([`cancel`]), atomic file writes ([`fs`]), the memory available to a
//! read ([`memory`]) and the memory-traffic counters ([`traffic`], feature `traffic`).

pub mod cancel;
pub mod fastmath;
pub mod fs;
// Used by the Parquet and Arrow IPC readers only (feature `arrow`).
#[cfg_attr(not(feature = "arrow"), allow(dead_code))]
pub mod memory;
pub mod par;
pub mod traffic;
