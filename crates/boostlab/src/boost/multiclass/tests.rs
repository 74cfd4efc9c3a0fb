//! Tests of the multi-class / multi-label boosters against naive references and the bounds of
//! docs/explanation/multiclass.md#multiclass, with a brute-force stump learner standing in for the tree.
#![allow(clippy::unwrap_used)] // tests: a panic is the failure report

use proptest::prelude::*;
use rand::{Rng as _, SeedableRng as _};

use super::testutil::{random_problem, round, stump_outputs, Problem};
use super::*;
use crate::eval::multilabel;

fn labels_of(p: &Problem) -> Labels<'_> {
    Labels { n: p.n, k: p.k, y: &p.y, class: p.class.as_deref(), sample_weight: None }
}

fn params(variant: MultiVariant) -> MultiParams {
    MultiParams { variant, ..MultiParams::default() }
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * a.abs().max(b.abs()).max(1.0)
}

// ------------------------------------------------------------------------------------------------
// AdaBoost.MR: efficient O(mk) form against the naive triple-indexed form.

/// docs/explanation/multiclass.md#multiclass-mr naive form: the distribution over (i, ℓ0, ℓ1) stored explicitly.
struct NaiveMr {
    n: usize,
    k: usize,
    /// `d[(i * k + l0) * k + l1]`, non-zero on crucial pairs only.
    d: Vec<f64>,
    f: Vec<f64>,
}

impl NaiveMr {
    fn new(n: usize, k: usize, y: &[f64], sw: Option<&[f64]>) -> NaiveMr {
        let s = |i: usize| sw.map_or(1.0, |w| w[i]);
        let rel = |i: usize| (0..k).filter(|&l| y[i * k + l] > 0.0).count();
        let total: f64 = (0..n).filter(|&i| rel(i) > 0 && rel(i) < k).map(s).sum();
        let mut d = vec![0.0; n * k * k];
        for i in 0..n {
            for l0 in 0..k {
                for l1 in 0..k {
                    if y[i * k + l0] < 0.0 && y[i * k + l1] > 0.0 {
                        // D_1(i, ℓ0, ℓ1) = 1/(m |Y_i| |Y − Y_i|), with sample weights.
                        d[(i * k + l0) * k + l1] = s(i) / (total * (rel(i) * (k - rel(i))) as f64);
                    }
                }
            }
        }
        NaiveMr { n, k, d, f: vec![0.0; n * k] }
    }

    /// r = ½ Σ D(i,ℓ0,ℓ1) (h(x_i,ℓ1) − h(x_i,ℓ0)).
    fn edge(&self, h: &[f64]) -> f64 {
        let k = self.k;
        let mut r = 0.0;
        for i in 0..self.n {
            for l0 in 0..k {
                for l1 in 0..k {
                    r += 0.5 * self.d[(i * k + l0) * k + l1] * (h[i * k + l1] - h[i * k + l0]);
                }
            }
        }
        r
    }

    /// D ← D exp(½ α (h(x_i,ℓ0) − h(x_i,ℓ1))) / Z; returns Z.
    fn update(&mut self, h: &[f64], alpha: f64) -> f64 {
        let k = self.k;
        let mut z = 0.0;
        for i in 0..self.n {
            for l0 in 0..k {
                for l1 in 0..k {
                    let d = &mut self.d[(i * k + l0) * k + l1];
                    *d *= (0.5 * alpha * (h[i * k + l0] - h[i * k + l1])).exp();
                    z += *d;
                }
            }
        }
        for d in &mut self.d {
            *d /= z;
        }
        for (f, hv) in self.f.iter_mut().zip(h) {
            *f += alpha * hv;
        }
        z
    }
}

