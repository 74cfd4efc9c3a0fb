//! Streaming CSV → bins: the training table is never held as text or as floats.
//!
//! The file is cut into byte chunks at line boundaries ([`StreamOptions::chunk_bytes`], fixed, so
//! the result never depends on the number of threads) and read in three parallel passes, each
//! chunk read again from the file (the operating system's page cache) and dropped after use:
//!
//! 1. **Inspect**: every field is checked; per chunk and column the reader keeps the first error
//!    of each kind, the count of usable values, the distinct values while they are few, the label
//!    names and the sample weights. Merged in chunk order, these give the same column kinds, the
//!    same classes and the same first error as [`super::read_csv`].
//! 2. **Sample**: the rows that fix the bin boundaries under the same rule as
//!    [`BinMapper::fit`] (all rows up to [`BIN_SAMPLE_ROWS`], else the seeded sample of
//!    [`BIN_SAMPLE_ROWS`] rows) are parsed again for the features that need them; a feature with
//!    at most `max_bins` distinct values needs none (its thresholds are their midpoints).
//! 3. **Bin**: every row is parsed straight into its bins (u8, or u16 above 255 bins).
//!
//! The one key choice: the thresholds are computed by [`BinMapper::fit`] itself, on one column
//! holding exactly the values its own rule would look at, so the bins — and so the models — are
//! bit-identical to reading the file with [`super::read_csv`] and fitting.
//!
//! Quotes: a file whose data hold any `"` is read as one chunk (sequentially), so quoted fields
//! with delimiters or newlines are read exactly as [`super::read_csv`] reads them; files without
//! quotes — the common numeric case — are read in parallel chunks.

use std::collections::{HashMap, HashSet};
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::Arc;

use rayon::prelude::*;

use super::bins::{BinData, BinMapper, BinnedMatrix, FeatureBins, BIN_SAMPLE_ROWS};
use super::csv_reader::{is_missing, LabelSelector};
use super::fast_csv::{is_plain_finite, parse_f64, unterminated_quote_message, QuoteScan, Records};
use super::{Column, FeatureKind, Features, Target};
use crate::error::{shown, Error, Result};
use crate::util::par::try_map_in_order;

/// Default chunk size of the streaming readers: 4 MiB of text per parallel task.
pub const DEFAULT_CHUNK_BYTES: usize = 4 << 20;

/// Progress of a streaming read, given to [`StreamOptions::progress`] after each chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadProgress {
    /// The pass: 1 (inspect), 2 (sample), 3 (bin).
    pub pass: u8,
    /// Bytes of the data done in this pass so far.
    pub bytes: u64,
    /// Bytes of data in the file (after the header).
    pub total: u64,
}

/// A progress hook: called from worker threads, in no particular order within a pass.
pub type ProgressFn = Arc<dyn Fn(ReadProgress) + Send + Sync>;

/// Options of [`read_csv_binned`].
#[derive(Clone)]
pub struct StreamOptions {
    /// The label column(s). By default the last column.
    pub label: LabelSelector,
    /// Name of the positive class for binary labels. By default the rule of
    /// [`super::order_classes`].
    pub positive: Option<String>,
    /// Name of a sample-weight column. By default none.
    pub weight: Option<String>,
    /// Read at most this many data rows. By default all.
    pub max_rows: Option<usize>,
    /// Value bins per numeric feature (as [`BinMapper::fit`]). By default 255; valid range 2..=65535.
    pub max_bins: usize,
    /// Bytes of text per parallel task. By default [`DEFAULT_CHUNK_BYTES`]; any value ≥ 1 (the
    /// result does not depend on it).
    pub chunk_bytes: usize,
    /// Called after each chunk of each pass with the bytes done. By default none.
    pub progress: Option<ProgressFn>,
}

impl Default for StreamOptions {
    fn default() -> Self {
        StreamOptions {
            label: LabelSelector::Last,
            positive: None,
            weight: None,
            max_rows: None,
            max_bins: 255,
            chunk_bytes: DEFAULT_CHUNK_BYTES,
            progress: None,
        }
    }
}

impl std::fmt::Debug for StreamOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamOptions")
            .field("label", &self.label)
            .field("positive", &self.positive)
            .field("weight", &self.weight)
            .field("max_rows", &self.max_rows)
            .field("max_bins", &self.max_bins)
            .field("chunk_bytes", &self.chunk_bytes)
            .field("progress", &self.progress.is_some())
            .finish()
    }
}

/// Training data read straight into bins: what the booster needs, and nothing else.
#[derive(Debug, Clone, PartialEq)]
pub struct BinnedTable {
    /// Feature names, in file order (label and weight columns left out).
    pub names: Vec<String>,
    /// Feature kinds.
    pub kinds: Vec<FeatureKind>,
    /// Level names of categorical features (sorted), `None` for numeric ones.
    pub levels: Vec<Option<Vec<String>>>,
    /// The bin boundaries (the same as [`BinMapper::fit`] on the whole table).
    pub mapper: BinMapper,
    /// The bins, column-major.
    pub bins: BinnedMatrix,
    /// The target.
    pub target: Target,
    /// Per-row sample weights, when a weight column was named.
    pub sample_weight: Option<Vec<f64>>,
}

impl BinnedTable {
    /// The training data [`crate::Trainer::fit_binned`] takes.
    pub fn into_binned_data(self) -> Result<super::BinnedData> {
        let schema = crate::data::Schema { names: self.names, kinds: self.kinds, levels: self.levels };
        super::BinnedData::new(schema, self.mapper, self.bins, self.target, self.sample_weight)
    }
}

/// First error of one kind in a chunk: (line within the chunk, 1-based; message or text).
type FirstErr = Option<(usize, String)>;

/// The distinct usable values of a column while there are at most `max_bins` (increasing).
#[derive(Debug, Clone, Default)]
struct Distinct {
    values: Vec<f64>,
    overflow: bool,
}

impl Distinct {
    #[inline]
    fn add(&mut self, x: f64, max_bins: usize) {
        if self.overflow {
            return;
        }
        // `<`/`>`: −0 and +0 are one value, as in the binning.
        let pos = self.values.binary_search_by(|p| p.partial_cmp(&x).unwrap_or(std::cmp::Ordering::Less));
        if let Err(i) = pos {
            if self.values.len() >= max_bins {
                self.overflow = true;
                self.values = Vec::new();
            } else {
                self.values.insert(i, x);
            }
        }
    }

    fn merge(&mut self, other: &Distinct, max_bins: usize) {
        if other.overflow {
            self.overflow = true;
            self.values = Vec::new();
            return;
        }
        for &x in &other.values {
            self.add(x, max_bins);
        }
    }
}

/// What pass 1 learns about one feature column in one chunk.
#[derive(Debug, Clone, Default)]
struct ColStats {
    /// First value that is neither missing nor a number.
    not_number: FirstErr,
    /// First infinite value.
    infinite: FirstErr,
    /// The weight of the non-missing numbers of usable rows (Σ w of rows of positive weight —
    /// frequency weights — or their count without weights).
    n_usable: f64,
    distinct: Distinct,
    /// Level names; filled only when the column is not all numbers in this chunk.
    levels: HashSet<String>,
}

/// What pass 1 learns about one chunk.
#[derive(Debug, Default)]
struct ChunkStats {
    rows: usize,
    newlines: usize,
    quotes: usize,
    /// A row with the wrong number of fields (or a CSV syntax error): stops the chunk.
    ragged: FirstErr,
    /// The chunk-relative line of a quote that never closes, when that is the `ragged` error.
    unterminated: Option<usize>,
    /// Per label column (in label order): first bad label.
    label_err: Vec<FirstErr>,
    labels: HashSet<String>,
    weight_err: FirstErr,
    weights: Vec<f64>,
    cols: Vec<ColStats>,
}

