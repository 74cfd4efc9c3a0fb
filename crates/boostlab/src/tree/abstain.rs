//! Abstaining stumps (docs/explanation/weak-learners.md#weak-learners-abstaining, §4.3): a one-feature test whose regions — left, right and,
//! for numeric features with missing values, "missing" — each output −1, 0 (abstain) or +1,
//! chosen together with the test to minimise `Z = W_0 + 2√(W_+ W_−)`.

use super::grow::Grown;
use super::histogram::build_histogram;
use super::tree::{Node, SplitRule, Tree};
use crate::data::{BinMapper, BinnedMatrix, FeatureBins};
use crate::error::{Error, Result};

/// Z of regions with (positive, negative) weights and outputs in {−1, 0, +1}.
fn z_of(regions: &[(f64, f64)], values: &[i8]) -> (f64, f64, f64) {
    let (mut wp, mut wn, mut w0) = (0.0, 0.0, 0.0);
    for (&(p, n), &v) in regions.iter().zip(values) {
        match v {
            1 => {
                wp += p;
                wn += n;
            }
            -1 => {
                wp += n;
                wn += p;
            }
            _ => w0 += p + n,
        }
    }
    (wp, wn, w0)
}

/// Best output assignment for the regions: the smallest Z among assignments with `W_+ > W_−`
/// (ties: the first in the order −1, 0, +1 per region) and, for `order = ±1` (a monotone
/// feature), the left region's output not above (+1) or not below (−1) the right region's.
/// Returns (Z, values).
fn best_values(regions: &[(f64, f64)], order: i8) -> Option<(f64, Vec<i8>)> {
    let r = regions.len();
    let mut best: Option<(f64, Vec<i8>)> = None;
    let mut vals = vec![-1i8; r];
    for code in 0..3usize.pow(r as u32) {
        let mut c = code;
        for v in vals.iter_mut() {
            *v = (c % 3) as i8 - 1;
            c /= 3;
        }
        if order * vals[0] > order * vals[1] {
            continue;
        }
        let (wp, wn, w0) = z_of(regions, &vals);
        if wp <= wn {
            continue;
        }
        let z = w0 + 2.0 * (wp * wn).sqrt();
        if best.as_ref().is_none_or(|b| z < b.0 - 1e-15) {
            best = Some((z, vals.clone()));
        }
    }
    best
}

/// Finds the best abstaining stump for one signed statistic per row (see [`super::grow`]).
/// `row_weight`: the rows' sample weights for the covers, 1 each when `None`.
pub fn abstaining_stump(
    bm: &BinnedMatrix,
    mapper: &BinMapper,
    stats: &[f64],
    row_weight: Option<&[f64]>,
) -> Result<Grown> {
    abstaining_stump_constrained(bm, mapper, stats, row_weight, &[])
}