fn check_mr_against_naive(seed: u64, n: usize, k: usize, rounds: usize, weighted: bool) {
    let prob = random_problem(seed, n, k, 2, true);
    let sw: Vec<f64> = (0..n).map(|i| 0.5 + ((seed as usize + 7 * i) % 5) as f64 / 4.0).collect();
    let labels = Labels { sample_weight: weighted.then_some(&sw[..]), ..labels_of(&prob) };
    let Ok(mut fast) = AdaBoostMr::new(&labels, &params(MultiVariant::Mr)) else {
        return; // no example with a crucial pair: nothing to compare
    };
    let mut naive = NaiveMr::new(n, k, &prob.y, weighted.then_some(&sw[..]));
    let tol = 1e-12;
    for _ in 0..rounds {
        for i in 0..n {
            for l0 in 0..k {
                for l1 in 0..k {
                    let (a, b) = (fast.pair_weight(i, l0, l1), naive.d[(i * k + l0) * k + l1]);
                    assert!((a - b).abs() <= tol, "D({i},{l0},{l1}): {a} vs {b}");
                }
            }
        }
        let (h, step, diag) = round(&mut fast, &prob.x, prob.p);
        let r = naive.edge(&h);
        assert!(close(diag["r"], r, tol), "r {} vs {r}", diag["r"]);
        let alpha = match step {
            Step::Add { alpha } | Step::AddAndStop { alpha, .. } => alpha,
            Step::Stop { .. } => {
                assert!(r <= MIN_EDGE * 2.0);
                break;
            }
        };
        // α = ½ ln((1 + r)/(1 − r)) from the naive edge.
        let naive_alpha = match vote(r) {
            Vote::Alpha(a) => a,
            Vote::Perfect => MAX_ALPHA,
            Vote::NoEdge => panic!("naive form sees no edge"),
        };
        assert!(close(alpha, naive_alpha, tol), "α {alpha} vs {naive_alpha}");
        let z = naive.update(&h, alpha);
        assert!(close(diag["z"], z, tol), "Z {} vs {z}", diag["z"]);
        for (a, b) in fast.training_scores().iter().zip(&naive.f) {
            assert!(close(*a, *b, tol), "f {a} vs {b}");
        }
        if matches!(step, Step::AddAndStop { .. }) {
            break;
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    #[test]
    fn mr_efficient_equals_naive(
        seed in any::<u64>(),
        n in 3usize..10,
        k in 2usize..6,
        rounds in 1usize..6,
        weighted in any::<bool>(),
    ) {
        check_mr_against_naive(seed, n, k, rounds, weighted);
    }
}

#[test]
fn mr_weights_start_as_a_distribution() {
    let prob = random_problem(3, 12, 4, 2, true);
    let b = AdaBoostMr::new(&labels_of(&prob), &params(MultiVariant::Mr)).unwrap();
    let mut total = 0.0;
    for i in 0..prob.n {
        for l0 in 0..4 {
            for l1 in 0..4 {
                total += b.pair_weight(i, l0, l1);
            }
        }
    }
    assert!((total - 1.0).abs() < 1e-12);
    // The MH statistics w(i, ℓ) sum to Σ D = 1 as well.
    let mut stats = vec![0.0; prob.n * 4];
    b.statistics(&mut stats);
    assert!((stats.iter().map(|s| s.abs()).sum::<f64>() - 1.0).abs() < 1e-12);
}

// ------------------------------------------------------------------------------------------------
// Bounds (docs/explanation/multiclass.md#multiclass, §4.7).

#[test]
fn mh_hamming_loss_below_product_of_z() {
    for variant in [MultiVariant::MhDiscrete, MultiVariant::MhReal] {
        for (seed, multi) in [(1, true), (2, false), (3, true)] {
            let prob = random_problem(seed, 40, 4, 2, multi);
            let mut b = AdaBoostMh::new(&labels_of(&prob), &params(variant)).unwrap();
            let mut prod = 1.0;
            for _ in 0..12 {
                let (_, step, diag) = round(&mut b, &prob.x, prob.p);
                if matches!(step, Step::Stop { .. }) {
                    break;
                }
                prod *= diag["z"];
                assert!((diag["bound"] - prod).abs() < 1e-12 * prod.max(1.0));
                let hl = multilabel::hamming_loss(&prob.y, b.training_scores(), 4, None).unwrap();
                assert!((hl - diag["hamming_loss"]).abs() < 1e-15);
                assert!(hl <= prod + 1e-12, "{variant}: Hamming loss {hl} > Π Z {prod}");
                let oe = multilabel::one_error(&prob.y, b.training_scores(), 4, None).unwrap();
                assert!((oe - diag["one_error"]).abs() < 1e-15);
                // D stays a distribution.
                assert!((b.distribution().iter().sum::<f64>() - 1.0).abs() < 1e-12);
                if matches!(step, Step::AddAndStop { .. }) {
                    break;
                }
            }
            assert!(prod < 1.0, "{variant}: no progress");
        }
    }
}

#[test]
fn mr_ranking_loss_below_product_of_z_and_one_error_below_k_minus_1_rloss() {
    for (variant, multi) in [(MultiVariant::Mr, true), (MultiVariant::M2, false), (MultiVariant::Mr, false)] {
        let k = 4;
        let prob = random_problem(11, 40, k, 2, multi);
        let mut b = AdaBoostMr::new(&labels_of(&prob), &params(variant)).unwrap();
        // Examples with a crucial pair, for one-error ≤ (k − 1) rloss.
        let keep: Vec<usize> = (0..prob.n)
            .filter(|&i| {
                let c = prob.y[i * k..(i + 1) * k].iter().filter(|&&v| v > 0.0).count();
                c > 0 && c < k
            })
            .collect();
        let mut prod = 1.0;
        for _ in 0..12 {
            let (_, step, diag) = round(&mut b, &prob.x, prob.p);
            if matches!(step, Step::Stop { .. }) {
                break;
            }
            prod *= diag["z"];
            let f = b.training_scores();
            let rl = multilabel::ranking_loss(&prob.y, f, k, None).unwrap();
            assert!((rl - diag["ranking_loss"]).abs() < 1e-15);
            assert!(rl <= prod + 1e-12, "ranking loss {rl} > Π Z {prod}");
            let ys: Vec<f64> = keep.iter().flat_map(|&i| prob.y[i * k..(i + 1) * k].to_vec()).collect();
            let fs: Vec<f64> = keep.iter().flat_map(|&i| f[i * k..(i + 1) * k].to_vec()).collect();
            let oe = multilabel::one_error(&ys, &fs, k, None).unwrap();
            let rlk = multilabel::ranking_loss(&ys, &fs, k, None).unwrap();
            assert!(oe <= (k as f64 - 1.0) * rlk + 1e-12, "one-error {oe}, rloss {rlk}");
            if matches!(step, Step::AddAndStop { .. }) {
                break;
            }
        }
        assert!(prod < 1.0, "{variant}: no progress");
    }
}

#[test]
fn discrete_mh_hypothesis_has_no_edge_after_its_update() {
    // With h ∈ {−1, +1} and α = ½ ln((1+r)/(1−r)), Σ D_{t+1} Y h_t = 0 (docs/explanation/adaboost.md#adaboost-discrete: "error ½").
    let prob = random_problem(5, 30, 3, 2, true);
    let mut b = AdaBoostMh::new(&labels_of(&prob), &params(MultiVariant::MhDiscrete)).unwrap();
    for _ in 0..5 {
        let (h, step, _) = round(&mut b, &prob.x, prob.p);
        assert!(matches!(step, Step::Add { .. }));
        let r: f64 = b.distribution().iter().zip(&prob.y).zip(&h).map(|((d, y), h)| d * y * h).sum();
        assert!(r.abs() < 1e-12, "edge after update {r}");
    }
}

#[test]
fn mo_decoded_error_below_code_bounds() {
    let k = 5;
    let prob = random_problem(21, 50, k, 2, false);
    for code in [CodeSpec::Random { columns: 7, seed: 4 }, CodeSpec::Exhaustive, CodeSpec::OneVsAll] {
        for (decode, factor) in [(Decode::Loss, 1.0), (Decode::Hamming, 2.0)] {
            for variant in [MultiVariant::MoDiscrete, MultiVariant::MoReal] {
                let p = MultiParams { variant, code, decode, ..MultiParams::default() };
                let mut b = AdaBoostMo::new(&labels_of(&prob), &p).unwrap();
                let kp = b.code().n_columns as f64;
                let rho = b.code().min_distance() as f64;
                for _ in 0..8 {
                    let (_, step, diag) = round(&mut b, &prob.x, prob.p);
                    if matches!(step, Step::Stop { .. }) {
                        break;
                    }
                    // docs/explanation/multiclass.md#multiclass-mo: error ≤ (k'/ρ) Π Z (loss), (2k'/ρ) Π Z (Hamming).
                    let bound = factor * kp / rho * diag["bound"];
                    assert!(
                        diag["one_error"] <= bound + 1e-9,
                        "{code} {decode}: error {} > {bound}",
                        diag["one_error"]
                    );
                    let hl = diag["hamming_loss"];
                    assert!(hl <= diag["bound"] + 1e-12);
                }
            }
        }
    }
}

// ------------------------------------------------------------------------------------------------
// Agreements: two-class MH = binary AdaBoost; MO one-vs-all + loss decoding = MH argmax.

/// Binary AdaBoost reference (docs/explanation/adaboost.md#adaboost discrete, §4.4 real) with 2-leaf trees whose leaves are the
/// weighted majority (discrete, minimising the weighted error) or ½ ln((W+ + ε)/(W− + ε)) (real,
/// minimising Z = 2 Σ √(W+ W−)).
fn binary_adaboost(x: &[f64], y: &[f64], sw: &[f64], real: bool, eps: f64, rounds: usize) -> Vec<f64> {
    let n = y.len();
    let total: f64 = sw.iter().sum();
    let mut d: Vec<f64> = sw.iter().map(|s| s / total).collect();
    let mut f = vec![0.0; n];
    for _ in 0..rounds {
        // Best threshold on the single feature.
        let mut vals = x.to_vec();
        vals.sort_by(f64::total_cmp);
        vals.dedup();
        let side = |theta: f64| {
            let (mut l, mut r) = ([0.0; 2], [0.0; 2]);
            for i in 0..n {
                let s = if x[i] <= theta { &mut l } else { &mut r };
                s[usize::from(y[i] < 0.0)] += d[i];
            }
            (l, r)
        };
        let cost = |w: [f64; 2]| {
            if real {
                2.0 * (w[0] * w[1]).sqrt()
            } else {
                2.0 * w[0].min(w[1])
            }
        };
        let mut best: Option<(f64, f64)> = None;
        for w in vals.windows(2) {
            let theta = 0.5 * (w[0] + w[1]);
            let (l, r) = side(theta);
            let c = cost(l) + cost(r);
            if best.is_none_or(|(b, _)| c < b) {
                best = Some((c, theta));
            }
        }
        let theta = best.expect("a split").1;
        let (l, r) = side(theta);
        let leaf = |w: [f64; 2]| {
            if real {
                0.5 * ((w[0] + eps) / (w[1] + eps)).ln()
            } else if w[0] >= w[1] {
                1.0
            } else {
                -1.0
            }
        };
        let h: Vec<f64> = x.iter().map(|&v| if v <= theta { leaf(l) } else { leaf(r) }).collect();
        let alpha = if real {
            1.0
        } else {
            let err: f64 = (0..n).filter(|&i| y[i] * h[i] < 0.0).map(|i| d[i]).sum();
            0.5 * ((1.0 - err) / err).ln()
        };
        let mut z = 0.0;
        for i in 0..n {
            d[i] *= (-alpha * y[i] * h[i]).exp();
            z += d[i];
            f[i] += alpha * h[i];
        }
        for v in &mut d {
            *v /= z;
        }
    }
    f
}

#[test]
fn two_class_mh_agrees_with_binary_adaboost() {
    for seed in 0..6u64 {
        let mut prob = random_problem(seed, 30, 2, 1, false);
        // Continuous features and sample weights: no exactly tied splits or leaves.
        let mut rng = ChaCha8Rng::seed_from_u64(seed + 100);
        for v in &mut prob.x {
            *v += rng.gen::<f64>();
        }
        let sw: Vec<f64> = (0..prob.n).map(|_| 0.5 + rng.gen::<f64>()).collect();
        // Binary labels: class 0 is the positive class.
        let yb: Vec<f64> = prob.y.chunks_exact(2).map(|r| r[0]).collect();
        for variant in [MultiVariant::MhDiscrete, MultiVariant::MhReal] {
            let labels = Labels { sample_weight: Some(&sw), ..labels_of(&prob) };
            let p = params(variant);
            let mut b = AdaBoostMh::new(&labels, &p).unwrap();
            let rounds = 8;
            for _ in 0..rounds {
                let (_, step, _) = round(&mut b, &prob.x, 1);
                assert!(matches!(step, Step::Add { .. }), "{step:?}");
            }
            // D(i, ℓ) = d_i / 2, so MH's ε matches a binary ε twice as large.
            let fb = binary_adaboost(&prob.x, &yb, &sw, variant.is_real(), 2.0 * b.eps(), rounds);
            for (i, row) in b.training_scores().chunks_exact(2).enumerate() {
                assert!(close(row[0], fb[i], 1e-9), "{variant} seed {seed}: {} vs {}", row[0], fb[i]);
                assert!(close(row[1], -fb[i], 1e-9));
                assert!(fb[i] != 0.0);
                let binary_class = if fb[i] > 0.0 { 0 } else { 1 };
                assert_eq!(top_label(row), binary_class);
            }
        }
    }
}

#[test]
fn mo_one_vs_all_with_loss_decoding_is_mh_argmax() {
    for seed in 0..4u64 {
        let prob = random_problem(seed, 40, 4, 2, false);
        for (mo, mh) in
            [(MultiVariant::MoDiscrete, MultiVariant::MhDiscrete), (MultiVariant::MoReal, MultiVariant::MhReal)]
        {
            let pmo =
                MultiParams { variant: mo, code: CodeSpec::OneVsAll, decode: Decode::Loss, ..MultiParams::default() };
            let mut a = MultiBooster::new(&labels_of(&prob), &pmo).unwrap();
            let mut b = MultiBooster::new(&labels_of(&prob), &params(mh)).unwrap();
            let out = a.output();
            for _ in 0..6 {
                let (_, sa, da) = round(&mut a, &prob.x, prob.p);
                let (_, sb, db) = round(&mut b, &prob.x, prob.p);
                assert_eq!(sa, sb);
                assert_eq!(a.training_scores(), b.training_scores());
                // For single-label data the decoded error is MH's one-error.
                assert!((da["one_error"] - db["one_error"]).abs() < 1e-12);
                for row in a.training_scores().chunks_exact(4) {
                    assert_eq!(out.predict_class(row), top_label(row));
                    assert_eq!(decode(a.code().unwrap(), row, Decode::Loss), top_label(row));
                }
            }
        }
    }
}

// ------------------------------------------------------------------------------------------------
// Start distributions, stops, errors.

#[test]
fn single_label_start_distribution() {
    let prob = random_problem(8, 10, 4, 1, false);
    let p = MultiParams { variant: MultiVariant::MhReal, single_label_start: true, ..MultiParams::default() };
    let b = AdaBoostMh::new(&labels_of(&prob), &p).unwrap();
    let m = 10.0;
    let class = prob.class.as_ref().unwrap();
    for (i, row) in b.distribution().chunks_exact(4).enumerate() {
        for (l, &d) in row.iter().enumerate() {
            let want = if l == class[i] as usize { 1.0 / (2.0 * m) } else { 1.0 / (2.0 * m * 3.0) };
            assert!((d - want).abs() < 1e-15);
        }
    }
    assert!((b.distribution().iter().sum::<f64>() - 1.0).abs() < 1e-12);
    assert!((b.eps() - 1.0 / 20.0).abs() < 1e-15);
    // Without `class`, the classes come from the one-hot rows.
    let no_class = Labels { class: None, ..labels_of(&prob) };
    let b2 = AdaBoostMh::new(&no_class, &p).unwrap();
    assert_eq!(b.distribution(), b2.distribution());
}

#[test]
fn perfect_hypothesis_gets_capped_vote_and_stops() {
    // Two classes separated by x ≤ 1.5.
    let x = [0.0, 1.0, 2.0, 3.0];
    let y = [1., -1., 1., -1., -1., 1., -1., 1.];
    let labels = Labels { n: 4, k: 2, y: &y, class: None, sample_weight: None };
    for variant in [MultiVariant::MhDiscrete, MultiVariant::Mr, MultiVariant::M2] {
        let mut b = MultiBooster::new(&labels, &params(variant)).unwrap();
        let (_, step, diag) = round(&mut b, &x, 1);
        match step {
            Step::AddAndStop { alpha, reason } => {
                assert_eq!(alpha, MAX_ALPHA);
                assert!(reason.contains("perfect"), "{reason}");
            }
            s => panic!("{variant}: {s:?}"),
        }
        assert_eq!(diag["alpha"], MAX_ALPHA);
        let a = MAX_ALPHA;
        assert_eq!(b.training_scores(), &[a, -a, a, -a, -a, a, -a, a]);
        assert!(diag["bound"] > 0.0 && diag["bound"].is_finite());
    }
}

#[test]
fn no_edge_stops_without_changing_state() {
    let x = [0.0, 1.0, 2.0, 3.0];
    let y = [1., -1., 1., -1., -1., 1., -1., 1.];
    let labels = Labels { n: 4, k: 2, y: &y, class: None, sample_weight: None };
    let _ = x;
    for variant in [MultiVariant::MhDiscrete, MultiVariant::Mr] {
        let mut b = MultiBooster::new(&labels, &params(variant)).unwrap();
        let before = b.clone();
        let mut diag = Diagnostics::new();
        // +1 for every label: r = 0 (balanced classes).
        let step = b.step(&[1.0; 8], &mut diag).unwrap();
        assert!(matches!(step, Step::Stop { .. }), "{step:?}");
        assert_eq!(b.training_scores(), before.training_scores());
        assert_eq!(b.bound(), 1.0);
    }
    let mut real = MultiBooster::new(&labels, &params(MultiVariant::MhReal)).unwrap();
    let step = real.step(&[0.0; 8], &mut Diagnostics::new()).unwrap();
    assert!(matches!(step, Step::Stop { .. }));
}

#[test]
fn bad_inputs_are_errors() {
    let y = [1., -1., 1., -1., -1., 1.];
    let good = Labels { n: 3, k: 2, y: &y, class: None, sample_weight: None };
    let mut b = MultiBooster::new(&good, &params(MultiVariant::MhReal)).unwrap();
    let mut diag = Diagnostics::new();
    assert!(b.step(&[0.5; 5], &mut diag).is_err());
    assert!(b.step(&[f64::NAN; 6], &mut diag).is_err());

    let zero = [1., 0., 1., -1., -1., 1.];
    assert!(MultiBooster::new(&Labels { y: &zero, ..good }, &params(MultiVariant::MhReal)).is_err());
    assert!(MultiBooster::new(&Labels { n: 4, ..good }, &params(MultiVariant::MhReal)).is_err());
    let neg = [1.0, -1.0, 1.0];
    assert!(MultiBooster::new(&Labels { sample_weight: Some(&neg), ..good }, &params(MultiVariant::MhReal)).is_err());
    // Multi-label rows where single-label data is required.
    let multi = [1., 1., 1., -1., -1., 1.];
    let ml = Labels { y: &multi, ..good };
    for v in [MultiVariant::M2, MultiVariant::MoReal] {
        assert!(MultiBooster::new(&ml, &params(v)).is_err());
    }
    assert!(MultiBooster::new(&ml, &params(MultiVariant::Mr)).is_ok());
    // Class index out of range.
    let cls = [0u32, 2, 1];
    assert!(MultiBooster::new(&Labels { class: Some(&cls), ..good }, &params(MultiVariant::MoReal)).is_err());
    // No crucial pair at all.
    let all = [1., 1., 1., 1., -1., -1.];
    assert!(MultiBooster::new(&Labels { y: &all, ..good }, &params(MultiVariant::Mr)).is_err());
    // Wrong variant for a specific booster.
    assert!(AdaBoostMh::new(&good, &params(MultiVariant::Mr)).is_err());
    assert!(AdaBoostMr::new(&good, &params(MultiVariant::MhReal)).is_err());
    assert!(AdaBoostMo::new(&good, &params(MultiVariant::M2)).is_err());
}

#[test]
fn booster_interface_widths_and_rules() {
    let prob = random_problem(1, 10, 3, 1, false);
    let l = labels_of(&prob);
    let mh = MultiBooster::new(&l, &params(MultiVariant::MhDiscrete)).unwrap();
    assert_eq!((mh.stat_width(), mh.n_outputs()), (6, 3));
    assert_eq!(mh.default_criterion(), Criterion::Empirical);
    assert_eq!(mh.leaf_rule(), LeafRule::Sign);
    let real = MultiBooster::new(&l, &params(MultiVariant::MhReal)).unwrap();
    assert_eq!(real.default_criterion(), Criterion::Matusita);
    assert_eq!(real.leaf_rule(), LeafRule::HalfLogRatio { eps: 0.05 });
    let mo = MultiBooster::new(
        &l,
        &MultiParams {
            variant: MultiVariant::MoReal,
            code: CodeSpec::Exhaustive,
            eps: Some(0.01),
            ..MultiParams::default()
        },
    )
    .unwrap();
    assert_eq!((mo.stat_width(), mo.n_outputs()), (6, 3));
    assert_eq!(mo.leaf_rule(), LeafRule::HalfLogRatio { eps: 0.01 });
    assert!(mo.code().is_some() && mh.code().is_none());
    let mr = MultiBooster::new(&l, &params(MultiVariant::M2)).unwrap();
    assert_eq!(mr.leaf_rule(), LeafRule::Sign);
    assert_eq!(mr.output(), MultiOutput::LabelScores { n_labels: 3 });
    // The stump helper: statistics in, per-label outputs out.
    let mut stats = vec![0.0; 30];
    mh.statistics(&mut stats);
    assert!((stats.iter().map(|s| s.abs()).sum::<f64>() - 1.0).abs() < 1e-12);
    let h = stump_outputs(&prob.x, 1, &crate::boost::expand_signed(&stats), 6, Criterion::Empirical, LeafRule::Sign);
    assert!(h.iter().all(|&v| v == 1.0 || v == -1.0));
}

// ------------------------------------------------------------------------------------------------
// Codes, decoding, helpers, parameters.

#[test]
fn one_vs_all_and_exhaustive_codes() {
    let c = CodeMatrix::one_vs_all(3).unwrap();
    assert_eq!(c.entries, vec![1, -1, -1, -1, 1, -1, -1, -1, 1]);
    assert_eq!(c.min_distance(), 2);
    // k = 3: masks 0b00, 0b01, 0b10 over classes 1, 2.
    let e = CodeMatrix::exhaustive(3).unwrap();
    assert_eq!((e.n_classes, e.n_columns), (3, 3));
    assert_eq!(e.codeword(0), &[1, 1, 1]);
    assert_eq!(e.codeword(1), &[-1, 1, -1]);
    assert_eq!(e.codeword(2), &[-1, -1, 1]);
    for k in 2..=7 {
        let e = CodeMatrix::exhaustive(k).unwrap();
        assert_eq!(e.n_columns, (1 << (k - 1)) - 1);
        assert_valid_code(&e);
        // Exhaustive codes have ρ = 2^(k−2).
        assert_eq!(e.min_distance(), 1 << (k - 2));
    }
    assert!(CodeMatrix::exhaustive(MAX_EXHAUSTIVE_CLASSES).is_ok());
    assert!(CodeMatrix::exhaustive(MAX_EXHAUSTIVE_CLASSES + 1).is_err());
    assert!(CodeMatrix::one_vs_all(1).is_err());
}

fn assert_valid_code(c: &CodeMatrix) {
    c.check().unwrap();
    let col = |j: usize| (0..c.n_classes).map(|y| c.codeword(y)[j]).collect::<Vec<i8>>();
    for a in 0..c.n_columns {
        let ca = col(a);
        assert!(ca.iter().any(|&v| v != ca[0]), "constant column {a}");
        for b in a + 1..c.n_columns {
            let cb = col(b);
            assert!(ca != cb, "duplicate columns {a}, {b}");
            assert!(ca.iter().zip(&cb).any(|(x, y)| *x != -*y), "complement columns {a}, {b}");
        }
    }
    assert!(c.min_distance() > 0);
}

#[test]
fn random_codes() {
    let a = CodeMatrix::random(6, 10, 42).unwrap();
    let b = CodeMatrix::random(6, 10, 42).unwrap();
    let c = CodeMatrix::random(6, 10, 43).unwrap();
    assert_eq!(a, b);
    assert_ne!(a, c);
    assert_valid_code(&a);
    assert_valid_code(&c);
    // The maximum possible number of columns is still found.
    assert_valid_code(&CodeMatrix::random(4, 7, 1).unwrap());
    assert_valid_code(&CodeMatrix::random(2, 1, 0).unwrap());
    assert_valid_code(&CodeMatrix::random(8, 3, 0).unwrap());
    assert_valid_code(&CodeMatrix::random(100, 20, 0).unwrap());
    // Impossible codes.
    assert!(CodeMatrix::random(3, 4, 0).is_err()); // at most 2^(3−1) − 1 = 3 columns
    assert!(CodeMatrix::random(9, 3, 0).is_err()); // 2^3 < 9 codewords
    assert!(CodeMatrix::random(3, 0, 0).is_err());
    // Model-file validation.
    let mut bad = a.clone();
    bad.entries[3] = 0;
    assert!(bad.check().is_err());
    bad.entries.pop();
    assert!(bad.check().is_err());
}

#[test]
fn decoding_by_hand() {
    // Classes 0, 1, 2; columns: 0 = one-vs-rest for class 0, 1 = {0, 1} vs {2}, 2 = {1} vs rest.
    let code = CodeMatrix { n_classes: 3, n_columns: 3, entries: vec![1, 1, -1, -1, 1, 1, -1, -1, -1] };
    // f = (−0.5, 2.0, 0.1): signs (−, +, +) → Hamming distances 2, 0, 2 → class 1.
    // Loss: class 0: e^{0.5} + e^{−2} + e^{0.1}; class 1: e^{−0.5} + e^{−2} + e^{−0.1};
    // class 2: e^{−0.5} + e^{2} + e^{0.1} → class 1.
    let f = [-0.5, 2.0, 0.1];
    assert_eq!(decode(&code, &f, Decode::Hamming), 1);
    assert_eq!(decode(&code, &f, Decode::Loss), 1);
    let mut l = [0.0; 3];
    decode_losses_into(&code, &f, Decode::Loss, &mut l);
    let e = f64::exp;
    assert!((l[0] - (e(0.5) + e(-2.0) + e(0.1))).abs() < 1e-15);
    assert!((l[2] - (e(-0.5) + e(2.0) + e(0.1))).abs() < 1e-15);
    // Hamming and loss decoding can disagree: f = (3, −0.1, −0.1): signs (+, −, −) → distances
    // 1, 3, 1 (tie 0/2 → 0 by index); losses: class 0: e^{−3} + e^{0.1} + e^{−0.1} ≈ 2.05,
    // class 2: e^{3} + e^{−0.1} + e^{−0.1} ≈ 21.9 → 0.
    assert_eq!(decode(&code, &[3.0, -0.1, -0.1], Decode::Hamming), 0);
    // f = (0, 0, 0): Hamming counts ½ per column for all → tie → class 0; loss 3 each → class 0.
    assert_eq!(decode(&code, &[0.0; 3], Decode::Hamming), 0);
    assert_eq!(decode(&code, &[0.0; 3], Decode::Loss), 0);
    decode_losses_into(&code, &[0.0, 1.0, -1.0], Decode::Hamming, &mut l);
    // Class 0 (+,+,−): ½ + 0 + 0; class 1 (−,+,+): ½ + 0 + 1; class 2 (−,−,−): ½ + 1 + 0.
    assert_eq!(l, [0.5, 1.5, 1.5]);
    let out = MultiOutput::Code { code: code.clone(), decode: Decode::Hamming };
    let mut s = [0.0; 3];
    out.class_scores_into(&[0.0, 1.0, -1.0], &mut s);
    assert_eq!(s, [-0.5, -1.5, -1.5]);
    assert_eq!(out.predict_class(&[0.0, 1.0, -1.0]), 0);
    assert_eq!((out.n_outputs(), out.n_classes()), (3, 3));
    let json = serde_json::to_string(&out).unwrap();
    let back: MultiOutput = serde_json::from_str(&json).unwrap();
    assert_eq!(back, out);
    back.check().unwrap();
}

#[test]
fn prediction_helpers() {
    let f = [0.5, -1.0, 2.0, 2.0, 0.0];
    assert_eq!(label_set(&f), vec![0, 2, 3]);
    assert_eq!(top_label(&f), 2);
    assert_eq!(ranking(&f), vec![2, 3, 0, 4, 1]);
    assert_eq!(top_label(&[f64::NAN, 1.0, 1.0]), 1);
    assert_eq!(top_label(&[]), 0);
    assert_eq!(ranking(&[f64::NAN, 0.0, -0.0, 1.0]), vec![3, 1, 2, 0]);
    assert!(label_set(&[0.0, -0.0]).is_empty());
}

#[test]
fn parameters_parse_check_and_round_trip() {
    assert_eq!("one-vs-all".parse::<CodeSpec>().unwrap(), CodeSpec::OneVsAll);
    assert_eq!("exhaustive".parse::<CodeSpec>().unwrap(), CodeSpec::Exhaustive);
    assert_eq!("random:15".parse::<CodeSpec>().unwrap(), CodeSpec::Random { columns: 15, seed: 0 });
    assert_eq!("Random:15:7".parse::<CodeSpec>().unwrap(), CodeSpec::Random { columns: 15, seed: 7 });
    for bad in ["random", "random:", "random:x", "random:3:4:5", "one-vs-one", "random:-1"] {
        assert!(bad.parse::<CodeSpec>().is_err(), "{bad}");
    }
    assert_eq!("hamming".parse::<Decode>().unwrap(), Decode::Hamming);
    assert_eq!("loss".parse::<Decode>().unwrap(), Decode::Loss);
    assert!("l1".parse::<Decode>().is_err());
    for v in [
        MultiVariant::MhDiscrete,
        MultiVariant::MhReal,
        MultiVariant::MoDiscrete,
        MultiVariant::MoReal,
        MultiVariant::Mr,
        MultiVariant::M2,
    ] {
        assert_eq!(v.to_string().parse::<MultiVariant>().unwrap(), v);
    }
    assert!("mh".parse::<MultiVariant>().is_err());

    let p = MultiParams {
        variant: MultiVariant::MoDiscrete,
        eps: Some(0.25),
        single_label_start: false,
        code: CodeSpec::Random { columns: 9, seed: 3 },
        decode: Decode::Hamming,
        label_threshold: LabelThreshold::Auto,
    };
    let json = serde_json::to_string(&p).unwrap();
    assert!(json.contains("\"random:9:3\""), "{json}");
    assert_eq!(serde_json::from_str::<MultiParams>(&json).unwrap(), p);
    let t: MultiParams = toml::from_str("variant = \"mr\"\ncode = \"random:5\"").unwrap();
    assert_eq!(t.variant, MultiVariant::Mr);
    assert_eq!(t.code, CodeSpec::Random { columns: 5, seed: 0 });
    assert_eq!(t.decode, Decode::Loss);
    assert!(serde_json::from_str::<MultiParams>("{\"code\": \"random:x\"}").is_err());

    MultiParams::default().check().unwrap();
    assert_eq!(MultiParams::default().variant, MultiVariant::MhReal);
    assert!((MultiParams::default().smoothing(50.0) - 0.01).abs() < 1e-15);
    for bad in [
        MultiParams { eps: Some(-1.0), ..MultiParams::default() },
        MultiParams { eps: Some(f64::NAN), ..MultiParams::default() },
        MultiParams { variant: MultiVariant::Mr, single_label_start: true, ..MultiParams::default() },
        MultiParams { code: CodeSpec::Random { columns: 0, seed: 0 }, ..MultiParams::default() },
    ] {
        assert!(bad.check().is_err(), "{bad:?}");
    }
}

#[test]
fn mr_examples_without_a_crucial_pair_get_weight_0_and_are_counted() {
    // docs/explanation/multiclass.md#multiclass-mr: rows 1 (every label) and 2 (no label) have no crucial pair.
    #[rustfmt::skip]
    let y = [1.0, -1.0, -1.0,  1.0, 1.0, 1.0,  -1.0, -1.0, -1.0,  -1.0, 1.0, -1.0,  -1.0, -1.0, 1.0];
    let lab = Labels { n: 5, k: 3, y: &y, class: None, sample_weight: None };
    let mut b = AdaBoostMr::new(&lab, &params(MultiVariant::Mr)).unwrap();
    for i in 0..5 {
        for l0 in 0..3 {
            for l1 in 0..3 {
                let crucial = y[i * 3 + l0] < 0.0 && y[i * 3 + l1] > 0.0;
                // D_1 = 1/(m′ |Y_i| |Y − Y_i|) over the m′ = 3 rows with pairs: 1/(3·1·2).
                let want = if crucial && i != 1 && i != 2 { 1.0 / 6.0 } else { 0.0 };
                assert!(close(b.pair_weight(i, l0, l1), want, 1e-15), "i={i} ({l0}, {l1})");
            }
        }
    }
    let mut h = y.to_vec();
    h[3 * 3] = 1.0; // one mistake, so that r < 1
    let mut d = Diagnostics::new();
    b.step(&h, &mut d).unwrap();
    assert_eq!(d["no_crucial_pair"], 2.0);
    // Rows 1 and 2 stay at weight 0 and outside rloss.
    assert!((0..3).all(|l| b.v()[3 + l] == 0.0 && b.v()[6 + l] == 0.0));
}

// ------------------------------------------------------------------------------------------------
// Hamming-decoding ties (docs/explanation/multiclass.md#multiclass-mo) and MR's learned label-set threshold (docs/explanation/multiclass.md#multiclass-mr).

/// docs/explanation/multiclass.md#multiclass-mo-decoding variant 1 by its definition: Σ_ℓ' (1 − λ(y)[ℓ']·sign f(ℓ'))/2, sign 0 = 0; the lowest
/// class index among the minima.
fn naive_hamming_decode(code: &CodeMatrix, f: &[f64]) -> usize {
    let sign = |v: f64| {
        if v > 0.0 {
            1.0
        } else if v < 0.0 {
            -1.0
        } else {
            0.0
        }
    };
    let d: Vec<f64> = (0..code.n_classes)
        .map(|y| code.codeword(y).iter().zip(f).map(|(&e, &v)| (1.0 - f64::from(e) * sign(v)) / 2.0).sum())
        .collect();
    let min = d.iter().cloned().fold(f64::INFINITY, f64::min);
    d.iter().position(|&v| v == min).unwrap()
}

#[test]
fn hamming_decoding_ties_follow_the_spec() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(16);
    let mut ties = 0;
    for case in 0..500 {
        let k = rng.gen_range(3..7);
        let spec = match case % 3 {
            0 => CodeSpec::OneVsAll,
            1 => CodeSpec::Random { columns: rng.gen_range(2..9), seed: case },
            _ => CodeSpec::Exhaustive,
        };
        let Ok(code) = CodeMatrix::build(&spec, k) else { continue };
        // Scores in {−1, 0, 1}: zeros and ties are frequent.
        let f: Vec<f64> = (0..code.n_columns).map(|_| f64::from(rng.gen_range(-1i32..2))).collect();
        let want = naive_hamming_decode(&code, &f);
        assert_eq!(decode(&code, &f, Decode::Hamming), want, "case {case}: code {spec}, f {f:?}");
        let mut l = vec![0.0; k];
        decode_losses_into(&code, &f, Decode::Hamming, &mut l);
        if l.iter().filter(|&&v| v == l[want]).count() > 1 {
            ties += 1;
        }
    }
    assert!(ties > 50, "the cases exercise ties ({ties})");
}

#[test]
fn mr_label_sets_use_a_threshold_learned_on_the_training_data() {
    use crate::boost::driver::{fit, BoostParams};
    use crate::data::{Column, Dataset, Features, Target};
    use crate::model::Ensemble;
    use crate::Prediction;
    // Multi-label data where f > 0 is a poor label set for MR: 3 labels, most examples with one.
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    let (n, k) = (300, 3);
    let mut cols = vec![Vec::new(); 3];
    let mut y = Vec::new();
    for _ in 0..n {
        let x: Vec<f64> = (0..3).map(|_| f64::from(rng.gen_range(0..20)) / 20.0).collect();
        for l in 0..k {
            y.push(u8::from(x[l] > 0.6 || (l == 0 && x[1] < 0.2) || rng.gen_bool(0.05)));
        }
        for (c, v) in cols.iter_mut().zip(x) {
            c.push(v);
        }
    }
    let features = Features {
        names: ["a", "b", "c"].iter().map(|s| s.to_string()).collect(),
        columns: cols.into_iter().map(Column::Numeric).collect(),
    };
    let labels: Vec<String> = (0..k).map(|l| format!("l{l}")).collect();
    let d = Dataset::new(features, Some(Target::Multilabel { y: y.clone(), labels }), None).unwrap();
    let mut p = BoostParams { algorithm: crate::Algorithm::AdaBoostMR, n_estimators: 30, ..BoostParams::default() };
    p.tree.max_leaves = 4;
    let m = fit(&d, &p).unwrap();
    let theta = m.label_threshold.expect("MR learns a threshold by default");
    // The naive reference: the threshold of lowest training Hamming loss over every candidate.
    let s = m.predict(&d.features, &Prediction::scores()).unwrap();
    let ypm: Vec<f64> = y.iter().map(|&v| if v == 1 { 1.0 } else { -1.0 }).collect();
    let loss = |t: f64| {
        let shifted: Vec<f64> = s.iter().map(|f| f - t).collect();
        multilabel::hamming_loss(&ypm, &shifted, k, None).unwrap()
    };
    let mut sorted = s.clone();
    sorted.sort_by(f64::total_cmp);
    sorted.dedup();
    let mut best = loss(sorted[0] - 1.0).min(loss(sorted[sorted.len() - 1] + 1.0));
    for w in sorted.windows(2) {
        best = best.min(loss((w[0] + w[1]) / 2.0));
    }
    assert!((loss(theta) - best).abs() < 1e-12, "θ = {theta}: {} vs {best}", loss(theta));
    assert!(loss(theta) < loss(0.0), "the learned θ = {theta} beats f > 0 here ({} vs {})", loss(theta), loss(0.0));
    // Predictions and metrics use it; rankings do not move.
    let metrics = m.metrics_from_scores(&d, &s).unwrap();
    assert!((metrics["hamming_loss"] - loss(theta)).abs() < 1e-12);
    let sets = m.predict_labels_from_scores(&s);
    for (i, set) in sets.iter().enumerate() {
        let want: Vec<String> = (0..k).filter(|&l| s[i * k + l] > theta).map(|l| format!("l{l}")).collect();
        assert_eq!(*set, want.join(";"), "row {i}");
    }
    let zero = BoostParams {
        multiclass: MultiParams { label_threshold: LabelThreshold::Zero, ..p.multiclass.clone() },
        ..p.clone()
    };
    let m0 = fit(&d, &zero).unwrap();
    assert_eq!(m0.label_threshold, None);
    assert_eq!(m0.trees, m.trees);
    let m0_metrics = m0.metrics_from_scores(&d, &s).unwrap();
    assert!((m0_metrics["hamming_loss"] - loss(0.0)).abs() < 1e-12);
    assert_eq!(m0_metrics["ranking_loss"], metrics["ranking_loss"]);
    // Saved and read back; a model file without the field (older) keeps f > 0.
    let json = m.to_json().unwrap();
    assert_eq!(Ensemble::from_json(&json).unwrap().label_threshold, Some(theta));
    let v: serde_json::Value = serde_json::from_str(&m0.to_json().unwrap()).unwrap();
    assert!(v.get("label_threshold").is_none());
    // MH keeps θ = 0 unless asked; MO refuses a learned one.
    let mh = BoostParams { algorithm: crate::Algorithm::RealAdaBoostMH, n_estimators: 5, ..p.clone() };
    assert_eq!(fit(&d, &mh).unwrap().label_threshold, None);
    let mut learned = mh.clone();
    learned.multiclass.label_threshold = LabelThreshold::Learned;
    assert!(fit(&d, &learned).unwrap().label_threshold.is_some());
    let mut mo = learned.clone();
    mo.algorithm = crate::Algorithm::AdaBoostMO;
    let single = Dataset::new(
        d.features.clone(),
        Some(Target::Classes {
            y: (0..n as u32).map(|i| i % 3).collect(),
            classes: vec!["a".into(), "b".into(), "c".into()],
        }),
        None,
    )
    .unwrap();
    let e = fit(&single, &mo).unwrap_err().to_string();
    assert!(e.contains("label_threshold"), "{e}");
}

// ------------------------------------------------------------------------------------------------
// The chunked parallel steps against the serial loops they replaced.

/// Random tree-like outputs for labels `y` (`n × k`) with an edge: each row in one of 8 leaves,
/// one value per (leaf, label) plus a pull towards the label — real values, or signs (with zeros)
/// agreeing with the label 70 % of the time for the discrete variants.
fn leafy_outputs(seed: u64, y: &[f64], k: usize, discrete: bool) -> Vec<f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let values: Vec<f64> = (0..8 * k).map(|_| rng.gen_range(-0.6..0.6)).collect();
    let mut h = vec![0.0; y.len()];
    for (row, yr) in h.chunks_exact_mut(k).zip(y.chunks_exact(k)) {
        let leaf = rng.gen_range(0..8usize);
        for ((o, &v), &y) in row.iter_mut().zip(&values[leaf * k..(leaf + 1) * k]).zip(yr) {
            *o = if discrete {
                if v.abs() < 0.05 {
                    0.0
                } else if rng.gen_bool(0.7) {
                    y
                } else {
                    -y
                }
            } else {
                v + 0.25 * y
            };
        }
    }
    h
}

