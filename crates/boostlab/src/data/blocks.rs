//! Rows in blocks, for streamed prediction: a file of any size is read a block at a
//! time, each block converted to [`Features`] of the model's kinds (and its labels, when the file
//! has the label column), so memory does not grow with the file.

use std::path::Path;

use super::csv_reader::{build_features, is_missing, CsvOptions, LabelSelector};
use super::{FeatureKind, Features};
use crate::error::{Error, Result};

/// The labels of one block, when the file has them.
#[derive(Debug, Clone, PartialEq)]
pub enum BlockLabels {
    /// One label per row, as written in the file.
    Single(Vec<String>),
    /// Multi-label 0/1 values, row-major (`rows × labels`).
    Multi(Vec<u8>),
}

/// One block of rows.
#[derive(Debug, Clone, PartialEq)]
pub struct Block {
    /// The features, of the kinds asked for.
    pub features: Features,
    /// The labels, when the file has the label column(s).
    pub labels: Option<BlockLabels>,
}

/// Reads a CSV file with a header in blocks of rows (see the module docs). Errors are those of
/// [`super::read_csv`] with `label_optional` and forced kinds, naming the file's line.
pub struct CsvBlocks {
    rdr: csv::Reader<std::io::BufReader<std::fs::File>>,
    name: String,
    names: Vec<String>,
    label_cols: Vec<usize>,
    multi: bool,
    opts: CsvOptions,
    block_rows: usize,
    done: bool,
}

impl CsvBlocks {
    /// Opens `path`: `kinds` are the features to read (by name; other columns are ignored),
    /// `label` the label column(s), read when present; blocks of `block_rows` rows (≥ 1).
    pub fn open(
        path: impl AsRef<Path>,
        kinds: Vec<(String, FeatureKind)>,
        label: LabelSelector,
        block_rows: usize,
    ) -> Result<CsvBlocks> {
        let path = path.as_ref();
        let name = path.display().to_string();
        let names = super::csv_header(path)?;
        let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
        let mut rdr = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .from_reader(std::io::BufReader::with_capacity(1 << 20, file));
        let mut header = csv::StringRecord::new();
        rdr.read_record(&mut header).map_err(|e| Error::Parse {
            file: name.clone(),
            line: 1,
            column: None,
            message: e.to_string(),
        })?;
        let col = |n: &str| names.iter().position(|x| x == n);
        let label_cols: Vec<usize> = match &label {
            LabelSelector::Last | LabelSelector::None => vec![],
            LabelSelector::Name(n) => col(n).into_iter().collect(),
            LabelSelector::Multi(list) => {
                let v: Vec<usize> = list.iter().filter_map(|n| col(n)).collect();
                if v.len() == list.len() {
                    v
                } else {
                    vec![]
                }
            }
            LabelSelector::Prefix(p) => (0..names.len()).filter(|&c| names[c].starts_with(p.as_str())).collect(),
        };
        let multi = matches!(label, LabelSelector::Multi(_) | LabelSelector::Prefix(_));
        let opts = CsvOptions { kinds: Some(kinds), label_optional: true, ..Default::default() };
        Ok(CsvBlocks { rdr, name, names, label_cols, multi, opts, block_rows: block_rows.max(1), done: false })
    }

    fn perr(&self, line: usize, column: Option<&str>, message: String) -> Error {
        Error::Parse { file: self.name.clone(), line, column: column.map(str::to_string), message }
    }

    fn read_block(&mut self) -> Result<Option<Block>> {
        let ncol = self.names.len();
        let mut raw: Vec<Vec<String>> = vec![Vec::new(); ncol];
        let mut lines = Vec::new();
        let mut rec = csv::StringRecord::new();
        while lines.len() < self.block_rows {
            match self.rdr.read_record(&mut rec) {
                Ok(true) => {}
                Ok(false) => {
                    self.done = true;
                    break;
                }
                Err(e) => {
                    let line = e.position().map_or(0, |p| p.line() as usize);
                    return Err(self.perr(line, None, e.to_string()));
                }
            }
            let line = rec.position().map_or(0, |p| p.line() as usize);
            if rec.len() == 1 && rec.get(0).is_some_and(|s| s.trim().is_empty()) {
                continue;
            }
            if rec.len() != ncol {
                return Err(self.perr(
                    line,
                    None,
                    format!("expected {ncol} fields (as in the header), found {}", rec.len()),
                ));
            }
            for (c, f) in rec.iter().enumerate() {
                raw[c].push(f.trim().to_string());
            }
            lines.push(line);
        }
        if lines.is_empty() {
            return Ok(None);
        }
        let labels = if self.label_cols.is_empty() {
            None
        } else if self.multi {
            let k = self.label_cols.len();
            let mut y = vec![0u8; lines.len() * k];
            for (l, &c) in self.label_cols.iter().enumerate() {
                for (r, v) in raw[c].iter().enumerate() {
                    y[r * k + l] = match v.as_str() {
                        "0" | "0.0" => 0,
                        "1" | "1.0" => 1,
                        other => {
                            return Err(self.perr(
                                lines[r],
                                Some(&self.names[c]),
                                format!("multi-label value '{}' is not 0 or 1", crate::error::shown(other)),
                            ))
                        }
                    };
                }
            }
            Some(BlockLabels::Multi(y))
        } else {
            let c = self.label_cols[0];
            if let Some(r) = raw[c].iter().position(|v| is_missing(v)) {
                let m = if raw[c][r].to_lowercase() == "nan" { "NaN label" } else { "missing label" };
                return Err(self.perr(lines[r], Some(&self.names[c]), m.into()));
            }
            Some(BlockLabels::Single(std::mem::take(&mut raw[c])))
        };
        // Only the model's features are read; every other column is skipped.
        let wanted: Vec<&String> = self.opts.kinds.iter().flatten().map(|p| &p.0).collect();
        let skip: Vec<usize> = (0..ncol).filter(|&c| !wanted.contains(&&self.names[c])).collect();
        let features = build_features(&self.names, raw, &lines, &skip, &self.opts, &self.name)?;
        Ok(Some(Block { features, labels }))
    }
}

impl Iterator for CsvBlocks {
    type Item = Result<Block>;

    fn next(&mut self) -> Option<Result<Block>> {
        if self.done {
            return None;
        }
        match self.read_block() {
            Ok(Some(b)) => Some(Ok(b)),
            Ok(None) => None,
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}
