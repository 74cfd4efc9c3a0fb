//! Sample weights: frequency weights, so every count of rows is a sum of weights.

/// `Σ wᵢ`, or `n` without sample weights (see [`crate::boost::Labels::total_weight`]).
pub(crate) fn total_weight(n: usize, sample_weight: Option<&[f64]>) -> f64 {
    match sample_weight {
        Some(w) => w.iter().sum(),
        None => n as f64,
    }
}