/// The naive serial AdaBoost.MH step (docs/explanation/multiclass.md#multiclass-mh), on (D, f): returns (r, z, Hamming
/// loss, one-error), or `None` when it stops.
fn naive_mh_step(
    d: &mut [f64],
    f: &mut [f64],
    y: &[f64],
    sw: &[f64],
    k: usize,
    real: bool,
    h: &[f64],
) -> Option<[f64; 4]> {
    let r: f64 = d.iter().zip(y).zip(h).map(|((d, y), h)| d * y * h).sum();
    let alpha = if real {
        if h.iter().all(|&v| v == 0.0) {
            return None;
        }
        1.0
    } else {
        match vote(r) {
            Vote::Alpha(a) => a,
            _ => return None,
        }
    };
    let mut z = 0.0;
    for ((d, y), hv) in d.iter_mut().zip(y).zip(h) {
        *d *= (-alpha * y * hv).exp();
        z += *d;
    }
    for d in d.iter_mut() {
        *d /= z;
    }
    for (f, hv) in f.iter_mut().zip(h) {
        *f += alpha * hv;
    }
    let hl = multilabel::hamming_loss(y, f, k, Some(sw)).unwrap();
    let oe = multilabel::one_error(y, f, k, Some(sw)).unwrap();
    Some([r, z, hl, oe])
}

