//! Fold assignments for k-fold cross-validation (docs/explanation/experiments.md#experiments): seeded stratified folds, or a
//! user-given assignment read from a file so results can be compared fold by fold with other code.
//!
//! A fold assignment is a `Vec<usize>` with one fold id in `0..k` per data row.
//!
//! # The stratified assignment rule
//!
//! [`stratified_fold_ids`] is fully determined by the labels, `k` and the seed:
//!
//! 1. Rows are grouped by label; groups are taken in ascending label order, and inside a group
//!    the rows start in ascending row order.
//! 2. One `ChaCha8Rng::seed_from_u64(seed)` shuffles each group in turn (Fisher–Yates, as
//!    `rand`'s `SliceRandom::shuffle`), in that group order.
//! 3. The shuffled groups are concatenated and dealt round-robin: the j-th row of the
//!    concatenation goes to fold `j mod k`. The deal continues across groups (it does not restart
//!    at fold 0 for each class).
//!
//! Consequences (tested): each class has either ⌊n_c/k⌋ or ⌈n_c/k⌉ rows in every fold (within one
//! example of the ideal n_c/k), fold sizes differ by at most one, and every row is in exactly one
//! fold.

use std::path::Path;

use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::error::{Error, Result};

/// Seeded stratified k-fold assignment: one fold id in `0..k` per row of `labels`.
///
/// `labels` may be any ordered label type (class indices, or e.g. `y > 0.0` for ±1 labels).
/// See the [module docs](self) for the exact assignment rule.
///
/// `k`: number of folds, valid range `2 ..= labels.len()` (no default here; experiments default
/// to 10). A class with fewer than `k` rows is simply absent from some folds.
pub fn stratified_fold_ids<L: Ord>(labels: &[L], k: usize, seed: u64) -> Result<Vec<usize>> {
    let n = labels.len();
    if k < 2 || k > n {
        return Err(Error::param("folds", format!("an integer in 2..={n} (the number of rows)"), k));
    }
    // Step 1: rows in ascending label order, ties (same class) in ascending row order.
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| labels[a].cmp(&labels[b]));
    // Step 2: shuffle each class group with one RNG, in ascending label order.
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut start = 0;
    while start < n {
        let mut end = start + 1;
        while end < n && labels[order[end]] == labels[order[start]] {
            end += 1;
        }
        order[start..end].shuffle(&mut rng);
        start = end;
    }
    // Step 3: deal round-robin, continuing across classes.
    let mut ids = vec![0usize; n];
    for (j, &row) in order.iter().enumerate() {
        ids[row] = j % k;
    }
    Ok(ids)
}

/// Reads a user-given fold assignment: one integer fold id per data row, one per line.
///
/// Ids are 0-based (`0..k`) or 1-based (`1..=k`; recognised when no id is 0, and shifted down by
/// one). Surrounding whitespace and trailing empty lines are ignored; every other line must be one
/// non-negative integer. Errors name the file and line for a bad integer, and the file for a count
/// different from `n_rows`, fewer than 2 folds, or an empty fold (a gap in the ids).
pub fn fold_ids_from_file(path: &Path, n_rows: usize) -> Result<Vec<usize>> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    let file = path.display().to_string();
    let ids = parse_fold_ids(&text, &file)?;
    if ids.len() != n_rows {
        return Err(Error::InvalidData(format!(
            "{file}: {} fold ids for {n_rows} data rows (one id per row is required)",
            ids.len()
        )));
    }
    Ok(ids)
}