/// The columns' roles, fixed by the header.
struct Layout {
    names: Vec<String>,
    label_cols: Vec<usize>,
    multi: bool,
    weight_col: Option<usize>,
    /// Feature columns (file indices), in order.
    feature_cols: Vec<usize>,
    /// For each file column: its feature index, or `None`.
    feature_of: Vec<Option<usize>>,
}

struct Source<'a> {
    path: &'a Path,
    name: String,
}

impl Source<'_> {
    fn read(&self, start: u64, end: u64) -> Result<Vec<u8>> {
        let mut f = std::fs::File::open(self.path).map_err(|e| Error::io(self.path, e))?;
        f.seek(SeekFrom::Start(start)).map_err(|e| Error::io(self.path, e))?;
        let mut buf = vec![0u8; (end - start) as usize];
        f.read_exact(&mut buf).map_err(|e| Error::io(self.path, e))?;
        Ok(buf)
    }

    fn perr(&self, line: usize, column: Option<&str>, message: impl Into<String>) -> Error {
        Error::Parse { file: self.name.clone(), line, column: column.map(str::to_string), message: message.into() }
    }
}

#[inline]
fn is_blank(rec: &csv::ByteRecord) -> bool {
    // `str::trim`'s whitespace, as `read_csv` (a lone vertical tab is blank there too: the
    // csv_stream fuzz target found `u8::is_ascii_whitespace` disagreeing on it).
    rec.len() == 1 && rec.get(0).is_some_and(|s| std::str::from_utf8(s).is_ok_and(|t| t.trim().is_empty()))
}

