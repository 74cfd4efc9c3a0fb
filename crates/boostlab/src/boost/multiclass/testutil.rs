//! Test helpers: a brute-force stump learner over statistics blocks and random problems.

use rand::Rng;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::boost::{Booster, Diagnostics, Step};
use crate::tree::{Criterion, LeafRule};

/// Outputs on the training rows (`n × width/2`) of the best stump over features `x` (`n × p`,
/// row-major): thresholds at midpoints of distinct values, criterion summed over labels, ties to
/// the lowest feature then the lowest threshold, leaf rule applied per leaf and label. With no
/// candidate split, a single leaf.
pub(crate) fn stump_outputs(
    x: &[f64],
    p: usize,
    stats: &[f64],
    width: usize,
    crit: Criterion,
    rule: LeafRule,
) -> Vec<f64> {
    let n = x.len() / p;
    let q = width / 2;
    let sums = |mask: &dyn Fn(usize) -> bool| {
        let mut s = vec![0.0; width];
        for i in (0..n).filter(|&i| mask(i)) {
            for c in 0..width {
                s[c] += stats[i * width + c];
            }
        }
        s
    };
    let cost = |s: &[f64]| (0..q).map(|l| crit.cost(s[2 * l], s[2 * l + 1])).sum::<f64>();
    let mut best: Option<(f64, usize, f64)> = None;
    for j in 0..p {
        let mut vals: Vec<f64> = (0..n).map(|i| x[i * p + j]).collect();
        vals.sort_by(f64::total_cmp);
        vals.dedup();
        for w in vals.windows(2) {
            let theta = 0.5 * (w[0] + w[1]);
            let left = sums(&|i| x[i * p + j] <= theta);
            let right = sums(&|i| x[i * p + j] > theta);
            let c = cost(&left) + cost(&right);
            if best.is_none_or(|(b, _, _)| c < b) {
                best = Some((c, j, theta));
            }
        }
    }
    let mut h = vec![0.0; n * q];
    match best {
        None => {
            let s = sums(&|_| true);
            for i in 0..n {
                for l in 0..q {
                    h[i * q + l] = rule.value(s[2 * l], s[2 * l + 1]);
                }
            }
        }
        Some((_, j, theta)) => {
            let left = sums(&|i| x[i * p + j] <= theta);
            let right = sums(&|i| x[i * p + j] > theta);
            for i in 0..n {
                let s = if x[i * p + j] <= theta { &left } else { &right };
                for l in 0..q {
                    h[i * q + l] = rule.value(s[2 * l], s[2 * l + 1]);
                }
            }
        }
    }
    h
}

/// One round of `b` with a brute-force stump: (outputs, step, diagnostics).
pub(crate) fn round<B: Booster + ?Sized>(b: &mut B, x: &[f64], p: usize) -> (Vec<f64>, Step, Diagnostics) {
    let n = x.len() / p;
    let w = b.stat_width();
    let mut signed = vec![0.0; n * b.n_outputs()];
    b.statistics(&mut signed);
    let stats = crate::boost::expand_signed(&signed);
    let h = stump_outputs(x, p, &stats, w, b.default_criterion(), b.leaf_rule());
    let mut diag = Diagnostics::new();
    let step = b.step(&h, &mut diag).expect("step");
    (h, step, diag)
}

/// A random problem: features `n × p` (integers 0..8, so ties occur), and labels `n × k` (±1)
/// that depend on the features with noise. `multi` = multi-label, else single-label (with the
/// class of each example).
pub(crate) struct Problem {
    pub n: usize,
    pub k: usize,
    pub p: usize,
    pub x: Vec<f64>,
    pub y: Vec<f64>,
    pub class: Option<Vec<u32>>,
}

pub(crate) fn random_problem(seed: u64, n: usize, k: usize, p: usize, multi: bool) -> Problem {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let x: Vec<f64> = (0..n * p).map(|_| f64::from(rng.gen_range(0..8u8))).collect();
    let mut y = vec![-1.0; n * k];
    let mut class = Vec::new();
    for i in 0..n {
        let base = (x[i * p] as usize + if p > 1 { x[i * p + 1] as usize } else { 0 }) % k;
        if multi {
            for l in 0..k {
                let on = if rng.gen_bool(0.25) {
                    rng.gen_bool(0.5)
                } else {
                    l == base || (l + 1) % k == base && x[i * p] > 3.0
                };
                y[i * k + l] = if on { 1.0 } else { -1.0 };
            }
        } else {
            let c = if rng.gen_bool(0.2) { rng.gen_range(0..k) } else { base };
            y[i * k + c] = 1.0;
            class.push(c as u32);
        }
    }
    Problem { n, k, p, x, y, class: (!multi).then_some(class) }
}
