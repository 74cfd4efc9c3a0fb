//! CSV reader with per-column type inference (like the t-AdaBoost authors' tool): a column is
//! numeric when every non-missing value parses as a number, otherwise categorical. Missing values
//! are empty fields, `?`, `NA` and `NaN`.

use std::io::Read;
use std::path::Path;

use super::fast_csv::{
    check_header_width, too_many_columns_message, unterminated_quote_message, QuoteScan, MAX_CSV_COLUMNS,
};
use super::{Column, Dataset, FeatureKind, Features, Target, MISSING_CODE};
use crate::error::{shown, Error, Result};

/// Which column(s) hold the label.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum LabelSelector {
    /// The last column (the default).
    #[default]
    Last,
    /// The column with this name.
    Name(String),
    /// No label column (prediction data).
    None,
    /// Several 0/1 columns, one per label (multi-label data).
    Multi(Vec<String>),
    /// Every column whose name starts with this prefix is a 0/1 label column (multi-label data),
    /// e.g. `label_` for `label_0, label_1, ...`.
    Prefix(String),
}

/// Options of [`read_csv`].
#[derive(Debug, Clone, Default)]
pub struct CsvOptions {
    /// The label column(s). By default the last column.
    pub label: LabelSelector,
    /// Name of the positive class for binary labels. By default the rule of
    /// [`super::order_classes`].
    pub positive: Option<String>,
    /// Name of a sample-weight column. By default none.
    pub weight: Option<String>,
    /// Force feature kinds by name (e.g. from a model's schema). Columns not listed are inferred.
    pub kinds: Option<Vec<(String, FeatureKind)>>,
    /// Read at most this many data rows. By default all.
    pub max_rows: Option<usize>,
    /// When the label column is missing from the file, read the data without a target instead of
    /// failing (prediction). By default false.
    pub label_optional: bool,
    /// Refuse a column inferred categorical with more levels than this (training reads pass
    /// `max_bins`), naming its first value that is not a number: in a numeric column, that value is
    /// usually a typo. By default none: the binning refuses such a column later, without the value.
    pub max_levels: Option<usize>,
}

/// The message for a categorical feature with more levels than `max_bins`; `first`: the line and
/// text of its first value that is not a number, when the column was inferred categorical.
pub(super) fn too_many_levels(name: &str, n_levels: usize, max_bins: usize, first: Option<(usize, &str)>) -> String {
    let why = first.map_or(String::new(), |(line, text)| {
        format!(
            "; it is categorical because of '{}' at line {line}, its first value that is not a number (fix that \
             value if the column is numeric)",
            shown(text)
        )
    });
    format!(
        "categorical feature '{}' has {n_levels} categories, more than max_bins = {max_bins}{why}; else raise \
         max_bins, up to 65535, or recode the feature",
        shown(name)
    )
}

/// The CSV reader's missing-value markers.
pub(super) fn is_missing(s: &str) -> bool {
    matches!(s, "" | "?" | "NA" | "na" | "NaN" | "nan" | "NAN" | "N/A")
}

/// The column names of a CSV file's header.
pub fn csv_header(path: impl AsRef<Path>) -> Result<Vec<String>> {
    let path = path.as_ref();
    check_header_width(path)?;
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let mut rdr = csv::ReaderBuilder::new().has_headers(false).flexible(true).from_reader(file);
    match rdr.records().next() {
        Some(Ok(r)) => Ok(r.iter().map(|h| h.trim_start_matches('\u{feff}').trim().to_string()).collect()),
        Some(Err(e)) => {
            Err(Error::Parse { file: path.display().to_string(), line: 1, column: None, message: e.to_string() })
        }
        None => Err(Error::Parse {
            file: path.display().to_string(),
            line: 1,
            column: None,
            message: "empty file: no header row".into(),
        }),
    }
}

/// A reader that shows every byte it passes on to a [`QuoteScan`].
struct Scanned<R> {
    inner: R,
    scan: QuoteScan,
}

impl<R: Read> Read for Scanned<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.scan.feed(&buf[..n]);
        if self.scan.header_fields() > MAX_CSV_COLUMNS {
            return Err(std::io::Error::other(too_many_columns_message()));
        }
        Ok(n)
    }
}