/// [`abstaining_stump`] under monotone constraints (`monotone`: a direction −1, 0, +1 per
/// feature, or empty): a stump on a constrained feature outputs on its lower values (left) not
/// more (+1) or not less (−1) than on its upper values; the missing values' own region is free
/// (docs/how-to/constraints.md#missing-values).
pub(crate) fn abstaining_stump_constrained(
    bm: &BinnedMatrix,
    mapper: &BinMapper,
    stats: &[f64],
    row_weight: Option<&[f64]>,
    monotone: &[i8],
) -> Result<Grown> {
    let n = bm.n_rows;
    if stats.len() != n {
        return Err(Error::InvalidData("abstaining stumps need one statistic per row".into()));
    }
    let mut hist = vec![0.0; bm.total_bins() * 2];
    build_histogram(bm, None, stats, 1, &mut hist);
    // (Z, feature, value-bin threshold or category set, values)
    let mut best: Option<(f64, usize, Vec<bool>, Vec<i8>)> = None;
    for f in 0..bm.n_features {
        let h = &hist[bm.offsets[f] * 2..bm.offsets[f + 1] * 2];
        let nb = h.len() / 2;
        let miss = (h[2 * (nb - 1)], h[2 * (nb - 1) + 1]);
        let nonempty = |b: usize| h[2 * b] + h[2 * b + 1] > 0.0;
        // Candidate partitions of the value bins into (left, right) as bin masks.
        let mut parts: Vec<Vec<bool>> = Vec::new();
        match &mapper.features[f] {
            FeatureBins::Numeric { .. } => {
                let ne: Vec<usize> = (0..nb - 1).filter(|&b| nonempty(b)).collect();
                for pair in ne.windows(2) {
                    parts.push((0..nb).map(|b| b <= pair[0] && b < nb - 1).collect());
                }
            }
            FeatureBins::Categorical { .. } => {
                let mut cats: Vec<(f64, usize)> =
                    (0..nb).filter(|&b| nonempty(b)).map(|b| (h[2 * b] / (h[2 * b] + h[2 * b + 1]), b)).collect();
                cats.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
                for k in 1..cats.len() {
                    parts.push((0..nb).map(|b| cats[..k].iter().any(|c| c.1 == b)).collect());
                }
            }
        }
        let numeric_missing = matches!(mapper.features[f], FeatureBins::Numeric { .. }) && miss.0 + miss.1 > 0.0;
        for part in parts {
            let (mut l, mut r) = ((0.0, 0.0), (0.0, 0.0));
            for b in 0..nb {
                if numeric_missing && b == nb - 1 {
                    continue;
                }
                if part[b] {
                    l.0 += h[2 * b];
                    l.1 += h[2 * b + 1];
                } else {
                    r.0 += h[2 * b];
                    r.1 += h[2 * b + 1];
                }
            }
            let regions: Vec<(f64, f64)> = if numeric_missing { vec![l, r, miss] } else { vec![l, r] };
            if let Some((z, vals)) = best_values(&regions, monotone.get(f).copied().unwrap_or(0)) {
                if best.as_ref().is_none_or(|b| z < b.0 - 1e-12 * (b.0.abs() + 1e-300)) {
                    best = Some((z, f, part, vals));
                }
            }
        }
    }
    let Some((z_stump, f, part, vals)) = best else {
        return Err(Error::InvalidData("no abstaining stump has a positive edge".into()));
    };
    let missing_bin = bm.n_bins(f) - 1;
    let rule = match &mapper.features[f] {
        FeatureBins::Numeric { thresholds } => {
            let b = (0..missing_bin).filter(|&b| part[b]).max().unwrap_or(0);
            SplitRule::Numeric { threshold: thresholds[b], bin_threshold: b as u32, missing_left: false }
        }
        FeatureBins::Categorical { .. } => SplitRule::Categorical {
            left: (0..missing_bin).filter(|&b| part[b]).map(|b| b as u32).collect(),
            missing_left: part[missing_bin],
        },
    };
    let leaf_values: Vec<f64> = vals.iter().map(|&v| f64::from(v)).collect();
    let (nodes, region_of) = if vals.len() == 3 {
        // Root: "not missing" (every value ≤ f64::MAX) goes left to the threshold test; missing
        // values go right to their own leaf.
        let last_value_bin = missing_bin.saturating_sub(1) as u32;
        let not_missing =
            SplitRule::Numeric { threshold: f64::MAX, bin_threshold: last_value_bin, missing_left: false };
        (
            vec![
                Node::Split { feature: f as u32, rule: not_missing, left: 1, right: 4 },
                Node::Split { feature: f as u32, rule, left: 2, right: 3 },
                Node::Leaf { leaf: 0 },
                Node::Leaf { leaf: 1 },
                Node::Leaf { leaf: 2 },
            ],
            3,
        )
    } else {
        (
            vec![
                Node::Split { feature: f as u32, rule, left: 1, right: 2 },
                Node::Leaf { leaf: 0 },
                Node::Leaf { leaf: 1 },
            ],
            2,
        )
    };
    let mut leaf_of_row = vec![0u32; n];
    let mut leaf_stats = vec![0.0; region_of * 2];
    // The split feature's bins and the statistics read, the leaf of every row written.
    let bin_width = match &bm.data {
        crate::data::BinData::U8(_) => 1,
        crate::data::BinData::U16(_) => 2,
    };
    crate::util::traffic::add(
        crate::util::traffic::Pass::LeafOfRow,
        n * bin_width + crate::util::traffic::bytes(stats),
        crate::util::traffic::bytes(&leaf_of_row),
    );
    for (r, leaf) in leaf_of_row.iter_mut().enumerate() {
        let b = bm.bin(r, f);
        let l = if region_of == 3 && b == missing_bin {
            2
        } else if part[b] {
            0
        } else {
            1
        };
        *leaf = l;
        let s = stats[r];
        leaf_stats[2 * l as usize + usize::from(s.is_sign_negative())] += s.abs();
    }
    let n_nodes = nodes.len();
    let mut tree = Tree::new(nodes, 1, leaf_values);
    // The stump's criterion decrease is Z's, from abstaining everywhere (Z = W, the
    // total weight) to the stump's Z; recorded at the root (a second node, "not missing", tests
    // the same feature).
    let w_total: f64 = leaf_stats.iter().sum();
    tree.gains = vec![0.0; n_nodes];
    tree.gains[0] = (w_total - z_stump).max(0.0);
    tree.record_covers(&leaf_of_row, row_weight);
    Ok(Grown { tree, leaf_of_row, leaf_stats })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn best_values_prefers_abstaining_on_mixed_regions() {
        // Left region is pure positive, right is a 50/50 mix: vote +1 left, abstain right.
        let (z, v) = best_values(&[(0.4, 0.0), (0.3, 0.3)], 0).unwrap();
        assert_eq!(v, vec![1, 0]);
        assert!((z - 0.6).abs() < 1e-15);
        // Brute-force check of the minimum over all 9 assignments.
        let regions = [(0.1, 0.25), (0.35, 0.3)];
        let (z, _) = best_values(&regions, 0).unwrap();
        let mut min = f64::INFINITY;
        for a in [-1i8, 0, 1] {
            for b in [-1i8, 0, 1] {
                let (wp, wn, w0) = z_of(&regions, &[a, b]);
                if wp > wn {
                    min = min.min(w0 + 2.0 * (wp * wn).sqrt());
                }
            }
        }
        assert_eq!(z, min);
    }
}