/// Reads a CSV file with a header straight into bins, in parallel (see the module docs). The
/// bins, classes and weights are bit-identical to [`super::read_csv`] followed by
/// [`BinMapper::fit`] and [`BinMapper::transform`], and a bad file gets the same error.
pub fn read_csv_binned(path: impl AsRef<Path>, opts: &StreamOptions) -> Result<BinnedTable> {
    let path = path.as_ref();
    if !(2..=65535).contains(&opts.max_bins) {
        return Err(Error::param("max_bins", "an integer in 2..=65535", opts.max_bins));
    }
    let src = Source { path, name: path.display().to_string() };
    let file_len = std::fs::metadata(path).map_err(|e| Error::io(path, e))?.len();

    // The header, once its width is known to be reasonable.
    super::fast_csv::check_header_width(path)?;
    let (names, data_start, header_newlines) = {
        let f = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
        let mut rdr = csv::ReaderBuilder::new().has_headers(false).flexible(true).from_reader(f);
        let mut rec = csv::StringRecord::new();
        match rdr.read_record(&mut rec) {
            Ok(true) => {}
            Ok(false) => return Err(src.perr(1, None, "empty file: no header row")),
            Err(e) => return Err(src.perr(1, None, e.to_string())),
        }
        let end = rdr.position().byte();
        let names: Vec<String> = rec
            .iter()
            .enumerate()
            .map(|(i, h)| if i == 0 { h.trim_start_matches('\u{feff}') } else { h }.trim().to_string())
            .collect();
        let head = src.read(0, end)?;
        (names, end, memchr::memchr_iter(b'\n', &head).count())
    };
    let mut seen = HashSet::new();
    for (i, n) in names.iter().enumerate() {
        if n.is_empty() {
            return Err(src.perr(1, Some(&format!("#{}", i + 1)), "empty column name in the header"));
        }
        if !seen.insert(n) {
            return Err(src.perr(1, Some(n), "duplicate column name in the header"));
        }
    }
    // Label and weight columns; their errors wait until the rows are known to be well-formed,
    // as in `read_csv`.
    let layout = layout(&names, opts, &src);
    let data_end = match opts.max_rows {
        Some(m) => end_after_rows(&src, data_start, m)?,
        None => file_len,
    };
    let first_line = header_newlines + 1; // the line after the header
    let total = data_end - data_start;
    let report = |pass: u8, done: &std::sync::atomic::AtomicU64, n: u64| {
        if let Some(p) = &opts.progress {
            let bytes = done.fetch_add(n, std::sync::atomic::Ordering::Relaxed) + n;
            p(ReadProgress { pass, bytes, total });
        }
    };

    // Pass 1: inspect every chunk. Chunks are cut at newlines; a cut inside a quoted field is
    // found from the quote parity afterwards and removed, and the merged chunks are read again.
    let mut bounds = chunk_bounds(&src, data_start, data_end, opts.chunk_bytes.max(1))?;
    let n_label = layout.as_ref().map_or(0, |l| l.label_cols.len());
    let stats: Vec<ChunkStats> = loop {
        let done = std::sync::atomic::AtomicU64::new(0);
        // The first bad chunk in file order: the error of the earliest bad line.
        let stats = try_map_in_order((0..bounds.len() - 1).into_par_iter(), |c| {
            let s = inspect_chunk(&src, bounds[c], bounds[c + 1], &names, layout.as_ref().ok(), n_label, opts);
            report(1, &done, bounds[c + 1] - bounds[c]);
            s
        })?;
        // A file with quotes is read as one chunk: where a record ends then depends on the CSV
        // parser's quote state, which no local look at a chunk cut can know (a `"` inside an
        // unquoted field is literal, one after a closed quote is not — the csv_stream fuzz
        // target found such a file whose parity-based cuts split a record).
        let quoted = stats.iter().any(|s| s.quotes > 0);
        if !quoted || bounds.len() <= 2 {
            break stats;
        }
        bounds = vec![bounds[0], bounds[bounds.len() - 1]];
    };

    // Merge, in file order. Absolute line of a chunk's first line:
    let mut line0 = Vec::with_capacity(stats.len());
    let mut acc = first_line;
    for s in &stats {
        line0.push(acc);
        acc += s.newlines;
    }
    let abs = |c: usize, rel: usize| line0[c] + rel - 1;
    for (c, s) in stats.iter().enumerate() {
        if let Some((l, m)) = &s.ragged {
            let line = abs(c, *l);
            let m = if s.unterminated == Some(*l) { unterminated_quote_message(line) } else { m.clone() };
            return Err(src.perr(line, None, m));
        }
    }
    let n: usize = stats.iter().map(|s| s.rows).sum();
    if n == 0 {
        return Err(src.perr(1, None, "no data rows after the header"));
    }
    let layout = layout?;
    if layout.label_cols.is_empty() {
        return Err(Error::InvalidData("the data have no label column".into()));
    }
    for (l, &col) in layout.label_cols.iter().enumerate() {
        for (c, s) in stats.iter().enumerate() {
            if let Some((line, m)) = &s.label_err[l] {
                return Err(src.perr(abs(c, *line), Some(&names[col]), m.clone()));
            }
        }
    }
    let classes = if layout.multi {
        layout.label_cols.iter().map(|&c| names[c].clone()).collect()
    } else {
        let mut uniq: Vec<String> = stats.iter().flat_map(|s| s.labels.iter().cloned()).collect();
        uniq.sort();
        uniq.dedup();
        match Target::from_strings(&uniq, opts.positive.as_deref())? {
            Target::Classes { classes, .. } => classes,
            Target::Multilabel { labels, .. } => labels,
        }
    };
    let sample_weight = match layout.weight_col {
        None => None,
        Some(col) => {
            for (c, s) in stats.iter().enumerate() {
                if let Some((line, m)) = &s.weight_err {
                    return Err(src.perr(abs(c, *line), Some(&names[col]), m.clone()));
                }
            }
            let w: Vec<f64> = stats.iter().flat_map(|s| s.weights.iter().copied()).collect();
            if w.iter().all(|&x| x == 0.0) {
                return Err(Error::InvalidData("all sample weights are zero".into()));
            }
            Some(w)
        }
    };
    let nf = layout.feature_cols.len();
    if nf == 0 {
        return Err(Error::InvalidData("no feature columns".into()));
    }
    let mut kinds = Vec::with_capacity(nf);
    for (f, &col) in layout.feature_cols.iter().enumerate() {
        let numeric = stats.iter().all(|s| s.cols[f].not_number.is_none());
        if numeric {
            for (c, s) in stats.iter().enumerate() {
                if let Some((line, text)) = &s.cols[f].infinite {
                    return Err(src.perr(
                        abs(c, *line),
                        Some(&names[col]),
                        format!("infinite value '{}'", shown(text)),
                    ));
                }
            }
        }
        kinds.push(if numeric { FeatureKind::Numeric } else { FeatureKind::Categorical });
    }

    // Categorical levels: chunks where such a column held only numbers did not keep its names.
    let fix: Vec<Vec<usize>> = stats
        .iter()
        .map(|s| (0..nf).filter(|&f| kinds[f] == FeatureKind::Categorical && s.cols[f].not_number.is_none()).collect())
        .collect();
    let fixed: Vec<Vec<HashSet<String>>> = try_map_in_order((0..stats.len()).into_par_iter(), |c| {
        if fix[c].is_empty() {
            return Ok(Vec::new());
        }
        let buf = src.read(bounds[c], bounds[c + 1])?;
        let cols: Vec<usize> = fix[c].iter().map(|&f| layout.feature_cols[f]).collect();
        Ok(collect_levels(&buf, &cols))
    })?;
    let mut levels: Vec<Option<Vec<String>>> = vec![None; nf];
    for f in 0..nf {
        if kinds[f] == FeatureKind::Categorical {
            let mut all: HashSet<&String> = HashSet::new();
            for (c, s) in stats.iter().enumerate() {
                all.extend(s.cols[f].levels.iter());
                if let Some(i) = fix[c].iter().position(|&g| g == f) {
                    all.extend(fixed[c][i].iter());
                }
            }
            let mut v: Vec<String> = all.into_iter().cloned().collect();
            v.sort();
            if v.len() > opts.max_bins {
                // The value that made the column categorical: a typo in a numeric column is the
                // usual cause, and its line is what the user needs.
                let first = stats
                    .iter()
                    .enumerate()
                    .find_map(|(c, s)| s.cols[f].not_number.as_ref().map(|(line, text)| (abs(c, *line), text)));
                return Err(Error::InvalidData(super::csv_reader::too_many_levels(
                    &names[layout.feature_cols[f]],
                    v.len(),
                    opts.max_bins,
                    first.map(|(line, text)| (line, text.as_str())),
                )));
            }
            levels[f] = Some(v);
        }
    }

    // Pass 2: the values that place each numeric feature's thresholds (BinMapper::fit's rule).
    let mut distinct: Vec<Distinct> = vec![Distinct::default(); nf];
    let mut n_usable = vec![0.0f64; nf];
    for s in &stats {
        for f in 0..nf {
            distinct[f].merge(&s.cols[f].distinct, opts.max_bins);
            n_usable[f] += s.cols[f].n_usable;
        }
    }
    let sample = super::bin_sample_rows(n, sample_weight.as_deref());
    let mut want = vec![Want::None; nf];
    for f in 0..nf {
        if kinds[f] == FeatureKind::Numeric && distinct[f].overflow {
            // Frequency weights: the values count Σ w.
            want[f] = if sample.is_none() || n_usable[f] <= BIN_SAMPLE_ROWS as f64 { Want::All } else { Want::Sample };
        }
    }
    let mut row0 = Vec::with_capacity(stats.len());
    let mut r = 0;
    for s in &stats {
        row0.push(r);
        r += s.rows;
    }
    let gathered: Vec<Vec<(Vec<f64>, Vec<f64>)>> = if want.iter().any(|w| *w != Want::None) {
        let done = std::sync::atomic::AtomicU64::new(0);
        try_map_in_order((0..stats.len()).into_par_iter(), |c| {
            let rows = row0[c]..row0[c] + stats[c].rows;
            let picked: &[usize] = match &sample {
                Some(s) => {
                    let a = s.partition_point(|&x| x < rows.start);
                    let b = s.partition_point(|&x| x < rows.end);
                    &s[a..b]
                }
                None => &[],
            };
            let w = sample_weight.as_ref().map(|w| &w[rows.clone()]);
            let out = gather_chunk(&src, bounds[c], bounds[c + 1], rows.start, picked, w, &layout, &want);
            report(2, &done, bounds[c + 1] - bounds[c]);
            out
        })?
    } else {
        Vec::new()
    };
    // Features are independent: their thresholds in parallel (each the same as alone).
    let features = try_map_in_order((0..nf).into_par_iter(), |f| {
        Ok(match kinds[f] {
            FeatureKind::Categorical => FeatureBins::Categorical { n_levels: levels[f].as_ref().map_or(0, Vec::len) },
            FeatureKind::Numeric => {
                let (values, weights): (Vec<f64>, Option<Vec<f64>>) = match want[f] {
                    Want::None => (distinct[f].values.clone(), None),
                    _ => {
                        let v: Vec<f64> = gathered.iter().flat_map(|g| g[f].0.iter().copied()).collect();
                        // The sampled units are unweighted; all values keep their weights.
                        let w = (want[f] == Want::All && sample_weight.is_some())
                            .then(|| gathered.iter().flat_map(|g| g[f].1.iter().copied()).collect());
                        (v, w)
                    }
                };
                // BinMapper::fit on exactly the values its rule looks at (≤ BIN_SAMPLE_ROWS rows,
                // so it does not sample again): the same thresholds, bit for bit.
                let one = Features {
                    names: vec![names[layout.feature_cols[f]].clone()],
                    columns: vec![Column::Numeric(values)],
                };
                let m = BinMapper::fit(&one, opts.max_bins, weights.as_deref())?;
                m.features.into_iter().next().unwrap_or(FeatureBins::Numeric { thresholds: Vec::new() })
            }
        })
    })?;
    let mapper = BinMapper { features };
    drop(gathered);

    // Pass 3: rows straight into bins, each chunk into its own rows of every column.
    let mut offsets = Vec::with_capacity(nf + 1);
    offsets.push(0);
    for b in &mapper.features {
        offsets.push(offsets.last().copied().unwrap_or(0) + b.n_value_bins() + 1);
    }
    let wide = mapper.features.iter().any(|b| b.n_value_bins() + 1 > 256);
    let k = layout.label_cols.len();
    let mut y_classes = if layout.multi { Vec::new() } else { vec![0u32; n] };
    let mut y_multi = if layout.multi { vec![0u8; n * k] } else { Vec::new() };
    let class_index: HashMap<&str, u32> = classes.iter().enumerate().map(|(i, c)| (c.as_str(), i as u32)).collect();
    let level_index: Vec<HashMap<&str, u32>> =
        levels.iter().map(|l| l.iter().flatten().enumerate().map(|(i, s)| (s.as_str(), i as u32)).collect()).collect();
    let ctx = BinCtx {
        src: &src,
        layout: &layout,
        mapper: &mapper,
        class_index: &class_index,
        level_index: &level_index,
        line0: &line0,
    };
    let done = std::sync::atomic::AtomicU64::new(0);
    let row_counts: Vec<usize> = stats.iter().map(|s| s.rows).collect();
    let data = if wide {
        let mut v = vec![0u16; n * nf];
        let parts = split_columns(&mut v, n, &row_counts);
        fill(&ctx, &bounds, parts, &mut y_classes, &mut y_multi, &row_counts, k, |b| b as u16, &|len| {
            report(3, &done, len)
        })?;
        BinData::U16(v)
    } else {
        let mut v = vec![0u8; n * nf];
        let parts = split_columns(&mut v, n, &row_counts);
        fill(&ctx, &bounds, parts, &mut y_classes, &mut y_multi, &row_counts, k, |b| b as u8, &|len| {
            report(3, &done, len)
        })?;
        BinData::U8(v)
    };
    let target = if layout.multi {
        Target::Multilabel { y: y_multi, labels: classes }
    } else {
        Target::Classes { y: y_classes, classes }
    };
    let bins = BinnedMatrix { n_rows: n, n_features: nf, offsets, data };
    let fnames = layout.feature_cols.iter().map(|&c| names[c].clone()).collect();
    Ok(BinnedTable { names: fnames, kinds, levels, mapper, bins, target, sample_weight })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Want {
    /// Thresholds from the distinct values (no values needed).
    None,
    /// Every usable non-missing value (at most BIN_SAMPLE_ROWS of them).
    All,
    /// The values of the sampled rows.
    Sample,
}

/// The roles of the columns, or the error `read_csv` would give (reported after pass 1).
fn layout(names: &[String], opts: &StreamOptions, src: &Source) -> Result<Layout> {
    let ncol = names.len();
    let col_index = |n: &str| names.iter().position(|x| x == n);
    let label_cols: Vec<usize> = match &opts.label {
        LabelSelector::Last => vec![ncol - 1],
        LabelSelector::None => vec![],
        LabelSelector::Name(n) => match col_index(n) {
            Some(c) => vec![c],
            None => return Err(src.perr(1, Some(n), format!("no label column '{n}' in the header {names:?}"))),
        },
        LabelSelector::Multi(list) => {
            let mut v = Vec::new();
            for n in list {
                match col_index(n) {
                    Some(c) => v.push(c),
                    None => return Err(src.perr(1, Some(n), "no such label column in the header")),
                }
            }
            v
        }
        LabelSelector::Prefix(p) => {
            let v: Vec<usize> = (0..ncol).filter(|&c| names[c].starts_with(p.as_str())).collect();
            if v.is_empty() {
                return Err(src.perr(1, None, format!("no column name starts with the label prefix '{p}'")));
            }
            v
        }
    };
    let weight_col = match &opts.weight {
        None => None,
        Some(w) => Some(col_index(w).ok_or_else(|| src.perr(1, Some(w), "no such weight column in the header"))?),
    };
    if weight_col.is_some_and(|w| label_cols.contains(&w)) {
        return Err(Error::param("weight", "a column other than the label", opts.weight.clone().unwrap_or_default()));
    }
    let multi = matches!(opts.label, LabelSelector::Multi(_) | LabelSelector::Prefix(_));
    let feature_cols: Vec<usize> = (0..ncol).filter(|c| !label_cols.contains(c) && weight_col != Some(*c)).collect();
    let mut feature_of = vec![None; ncol];
    for (f, &c) in feature_cols.iter().enumerate() {
        feature_of[c] = Some(f);
    }
    Ok(Layout { names: names.to_vec(), label_cols, multi, weight_col, feature_cols, feature_of })
}

/// The byte offset just after the `m`-th non-blank data row (or the end of the file).
fn end_after_rows(src: &Source, start: u64, m: usize) -> Result<u64> {
    let mut f = std::fs::File::open(src.path).map_err(|e| Error::io(src.path, e))?;
    f.seek(SeekFrom::Start(start)).map_err(|e| Error::io(src.path, e))?;
    let mut rdr = csv::ReaderBuilder::new().has_headers(false).flexible(true).from_reader(std::io::BufReader::new(f));
    let mut rec = csv::ByteRecord::new();
    let mut rows = 0;
    while rows < m {
        match rdr.read_byte_record(&mut rec) {
            Ok(true) => {
                if !is_blank(&rec) {
                    rows += 1;
                }
            }
            // The error itself is reported by pass 1, at its line.
            Ok(false) | Err(_) => return Ok(std::fs::metadata(src.path).map_err(|e| Error::io(src.path, e))?.len()),
        }
    }
    Ok(start + rdr.position().byte())
}

/// Chunk boundaries: `start`, then the first byte after a newline at or after each multiple of
/// `size`, then `end`.
fn chunk_bounds(src: &Source, start: u64, end: u64, size: usize) -> Result<Vec<u64>> {
    let mut bounds = vec![start];
    let mut f = std::fs::File::open(src.path).map_err(|e| Error::io(src.path, e))?;
    let mut at = start + size as u64;
    let mut buf = vec![0u8; 1 << 16];
    while at < end {
        // Find the next newline at or after `at - 1` (so a cut right after a newline stays there).
        let mut pos = at - 1;
        let cut = loop {
            f.seek(SeekFrom::Start(pos)).map_err(|e| Error::io(src.path, e))?;
            let want = buf.len().min((end - pos) as usize);
            let got = f.read(&mut buf[..want]).map_err(|e| Error::io(src.path, e))?;
            if got == 0 {
                break end;
            }
            if let Some(i) = memchr::memchr(b'\n', &buf[..got]) {
                break pos + i as u64 + 1;
            }
            pos += got as u64;
        };
        if cut >= end {
            break;
        }
        if cut > *bounds.last().unwrap_or(&start) {
            bounds.push(cut);
        }
        at = (cut + size as u64).max(at + 1);
    }
    bounds.push(end);
    Ok(bounds)
}

/// Pass 1 over one chunk.
fn inspect_chunk(
    src: &Source,
    start: u64,
    end: u64,
    names: &[String],
    layout: Option<&Layout>,
    n_label: usize,
    opts: &StreamOptions,
) -> Result<ChunkStats> {
    let buf = src.read(start, end)?;
    let ncol = names.len();
    let nf = layout.map_or(0, |l| l.feature_cols.len());
    let mut s = ChunkStats {
        newlines: memchr::memchr_iter(b'\n', &buf).count(),
        quotes: memchr::memchr_iter(b'"', &buf).count(),
        label_err: vec![None; n_label],
        cols: vec![ColStats::default(); nf],
        ..Default::default()
    };
    let mut rec = Records::new(&buf);
    let max_bins = opts.max_bins;
    loop {
        match rec.next_record() {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => {
                s.ragged = Some(e);
                break;
            }
        }
        let line = rec.line();
        if rec.is_blank() {
            continue;
        }
        if rec.len() != ncol {
            s.ragged = Some((line, format!("expected {ncol} fields (as in the header), found {}", rec.len())));
            break;
        }
        s.rows += 1;
        // Every field must be UTF-8 (as `read_csv`'s string records).
        if let Some((i, m)) = rec.utf8_error() {
            s.ragged = Some((line, format!("field {} ({}): {m}", i + 1, shown(&names[i]))));
            break;
        }
        let Some(l) = layout else { continue };
        let field = |c: usize| rec.field(c);
        let mut usable = true;
        if let Some(wc) = l.weight_col {
            let v = field(wc);
            match parse_f64(v) {
                Some(x) if x.is_finite() && x >= 0.0 => {
                    s.weights.push(x);
                    usable = x > 0.0;
                }
                _ => {
                    if s.weight_err.is_none() {
                        s.weight_err = Some((line, format!("sample weight '{}' is not a finite number ≥ 0", shown(v))));
                    }
                    s.weights.push(0.0);
                }
            }
        }
        if l.multi {
            for (j, &c) in l.label_cols.iter().enumerate() {
                let v = field(c);
                if !matches!(v, "0" | "0.0" | "1" | "1.0") && s.label_err[j].is_none() {
                    s.label_err[j] = Some((line, format!("multi-label value '{}' is not 0 or 1", shown(v))));
                }
            }
        } else if let Some(&c) = l.label_cols.first() {
            let v = field(c);
            if is_missing(v) {
                if s.label_err[0].is_none() {
                    let m = if v.to_lowercase() == "nan" { "NaN label" } else { "missing label" };
                    s.label_err[0] = Some((line, m.into()));
                }
            } else if !s.labels.contains(v) {
                s.labels.insert(v.to_string());
            }
        }
        for (f, &c) in l.feature_cols.iter().enumerate() {
            let v = field(c);
            let cs = &mut s.cols[f];
            if is_missing(v) || cs.not_number.is_some() {
                continue;
            }
            // One parse per field: once the column has too many distinct values to
            // keep, this pass only needs to know that a field is a finite number — the bin pass
            // parses it.
            if cs.distinct.overflow && is_plain_finite(v) {
                if usable {
                    cs.n_usable += s.weights.last().copied().filter(|_| l.weight_col.is_some()).unwrap_or(1.0);
                }
                continue;
            }
            match parse_f64(v) {
                Some(x) => {
                    if x.is_infinite() {
                        if cs.infinite.is_none() {
                            cs.infinite = Some((line, v.to_string()));
                        }
                    } else if !x.is_nan() && usable {
                        cs.n_usable += s.weights.last().copied().filter(|_| l.weight_col.is_some()).unwrap_or(1.0);
                        cs.distinct.add(x, max_bins);
                    }
                }
                None => cs.not_number = Some((line, v.to_string())),
            }
        }
    }
    // A quote that never closes swallows the rest of the chunk into one field: name it rather
    // than the field count or value that follows from it (unless a row before its record is
    // already wrong).
    if s.quotes > 0 {
        let mut q = QuoteScan::default();
        q.feed(&buf);
        if let Some((open, rec_line)) = q.unterminated() {
            if s.ragged.as_ref().is_none_or(|(l, _)| *l >= rec_line) {
                // The message names the line in the file, known only when the chunks merge.
                s.ragged = Some((open, String::new()));
                s.unterminated = Some(open);
            }
        }
    }
    // Level names of the columns that are not all numbers in this chunk.
    if let Some(l) = layout {
        let cols: Vec<usize> = (0..nf).filter(|&f| s.cols[f].not_number.is_some()).map(|f| l.feature_cols[f]).collect();
        if !cols.is_empty() && s.ragged.is_none() {
            for (set, c) in collect_levels(&buf, &cols).into_iter().zip(&cols) {
                if let Some(f) = l.feature_of[*c] {
                    s.cols[f].levels = set;
                }
            }
        }
    }
    Ok(s)
}

/// The non-missing (trimmed) values of columns `cols` in a chunk of well-formed rows.
fn collect_levels(buf: &[u8], cols: &[usize]) -> Vec<HashSet<String>> {
    let mut sets = vec![HashSet::new(); cols.len()];
    let mut rec = Records::new(buf);
    while let Ok(true) = rec.next_record() {
        if rec.is_blank() {
            continue;
        }
        for (set, &c) in sets.iter_mut().zip(cols) {
            let v = rec.field(c);
            if !is_missing(v) && !set.contains(v) {
                set.insert(v.to_string());
            }
        }
    }
    sets
}

/// Pass 2 over one chunk: per feature, (values, weights) of the rows its rule looks at.
#[allow(clippy::too_many_arguments)]
fn gather_chunk(
    src: &Source,
    start: u64,
    end: u64,
    row_start: usize,
    picked: &[usize],
    w: Option<&[f64]>,
    layout: &Layout,
    want: &[Want],
) -> Result<Vec<(Vec<f64>, Vec<f64>)>> {
    let mut out = vec![(Vec::new(), Vec::new()); want.len()];
    let any_all = want.contains(&Want::All);
    if !any_all && picked.is_empty() {
        return Ok(out);
    }
    let buf = src.read(start, end)?;
    let mut rec = Records::new(&buf);
    let mut row = row_start;
    let mut next = picked.iter().copied().peekable();
    let value = |v: &str| if is_missing(v) { f64::NAN } else { parse_f64(v).unwrap_or(f64::NAN) };
    while let Ok(true) = rec.next_unsplit() {
        if rec.is_blank() {
            continue;
        }
        let wt = w.map_or(1.0, |w| w[row - row_start]);
        // Frequency weights: the sample lists a row once per sampled unit of its weight.
        let mut times = 0;
        while next.next_if_eq(&row).is_some() {
            times += 1;
        }
        if times == 0 && !any_all {
            row += 1; // not sampled: neither split nor parsed
            if next.peek().is_none() {
                break;
            }
            continue;
        }
        rec.split();
        for (f, &c) in layout.feature_cols.iter().enumerate() {
            let keep = match want[f] {
                Want::None => false,
                Want::Sample => times > 0,
                Want::All => wt > 0.0,
            };
            if !keep {
                continue;
            }
            let x = value(rec.field(c));
            match want[f] {
                Want::All if x.is_nan() => {}
                Want::All => {
                    out[f].0.push(x);
                    if w.is_some() {
                        out[f].1.push(wt);
                    }
                }
                // Each sampled unit with weight 1 (BinMapper::fit's sampled rule).
                _ => out[f].0.extend(std::iter::repeat_n(x, times)),
            }
        }
        row += 1;
        if !any_all && next.peek().is_none() {
            break;
        }
    }
    Ok(out)
}

struct BinCtx<'a> {
    src: &'a Source<'a>,
    layout: &'a Layout,
    mapper: &'a BinMapper,
    class_index: &'a HashMap<&'a str, u32>,
    level_index: &'a [HashMap<&'a str, u32>],
    line0: &'a [usize],
}