/// The naive serial AdaBoost.MR step (docs/explanation/multiclass.md#multiclass-mr), on (v, f): (r, z, ranking loss,
/// one-error), or `None` when it stops.
fn naive_mr_step(v: &mut [f64], f: &mut [f64], y: &[f64], sw: &[f64], k: usize, h: &[f64]) -> Option<[f64; 4]> {
    let mut r = 0.0;
    for ((vr, yr), hr) in v.chunks_exact(k).zip(y.chunks_exact(k)).zip(h.chunks_exact(k)) {
        let vp: f64 = vr.iter().zip(yr).filter(|(_, y)| **y > 0.0).fold(0.0, |a, (v, _)| a + v);
        let vn: f64 = vr.iter().zip(yr).filter(|(_, y)| **y < 0.0).fold(0.0, |a, (v, _)| a + v);
        for ((v, y), hv) in vr.iter().zip(yr).zip(hr) {
            let w = 0.5 * v * if *y > 0.0 { vn } else { vp };
            r += w * y * hv;
        }
    }
    let Vote::Alpha(alpha) = vote(r) else { return None };
    let mut z = 0.0;
    for ((vr, yr), hr) in v.chunks_exact_mut(k).zip(y.chunks_exact(k)).zip(h.chunks_exact(k)) {
        let (mut vp, mut vn) = (0.0, 0.0);
        for ((v, y), hv) in vr.iter_mut().zip(yr).zip(hr) {
            *v *= (-0.5 * alpha * y * hv).exp();
            if *y > 0.0 {
                vp += *v;
            } else {
                vn += *v;
            }
        }
        z += vp * vn;
    }
    let sz = z.sqrt();
    for v in v.iter_mut() {
        *v /= sz;
    }
    for (f, hv) in f.iter_mut().zip(h) {
        *f += alpha * hv;
    }
    let rl = multilabel::ranking_loss(y, f, k, Some(sw)).unwrap();
    let oe = multilabel::one_error(y, f, k, Some(sw)).unwrap();
    Some([r, z, rl, oe])
}

