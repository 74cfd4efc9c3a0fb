//! Thresholds of a numeric feature: midpoints between its distinct values when they are few,
//! weighted quantiles otherwise.

use crate::data::view::NumericView;

/// Midpoint `m` of `a < b` with `a ≤ m < b` even for adjacent floats.
pub(super) fn midpoint(a: f64, b: f64) -> f64 {
    let m = a + (b - a) / 2.0;
    if m >= b {
        a
    } else {
        m
    }
}

/// Inserts `x` into the increasing distinct values `known` (−0 and +0 are one value); false when
/// it is new and `known` already holds `max_bins` values.
pub(super) fn insert_distinct(known: &mut Vec<f64>, x: f64, max_bins: usize) -> bool {
    // `<`/`>` rather than `total_cmp`: −0 and +0 are one value, as in `runs`.
    match known.binary_search_by(|p| {
        if *p < x {
            std::cmp::Ordering::Less
        } else if *p > x {
            std::cmp::Ordering::Greater
        } else {
            std::cmp::Ordering::Equal
        }
    }) {
        Ok(_) => true,
        Err(i) if known.len() < max_bins => {
            known.insert(i, x);
            true
        }
        Err(_) => false,
    }
}

/// All thresholds from all rows (no sampling).
pub(super) fn numeric_thresholds(v: NumericView<'_>, max_bins: usize, w: Option<&[f64]>) -> Vec<f64> {
    let cuts = match w {
        None => {
            let mut xs = Vec::with_capacity(v.len());
            v.for_each(|_, x| {
                if !x.is_nan() {
                    xs.push(x);
                }
            });
            cuts_of_values(xs, max_bins)
        }
        // Rows of zero weight do not place thresholds: weight 0 is the same as leaving the row out.
        Some(w) => {
            let mut pairs = Vec::with_capacity(v.len());
            v.for_each(|i, x| {
                if !x.is_nan() && w[i] > 0.0 {
                    pairs.push((x, w[i]));
                }
            });
            cuts_of_pairs(pairs, max_bins)
        }
    };
    match cuts {
        Cuts::Distinct(values) => midpoints(&values),
        Cuts::Quantiles(t) => t,
    }
}

/// What the values of a feature give.
pub(super) enum Cuts {
    /// At most `max_bins` distinct values, increasing: one bin each.
    Distinct(Vec<f64>),
    /// More: the weighted-quantile thresholds.
    Quantiles(Vec<f64>),
}

/// Thresholds at the midpoints between successive distinct values.
pub(super) fn midpoints(values: &[f64]) -> Vec<f64> {
    values.windows(2).map(|p| midpoint(p[0], p[1])).collect()
}

/// [`Cuts`] of unit-weight non-missing values (any order; sorted here, in place).
pub(super) fn cuts_of_values(mut xs: Vec<f64>, max_bins: usize) -> Cuts {
    // Unit weights: sort the bare values (half the bytes of (value, weight) pairs) and count;
    // counts are exact integers, the same as summing ones in any order.
    sort_total(&mut xs);
    cuts_of_sorted(|f| runs(xs.iter().map(|&x| (x, 1.0)), f), max_bins)
}

/// Sorts `xs` in [`f64::total_cmp`] order by sorting the integers that order compares (a
/// primitive integer sort instead of a comparator: a comparator sort costs a third of a small fit's binning). Values
/// equal under `total_cmp` have equal bits, so the result is `sort_unstable_by(f64::total_cmp)`'s
/// bit for bit.
pub(super) fn sort_total(xs: &mut [f64]) {
    // `total_cmp`'s key: negative values get their magnitude bits flipped (an involution).
    let key = |b: u64| (b ^ ((((b as i64) >> 63) as u64) >> 1)) as i64;
    let mut keys: Vec<i64> = xs.iter().map(|x| key(x.to_bits())).collect();
    keys.sort_unstable();
    for (x, &k) in xs.iter_mut().zip(&keys) {
        *x = f64::from_bits(key(k as u64) as u64);
    }
}

/// The merge of two lists in [`f64::total_cmp`] order, in that order (values equal under it have
/// equal bits, so the result is that of sorting the concatenation).
pub(super) fn merge_sorted(a: Vec<f64>, b: Vec<f64>) -> Vec<f64> {
    if b.is_empty() {
        return a;
    }
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if b[j].total_cmp(&a[i]).is_lt() {
            out.push(b[j]);
            j += 1;
        } else {
            out.push(a[i]);
            i += 1;
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

/// [`Cuts`] of non-missing values with positive weights (any order; sorted here, in place).
pub(super) fn cuts_of_pairs(mut pairs: Vec<(f64, f64)>, max_bins: usize) -> Cuts {
    // Stable: the weights of one value are summed in row order.
    pairs.sort_by(|a, b| a.0.total_cmp(&b.0));
    cuts_of_sorted(|f| runs(pairs.iter().copied(), f), max_bins)
}

/// Calls `f(value, total weight)` for each distinct value of the increasing `(value, weight)`
/// sequence, in order; −0 and +0 are one value. The weights of a value are summed left to right.
pub(super) fn runs(sorted: impl Iterator<Item = (f64, f64)>, mut f: impl FnMut(f64, f64)) {
    let mut run: Option<(f64, f64)> = None;
    for (x, wt) in sorted {
        match &mut run {
            Some(r) if r.0 == x => r.1 += wt,
            _ => {
                if let Some((rx, rw)) = run {
                    f(rx, rw);
                }
                run = Some((x, wt));
            }
        }
    }
    if let Some((rx, rw)) = run {
        f(rx, rw);
    }
}

/// [`Cuts`] from the distinct values of increasing data, which `each` visits (in two passes, so
/// no list of distinct values is kept: it could be as long as the data).
pub(super) fn cuts_of_sorted(each: impl Fn(&mut dyn FnMut(f64, f64)), max_bins: usize) -> Cuts {
    let (mut count, mut total) = (0usize, 0.0);
    each(&mut |_, wt| {
        count += 1;
        total += wt;
    });
    if count <= max_bins {
        let mut values = Vec::with_capacity(count);
        each(&mut |x, _| values.push(x));
        return Cuts::Distinct(values);
    }
    // Weighted quantiles: cut whenever the cumulative weight passes the next multiple of
    // total / max_bins (a distinct value is never split).
    let mut out = Vec::with_capacity(max_bins - 1);
    let mut acc = 0.0;
    let mut prev: Option<(f64, f64)> = None;
    each(&mut |x, wt| {
        if let Some((px, pw)) = prev {
            acc += pw;
            let next_cut = total * (out.len() + 1) as f64 / max_bins as f64;
            if acc >= next_cut && out.len() < max_bins - 1 {
                out.push(midpoint(px, x));
            }
        }
        prev = Some((x, wt));
    });
    Cuts::Quantiles(out)
}

/// The distinct usable values of the whole column (increasing), starting from the increasing
/// `known` ones, or `None` as soon as there are more than `max_bins`. One binary search per row.
pub(super) fn all_distinct_values_if_few(
    v: NumericView<'_>,
    w: Option<&[f64]>,
    mut known: Vec<f64>,
    max_bins: usize,
) -> Option<Vec<f64>> {
    let mut last = f64::NAN; // runs of one value skip the search
    let mut full = false;
    v.for_each(|i, x| {
        if full || x.is_nan() || w.is_some_and(|w| w[i] <= 0.0) {
            return;
        }
        if x != last && !insert_distinct(&mut known, x, max_bins) {
            full = true;
        }
        last = x;
    });
    (!full).then_some(known)
}