/// Splits the column-major `v` (`n` rows per column) into, per chunk, its rows of every column.
fn split_columns<'v, T>(v: &'v mut [T], n: usize, row_counts: &[usize]) -> Vec<Vec<&'v mut [T]>> {
    let mut parts: Vec<Vec<&mut [T]>> = (0..row_counts.len()).map(|_| Vec::new()).collect();
    if n == 0 {
        return parts;
    }
    for col in v.chunks_mut(n) {
        let mut rest = col;
        for (c, &rc) in row_counts.iter().enumerate() {
            let (a, b) = rest.split_at_mut(rc);
            parts[c].push(a);
            rest = b;
        }
    }
    parts
}

/// Pass 3: every chunk parsed into its bins and labels, in parallel.
#[allow(clippy::too_many_arguments)]
fn fill<T: Copy + Send>(
    ctx: &BinCtx,
    bounds: &[u64],
    parts: Vec<Vec<&mut [T]>>,
    y_classes: &mut [u32],
    y_multi: &mut [u8],
    row_counts: &[usize],
    k: usize,
    conv: impl Fn(usize) -> T + Sync + Copy,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<()> {
    let mut yc: Vec<&mut [u32]> = Vec::new();
    let mut rest = y_classes;
    let mut ym: Vec<&mut [u8]> = Vec::new();
    let mut rest_m = y_multi;
    for &rc in row_counts {
        let at = if rest.is_empty() { 0 } else { rc };
        let (a, b) = std::mem::take(&mut rest).split_at_mut(at);
        yc.push(a);
        rest = b;
        let at = if rest_m.is_empty() { 0 } else { rc * k };
        let (a, b) = std::mem::take(&mut rest_m).split_at_mut(at);
        ym.push(a);
        rest_m = b;
    }
    try_map_in_order(parts.into_par_iter().zip(yc).zip(ym).enumerate(), |(c, ((cols, yc), ym))| {
        bin_chunk(ctx, c, bounds[c], bounds[c + 1], cols, yc, ym, k, conv)?;
        progress(bounds[c + 1] - bounds[c]);
        Ok(())
    })
    .map(drop)
}

/// Rows per block of parsed values in pass 3 (fewer for wide files, see [`BIN_BLOCK_VALUES`]).
const BIN_BLOCK: usize = 256;

/// At most this many parsed values per block (128 KiB of `f64`): a block of [`BIN_BLOCK`] rows of
/// every feature would otherwise cost 2 KiB per column and chunk, out of proportion to a file
/// with a wide header and few rows.
const BIN_BLOCK_VALUES: usize = 1 << 14;

#[allow(clippy::too_many_arguments)]
fn bin_chunk<T: Copy>(
    ctx: &BinCtx,
    c: usize,
    start: u64,
    end: u64,
    mut cols: Vec<&mut [T]>,
    yc: &mut [u32],
    ym: &mut [u8],
    k: usize,
    conv: impl Fn(usize) -> T,
) -> Result<()> {
    let buf = ctx.src.read(start, end)?;
    let mut rec = Records::new(&buf);
    let l = ctx.layout;
    let mut row = 0;
    let n_rows = cols.first().map_or(yc.len().max(ym.len() / k.max(1)), |c| c.len());
    // Numeric values are parsed for a block of rows, then binned feature by feature: the bin
    // searches of a block are independent, so they overlap in the processor instead of each
    // waiting on the parsing around it.
    let nf = l.feature_cols.len();
    let block = BIN_BLOCK.min(BIN_BLOCK_VALUES / nf.max(1)).clamp(1, n_rows.max(1));
    let mut vals = vec![f64::NAN; nf * block];
    let mut block0 = 0; // first row of the current block
    let flush = |vals: &[f64], cols: &mut [&mut [T]], block0: usize, m: usize| {
        for (f, out) in cols.iter_mut().enumerate() {
            if let FeatureBins::Numeric { thresholds } = &ctx.mapper.features[f] {
                let xs = &vals[f * block..f * block + m];
                for (o, &x) in out[block0..block0 + m].iter_mut().zip(xs) {
                    *o = conv(FeatureBins::bin_of_value(thresholds, x));
                }
            }
        }
    };
    while row < n_rows {
        if row - block0 == block {
            flush(&vals, &mut cols, block0, block);
            block0 = row;
        }
        match rec.next_record() {
            Ok(true) => {}
            // Pass 1 read the same bytes without error.
            _ => break,
        }
        if rec.is_blank() {
            continue;
        }
        let line = rec.line();
        let field = |col: usize| rec.field(col);
        if l.multi {
            for (j, &col) in l.label_cols.iter().enumerate() {
                ym[row * k + j] = u8::from(matches!(field(col), "1" | "1.0"));
            }
        } else if let Some(&col) = l.label_cols.first() {
            let v = field(col);
            yc[row] = *ctx.class_index.get(v).ok_or_else(|| {
                ctx.src.perr(
                    ctx.line0[c] + line - 1,
                    Some(&l.names[col]),
                    format!("label '{}' changed while reading", shown(v)),
                )
            })?;
        }
        for (f, (&col, out)) in l.feature_cols.iter().zip(cols.iter_mut()).enumerate() {
            let v = field(col);
            match &ctx.mapper.features[f] {
                FeatureBins::Numeric { .. } => {
                    vals[f * block + row - block0] =
                        if is_missing(v) { f64::NAN } else { parse_f64(v).unwrap_or(f64::NAN) };
                }
                FeatureBins::Categorical { n_levels } => {
                    let b = if is_missing(v) {
                        *n_levels
                    } else {
                        ctx.level_index[f].get(v).map_or(*n_levels, |&i| i as usize)
                    };
                    out[row] = conv(b);
                }
            }
        }
        row += 1;
    }
    flush(&vals, &mut cols, block0, row - block0);
    if row < n_rows {
        return Err(Error::InvalidData(format!("{}: the file changed while it was read", ctx.src.name)));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{read_csv, CsvOptions};

    fn write(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    fn small(chunk: usize) -> StreamOptions {
        StreamOptions { chunk_bytes: chunk, ..Default::default() }
    }

    /// `read_csv` then `BinMapper::fit` + `transform`: the reference the streamed reader must equal.
    fn reference(path: &Path, csv: &CsvOptions, max_bins: usize) -> Result<BinnedTable> {
        let d = read_csv(path, csv)?;
        let mapper = BinMapper::fit(&d.features, max_bins, d.sample_weight.as_deref())?;
        let bins = mapper.transform(&d.features)?;
        let s = crate::data::Schema::from_features(&d.features);
        Ok(BinnedTable {
            names: s.names,
            kinds: s.kinds,
            levels: s.levels,
            mapper,
            bins,
            target: d.target.ok_or_else(|| Error::InvalidData("no target".into()))?,
            sample_weight: d.sample_weight,
        })
    }

    /// The error message, with the temporary directory left out of the file name.
    fn err<T>(r: Result<T>) -> String {
        match r {
            Ok(_) => "no error".into(),
            Err(e) => {
                let m = e.to_string();
                m.rsplit_once('/').map_or(m.clone(), |p| p.1.to_string())
            }
        }
    }

    #[test]
    fn streamed_equals_read_csv_on_mixed_data() {
        let dir = tempfile::tempdir().unwrap();
        let mut text = String::from("a,b,c,w,label\n");
        for i in 0..500 {
            let a = if i % 17 == 0 { "NA".to_string() } else { format!("{}", (i * 7919 % 1000) as f64 / 7.0) };
            let b = ["x", "y", "z", "?"][i % 4];
            let c = if i == 250 { "word".to_string() } else { format!("{}", i % 5) }; // categorical late
            text.push_str(&format!("{a},{b},{c},{},{}\n", (i % 3) as f64 * 0.5, ["no", "yes"][i % 2]));
            if i % 100 == 0 {
                text.push('\n'); // blank lines are skipped
            }
        }
        let p = write(dir.path(), "m.csv", &text);
        let csv = CsvOptions { weight: Some("w".into()), ..Default::default() };
        let want = reference(&p, &csv, 255).unwrap();
        for chunk in [1, 37, 1000, 1 << 20] {
            let o = StreamOptions { weight: Some("w".into()), ..small(chunk) };
            assert_eq!(read_csv_binned(&p, &o).unwrap(), want, "chunk {chunk}");
        }
        // Few bins: quantile thresholds instead of midpoints.
        let want = reference(&p, &csv, 8).unwrap();
        let o = StreamOptions { weight: Some("w".into()), max_bins: 8, ..small(53) };
        assert_eq!(read_csv_binned(&p, &o).unwrap(), want);
    }

    #[test]
    fn sampled_binning_is_bit_identical() {
        // More rows than BIN_SAMPLE_ROWS: the seeded sample places the quantile thresholds; a
        // sparse feature (few non-missing values) uses all of them; a low-cardinality one its
        // distinct values, including one the sample may miss.
        let dir = tempfile::tempdir().unwrap();
        let n = BIN_SAMPLE_ROWS + 30_000;
        let mut text = String::with_capacity(n * 40);
        text.push_str("x,sparse,few,w,label\n");
        let mut s: u64 = 12345;
        for i in 0..n {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let x = (s >> 11) as f64 / (1u64 << 53) as f64;
            let sparse = if i % 3 == 0 { format!("{:.4}", x * 3.0) } else { String::new() };
            let few = if i == n - 7 { 99 } else { i % 9 };
            let w = if i % 10 == 0 { "0" } else { "1.5" };
            text.push_str(&format!("{:.6},{sparse},{few},{w},{}\n", x * 100.0, u8::from(x > 0.4)));
        }
        let p = write(dir.path(), "big.csv", &text);
        for weight in [None, Some("w".to_string())] {
            let csv = CsvOptions { weight: weight.clone(), ..Default::default() };
            let want = reference(&p, &csv, 255).unwrap();
            let o = StreamOptions { weight, ..small(1 << 18) };
            let got = read_csv_binned(&p, &o).unwrap();
            assert_eq!(got.mapper, want.mapper);
            assert_eq!(got, want);
        }
    }

    #[test]
    fn an_unterminated_quote_names_its_line() {
        let dir = tempfile::tempdir().unwrap();
        let want = "q.csv:3: unterminated quote starting at line 3: a field opens with \" and is never closed, so the \
                    rest of the file reads as one field (close the quote, or write a quote inside a quoted field as \
                    \"\")";
        // Too few fields after it, and the right number (the last field swallows the rest).
        for text in ["a,b,label\n1,2,0\n3,\"4,1\n5,6,0\n7,8,1\n", "a,b,label\n1,2,0\n3,4,\"1\n5,6,0\n"] {
            let p = write(dir.path(), "q.csv", text);
            for chunk in [4, 1 << 20] {
                assert_eq!(err(read_csv_binned(&p, &small(chunk))), want, "{text:?}");
            }
            assert_eq!(err(read_csv(&p, &CsvOptions::default())), want, "{text:?}");
        }
        // A ragged row before the quote's record is reported first; closed quotes are fine.
        let p = write(dir.path(), "q.csv", "a,b,label\n1,0\n3,\"4,1\n");
        assert_eq!(err(read_csv_binned(&p, &small(8))), "q.csv:2: expected 3 fields (as in the header), found 2");
        assert_eq!(err(read_csv(&p, &CsvOptions::default())), "q.csv:2: expected 3 fields (as in the header), found 2");
        let p = write(dir.path(), "q.csv", "a,b,label\n1,\"x\"\"y\",0\n3,\"p\nq\",1\n");
        assert_eq!(read_csv_binned(&p, &small(8)).unwrap().bins.n_rows, 2);
    }

    #[test]
    fn a_categorical_column_with_too_many_categories_names_its_first_non_number() {
        let dir = tempfile::tempdir().unwrap();
        let mut t = String::from("x,label\n");
        for i in 0..400 {
            t.push_str(&format!("{i}.25,{}\n", i % 2));
        }
        t.push_str("12..5,1\n");
        let p = write(dir.path(), "typo.csv", &t);
        assert_eq!(
            err(read_csv_binned(&p, &small(1000))),
            "invalid data: categorical feature 'x' has 401 categories, more than max_bins = 255; it is categorical \
             because of '12..5' at line 402, its first value that is not a number (fix that value if the column is \
             numeric); else raise max_bins, up to 65535, or recode the feature"
        );
    }

    #[test]
    fn echoed_values_are_shortened() {
        let dir = tempfile::tempdir().unwrap();
        let long = "q".repeat(10_000_000);
        let p = write(dir.path(), "w.csv", &format!("x,w,label\n1,1,a\n2,{long},b\n"));
        let o = StreamOptions { weight: Some("w".into()), ..small(1 << 20) };
        let e = err(read_csv_binned(&p, &o));
        assert_eq!(
            e,
            format!(
                "w.csv:3: column 'w': sample weight '{}… (10000000 characters)' is not a finite number ≥ 0",
                &long[..60]
            )
        );
        let p = write(dir.path(), "m.csv", &format!("x,l0,l1\n1,0,{long}\n"));
        let o = StreamOptions { label: LabelSelector::Prefix("l".into()), ..small(1 << 20) };
        assert!(err(read_csv_binned(&p, &o)).ends_with("… (10000000 characters)' is not 0 or 1"));
    }

    #[test]
    fn errors_name_file_line_and_column_inside_chunks() {
        let dir = tempfile::tempdir().unwrap();
        let mut good = String::from("a,b,label\n");
        for i in 0..200 {
            good.push_str(&format!("{i},{},{}\n", i % 7, i % 2));
        }
        let with = |line: usize, row: &str| {
            let mut lines: Vec<&str> = good.lines().collect();
            lines[line - 1] = row;
            lines.join("\n") + "\n"
        };
        let cases = [
            (with(120, "1,2"), "e.csv:120: expected 3 fields (as in the header), found 2"),
            (with(77, "inf,2,1"), "e.csv:77: column 'a': infinite value 'inf'"),
            (with(150, "1,2,NaN"), "e.csv:150: column 'label': NaN label"),
            (with(151, "1,2,"), "e.csv:151: column 'label': missing label"),
        ];
        for (text, want) in &cases {
            let p = write(dir.path(), "e.csv", text);
            assert_eq!(&err(read_csv(&p, &CsvOptions::default())), want, "read_csv");
            for chunk in [16, 100, 1 << 20] {
                assert_eq!(err(read_csv_binned(&p, &small(chunk))), *want, "chunk {chunk}");
            }
        }
        // Several problems: the same one as read_csv (ragged rows first, then labels, then features).
        let mut t = with(30, "inf,2,1");
        t = t.replace("\n180,5,0\n", "\n180,5\n");
        let p = write(dir.path(), "e.csv", &t);
        assert_eq!(err(read_csv_binned(&p, &small(64))), "e.csv:182: expected 3 fields (as in the header), found 2");
        // Two ragged rows in different chunks: always the earlier line, whatever thread finishes
        // first (rayon's own Result collect reports the first error met in time).
        let t = with(40, "1,2").replace("\n180,5,0\n", "\n180,5\n");
        let p = write(dir.path(), "e.csv", &t);
        let pool = rayon::ThreadPoolBuilder::new().num_threads(4).build().unwrap();
        for _ in 0..30 {
            assert_eq!(
                pool.install(|| err(read_csv_binned(&p, &small(16)))),
                "e.csv:40: expected 3 fields (as in the header), found 2"
            );
        }
        // Weights.
        let p =
            write(dir.path(), "w.csv", &good.replace("a,b,label", "a,w,label").replace("\n99,1,1\n", "\n99,-1,1\n"));
        let o = StreamOptions { weight: Some("w".into()), ..small(50) };
        assert_eq!(
            err(read_csv_binned(&p, &o)),
            "w.csv:101: column 'w': sample weight '-1' is not a finite number ≥ 0"
        );
        // Header and empty files.
        let p = write(dir.path(), "h.csv", "");
        assert!(err(read_csv_binned(&p, &small(8))).contains("h.csv:1: empty file"));
        let p = write(dir.path(), "h.csv", "a,label\n");
        assert!(err(read_csv_binned(&p, &small(8))).contains("no data rows"));
        let p = write(dir.path(), "h.csv", "a,a,label\n1,2,0\n");
        assert!(err(read_csv_binned(&p, &small(8))).contains("duplicate column"));
        let p = write(dir.path(), "h.csv", "a,label\n1,0\n");
        let o = StreamOptions { label: LabelSelector::Name("y".into()), ..small(8) };
        assert!(err(read_csv_binned(&p, &o)).contains("no label column 'y'"));
        // Too many categories.
        let mut t = String::from("c,label\n");
        for i in 0..300 {
            t.push_str(&format!("v{i},{}\n", i % 2));
        }
        let p = write(dir.path(), "cat.csv", &t);
        assert!(err(read_csv_binned(&p, &small(100))).contains("has 300 categories, more than max_bins = 255"));
    }

    #[test]
    fn one_parse_per_field_keeps_errors_kinds_and_bins() {
        // Continuous columns overflow their distinct values within a few rows (max_bins 4 and
        // 255); after that the first pass only validates the fields. Every kind of later field
        // must still be seen: infinite values (as text the validator leaves to the parser),
        // non-numbers (the column becomes categorical), missing values, exponents, weights.
        let dir = tempfile::tempdir().unwrap();
        let mut good = String::from("a,b,w,label\n");
        for i in 0..400 {
            let a = match i % 50 {
                7 => "NA".to_string(),
                11 => format!("{}e-3", i * 13),
                13 => format!("+{}.", i),
                17 => format!("-.{}", i + 1),
                19 => "1e199".to_string(),
                23 => "1e250".to_string(), // finite, parsed (not recognised by the validator)
                _ => format!("{}", (i * 7919 % 1000) as f64 / 7.0),
            };
            good.push_str(&format!("{a},{},{},{}\n", (i * 31 % 997) as f64 * 0.01, 1 + i % 3, i % 2));
        }
        let with = |line: usize, row: &str| {
            let mut lines: Vec<&str> = good.lines().collect();
            lines[line - 1] = row;
            lines.join("\n") + "\n"
        };
        let csv = CsvOptions { weight: Some("w".into()), ..Default::default() };
        for max_bins in [4, 255] {
            let p = write(dir.path(), "g.csv", &good);
            let want = reference(&p, &csv, max_bins).unwrap();
            for chunk in [64, 1000, 1 << 20] {
                let o = StreamOptions { weight: Some("w".into()), max_bins, ..small(chunk) };
                assert_eq!(read_csv_binned(&p, &o).unwrap(), want, "max_bins {max_bins}, chunk {chunk}");
            }
        }
        let cases = [
            (with(300, "1e400,2,1,0"), Some("g.csv:300: column 'a': infinite value '1e400'")),
            (with(301, "-infinity,2,1,0"), Some("g.csv:301: column 'a': infinite value '-infinity'")),
            (with(302, "1,inf,1,0"), Some("g.csv:302: column 'b': infinite value 'inf'")),
            (with(303, "1,2,1e999,0"), Some("g.csv:303: column 'w': sample weight '1e999' is not a finite number ≥ 0")),
            // A word late in a continuous column: categorical, as read_csv decides.
            (with(350, "word,2,1,0"), None),
            (with(351, "1.5.2,2,1,0"), None),
        ];
        for (text, want) in &cases {
            let p = write(dir.path(), "g.csv", text);
            for max_bins in [4, 255, 1000] {
                for chunk in [64, 1000, 1 << 20] {
                    let o = StreamOptions { weight: Some("w".into()), max_bins, ..small(chunk) };
                    let got = read_csv_binned(&p, &o);
                    match want {
                        Some(w) => {
                            assert_eq!(&err(read_csv(&p, &csv)), w, "read_csv");
                            assert_eq!(err(got), *w, "max_bins {max_bins}, chunk {chunk}");
                        }
                        None => match (got, reference(&p, &csv, max_bins)) {
                            (Ok(got), Ok(want)) => {
                                assert_eq!(got.kinds[0], FeatureKind::Categorical);
                                assert_eq!(got, want, "max_bins {max_bins}, chunk {chunk}");
                            }
                            // Too many categories for max_bins: the same count (the streamed
                            // reader adds the first non-number and its line).
                            (got, want) => {
                                let head = |m: String| m.split(" (raise").next().unwrap_or("").to_string();
                                let got = err(got);
                                assert!(got.contains("first value that is not a number"), "{got}");
                                assert_eq!(
                                    got.split("; it is").next().unwrap_or(""),
                                    head(err(want)),
                                    "max_bins {max_bins}, chunk {chunk}"
                                )
                            }
                        },
                    }
                }
            }
        }
    }

    #[test]
    fn fast_path_blank_lines_and_error_lines_match_read_csv() {
        // Quote-free chunks take the direct splitter: blank lines (empty, spaces, a vertical tab),
        // a last row without a newline and errors after blank lines get read_csv's lines.
        let dir = tempfile::tempdir().unwrap();
        let mut good = String::from("a,b,label\n");
        for i in 0..120 {
            good.push_str(&format!("{}.{},{},{}\n", i, i % 10, i % 7, i % 2));
            if i % 13 == 0 {
                good.push_str(["\n", "   \n", "\u{b}\n"][i % 3]);
            }
        }
        let p = write(dir.path(), "f.csv", good.trim_end());
        let want = reference(&p, &CsvOptions::default(), 255).unwrap();
        for chunk in [1, 50, 1 << 20] {
            assert_eq!(read_csv_binned(&p, &small(chunk)).unwrap(), want, "chunk {chunk}");
        }
        for bad in ["\n\n1,2\n", "\n \n1,x\u{b},1\ninf,2,0\n", "\n1e999,2,1\n"] {
            let t = good.replacen("60.0,4,0\n", &format!("60.0,4,0\n{bad}"), 1);
            let p = write(dir.path(), "f.csv", &t);
            let want = err(read_csv(&p, &CsvOptions::default()));
            assert!(want.starts_with("f.csv:"), "{want}");
            for chunk in [40, 1 << 20] {
                assert_eq!(err(read_csv_binned(&p, &small(chunk))), want, "chunk {chunk}: {bad:?}");
            }
        }
    }

    #[test]
    fn quoted_newlines_across_chunks() {
        let dir = tempfile::tempdir().unwrap();
        let mut t = String::from("a,note,label\n");
        for i in 0..60 {
            let note = if i % 5 == 0 { "\"two\nlines, and a comma\"".to_string() } else { format!("n{}", i % 3) };
            t.push_str(&format!("{i},{note},{}\n", i % 2));
        }
        t.push_str("1,2\n"); // ragged: its line counts the newlines inside quotes
        let p = write(dir.path(), "q.csv", &t);
        let want = err(read_csv(&p, &CsvOptions::default()));
        assert!(want.starts_with("q.csv:74:"), "{want}");
        for chunk in [7, 64, 1 << 20] {
            assert_eq!(err(read_csv_binned(&p, &small(chunk))), want, "chunk {chunk}");
        }
        let t = t.replace("1,2\n", "");
        let p = write(dir.path(), "q.csv", &t);
        let want = reference(&p, &CsvOptions::default(), 255).unwrap();
        for chunk in [7, 64, 1 << 20] {
            assert_eq!(read_csv_binned(&p, &small(chunk)).unwrap(), want, "chunk {chunk}");
        }
    }

    #[test]
    fn max_rows_multilabel_and_thread_counts() {
        let dir = tempfile::tempdir().unwrap();
        let mut t = String::from("a,b,label_0,label_1\n");
        for i in 0..300 {
            t.push_str(&format!("{},{},{},{}\n", i as f64 / 3.0, ["p", "q"][i % 2], i % 2, u8::from(i % 3 == 0)));
        }
        let p = write(dir.path(), "ml.csv", &t);
        let csv =
            CsvOptions { label: LabelSelector::Prefix("label_".into()), max_rows: Some(120), ..Default::default() };
        let want = reference(&p, &csv, 16).unwrap();
        let o = StreamOptions {
            label: LabelSelector::Prefix("label_".into()),
            max_rows: Some(120),
            max_bins: 16,
            ..small(90)
        };
        for threads in [1, 2, 3] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            assert_eq!(pool.install(|| read_csv_binned(&p, &o)).unwrap(), want, "{threads} threads");
        }
        // The progress hook sees every byte of every pass.
        let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
        let s2 = seen.clone();
        let o = StreamOptions {
            progress: Some(Arc::new(move |p: ReadProgress| s2.lock().unwrap().push(p))),
            label: LabelSelector::Prefix("label_".into()),
            ..small(500)
        };
        read_csv_binned(&p, &o).unwrap();
        let seen = seen.lock().unwrap();
        let total = (t.len() - t.find('\n').unwrap() - 1) as u64;
        assert!(seen.iter().any(|p| p.pass == 1 && p.bytes == total && p.total == total), "{seen:?}");
        assert!(seen.iter().any(|p| p.pass == 3 && p.bytes == total), "{seen:?}");
    }
}