/// The ±1 labels the booster's outputs are scored against: the coded labels for MO.
fn coded(b: &MultiBooster, p: &Problem) -> Vec<f64> {
    match b {
        MultiBooster::Mo(m) => m.code().encode(p.class.as_ref().unwrap()),
        _ => p.y.clone(),
    }
}

/// Runs `rounds` fused steps of `variant` on random outputs in a pool of `threads` threads:
/// per round the diagnostics, then the final weights, scores and statistics.
fn chunked_run(
    p: &Problem,
    variant: MultiVariant,
    rounds: u64,
    threads: usize,
) -> (Vec<Diagnostics>, Vec<f64>, Vec<f64>, Vec<f64>) {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
    pool.install(|| {
        let mut b = MultiBooster::new(&labels_of(p), &params(variant)).unwrap();
        let kk = b.n_outputs();
        let mut stats = vec![0.0; p.n * kk];
        let mut diags = Vec::new();
        for t in 0..rounds {
            let h = leafy_outputs(100 + t, &coded(&b, p), kk, !variant.is_real());
            let mut diag = Diagnostics::new();
            b.step_then_statistics(&h, &mut diag, &mut stats).unwrap();
            diags.push(diag);
        }
        let weights = match &b {
            MultiBooster::Mh(m) => m.distribution().to_vec(),
            MultiBooster::Mo(m) => m.mh().distribution().to_vec(),
            MultiBooster::Mr(m) => m.v().to_vec(),
        };
        (diags, weights, b.training_scores().to_vec(), stats)
    })
}