/// Reads a CSV file with a header.
pub fn read_csv(path: impl AsRef<Path>, opts: &CsvOptions) -> Result<Dataset> {
    let path = path.as_ref();
    // Before the `csv` crate holds the header: a header too wide is refused from a streaming count
    // (from any other reader, `read_csv_from` refuses it once the count passes the limit).
    check_header_width(path)?;
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    read_csv_from(std::io::BufReader::new(file), &path.display().to_string(), opts)
}

/// Reads CSV text from any reader; `name` is used in error messages.
pub fn read_csv_from(reader: impl Read, name: &str, opts: &CsvOptions) -> Result<Dataset> {
    let perr = |line: usize, column: Option<&str>, message: String| Error::Parse {
        file: name.to_string(),
        line,
        column: column.map(str::to_string),
        message,
    };
    let scanned = Scanned { inner: reader, scan: QuoteScan::default() };
    let mut rdr = csv::ReaderBuilder::new().has_headers(false).flexible(true).from_reader(scanned);
    // A quote that never closes makes the `csv` crate read the rest of the text as one field:
    // when the reader is at the end, that is the error to report.
    let unterminated = |rdr: &mut csv::Reader<Scanned<_>>| {
        let at_end = matches!(rdr.read_record(&mut csv::StringRecord::new()), Ok(false));
        at_end.then(|| rdr.get_ref().scan.unterminated()).flatten()
    };
    let mut header = csv::StringRecord::new();
    match rdr.read_record(&mut header) {
        Ok(true) => {}
        Ok(false) => return Err(perr(1, None, "empty file: no header row".into())),
        Err(e) => return Err(perr(1, None, e.to_string())),
    }
    let names: Vec<String> = header
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let h = if i == 0 { h.trim_start_matches('\u{feff}') } else { h };
            h.trim().to_string()
        })
        .collect();
    drop(header);
    let ncol = names.len();
    {
        let mut seen = std::collections::HashSet::new();
        for (i, n) in names.iter().enumerate() {
            if n.is_empty() {
                return Err(perr(1, Some(&format!("#{}", i + 1)), "empty column name in the header".into()));
            }
            if !seen.insert(n) {
                return Err(perr(1, Some(n), "duplicate column name in the header".into()));
            }
        }
    }
    // Column-wise raw strings and the line of each row.
    let mut raw: Vec<Vec<String>> = vec![Vec::new(); ncol];
    let mut lines: Vec<usize> = Vec::new();
    let mut rec = csv::StringRecord::new();
    loop {
        if opts.max_rows.is_some_and(|m| lines.len() >= m) {
            break;
        }
        match rdr.read_record(&mut rec) {
            Ok(true) => {}
            Ok(false) => {
                if let Some((open, _)) = unterminated(&mut rdr) {
                    return Err(perr(open, None, unterminated_quote_message(open)));
                }
                break;
            }
            Err(e) => {
                let line = e.position().map_or(0, |p| p.line() as usize);
                return Err(perr(line, None, e.to_string()));
            }
        }
        let line = rec.position().map_or(lines.len() + 2, |p| p.line() as usize);
        if rec.len() == 1 && rec.get(0).is_some_and(|s| s.trim().is_empty()) {
            continue; // blank line
        }
        if rec.len() != ncol {
            if let Some((open, _)) = unterminated(&mut rdr) {
                return Err(perr(open, None, unterminated_quote_message(open)));
            }
            return Err(perr(line, None, format!("expected {ncol} fields (as in the header), found {}", rec.len())));
        }
        for (c, field) in rec.iter().enumerate() {
            raw[c].push(field.trim().to_string());
        }
        lines.push(line);
    }
    if lines.is_empty() {
        return Err(perr(1, None, "no data rows after the header".into()));
    }
    let col_index = |n: &str| names.iter().position(|x| x == n);

    // Which columns are labels.
    let label_cols: Vec<usize> = match &opts.label {
        LabelSelector::Last => vec![ncol - 1],
        LabelSelector::None => vec![],
        LabelSelector::Name(n) => match col_index(n) {
            Some(c) => vec![c],
            None if opts.label_optional => vec![],
            None => {
                return Err(perr(
                    1,
                    Some(n),
                    format!("no label column '{}' in the header {}", shown(n), shown(&format!("{names:?}"))),
                ))
            }
        },
        LabelSelector::Multi(list) => {
            let mut v = Vec::new();
            for n in list {
                match col_index(n) {
                    Some(c) => v.push(c),
                    None if opts.label_optional => return read_without(names, raw, lines, &[], opts, name),
                    None => return Err(perr(1, Some(n), "no such label column in the header".into())),
                }
            }
            v
        }
        LabelSelector::Prefix(p) => {
            let v: Vec<usize> = (0..ncol).filter(|&c| names[c].starts_with(p.as_str())).collect();
            if v.is_empty() && !opts.label_optional {
                return Err(perr(1, None, format!("no column name starts with the label prefix '{}'", shown(p))));
            }
            v
        }
    };
    let weight_col = match &opts.weight {
        None => None,
        Some(w) => Some(col_index(w).ok_or_else(|| perr(1, Some(w), "no such weight column in the header".into()))?),
    };
    if weight_col.is_some_and(|w| label_cols.contains(&w)) {
        return Err(Error::param("weight", "a column other than the label", opts.weight.clone().unwrap_or_default()));
    }
    let multi = matches!(opts.label, LabelSelector::Multi(_) | LabelSelector::Prefix(_));
    let target = if label_cols.is_empty() {
        None
    } else if multi {
        let k = label_cols.len();
        let n = lines.len();
        let mut y = vec![0u8; n * k];
        for (l, &c) in label_cols.iter().enumerate() {
            for r in 0..n {
                y[r * k + l] = match raw[c][r].as_str() {
                    "0" | "0.0" => 0,
                    "1" | "1.0" => 1,
                    other => {
                        return Err(perr(
                            lines[r],
                            Some(&names[c]),
                            format!("multi-label value '{}' is not 0 or 1", shown(other)),
                        ))
                    }
                };
            }
        }
        Some(Target::Multilabel { y, labels: label_cols.iter().map(|&c| names[c].clone()).collect() })
    } else {
        let c = label_cols[0];
        for (r, v) in raw[c].iter().enumerate() {
            if is_missing(v) {
                return Err(perr(
                    lines[r],
                    Some(&names[c]),
                    if v.to_lowercase() == "nan" { "NaN label".into() } else { "missing label".into() },
                ));
            }
        }
        Some(Target::from_strings(&raw[c], opts.positive.as_deref())?)
    };
    let sample_weight = match weight_col {
        None => None,
        Some(c) => {
            let mut w = Vec::with_capacity(lines.len());
            for (r, v) in raw[c].iter().enumerate() {
                match v.parse::<f64>() {
                    Ok(x) if x.is_finite() && x >= 0.0 => w.push(x),
                    _ => {
                        return Err(perr(
                            lines[r],
                            Some(&names[c]),
                            format!("sample weight '{}' is not a finite number ≥ 0", shown(v)),
                        ))
                    }
                }
            }
            Some(w)
        }
    };
    let mut skip = label_cols.clone();
    skip.extend(weight_col);
    let features = build_features(&names, raw, &lines, &skip, opts, name)?;
    Dataset::new(features, target, sample_weight)
}

