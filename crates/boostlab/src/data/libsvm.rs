//! LIBSVM / SVMlight sparse reader: `label idx:val idx:val ... # comment`.
//!
//! Labels are any token (binary or multi-class) or a comma-separated list of label ids
//! (`1,3 idx:val`: multi-label). Indices are one-based unless an index 0 appears (or
//! [`LibsvmOptions::zero_based`] says otherwise). Absent entries are 0, as in the format; the
//! matrix is densified column by column.
//!
//! Limits (no byte sequence may make the reader allocate without bound): a feature index
//! above [`MAX_LIBSVM_INDEX`] is refused while parsing, and the dense matrix may hold at most
//! [`dense_cell_budget`] cells (`max(2^24, 64 × (entries + rows))`) and, from its own indices, at
//! most `max(4,096, 64 × (entries + rows))` features — so the memory of the dense matrix and the
//! per-feature work stay within a fixed multiple of the file's size, whatever indices the file
//! names. A feature count given by the caller (a validated model's, when predicting) sets the
//! width without these two limits.

use std::io::BufRead;
use std::path::Path;

use super::{Column, Dataset, Features, Target};
use crate::error::{shown, Error, Result};

/// The largest feature index a LIBSVM file may use: 2^24 − 1 = 16,777,215.
pub const MAX_LIBSVM_INDEX: usize = (1 << 24) - 1;

/// Cells (rows × features) the dense matrix of a LIBSVM file with `entries` `index:value` pairs on
/// `rows` rows may hold: `max(2^24, 64 × (entries + rows))`, i.e. 128 MiB of `f64` for any small
/// file and otherwise at most 64 cells per entry or row read.
pub fn dense_cell_budget(entries: usize, rows: usize) -> usize {
    (1usize << 24).max(entries.saturating_add(rows).saturating_mul(64))
}

/// Features a LIBSVM file may always use, whatever its number of entries (see the module docs).
const MIN_FEATURE_BUDGET: usize = 4096;

/// Options of [`read_libsvm`].
#[derive(Debug, Clone, Default)]
pub struct LibsvmOptions {
    /// Whether indices start at 0. By default detected: zero-based iff some index is 0.
    pub zero_based: Option<bool>,
    /// Number of features; by default the largest index seen (a model's count when predicting).
    pub n_features: Option<usize>,
    /// Name of the positive class for binary labels (see [`super::order_classes`]).
    pub positive: Option<String>,
    /// Treat the labels as multi-label id lists even without commas. By default detected: any
    /// comma makes the file multi-label.
    pub multilabel: bool,
}

/// Reads a LIBSVM file.
pub fn read_libsvm(path: impl AsRef<Path>, opts: &LibsvmOptions) -> Result<Dataset> {
    let path = path.as_ref();
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    read_libsvm_from(std::io::BufReader::new(file), &path.display().to_string(), opts)
}