#[test]
fn chunked_steps_equal_the_serial_loops() {
    // One chunk: the serial loop bit for bit. Three chunks: the same values up to the order of
    // the sums — a serial sum of n·k terms is within n·k·ε (relative) of the exact one, so the two
    // orders agree within 2·n·k·ε per round (4 rounds).
    for (n, exact) in [(3000, true), (2 * crate::util::par::ROW_CHUNK + 777, false)] {
        for (variant, multi) in [
            (MultiVariant::MhReal, false),
            (MultiVariant::MhDiscrete, true),
            (MultiVariant::Mr, true),
            (MultiVariant::M2, false),
        ] {
            let p = random_problem(7, n, 4, 2, multi);
            let sw = vec![1.0 / n as f64; n];
            let tol = 8.0 * (n * p.k) as f64 * f64::EPSILON;
            let (diags, weights, scores, stats) = chunked_run(&p, variant, 4, 2);
            let mut w = match variant {
                MultiVariant::Mr | MultiVariant::M2 => {
                    AdaBoostMr::new(&labels_of(&p), &params(variant)).unwrap().v().to_vec()
                }
                _ => AdaBoostMh::new(&labels_of(&p), &params(variant)).unwrap().distribution().to_vec(),
            };
            let mut f = vec![0.0; n * p.k];
            for (t, diag) in diags.iter().enumerate() {
                let h = leafy_outputs(100 + t as u64, &p.y, p.k, !variant.is_real());
                let want = match variant {
                    MultiVariant::Mr | MultiVariant::M2 => naive_mr_step(&mut w, &mut f, &p.y, &sw, p.k, &h),
                    _ => naive_mh_step(&mut w, &mut f, &p.y, &sw, p.k, variant.is_real(), &h),
                }
                .unwrap();
                let loss = if matches!(variant, MultiVariant::Mr | MultiVariant::M2) {
                    "ranking_loss"
                } else {
                    "hamming_loss"
                };
                let got = [diag["r"], diag["z"], diag[loss], diag["one_error"]];
                for (g, want) in got.iter().zip(want) {
                    if exact {
                        assert_eq!(g.to_bits(), want.to_bits(), "{variant} n = {n} round {t}: {got:?} vs {want}");
                    } else {
                        assert!(close(*g, want, tol), "{variant} n = {n} round {t}: {got:?} vs {want}");
                    }
                }
            }
            for (a, b) in weights.iter().zip(&w).chain(scores.iter().zip(&f)) {
                if exact {
                    assert_eq!(a.to_bits(), b.to_bits(), "{variant}");
                } else {
                    assert!(close(*a, *b, tol), "{variant}: {a} vs {b}");
                }
            }
            // The fused statistics are the unfused ones.
            let mut again = vec![0.0; stats.len()];
            let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
            let b = pool.install(|| {
                let mut b = MultiBooster::new(&labels_of(&p), &params(variant)).unwrap();
                for t in 0..4 {
                    let h = leafy_outputs(100 + t, &coded(&b, &p), b.n_outputs(), !variant.is_real());
                    b.step(&h, &mut Diagnostics::new()).unwrap();
                }
                b
            });
            b.statistics(&mut again);
            assert!(stats.iter().zip(&again).all(|(a, b)| a.to_bits() == b.to_bits()), "{variant}: fused statistics");
        }
    }
}

