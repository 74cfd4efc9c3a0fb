//! Label noise (docs/explanation/experiments.md#experiments): flip each TRAINING label independently with probability η; test rows
//! are never touched (the functions only ever see training indices).
//!
//! # Randomness
//!
//! One `ChaCha8Rng::seed_from_u64(seed)` walks the given training indices in the given order and
//! draws, for each, one uniform `u ∈ [0, 1)` (`Rng::gen::<f64>()`); the label is flipped iff
//! `u < η`. For multi-class labels a flipped row then draws its new class uniformly among the
//! `k − 1` other classes (`gen_range(0..k−1)`, skipping over the current class). The experiment
//! harness passes `experiment::Cell::noise_seed`, which depends on the
//! experiment seed, dataset, noise rate and fold but not on the algorithm setting, so every setting
//! of a paired comparison trains on the same noisy labels.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::error::{Error, Result};

fn check_eta(eta: f64) -> Result<()> {
    if !(0.0..=1.0).contains(&eta) {
        return Err(Error::param("noise", "a probability in [0, 1]", eta));
    }
    Ok(())
}

fn check_index(i: usize, n: usize) -> Result<()> {
    if i >= n {
        return Err(Error::InvalidData(format!("training index {i} out of range for {n} labels")));
    }
    Ok(())
}

/// Flips binary labels `y[i] ∈ {−1, +1}` (negation) for the rows `i` in `train`, each
/// independently with probability `eta`. Returns the flipped rows, in `train` order.
///
/// `eta`: flip probability, valid range `[0, 1]` (experiments default to 0). Rows not listed in
/// `train` are never read or written. Fails without changing `y` if an index is out of range, a
/// training label is not ±1, or `eta` is out of range.
pub fn flip_binary_labels(y: &mut [f64], train: &[usize], eta: f64, seed: u64) -> Result<Vec<usize>> {
    check_eta(eta)?;
    for &i in train {
        check_index(i, y.len())?;
        if y[i] != 1.0 && y[i] != -1.0 {
            return Err(Error::InvalidData(format!("binary label of row {i} is {}, expected −1 or +1", y[i])));
        }
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut flipped = Vec::new();
    for &i in train {
        let u: f64 = rng.gen();
        if u < eta {
            y[i] = -y[i];
            flipped.push(i);
        }
    }
    Ok(flipped)
}

/// Replaces multi-class labels `class[i] ∈ 0..n_classes` for the rows `i` in `train`, each
/// independently with probability `eta`, by a uniformly random OTHER class. Returns the changed
/// rows, in `train` order.
///
/// `n_classes`: valid range `≥ 2`. `eta`: valid range `[0, 1]`. Rows not listed in `train` are
/// never read or written. Fails without changing `class` on an out-of-range index or class.
pub fn flip_multiclass_labels(
    class: &mut [u32],
    n_classes: u32,
    train: &[usize],
    eta: f64,
    seed: u64,
) -> Result<Vec<usize>> {
    check_eta(eta)?;
    if n_classes < 2 {
        return Err(Error::param("n_classes", "at least 2", n_classes));
    }
    for &i in train {
        check_index(i, class.len())?;
        if class[i] >= n_classes {
            return Err(Error::InvalidData(format!("class of row {i} is {}, expected 0..{n_classes}", class[i])));
        }
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut flipped = Vec::new();
    for &i in train {
        let u: f64 = rng.gen();
        if u < eta {
            // Uniform over the k − 1 other classes: draw in 0..k−1 and skip the current class.
            let mut c = rng.gen_range(0..n_classes - 1);
            if c >= class[i] {
                c += 1;
            }
            class[i] = c;
            flipped.push(i);
        }
    }
    Ok(flipped)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// |observed − n η| ≤ 5 binomial standard deviations (false alarm rate ≈ 6e−7 per check).
    fn assert_binomial(count: usize, n: usize, eta: f64) {
        let sd = (n as f64 * eta * (1.0 - eta)).sqrt();
        let diff = (count as f64 - n as f64 * eta).abs();
        assert!(diff <= 5.0 * sd + 1e-9, "count {count} of {n} at eta {eta}");
    }

    #[test]
    fn binary_rate_and_test_rows_untouched() {
        let n = 20_000;
        let y0: Vec<f64> = (0..n).map(|i| if i % 3 == 0 { 1.0 } else { -1.0 }).collect();
        // Train = even rows, test = odd rows.
        let train: Vec<usize> = (0..n).step_by(2).collect();
        for (eta, seed) in [(0.1, 1u64), (0.2, 2), (0.05, 3)] {
            let mut y = y0.clone();
            let flipped = flip_binary_labels(&mut y, &train, eta, seed).expect("valid");
            assert_binomial(flipped.len(), train.len(), eta);
            for i in 0..n {
                let changed = y[i] != y0[i];
                assert_eq!(changed, flipped.contains(&i) && i % 2 == 0);
                if i % 2 == 1 {
                    assert_eq!(y[i], y0[i], "test row {i} changed");
                }
                if changed {
                    assert_eq!(y[i], -y0[i]);
                }
            }
            // Deterministic per seed.
            let mut y2 = y0.clone();
            assert_eq!(flip_binary_labels(&mut y2, &train, eta, seed).expect("valid"), flipped);
            assert_eq!(y, y2);
        }
    }

    #[test]
    fn zero_and_one_rates() {
        let mut y = vec![1.0, -1.0, 1.0];
        assert!(flip_binary_labels(&mut y, &[0, 1, 2], 0.0, 9).expect("ok").is_empty());
        assert_eq!(flip_binary_labels(&mut y, &[0, 2], 1.0, 9).expect("ok"), vec![0, 2]);
        assert_eq!(y, vec![-1.0, -1.0, -1.0]);
    }

    #[test]
    fn multiclass_rate_and_uniform_other_class() {
        let n = 30_000;
        let k = 4u32;
        let c0: Vec<u32> = (0..n).map(|i| (i % 4) as u32).collect();
        let train: Vec<usize> = (0..n).filter(|i| i % 5 != 0).collect();
        let mut c = c0.clone();
        let eta = 0.3;
        let flipped = flip_multiclass_labels(&mut c, k, &train, eta, 11).expect("valid");
        assert_binomial(flipped.len(), train.len(), eta);
        // Transition counts from class 0 to each other class: each ≈ 1/3 of class-0 flips.
        let mut to = [0usize; 4];
        let mut from0 = 0;
        for &i in &flipped {
            assert_ne!(c[i], c0[i], "a flip must change the class");
            if c0[i] == 0 {
                from0 += 1;
                to[c[i] as usize] += 1;
            }
        }
        assert_eq!(to[0], 0);
        for &t in &to[1..] {
            assert_binomial(t, from0, 1.0 / 3.0);
        }
        for i in (0..n).step_by(5) {
            assert_eq!(c[i], c0[i], "test row {i} changed");
        }
    }

    #[test]
    fn invalid_inputs() {
        let mut y = vec![1.0, 0.5];
        assert!(flip_binary_labels(&mut y, &[1], 0.1, 0).is_err());
        assert!(flip_binary_labels(&mut y, &[2], 0.1, 0).is_err());
        assert!(flip_binary_labels(&mut y, &[0], 1.5, 0).is_err());
        assert!(flip_binary_labels(&mut y, &[0], f64::NAN, 0).is_err());
        let mut c = vec![0u32, 3];
        assert!(flip_multiclass_labels(&mut c, 3, &[1], 0.1, 0).is_err());
        assert!(flip_multiclass_labels(&mut c, 1, &[0], 0.1, 0).is_err());
        assert_eq!(c, vec![0, 3]);
    }
}