/// Parses the text of a fold file (see [`fold_ids_from_file`]) without checking the row count.
///
/// `file` names the source in error messages.
pub fn parse_fold_ids(text: &str, file: &str) -> Result<Vec<usize>> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text).trim_end();
    let mut raw = Vec::new();
    if !text.is_empty() {
        for (i, line) in text.lines().enumerate() {
            let field = line.trim();
            let id: usize = field.parse().map_err(|_| Error::Parse {
                file: file.to_string(),
                line: i + 1,
                column: None,
                message: format!("fold id must be a non-negative integer, got '{field}'"),
            })?;
            raw.push((id, i + 1));
        }
    }
    let n = raw.len();
    if n < 2 {
        return Err(Error::InvalidData(format!("{file}: {n} fold ids; at least 2 rows in 2 folds are required")));
    }
    let one_based = raw.iter().all(|&(id, _)| id != 0);
    let mut ids = Vec::with_capacity(n);
    for &(id, line) in &raw {
        let id = if one_based { id - 1 } else { id };
        if id >= n {
            return Err(Error::Parse {
                file: file.to_string(),
                line,
                column: None,
                message: format!(
                    "fold id {} leaves some fold empty: ids must be 0..k−1 (or 1..k), k ≤ {n} rows",
                    if one_based { id + 1 } else { id }
                ),
            });
        }
        ids.push(id);
    }
    let k = n_folds(&ids);
    if k < 2 {
        return Err(Error::InvalidData(format!("{file}: all rows are in one fold; at least 2 folds are required")));
    }
    let mut sizes = vec![0usize; k];
    for &id in &ids {
        sizes[id] += 1;
    }
    if let Some(empty) = sizes.iter().position(|&s| s == 0) {
        let shown = if one_based { empty + 1 } else { empty };
        return Err(Error::InvalidData(format!(
            "{file}: fold {shown} is empty; fold ids must be 0..k−1 or 1..k without gaps"
        )));
    }
    Ok(ids)
}

/// Number of folds of an assignment: the largest id plus one (0 for no rows).
pub fn n_folds(fold_ids: &[usize]) -> usize {
    fold_ids.iter().max().map_or(0, |&m| m + 1)
}