#[test]
fn chunked_steps_are_bit_identical_for_1_2_and_3_threads() {
    // Three chunks of rows (and a partial one), every variant, the fused step.
    let n = 2 * crate::util::par::ROW_CHUNK + 777;
    for (variant, multi) in [
        (MultiVariant::MhReal, false),
        (MultiVariant::MhDiscrete, true),
        (MultiVariant::MoReal, false),
        (MultiVariant::MoDiscrete, false),
        (MultiVariant::Mr, true),
        (MultiVariant::M2, false),
    ] {
        let p = random_problem(11, n, 4, 2, multi);
        let one = chunked_run(&p, variant, 3, 1);
        for threads in [2, 3] {
            let other = chunked_run(&p, variant, 3, threads);
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(one.0, other.0, "{variant}: diagnostics, {threads} threads");
            assert_eq!(bits(&one.1), bits(&other.1), "{variant}: weights, {threads} threads");
            assert_eq!(bits(&one.2), bits(&other.2), "{variant}: scores, {threads} threads");
            assert_eq!(bits(&one.3), bits(&other.3), "{variant}: statistics, {threads} threads");
        }
    }
}

/// Runs `rounds` steps of `variant` on random trees (8 leaves, the last round's values all 0
/// when `zero_last`) in a pool of `threads` threads, from the leaves (`step_on_leaves`) or from
/// the dense outputs (`step_then_statistics`): per round the step and diagnostics, then the
/// final weights, scores and statistics.
#[allow(clippy::type_complexity, clippy::too_many_arguments)]
fn leaves_run(
    p: &Problem,
    params: &MultiParams,
    lr: f64,
    sample_weight: Option<&[f64]>,
    rounds: u64,
    zero_last: bool,
    threads: usize,
    on_leaves: bool,
) -> (Vec<(Step, Diagnostics)>, Vec<f64>, Vec<f64>, Vec<f64>) {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
    pool.install(|| {
        let labels = Labels { sample_weight, ..labels_of(p) };
        let mut b = MultiBooster::new(&labels, params).unwrap();
        b.set_learning_rate(lr);
        let k = b.n_outputs();
        let (mut stats, mut h) = (vec![0.0; p.n * k], vec![0.0; p.n * k]);
        let mut steps = Vec::new();
        for t in 0..rounds {
            let mut rng = ChaCha8Rng::seed_from_u64(500 + t);
            let of_row: Vec<u32> = (0..p.n).map(|_| rng.gen_range(0..8u32)).collect();
            let values: Vec<f64> =
                (0..8 * k).map(|_| if zero_last && t + 1 == rounds { 0.0 } else { rng.gen_range(-0.6..0.6) }).collect();
            let mut diag = Diagnostics::new();
            let step = if on_leaves {
                b.step_on_leaves(&of_row, &values, &mut h, &mut diag, &mut stats).unwrap()
            } else {
                crate::boost::driver::tree_outputs(&of_row, &values, k, &mut h);
                b.step_then_statistics(&h, &mut diag, &mut stats).unwrap()
            };
            steps.push((step, diag));
        }
        let MultiBooster::Mh(m) = &b else { unreachable!("AdaBoost.MH") };
        (steps, m.distribution().to_vec(), b.training_scores().to_vec(), stats)
    })
}