fn read_without(
    names: Vec<String>,
    raw: Vec<Vec<String>>,
    lines: Vec<usize>,
    skip: &[usize],
    opts: &CsvOptions,
    name: &str,
) -> Result<Dataset> {
    let features = build_features(&names, raw, &lines, skip, opts, name)?;
    Dataset::new(features, None, None)
}

/// Feature columns from raw strings (`lines`: each row's file line, for errors).
pub(super) fn build_features(
    names: &[String],
    raw: Vec<Vec<String>>,
    lines: &[usize],
    skip: &[usize],
    opts: &CsvOptions,
    name: &str,
) -> Result<Features> {
    let mut fnames = Vec::new();
    let mut columns = Vec::new();
    for (c, values) in raw.into_iter().enumerate() {
        if skip.contains(&c) {
            continue;
        }
        let forced = opts.kinds.as_ref().and_then(|k| k.iter().find(|(n, _)| n == &names[c]).map(|(_, kind)| *kind));
        let parsed: Option<Vec<f64>> = if forced == Some(FeatureKind::Categorical) {
            None
        } else {
            values.iter().map(|v| if is_missing(v) { Some(f64::NAN) } else { v.parse::<f64>().ok() }).collect()
        };
        match parsed {
            Some(nums) => {
                if let Some(r) = nums.iter().position(|x| x.is_infinite()) {
                    return Err(Error::Parse {
                        file: name.into(),
                        line: lines[r],
                        column: Some(names[c].clone()),
                        message: format!("infinite value '{}'", shown(&values[r])),
                    });
                }
                columns.push(Column::Numeric(nums));
            }
            None => {
                if forced == Some(FeatureKind::Numeric) {
                    let r = values.iter().position(|v| !is_missing(v) && v.parse::<f64>().is_err()).unwrap_or(0);
                    return Err(Error::Parse {
                        file: name.into(),
                        line: lines[r],
                        column: Some(names[c].clone()),
                        message: format!(
                            "'{}' is not a number, but the model expects a numeric feature",
                            shown(&values[r])
                        ),
                    });
                }
                let mut levels: Vec<String> = values.iter().filter(|v| !is_missing(v)).cloned().collect();
                levels.sort();
                levels.dedup();
                if let Some(max) = opts.max_levels.filter(|&m| forced.is_none() && levels.len() > m) {
                    let r = values.iter().position(|v| !is_missing(v) && v.parse::<f64>().is_err()).unwrap_or(0);
                    return Err(Error::InvalidData(too_many_levels(
                        &names[c],
                        levels.len(),
                        max,
                        Some((lines[r], values[r].as_str())),
                    )));
                }
                let index: std::collections::HashMap<&str, u32> =
                    levels.iter().enumerate().map(|(i, l)| (l.as_str(), i as u32)).collect();
                let codes =
                    values.iter().map(|v| if is_missing(v) { MISSING_CODE } else { index[v.as_str()] }).collect();
                columns.push(Column::Categorical { codes, levels });
            }
        }
        fnames.push(names[c].clone());
    }
    Ok(Features { names: fnames, columns })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str, opts: &CsvOptions) -> Result<Dataset> {
        read_csv_from(text.as_bytes(), "t.csv", opts)
    }

    #[test]
    fn infers_types_missing_and_labels() {
        let d = read("a,b,c,label\n1,x,,yes\n2.5,?,3,no\nNA,y,4,yes\n", &CsvOptions::default()).unwrap();
        assert_eq!(d.features.names, vec!["a", "b", "c"]);
        match &d.features.columns[0] {
            Column::Numeric(v) => {
                assert_eq!(v[0], 1.0);
                assert!(v[2].is_nan());
            }
            _ => panic!("a should be numeric"),
        }
        match &d.features.columns[1] {
            Column::Categorical { codes, levels } => {
                assert_eq!(levels, &["x", "y"]);
                assert_eq!(codes, &[0, MISSING_CODE, 1]);
            }
            _ => panic!("b should be categorical"),
        }
        match d.target.unwrap() {
            Target::Classes { y, classes } => {
                assert_eq!(classes, vec!["no", "yes"]);
                assert_eq!(y, vec![1, 0, 1]);
            }
            _ => panic!(),
        }
    }

    #[test]
    fn a_typo_that_makes_a_numeric_column_categorical_is_named_with_its_line() {
        let mut text = String::from("a,b,label\n");
        for i in 0..10 {
            text.push_str(&format!("{i}.5,s{i},{}\n", i % 2));
        }
        text.push_str("1O,s0,1\n");
        let capped = CsvOptions { max_levels: Some(5), ..Default::default() };
        let e = read(&text, &capped).unwrap_err().to_string();
        assert_eq!(
            e,
            "invalid data: categorical feature 'a' has 11 categories, more than max_bins = 5; it is categorical because \
             of '1O' at line 12, its first value that is not a number (fix that value if the column is numeric); else \
             raise max_bins, up to 65535, or recode the feature"
        );
        // A column of names names its first.
        let text = text.replace("1O,s0", "1.5,s10").replace("0.5,s0", "0.5,s00");
        let e = read(&text, &CsvOptions { label: LabelSelector::Last, ..capped.clone() }).unwrap_err().to_string();
        assert!(
            e.contains("'b' has 11 categories, more than max_bins = 5; it is categorical because of 's00' at line 2")
        );
        // Without the cap, or with a kind the caller forces, the reader keeps every level.
        assert!(read(&text, &CsvOptions::default()).is_ok());
        let forced = CsvOptions { kinds: Some(vec![("b".into(), FeatureKind::Categorical)]), ..capped };
        assert!(read(&text, &forced).is_ok());
    }

    #[test]
    fn positive_class_rules() {
        let d = read("a,label\n1,1\n2,-1\n", &CsvOptions::default()).unwrap();
        assert_eq!(d.target.unwrap().names(), &["-1", "1"]);
        let d = read("a,label\n1,10\n2,9\n", &CsvOptions::default()).unwrap();
        assert_eq!(d.target.unwrap().names(), &["9", "10"], "numeric order, not lexicographic");
        let o = CsvOptions { positive: Some("9".into()), ..Default::default() };
        let d = read("a,label\n1,10\n2,9\n", &o).unwrap();
        assert_eq!(d.target.unwrap().names(), &["10", "9"]);
        let o = CsvOptions { positive: Some("7".into()), ..Default::default() };
        let e = read("a,label\n1,10\n2,9\n", &o).unwrap_err().to_string();
        assert!(e.contains("positive"), "{e}");
    }

    #[test]
    fn errors_name_file_line_and_column() {
        let e = read("a,b,label\n1,2,0\n1,2\n", &CsvOptions::default()).unwrap_err().to_string();
        assert!(e.starts_with("t.csv:3:") && e.contains("expected 3 fields"), "{e}");
        let e = read("", &CsvOptions::default()).unwrap_err().to_string();
        assert!(e.contains("empty file"), "{e}");
        let e = read("a,label\n", &CsvOptions::default()).unwrap_err().to_string();
        assert!(e.contains("no data rows"), "{e}");
        let e = read("a,label\n1,0\ninf,1\n", &CsvOptions::default()).unwrap_err().to_string();
        assert!(e.contains("t.csv:3: column 'a'") && e.contains("infinite"), "{e}");
        let e = read("a,label\n1,0\n2,nan\n", &CsvOptions::default()).unwrap_err().to_string();
        assert!(e.contains("t.csv:3: column 'label'") && e.contains("NaN label"), "{e}");
        let e = read("a,a,label\n1,2,0\n", &CsvOptions::default()).unwrap_err().to_string();
        assert!(e.contains("duplicate column"), "{e}");
        let o = CsvOptions { label: LabelSelector::Name("y".into()), ..Default::default() };
        let e = read("a,label\n1,0\n", &o).unwrap_err().to_string();
        assert!(e.contains("no label column 'y'"), "{e}");
        let o = CsvOptions { weight: Some("w".into()), ..Default::default() };
        let e = read("a,w,label\n1,-1,0\n", &o).unwrap_err().to_string();
        assert!(e.contains("t.csv:2: column 'w'"), "{e}");
    }

    #[test]
    fn single_class_is_reported_by_check_trainable() {
        let d = read("a,label\n1,0\n2,0\n", &CsvOptions::default()).unwrap();
        let e = d.check_trainable().unwrap_err().to_string();
        assert!(e.contains("only one class"), "{e}");
    }

    #[test]
    fn multilabel_by_prefix_and_weights() {
        let o = CsvOptions {
            label: LabelSelector::Prefix("label_".into()),
            weight: Some("w".into()),
            ..Default::default()
        };
        let d = read("a,w,label_0,label_1\n1,2,0,1\n2,1,1,1\n", &o).unwrap();
        assert_eq!(d.features.names, vec!["a"]);
        assert_eq!(d.sample_weight, Some(vec![2.0, 1.0]));
        assert_eq!(
            d.target,
            Some(Target::Multilabel { y: vec![0, 1, 1, 1], labels: vec!["label_0".into(), "label_1".into()] })
        );
        let e = read(
            "a,label_0\n1,2\n",
            &CsvOptions { label: LabelSelector::Prefix("label_".into()), ..Default::default() },
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("not 0 or 1"), "{e}");
    }

    #[test]
    fn forced_kinds() {
        let o = CsvOptions { kinds: Some(vec![("a".into(), FeatureKind::Categorical)]), ..Default::default() };
        let d = read("a,label\n1,0\n2,1\n", &o).unwrap();
        assert_eq!(d.features.kinds(), vec![FeatureKind::Categorical]);
        let o = CsvOptions { kinds: Some(vec![("a".into(), FeatureKind::Numeric)]), ..Default::default() };
        let e = read("a,label\n1,0\nx,1\n", &o).unwrap_err().to_string();
        assert!(e.contains("t.csv:3: column 'a'"), "{e}");
    }
}
