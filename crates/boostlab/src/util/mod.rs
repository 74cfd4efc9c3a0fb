//! The bottom layer: deterministic parallel maps ([`par`]), fast scalar maths ([`fastmath`]),
//! cooperative cancellation ([`cancel`]), atomic file writes ([`fs`]), the memory available to a
//! read ([`memory`]) and the memory-traffic counters ([`traffic`], feature `traffic`).

pub mod cancel;
pub mod fastmath;
pub mod fs;
pub mod memory;
pub mod par;
pub mod traffic;