#[test]
fn mh_fused_step_on_leaves_is_bit_identical_to_the_dense_step() {
    // Real AdaBoost.MH's step from the leaves (edge and update in one pass) against
    // the dense step (tree outputs written, then the edge pass and the update pass): one chunk
    // and three chunks of rows, with and without shrinkage and sample weights, 1 and 3 threads,
    // and a last round whose tree is 0 everywhere (the step stops and changes nothing).
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    for n in [3000, 2 * crate::util::par::ROW_CHUNK + 777] {
        let p = random_problem(23, n, 5, 2, false);
        let sw: Vec<f64> = (0..n).map(|i| 0.5 + (i % 7) as f64 * 0.25).collect();
        for (lr, weighted, zero_last) in [(1.0, false, false), (0.3, true, true), (1.0, true, true)] {
            for variant in [MultiVariant::MhReal, MultiVariant::MhDiscrete] {
                let params = params(variant);
                let w = weighted.then_some(sw.as_slice());
                let want = leaves_run(&p, &params, lr, w, 4, zero_last, 1, false);
                for threads in [1, 3] {
                    let got = leaves_run(&p, &params, lr, w, 4, zero_last, threads, true);
                    let what = format!("{variant} n = {n} lr = {lr} weighted = {weighted} threads = {threads}");
                    assert_eq!(got.0, want.0, "{what}: steps and diagnostics");
                    assert_eq!(bits(&got.1), bits(&want.1), "{what}: weights");
                    assert_eq!(bits(&got.2), bits(&want.2), "{what}: scores");
                    assert_eq!(bits(&got.3), bits(&want.3), "{what}: statistics");
                }
                if zero_last && variant == MultiVariant::MhReal {
                    assert!(matches!(want.0[3].0, Step::Stop { .. }), "a zero tree stops real MH");
                }
            }
        }
    }
}

#[test]
fn mh_step_on_leaves_rejects_bad_leaves() {
    let p = random_problem(3, 50, 3, 2, false);
    let mut b = MultiBooster::new(&labels_of(&p), &params(MultiVariant::MhReal)).unwrap();
    let (mut h, mut stats) = (vec![0.0; 150], vec![0.0; 150]);
    let values = vec![0.1; 2 * 3];
    let mut of_row = vec![0u32; 50];
    of_row[17] = 2;
    let e = b.step_on_leaves(&of_row, &values, &mut h, &mut Diagnostics::new(), &mut stats).unwrap_err();
    assert!(e.to_string().contains("leaf 2 of a tree with 2 leaves"), "{e}");
    let e = b.step_on_leaves(&of_row[..49], &values, &mut h, &mut Diagnostics::new(), &mut stats).unwrap_err();
    assert!(e.to_string().contains("49 rows"), "{e}");
    let e = b.step_on_leaves(&[0; 50], &values[..5], &mut h, &mut Diagnostics::new(), &mut stats).unwrap_err();
    assert!(e.to_string().contains("5 leaf values"), "{e}");
}