/// Reads LIBSVM text from any reader; `name` is used in error messages.
pub fn read_libsvm_from(reader: impl BufRead, name: &str, opts: &LibsvmOptions) -> Result<Dataset> {
    let perr = |line: usize, column: Option<String>, message: String| Error::Parse {
        file: name.to_string(),
        line,
        column,
        message,
    };
    let mut labels: Vec<String> = Vec::new();
    let mut entries: Vec<Vec<(usize, f64)>> = Vec::new();
    let mut max_index = 0usize;
    let mut n_entries = 0usize;
    let mut saw_zero = false;
    for (ln, line) in reader.lines().enumerate() {
        let line_no = ln + 1;
        let line = line.map_err(|e| perr(line_no, None, e.to_string()))?;
        let content = line.split('#').next().unwrap_or("").trim();
        if content.is_empty() {
            continue;
        }
        let mut tokens = content.split_whitespace();
        let label = tokens.next().unwrap_or_default();
        if label.contains(':') {
            return Err(perr(line_no, None, format!("line starts with '{}' instead of a label", shown(label))));
        }
        let mut row = Vec::new();
        let mut last: Option<usize> = None;
        for tok in tokens {
            let (i, v) = tok
                .split_once(':')
                .ok_or_else(|| perr(line_no, None, format!("'{}' is not of the form index:value", shown(tok))))?;
            let idx: usize = i.parse().map_err(|_| {
                perr(
                    line_no,
                    Some(i.to_string()),
                    format!("feature index '{}' is not a non-negative integer", shown(i)),
                )
            })?;
            if idx > MAX_LIBSVM_INDEX {
                return Err(perr(
                    line_no,
                    Some(i.to_string()),
                    format!("feature index {idx} above the largest supported index {MAX_LIBSVM_INDEX}"),
                ));
            }
            let val: f64 = v
                .parse()
                .map_err(|_| perr(line_no, Some(i.to_string()), format!("value '{}' is not a number", shown(v))))?;
            if !val.is_finite() {
                return Err(perr(line_no, Some(i.to_string()), format!("value '{}' is not finite", shown(v))));
            }
            if last.is_some_and(|l| idx <= l) {
                return Err(perr(line_no, Some(i.to_string()), "feature indices must be strictly increasing".into()));
            }
            last = Some(idx);
            saw_zero |= idx == 0;
            max_index = max_index.max(idx);
            row.push((idx, val));
            n_entries += 1;
        }
        labels.push(label.to_string());
        entries.push(row);
    }
    if labels.is_empty() {
        return Err(perr(1, None, "empty file: no data lines".into()));
    }
    let zero_based = opts.zero_based.unwrap_or(saw_zero);
    if !zero_based && saw_zero {
        return Err(perr(1, None, "index 0 found in a one-based file".into()));
    }
    let offset = usize::from(!zero_based);
    let seen = if entries.iter().all(Vec::is_empty) { 0 } else { max_index + 1 - offset };
    let d = opts.n_features.unwrap_or(seen);
    if d == 0 {
        return Err(perr(
            1,
            None,
            "no features: no line has an index:value entry (a LIBSVM line is `label index:value index:value ...`)"
                .into(),
        ));
    }
    if seen > d {
        return Err(perr(1, None, format!("feature index {max_index} beyond the expected {d} features")));
    }
    let n = labels.len();
    // Limits on the dense matrix, checked before allocating it: the width the file's
    // own indices ask for, and its cells. A caller's feature count (a validated model's) is trusted.
    let budget = dense_cell_budget(n_entries, n);
    let feature_budget = MIN_FEATURE_BUDGET.max(n_entries.saturating_add(n).saturating_mul(64));
    if seen > feature_budget {
        return Err(perr(
            1,
            None,
            format!(
                "feature index {max_index} gives {seen} features for {n_entries} entries on {n} rows: a LIBSVM file \
                 may use at most max(4096, 64 × (entries + rows)) = {feature_budget} features"
            ),
        ));
    }
    if n.saturating_mul(seen) > budget {
        return Err(perr(
            1,
            None,
            format!(
                "{n} rows × {seen} features = {} dense cells, above the limit of {budget} (max(2^24, 64 × (entries + \
                 rows)) for {n_entries} entries); the data are too sparse to densify",
                n.saturating_mul(seen)
            ),
        ));
    }
    let mut cols = vec![vec![0.0; n]; d];
    for (r, row) in entries.iter().enumerate() {
        for &(i, v) in row {
            cols[i - offset][r] = v;
        }
    }
    let features = Features {
        names: (0..d).map(|f| format!("f{}", f + offset)).collect(),
        columns: cols.into_iter().map(Column::Numeric).collect(),
    };
    let multilabel = opts.multilabel || labels.iter().any(|l| l.contains(','));
    let target = if multilabel {
        let sets: Vec<Vec<String>> =
            labels.iter().map(|l| l.split(',').filter(|s| !s.is_empty()).map(str::to_string).collect()).collect();
        let mut names: Vec<String> = sets.iter().flatten().cloned().collect();
        names.sort();
        names.dedup();
        let names = super::order_classes(names, None)?;
        let k = names.len();
        let mut y = vec![0u8; n * k];
        for (r, s) in sets.iter().enumerate() {
            for l in s {
                if let Some(p) = names.iter().position(|x| x == l) {
                    y[r * k + p] = 1;
                }
            }
        }
        Target::Multilabel { y, labels: names }
    } else {
        Target::from_strings(&labels, opts.positive.as_deref())?
    };
    Dataset::new(features, Some(target), None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_without_features_says_so() {
        let e = read_libsvm_from("1\n0\n1\n".as_bytes(), "x.svm", &LibsvmOptions::default()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "x.svm:1: no features: no line has an index:value entry (a LIBSVM line is `label index:value \
             index:value ...`)"
        );
    }

    #[test]
    fn long_tokens_are_shown_shortened() {
        let long = "7".repeat(100_000);
        let text = format!("1 1:{long}x\n");
        let e = read_libsvm_from(text.as_bytes(), "x.svm", &LibsvmOptions::default()).unwrap_err().to_string();
        assert!(e.ends_with("… (100001 characters)' is not a number"), "{}", &e[..200.min(e.len())]);
        assert!(e.len() < 200, "{} characters", e.len());
    }

    #[test]
    fn one_based_with_comments() {
        let text = "# header comment\n+1 1:0.5 3:2 # trailing\n-1 2:1\n";
        let d = read_libsvm_from(text.as_bytes(), "x.svm", &LibsvmOptions::default()).unwrap();
        assert_eq!(d.n_features(), 3);
        assert_eq!(d.features.columns[0], Column::Numeric(vec![0.5, 0.0]));
        assert_eq!(d.features.columns[2], Column::Numeric(vec![2.0, 0.0]));
        assert_eq!(d.target.unwrap().names(), &["-1", "+1"]);
    }

    #[test]
    fn zero_based_and_multilabel() {
        let text = "1,3 0:1 2:1\n2 1:4\n";
        let d = read_libsvm_from(text.as_bytes(), "x.svm", &LibsvmOptions::default()).unwrap();
        assert_eq!(d.n_features(), 3);
        assert_eq!(
            d.target,
            Some(Target::Multilabel { y: vec![1, 0, 1, 0, 1, 0], labels: vec!["1".into(), "2".into(), "3".into()] })
        );
    }

    #[test]
    fn errors() {
        let e = read_libsvm_from("1 1:a\n".as_bytes(), "x.svm", &LibsvmOptions::default()).unwrap_err().to_string();
        assert!(e.contains("x.svm:1") && e.contains("not a number"), "{e}");
        let e = read_libsvm_from("1 2:1 1:1\n".as_bytes(), "x.svm", &LibsvmOptions::default()).unwrap_err().to_string();
        assert!(e.contains("increasing"), "{e}");
        let e = read_libsvm_from("".as_bytes(), "x.svm", &LibsvmOptions::default()).unwrap_err().to_string();
        assert!(e.contains("empty"), "{e}");
        let e = read_libsvm_from("1 1:inf\n".as_bytes(), "x.svm", &LibsvmOptions::default()).unwrap_err().to_string();
        assert!(e.contains("not finite"), "{e}");
    }
}