/// Splits rows into (train, test) for one fold: test = rows whose id is `fold`, train = the rest,
/// both in ascending row order. A `fold` absent from the assignment gives an empty test set.
pub fn train_test_indices(fold_ids: &[usize], fold: usize) -> (Vec<usize>, Vec<usize>) {
    let mut train = Vec::with_capacity(fold_ids.len());
    let mut test = Vec::new();
    for (i, &f) in fold_ids.iter().enumerate() {
        if f == fold {
            test.push(i);
        } else {
            train.push(i);
        }
    }
    (train, test)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn counts(labels: &[u32], ids: &[usize], k: usize, n_classes: usize) -> Vec<Vec<usize>> {
        let mut c = vec![vec![0usize; k]; n_classes];
        for (l, &f) in labels.iter().zip(ids) {
            c[*l as usize][f] += 1;
        }
        c
    }

    #[test]
    fn small_example_is_balanced() {
        // 7 of class 0, 3 of class 1, k = 3.
        let labels = [0u32, 0, 1, 0, 0, 1, 0, 0, 1, 0];
        let ids = stratified_fold_ids(&labels, 3, 7).expect("valid");
        let c = counts(&labels, &ids, 3, 2);
        // Class 0 (7 rows) is dealt first: folds 0,1,2,0,1,2,0 → 3,2,2.
        assert_eq!(c[0], vec![3, 2, 2]);
        // Class 1 continues the deal at fold 1: 1,2,0 → 1,1,1.
        assert_eq!(c[1], vec![1, 1, 1]);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn stratified_properties(
            labels in proptest::collection::vec(0u32..4, 2..300),
            k_raw in 2usize..12,
            seed in any::<u64>(),
        ) {
            let n = labels.len();
            let k = k_raw.min(n);
            let ids = stratified_fold_ids(&labels, k, seed).expect("valid k");
            prop_assert_eq!(ids.len(), n);
            prop_assert!(ids.iter().all(|&f| f < k));
            // Class proportions within one example of ideal.
            let c = counts(&labels, &ids, k, 4);
            for class in &c {
                let n_c: usize = class.iter().sum();
                for &x in class {
                    prop_assert!(x == n_c / k || x == n_c.div_ceil(k), "{:?}", class);
                }
            }
            // Fold sizes differ by at most one; train/test cover every row exactly once.
            let mut seen = vec![0usize; n];
            let mut sizes = Vec::new();
            for f in 0..k {
                let (train, test) = train_test_indices(&ids, f);
                prop_assert_eq!(train.len() + test.len(), n);
                for &i in &test {
                    seen[i] += 1;
                }
                sizes.push(test.len());
            }
            prop_assert!(seen.iter().all(|&s| s == 1));
            let (lo, hi) = (sizes.iter().min().copied(), sizes.iter().max().copied());
            prop_assert!(hi.unwrap_or(0) - lo.unwrap_or(0) <= 1);
            // Deterministic per seed.
            prop_assert_eq!(&ids, &stratified_fold_ids(&labels, k, seed).expect("valid"));
        }
    }

    #[test]
    fn different_seeds_differ() {
        let labels: Vec<u32> = (0..200).map(|i| (i % 3 == 0) as u32).collect();
        let a = stratified_fold_ids(&labels, 10, 1).expect("valid");
        let b = stratified_fold_ids(&labels, 10, 2).expect("valid");
        assert_ne!(a, b);
        assert_eq!(a, stratified_fold_ids(&labels, 10, 1).expect("valid"));
    }

    #[test]
    fn works_with_signed_binary_labels() {
        let y = [1.0, -1.0, 1.0, 1.0, -1.0, -1.0];
        let pos: Vec<bool> = y.iter().map(|&v| v > 0.0).collect();
        let ids = stratified_fold_ids(&pos, 3, 0).expect("valid");
        let c = counts(&pos.iter().map(|&p| p as u32).collect::<Vec<_>>(), &ids, 3, 2);
        assert_eq!(c, vec![vec![1, 1, 1], vec![1, 1, 1]]);
    }

    #[test]
    fn bad_k_is_rejected() {
        assert!(stratified_fold_ids(&[0u32, 1, 0], 1, 0).is_err());
        assert!(stratified_fold_ids(&[0u32, 1, 0], 4, 0).is_err());
        assert!(stratified_fold_ids::<u32>(&[], 2, 0).is_err());
    }

    #[test]
    fn fold_file_zero_and_one_based() {
        assert_eq!(parse_fold_ids("0\n1\n1\n0\n", "f").expect("ok"), vec![0, 1, 1, 0]);
        assert_eq!(parse_fold_ids("\u{feff}1\r\n2\r\n3\r\n1\r\n\r\n", "f").expect("ok"), vec![0, 1, 2, 0]);
    }

    #[test]
    fn fold_file_errors_are_clear() {
        let e = parse_fold_ids("0\n1\nx\n", "folds.txt").expect_err("bad int");
        let msg = e.to_string();
        assert!(msg.contains("folds.txt:3") && msg.contains("'x'"), "{msg}");
        let e = parse_fold_ids("0\n-1\n", "f").expect_err("negative");
        assert!(e.to_string().contains("f:2"), "{e}");
        let e = parse_fold_ids("0\n0\n0\n", "f").expect_err("one fold");
        assert!(e.to_string().contains("one fold"), "{e}");
        let e = parse_fold_ids("0\n2\n2\n0\n", "f").expect_err("gap");
        assert!(e.to_string().contains("fold 1 is empty"), "{e}");
        let e = parse_fold_ids("1\n3\n3\n", "f").expect_err("gap 1-based");
        assert!(e.to_string().contains("fold 2 is empty"), "{e}");
        let e = parse_fold_ids("0\n1\n99\n", "f").expect_err("too big");
        assert!(e.to_string().contains("f:3"), "{e}");
        assert!(parse_fold_ids("", "f").is_err());
        assert!(parse_fold_ids("0\n\n1\n", "f").is_err(), "blank line inside the file");
    }

    #[test]
    fn fold_file_row_count_is_checked() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("folds.txt");
        std::fs::write(&p, "0\n1\n0\n1\n").expect("write");
        assert_eq!(fold_ids_from_file(&p, 4).expect("ok"), vec![0, 1, 0, 1]);
        let e = fold_ids_from_file(&p, 5).expect_err("wrong count");
        assert!(e.to_string().contains("4 fold ids for 5 data rows"), "{e}");
        let e = fold_ids_from_file(&dir.path().join("missing"), 4).expect_err("missing");
        assert!(matches!(e, Error::Io { .. }));
    }

    #[test]
    fn train_test_split() {
        let (train, test) = train_test_indices(&[0, 1, 2, 1, 0], 1);
        assert_eq!(train, vec![0, 2, 4]);
        assert_eq!(test, vec![1, 3]);
        assert_eq!(n_folds(&[0, 1, 2, 1, 0]), 3);
    }
}
