//! The bottom layer: deterministic parallel maps ([`par`]), fast scalar maths ([`fastmath`]),
//! cooperative cancellation ([`cancel`]) and atomic file writes ([`fs`]).

pub mod cancel;
pub mod fastmath;
pub mod fs;
pub mod par;
