//! Parquet and Arrow IPC input (cargo feature `arrow`).
//!
//! Columns are typed, so nothing is inferred: integers, floats, booleans and decimals that fit an
//! `f64` are numeric features (null and NaN are missing, ±∞ is an error), strings and dictionaries
//! of strings are categorical (null, and the CSV reader's missing markers, are missing). Any other
//! type (nested, binary, temporal, wide decimals) is an error naming the column.
//!
//! [`read_arrow_binned`] reads one column at a time, in parallel over columns: each column is
//! decoded, binned with [`BinMapper::fit`]'s rule (the same seeded row sample for every column,
//! since it depends only on the row count and the weights) and dropped, so the table is never held
//! as floats. [`ArrowBlocks`] reads rows in blocks, for streamed prediction.

use std::collections::HashMap;
use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Float32Type, Float64Type, Int16Type, Int32Type, Int64Type, Int8Type, UInt16Type, UInt32Type, UInt64Type, UInt8Type,
};
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::DataType;
use parquet::file::metadata::ParquetMetaData;
use rayon::prelude::*;

use super::bins::{BinData, BinMapper, BinnedMatrix, FeatureSummary, NumericSummary};
use super::csv_reader::{is_missing, LabelSelector};
use super::csv_stream::{BinnedTable, StreamOptions};
use super::{Block, BlockLabels, Column, Dataset, FeatureKind, Features, Interner, Target, MISSING_CODE};
use crate::error::{Error, Result};
use crate::util::par::try_map_in_order;

/// Columnar file formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArrowFormat {
    /// Apache Parquet (`.parquet`).
    Parquet,
    /// Arrow IPC, file or stream format (`.arrow`, `.feather`, `.ipc`).
    Ipc,
}

impl ArrowFormat {
    /// The format a file extension names, if any.
    pub fn from_extension(path: &Path) -> Option<ArrowFormat> {
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("").to_lowercase();
        match ext.as_str() {
            "parquet" | "pq" => Some(ArrowFormat::Parquet),
            "arrow" | "feather" | "ipc" | "arrows" => Some(ArrowFormat::Ipc),
            _ => None,
        }
    }
}

/// Rows per decoded batch.
const BATCH_ROWS: usize = 65_536;

fn ferr(path: &Path, e: impl std::fmt::Display) -> Error {
    let e = e.to_string();
    // The parquet crate's words for a codec this build leaves out (brotli, lzo): say what to do.
    if let Some(codec) = e.split("Disabled feature at compile time: ").nth(1) {
        let codec = codec.split_whitespace().next().unwrap_or(codec);
        return Error::InvalidData(format!(
            "{}: the file is compressed with {codec}, which boostlab does not read: rewrite it uncompressed or with \
             snappy, gzip, lz4 or zstd (for example `df.to_parquet(path, compression=\"zstd\")`)",
            path.display()
        ));
    }
    Error::InvalidData(format!("{}: {e}", path.display()))
}

fn open(path: &Path) -> Result<File> {
    File::open(path).map_err(|e| Error::io(path, e))
}

thread_local! {
    /// Nonzero while this thread runs a third-party parser under [`guarded`]: its panics are
    /// turned into errors, so the panic hook stays quiet.
    static GUARDED: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// Runs `f`, a call into a third-party parser (arrow-ipc, parquet) on a file's bytes, so that a
/// panic in it — a malformed file the parser does not expect — is an error naming the file rather
/// than a crash. The last resort: lengths are checked before the parsers run ([`check_ipc`]) and
/// Parquet's embedded Arrow schema is not read; this catches what those checks cannot foresee.
/// The process's panic hook is wrapped once so that it says nothing for a caught panic.
fn guarded<T>(path: &Path, f: impl FnOnce() -> Result<T>) -> Result<T> {
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if GUARDED.with(|g| g.get()) == 0 {
                previous(info)
            }
        }));
    });
    GUARDED.with(|g| g.set(g.get() + 1));
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    GUARDED.with(|g| g.set(g.get() - 1));
    r.unwrap_or_else(|payload| {
        let why = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "the parser failed".into());
        Err(ferr(path, format!("malformed file, which the reader cannot decode ({})", crate::error::shown(&why))))
    })
}

/// A batch iterator whose every step runs under [`guarded`]; it ends after its first error.
struct Guarded {
    path: std::path::PathBuf,
    inner: Box<dyn Iterator<Item = Result<RecordBatch>> + Send>,
    done: bool,
}

impl Iterator for Guarded {
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Result<RecordBatch>> {
        if self.done {
            return None;
        }
        let inner = &mut self.inner;
        let r = guarded(&self.path, || Ok(inner.next())).transpose()?;
        let r = r.and_then(|x| x);
        self.done = r.is_err();
        Some(r)
    }
}

/// The two layouts of Arrow IPC.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum IpcLayout {
    /// `ARROW1` magic, messages, footer (`.arrow`, `.feather`).
    File,
    /// Messages only (`.arrows`).
    Stream,
}

/// How many times its compressed size a compressed IPC buffer may claim to hold: beyond any codec's
/// real ratio on Arrow data (zstd reaches ≈ 32,000 on a constant column), so that a buffer cannot
/// make the reader reserve memory out of proportion to the file.
const MAX_COMPRESSION_RATIO: u64 = 65_536;

/// Checks every length an Arrow IPC file declares against the file's size before the arrow-ipc
/// reader allocates from them: the footer's length and blocks (file layout), each message's
/// metadata and body lengths (both layouts), and the uncompressed length each compressed buffer
/// claims. Reads only the metadata (and 8 bytes per compressed buffer), so the memory it takes
/// grows with the file's size, not with what the file claims. Returns the layout.
fn check_ipc(path: &Path) -> Result<IpcLayout> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = open(path)?;
    let size = f.metadata().map_err(|e| Error::io(path, e))?.len();
    let bad = |what: String| ferr(path, format!("not a valid Arrow IPC file: {what}"));
    let io = |e: std::io::Error| Error::io(path, e);
    let mut head = [0u8; 6];
    let n = f.by_ref().take(6).read(&mut head).map_err(io)?;
    if n == 6 && &head == b"ARROW1" {
        // magic (8 bytes with padding) … footer, footer length (4), magic (6)
        if size < 18 {
            return Err(bad(format!(
                "it starts like the file layout (ARROW1) but has {size} bytes, fewer than the 18 that layout needs \
                 (a truncated file?)"
            )));
        }
        let mut tail = [0u8; 10];
        f.seek(SeekFrom::End(-10)).map_err(io)?;
        f.read_exact(&mut tail).map_err(io)?;
        if &tail[4..] != b"ARROW1" {
            return Err(bad("it does not end with the ARROW1 magic (a truncated file?)".into()));
        }
        let footer_len = i32::from_le_bytes([tail[0], tail[1], tail[2], tail[3]]);
        let Some(footer_len) = u64::try_from(footer_len).ok().filter(|&l| l <= size - 18) else {
            return Err(bad(format!("its footer claims {footer_len} bytes, the file has {size}")));
        };
        let mut footer = vec![0u8; footer_len as usize];
        f.seek(SeekFrom::Start(size - 10 - footer_len)).map_err(io)?;
        f.read_exact(&mut footer).map_err(io)?;
        let footer = arrow_ipc::root_as_footer(&footer).map_err(|e| bad(format!("its footer is corrupt: {e}")))?;
        let blocks = footer.recordBatches().into_iter().flatten().chain(footer.dictionaries().into_iter().flatten());
        for b in blocks {
            let (offset, meta, body) = (b.offset(), i64::from(b.metaDataLength()), b.bodyLength());
            let end = [offset, meta, body]
                .iter()
                .try_fold(0u64, |acc, &x| u64::try_from(x).ok().and_then(|x| acc.checked_add(x)));
            if end.is_none_or(|e| e > size) {
                return Err(bad(format!(
                    "a block claims {meta} + {body} bytes at offset {offset}, beyond the file's {size} bytes"
                )));
            }
            let next = check_message(&mut f, offset as u64, size, &bad)?;
            if next.is_none_or(|n| n > offset as u64 + meta as u64 + body as u64) {
                return Err(bad(format!("the message at offset {offset} does not fit its block")));
            }
        }
        return Ok(IpcLayout::File);
    }
    let mut pos = 0;
    while pos < size {
        match check_message(&mut f, pos, size, &bad)? {
            Some(next) => pos = next,
            None => break,
        }
    }
    Ok(IpcLayout::Stream)
}

/// Checks the encapsulated IPC message at `pos` (continuation marker, metadata length,
/// metadata, body) against the file's `size`; the position after it, or `None` at an
/// end-of-stream marker.
fn check_message(f: &mut File, pos: u64, size: u64, bad: &dyn Fn(String) -> Error) -> Result<Option<u64>> {
    use std::io::{Read, Seek, SeekFrom};
    let short = || bad(format!("a message at byte {pos} is cut short by the end of the file"));
    let mut word = [0u8; 4];
    let mut read_word = |f: &mut File, at: u64| -> Result<[u8; 4]> {
        if at + 4 > size {
            return Err(short());
        }
        f.seek(SeekFrom::Start(at)).map_err(|_| short())?;
        f.read_exact(&mut word).map_err(|_| short())?;
        Ok(word)
    };
    let mut at = pos;
    let mut w = read_word(f, at)?;
    at += 4;
    if w == [0xff; 4] {
        w = read_word(f, at)?;
        at += 4;
    }
    let meta_len = i32::from_le_bytes(w);
    if meta_len == 0 {
        return Ok(None);
    }
    let Some(meta_len) = u64::try_from(meta_len).ok().filter(|&l| l <= size - at) else {
        return Err(bad(format!(
            "a message at byte {pos} claims {meta_len} bytes of metadata, the file has {} bytes after it",
            size - at
        )));
    };
    let mut meta = vec![0u8; meta_len as usize];
    f.read_exact(&mut meta).map_err(|_| short())?;
    at += meta_len;
    let m = arrow_ipc::root_as_message(&meta).map_err(|e| bad(format!("the message at byte {pos} is corrupt: {e}")))?;
    let body = m.bodyLength();
    let Some(body) = u64::try_from(body).ok().filter(|&b| b <= size - at) else {
        return Err(bad(format!(
            "a message at byte {pos} claims a body of {body} bytes, the file has {} bytes after its metadata",
            size - at
        )));
    };
    let batch = m.header_as_record_batch().or_else(|| m.header_as_dictionary_batch().and_then(|d| d.data()));
    if let Some(b) = batch.filter(|b| b.compression().is_some()) {
        for buf in b.buffers().into_iter().flatten() {
            let (offset, len) = (buf.offset(), buf.length());
            let (Ok(offset), Ok(len)) = (u64::try_from(offset), u64::try_from(len)) else {
                return Err(bad(format!("a buffer at byte {pos} has a negative offset or length")));
            };
            if offset.checked_add(len).is_none_or(|e| e > body) {
                return Err(bad(format!("a buffer at byte {pos} lies outside its message's body")));
            }
            if len < 8 {
                continue;
            }
            let mut prefix = [0u8; 8];
            f.seek(SeekFrom::Start(at + offset)).map_err(|_| short())?;
            f.read_exact(&mut prefix).map_err(|_| short())?;
            let claimed = i64::from_le_bytes(prefix);
            // −1: stored uncompressed.
            if claimed != -1 && u64::try_from(claimed).map_or(true, |c| c / MAX_COMPRESSION_RATIO > len) {
                return Err(bad(format!(
                    "a compressed buffer of {len} bytes claims to hold {claimed} bytes, more than {MAX_COMPRESSION_RATIO} \
                     times its size"
                )));
            }
        }
    }
    Ok(Some(at + body))
}

/// The Parquet reader's options: the embedded Arrow schema (`ARROW:schema` metadata) is not read,
/// the Parquet schema alone gives the columns' types. That schema is a second, unchecked copy of
/// what the file's own schema says; the arrow-ipc decoder panics on some corruptions of it, and
/// the types it could add (dictionaries, large strings) read the same here.
fn parquet_options() -> parquet::arrow::arrow_reader::ArrowReaderOptions {
    parquet::arrow::arrow_reader::ArrowReaderOptions::new().with_skip_arrow_metadata(true)
}

/// A Parquet file as the parquet crate reads it, with reads that cannot run past its end. The
/// crate's own `File` reader answers a read at the end of the file with zero bytes, and its Thrift
/// decoder skips unknown fields with such reads without checking that the bytes came: a page
/// header that declares a list of 2³¹ elements then costs 2³¹ system calls (about a minute)
/// before anything fails. Here a read at the end of the file is an error, so such a header fails
/// at its first missing byte, and a range that ends past the file is refused before a buffer of
/// its claimed length is allocated. A well-formed file never reads past its end, so it reads as
/// before.
struct StrictFile {
    file: File,
    len: u64,
}

/// A reader of a [`StrictFile`] from some offset: reading at the end of the file is an error.
struct StrictRead(File);

impl std::io::Read for StrictRead {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.0.read(buf)?;
        if n == 0 && !buf.is_empty() {
            return Err(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "a read past the end of the file"));
        }
        Ok(n)
    }
}

impl parquet::file::reader::Length for StrictFile {
    fn len(&self) -> u64 {
        self.len
    }
}

impl parquet::file::reader::ChunkReader for StrictFile {
    type T = std::io::BufReader<StrictRead>;

    fn get_read(&self, start: u64) -> parquet::errors::Result<Self::T> {
        Ok(std::io::BufReader::new(StrictRead(self.at(start)?)))
    }

    fn get_bytes(&self, start: u64, length: usize) -> parquet::errors::Result<bytes::Bytes> {
        use std::io::Read;
        if start.checked_add(length as u64).is_none_or(|end| end > self.len) {
            return Err(parquet::errors::ParquetError::EOF(format!(
                "{length} bytes at byte {start} run past the end of the file ({} bytes)",
                self.len
            )));
        }
        let mut buf = vec![0u8; length];
        self.at(start)?.read_exact(&mut buf)?;
        Ok(buf.into())
    }
}

impl StrictFile {
    /// A handle on the file positioned at `start` (sharing its offset, as `File::try_clone` does).
    fn at(&self, start: u64) -> std::io::Result<File> {
        use std::io::{Seek, SeekFrom};
        let mut f = self.file.try_clone()?;
        f.seek(SeekFrom::Start(start))?;
        Ok(f)
    }
}

/// A Parquet reader builder for `path`, under [`guarded`].
fn parquet_builder(path: &Path) -> Result<parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder<StrictFile>> {
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    let file = open(path)?;
    let len = file.metadata().map_err(|e| Error::io(path, e))?.len();
    super::parquet_pages::check_footer(&file, len)
        .map_err(|why| ferr(path, format!("not a valid Parquet file: {why}")))?;
    let file = StrictFile { file, len };
    guarded(path, || {
        ParquetRecordBatchReaderBuilder::try_new_with_options(file, parquet_options()).map_err(|e| ferr(path, e))
    })
}

/// A reader of record batches, optionally of some columns only.
fn batches(
    path: &Path,
    format: ArrowFormat,
    columns: Option<Vec<usize>>,
    batch_rows: usize,
) -> Result<Box<dyn Iterator<Item = Result<RecordBatch>> + Send>> {
    let p = path.to_path_buf();
    let inner: Box<dyn Iterator<Item = Result<RecordBatch>> + Send> = match format {
        ArrowFormat::Parquet => {
            use parquet::arrow::ProjectionMask;
            let b = parquet_builder(path)?;
            let r = guarded(path, || {
                let b = match columns {
                    Some(c) => {
                        let mask = ProjectionMask::roots(b.parquet_schema(), c);
                        b.with_projection(mask)
                    }
                    None => b,
                };
                b.with_batch_size(batch_rows).build().map_err(|e| ferr(path, e))
            })?;
            Box::new(r.map(move |b| b.map_err(|e| ferr(&p, e))))
        }
        ArrowFormat::Ipc => match check_ipc(path)? {
            IpcLayout::File => {
                let file = open(path)?;
                let r =
                    guarded(path, || arrow_ipc::reader::FileReader::try_new(file, columns).map_err(|e| ferr(path, e)))?;
                Box::new(r.map(move |b| b.map_err(|e| ferr(&p, e))))
            }
            IpcLayout::Stream => {
                let file = std::io::BufReader::new(open(path)?);
                let r = guarded(path, || {
                    arrow_ipc::reader::StreamReader::try_new(file, columns).map_err(|e| ferr(path, e))
                })?;
                Box::new(r.map(move |b| b.map_err(|e| ferr(&p, e))))
            }
        },
    };
    Ok(Box::new(Guarded { path: path.to_path_buf(), inner, done: false }))
}

/// Column names and types of a Parquet or Arrow IPC file.
pub fn arrow_schema(path: impl AsRef<Path>, format: ArrowFormat) -> Result<Vec<(String, DataType)>> {
    let path = path.as_ref();
    let schema = match format {
        ArrowFormat::Parquet => parquet_builder(path)?.schema().clone(),
        ArrowFormat::Ipc => match check_ipc(path)? {
            IpcLayout::File => {
                let file = open(path)?;
                guarded(path, || arrow_ipc::reader::FileReader::try_new(file, None).map_err(|e| ferr(path, e)))?
                    .schema()
            }
            IpcLayout::Stream => {
                let file = std::io::BufReader::new(open(path)?);
                guarded(path, || arrow_ipc::reader::StreamReader::try_new(file, None).map_err(|e| ferr(path, e)))?
                    .schema()
            }
        },
    };
    let names: Vec<(String, DataType)> =
        schema.fields().iter().map(|f| (f.name().clone(), f.data_type().clone())).collect();
    if let Some(dup) = duplicate_name(names.iter().map(|n| n.0.as_str())) {
        return Err(ferr(
            path,
            format!(
                "column name '{}' appears more than once: rename one of the columns (each feature and label needs its \
                 own name)",
                crate::error::shown(dup)
            ),
        ));
    }
    Ok(names)
}

/// The first name that appears twice, if any.
fn duplicate_name<'a>(names: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let mut seen = std::collections::HashSet::new();
    names.into_iter().find(|n| !seen.insert(*n))
}

/// One column of one file: its first `limit` rows (by default all).
fn read_column(path: &Path, format: ArrowFormat, c: usize, limit: Option<usize>) -> Result<Vec<ArrayRef>> {
    let mut left = limit.unwrap_or(usize::MAX);
    let mut out = Vec::new();
    for b in batches(path, format, Some(vec![c]), BATCH_ROWS)? {
        if left == 0 {
            break;
        }
        let a = b?.column(0).clone();
        let take = a.len().min(left);
        left -= take;
        out.push(if take < a.len() { a.slice(0, take) } else { a });
    }
    Ok(out)
}

/// The metadata of a Parquet file, for the checks before any page is decoded; `None` for Arrow
/// IPC, whose lengths [`check_ipc`] checks and whose buffers are in the file (or compressed
/// within a bounded ratio).
fn parquet_metadata(path: &Path, format: ArrowFormat) -> Result<Option<Arc<ParquetMetaData>>> {
    Ok(match format {
        ArrowFormat::Parquet => Some(parquet_builder(path)?.metadata().clone()),
        ArrowFormat::Ipc => None,
    })
}

/// Walks every page header of a Parquet file before the parquet crate decodes a page (see
/// `parquet_pages`: a header that declares more elements than its bytes hold would otherwise cost
/// the crate one step per declared element).
fn check_pages(path: &Path, meta: &ParquetMetaData) -> Result<()> {
    let chunks: Vec<(i64, i64)> = meta
        .row_groups()
        .iter()
        .flat_map(|g| g.columns().iter())
        .map(|c| (c.dictionary_page_offset().unwrap_or(c.data_page_offset()), c.compressed_size()))
        .collect();
    let file = open(path)?;
    let len = file.metadata().map_err(|e| Error::io(path, e))?.len();
    super::parquet_pages::check_page_headers(&file, len, &chunks)
        .map_err(|why| ferr(path, format!("not a valid Parquet file: {why}")))
}

/// Bytes a whole read may use per row and column (an `f64` or a category code, with the
/// column's share of the label and weight), and per row beyond the columns (the label's text).
const READ_BYTES_PER_CELL: u64 = 8;
const READ_BYTES_PER_ROW: u64 = 64;

/// Refuses a Parquet file whose declared row count (its metadata's, at most `limit`) would need
/// more memory than the machine has available, before any column is decoded: run-length encoding
/// lets a file of a few kilobytes declare billions of rows (all missing, or one repeated value),
/// and the memory a read takes must not follow such a claim past what is there. `cell_bytes`: the
/// bytes per row and feature column of the result.
fn check_declared_rows(
    path: &Path,
    meta: &ParquetMetaData,
    limit: Option<usize>,
    n_columns: usize,
    cell_bytes: u64,
) -> Result<()> {
    let declared = meta.file_metadata().num_rows().max(0) as u64;
    let rows = limit.map_or(declared, |l| declared.min(l as u64));
    let need = rows.saturating_mul((n_columns as u64).saturating_mul(cell_bytes).saturating_add(READ_BYTES_PER_ROW));
    match crate::util::memory::available_bytes() {
        Some(have) if need > have => Err(ferr(
            path,
            format!(
                "the file declares {rows} rows, which would need about {} of memory to read, more than the {} \
                 available; read fewer rows (max_rows) or use a machine with more memory",
                crate::util::memory::human(need),
                crate::util::memory::human(have)
            ),
        )),
        _ => Ok(()),
    }
}

fn is_stringy(t: &DataType) -> bool {
    match t {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => true,
        DataType::Dictionary(_, v) => matches!(**v, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View),
        _ => false,
    }
}

fn is_numeric(t: &DataType) -> bool {
    use DataType::*;
    matches!(t, Int8 | Int16 | Int32 | Int64 | UInt8 | UInt16 | UInt32 | UInt64 | Float32 | Float64 | Boolean)
        || matches!(t, Decimal128(p, _) if *p <= 15)
}

fn unsupported(path: &Path, name: &str, t: &DataType) -> Error {
    Error::InvalidData(format!(
        "{}: column '{name}' has type {t}, which boostlab cannot read (numbers, booleans, decimals of at most 15 \
         digits, strings and dictionaries of strings)",
        path.display()
    ))
}

/// Appends the values of a numeric array as `f64` (null → NaN).
fn push_f64(a: &dyn Array, out: &mut Vec<f64>) -> bool {
    macro_rules! prim {
        ($t:ty) => {{
            let p = a.as_primitive::<$t>();
            out.extend(p.iter().map(|v| v.map_or(f64::NAN, |x| x as f64)));
        }};
    }
    match a.data_type() {
        DataType::Float64 => prim!(Float64Type),
        DataType::Float32 => {
            let p = a.as_primitive::<Float32Type>();
            out.extend(p.iter().map(|v| v.map_or(f64::NAN, f64::from)));
        }
        DataType::Int8 => prim!(Int8Type),
        DataType::Int16 => prim!(Int16Type),
        DataType::Int32 => prim!(Int32Type),
        DataType::Int64 => prim!(Int64Type),
        DataType::UInt8 => prim!(UInt8Type),
        DataType::UInt16 => prim!(UInt16Type),
        DataType::UInt32 => prim!(UInt32Type),
        DataType::UInt64 => prim!(UInt64Type),
        DataType::Boolean => {
            out.extend(a.as_boolean().iter().map(|v| v.map_or(f64::NAN, |b| f64::from(u8::from(b)))));
        }
        DataType::Decimal128(_, s) => {
            let scale = 10f64.powi(i32::from(*s));
            let p = a.as_primitive::<arrow_array::types::Decimal128Type>();
            out.extend(p.iter().map(|v| v.map_or(f64::NAN, |x| x as f64 / scale)));
        }
        _ => return false,
    }
    true
}

/// Calls `f(row, Some(text))` for each value of a string (or dictionary) array, `None` for nulls;
/// numbers are written as Rust prints them.
fn each_str(a: &dyn Array, f: &mut dyn FnMut(Option<&str>)) -> bool {
    match a.data_type() {
        DataType::Utf8 => a.as_string::<i32>().iter().for_each(&mut *f),
        DataType::LargeUtf8 => a.as_string::<i64>().iter().for_each(&mut *f),
        DataType::Utf8View => a.as_string_view().iter().for_each(&mut *f),
        DataType::Dictionary(_, _) => {
            let Some(d) = a.as_any_dictionary_opt() else { return false };
            let mut names: Vec<Option<String>> = Vec::new();
            if !each_str(d.values().as_ref(), &mut |s| names.push(s.map(str::to_string))) {
                return false;
            }
            if names.is_empty() {
                (0..a.len()).for_each(|_| f(None));
            } else {
                let keys = d.normalized_keys();
                for (i, k) in keys.into_iter().enumerate() {
                    f(if a.is_null(i) { None } else { names.get(k).and_then(|s| s.as_deref()) });
                }
            }
        }
        _ => {
            let mut v = Vec::new();
            if !push_f64(a, &mut v) {
                return false;
            }
            for x in v {
                if x.is_nan() {
                    f(None)
                } else {
                    f(Some(&x.to_string()))
                }
            }
        }
    }
    true
}

/// One feature column from its arrays: numeric (checked finite) or categorical (sorted levels).
fn to_column(path: &Path, name: &str, t: &DataType, arrays: &[ArrayRef], want: Option<FeatureKind>) -> Result<Column> {
    let numeric = match want {
        Some(FeatureKind::Numeric) => true,
        Some(FeatureKind::Categorical) => false,
        None => is_numeric(t),
    };
    if numeric {
        if !is_numeric(t) {
            return Err(if is_stringy(t) {
                Error::InvalidData(format!(
                    "{}: column '{name}' holds strings, but the model expects a numeric feature",
                    path.display()
                ))
            } else {
                unsupported(path, name, t)
            });
        }
        let mut v = Vec::with_capacity(arrays.iter().map(|a| a.len()).sum());
        for a in arrays {
            push_f64(a.as_ref(), &mut v);
        }
        if let Some(r) = v.iter().position(|x| x.is_infinite()) {
            return Err(Error::InvalidData(format!(
                "{}: column '{name}', row {}: infinite value {}",
                path.display(),
                r + 1,
                v[r]
            )));
        }
        return Ok(Column::Numeric(v));
    }
    if !is_stringy(t) && !is_numeric(t) {
        return Err(unsupported(path, name, t));
    }
    // Integers can be category codes (read as their text); a float is a measurement, whose text
    // would match no level and turn every value into a missing one.
    if want == Some(FeatureKind::Categorical) && t.is_floating() {
        return Err(Error::InvalidData(format!(
            "{}: column '{name}' holds floating-point numbers ({t}), but the model expects a categorical feature: \
             store its levels as strings or as an Arrow dictionary",
            path.display()
        )));
    }
    let mut index: HashMap<String, u32> = HashMap::new();
    let mut codes = Vec::with_capacity(arrays.iter().map(|a| a.len()).sum());
    for a in arrays {
        each_str(a.as_ref(), &mut |s| {
            let s = s.map(str::trim).filter(|s| !is_missing(s));
            codes.push(match s {
                None => MISSING_CODE,
                Some(s) => match index.get(s) {
                    Some(&c) => c,
                    None => {
                        let c = index.len() as u32;
                        index.insert(s.to_string(), c);
                        c
                    }
                },
            });
        });
    }
    let mut levels: Vec<(String, u32)> = index.into_iter().collect();
    levels.sort();
    let mut remap = vec![0u32; levels.len()];
    for (new, (_, old)) in levels.iter().enumerate() {
        remap[*old as usize] = new as u32;
    }
    for c in &mut codes {
        if *c != MISSING_CODE {
            *c = remap[*c as usize];
        }
    }
    Ok(Column::Categorical { codes, levels: levels.into_iter().map(|l| l.0).collect() })
}

/// A label column must hold numbers or strings; checked before anything is allocated from its
/// length (a column of nulls holds no buffer, so its declared length is not bounded by the file).
fn check_label_type(path: &Path, name: &str, arrays: &[ArrayRef]) -> Result<()> {
    match arrays.iter().find(|a| !is_numeric(a.data_type()) && !is_stringy(a.data_type())) {
        Some(a) => Err(unsupported(path, name, a.data_type())),
        None => Ok(()),
    }
}

/// The label values as the CSV reader would see them (strings; numbers as Rust prints them).
fn label_strings(path: &Path, name: &str, arrays: &[ArrayRef]) -> Result<Vec<String>> {
    check_label_type(path, name, arrays)?;
    let mut out = Vec::with_capacity(arrays.iter().map(|a| a.len()).sum());
    let mut missing = None;
    for a in arrays {
        let ok = each_str(a.as_ref(), &mut |s| {
            let s = s.map(str::trim).unwrap_or("");
            if is_missing(s) && missing.is_none() {
                missing = Some(out.len());
            }
            out.push(s.to_string());
        });
        if !ok {
            return Err(unsupported(path, name, a.data_type()));
        }
    }
    if let Some(r) = missing {
        return Err(Error::InvalidData(format!("{}: column '{name}', row {}: missing label", path.display(), r + 1)));
    }
    Ok(out)
}

/// The roles of the columns: (label columns, multi-label, weight column, feature columns).
type Roles = (Vec<usize>, bool, Option<usize>, Vec<usize>);

/// The roles of the columns (see [`Roles`]).
fn roles(
    path: &Path,
    names: &[String],
    label: &LabelSelector,
    weight: Option<&str>,
    label_optional: bool,
) -> Result<Roles> {
    let col = |n: &str| names.iter().position(|x| x == n);
    let missing = |n: &str| Error::InvalidData(format!("{}: no column '{n}' (columns: {names:?})", path.display()));
    let labels: Vec<usize> = match label {
        LabelSelector::Last => names.len().checked_sub(1).into_iter().collect(),
        LabelSelector::None => vec![],
        LabelSelector::Name(n) => match col(n) {
            Some(c) => vec![c],
            None if label_optional => vec![],
            None => return Err(missing(n)),
        },
        LabelSelector::Multi(list) => {
            let found: Vec<Option<usize>> = list.iter().map(|n| col(n)).collect();
            match found.iter().position(Option::is_none) {
                Some(_) if label_optional => vec![],
                Some(i) => return Err(missing(&list[i])),
                None => found.into_iter().flatten().collect(),
            }
        }
        LabelSelector::Prefix(p) => {
            let v: Vec<usize> = (0..names.len()).filter(|&c| names[c].starts_with(p.as_str())).collect();
            if v.is_empty() && !label_optional {
                return Err(Error::InvalidData(format!(
                    "{}: no column name starts with the label prefix '{p}'",
                    path.display()
                )));
            }
            v
        }
    };
    let w = match weight {
        None => None,
        Some(w) => Some(col(w).ok_or_else(|| missing(w))?),
    };
    if w.is_some_and(|w| labels.contains(&w)) {
        return Err(Error::param("weight", "a column other than the label", weight.unwrap_or_default()));
    }
    let multi = matches!(label, LabelSelector::Multi(_) | LabelSelector::Prefix(_));
    let features = (0..names.len()).filter(|c| !labels.contains(c) && w != Some(*c)).collect();
    Ok((labels, multi, w, features))
}

fn read_target(
    path: &Path,
    format: ArrowFormat,
    names: &[String],
    labels: &[usize],
    multi: bool,
    positive: Option<&str>,
    limit: Option<usize>,
) -> Result<Option<Target>> {
    if labels.is_empty() {
        return Ok(None);
    }
    if multi {
        let cols: Vec<Vec<String>> = labels
            .iter()
            .map(|&c| label_strings(path, &names[c], &read_column(path, format, c, limit)?))
            .collect::<Result<_>>()?;
        let n = cols.first().map_or(0, Vec::len);
        let k = cols.len();
        let mut y = vec![0u8; n * k];
        for (l, col) in cols.iter().enumerate() {
            for (r, v) in col.iter().enumerate() {
                y[r * k + l] = match v.as_str() {
                    "0" | "0.0" | "false" => 0,
                    "1" | "1.0" | "true" => 1,
                    other => {
                        return Err(Error::InvalidData(format!(
                            "{}: column '{}', row {}: multi-label value '{}' is not 0 or 1",
                            path.display(),
                            names[labels[l]],
                            r + 1,
                            crate::error::shown(other)
                        )))
                    }
                };
            }
        }
        return Ok(Some(Target::Multilabel { y, labels: labels.iter().map(|&c| names[c].clone()).collect() }));
    }
    let c = labels[0];
    Ok(Some(label_target(path, &names[c], &read_column(path, format, c, limit)?, positive)?))
}

fn read_weights(
    path: &Path,
    format: ArrowFormat,
    names: &[String],
    w: Option<usize>,
    limit: Option<usize>,
) -> Result<Option<Vec<f64>>> {
    let Some(c) = w else { return Ok(None) };
    let arrays = read_column(path, format, c, limit)?;
    let mut v = Vec::new();
    for a in &arrays {
        if !push_f64(a.as_ref(), &mut v) {
            return Err(unsupported(path, &names[c], a.data_type()));
        }
    }
    if let Some(r) = v.iter().position(|x| !(x.is_finite() && *x >= 0.0)) {
        return Err(Error::InvalidData(format!(
            "{}: column '{}', row {}: sample weight {} is not a finite number ≥ 0",
            path.display(),
            names[c],
            r + 1,
            v[r]
        )));
    }
    Ok(Some(v))
}

/// Calls `f(x)` for every value of a numeric array, in order, as `f64` (null → NaN); false for a
/// type that is not numeric. Arrays without nulls are read straight from their value buffer.
fn for_each_f64(a: &dyn Array, f: &mut impl FnMut(f64)) -> bool {
    macro_rules! prim {
        ($t:ty, $conv:expr) => {{
            let p = a.as_primitive::<$t>();
            if p.null_count() == 0 {
                p.values().iter().for_each(|&x| f($conv(x)));
            } else {
                p.iter().for_each(|v| f(v.map_or(f64::NAN, $conv)));
            }
        }};
    }
    match a.data_type() {
        DataType::Float64 => prim!(Float64Type, |x: f64| x),
        DataType::Float32 => prim!(Float32Type, f64::from),
        DataType::Int8 => prim!(Int8Type, f64::from),
        DataType::Int16 => prim!(Int16Type, f64::from),
        DataType::Int32 => prim!(Int32Type, f64::from),
        DataType::Int64 => prim!(Int64Type, |x: i64| x as f64),
        DataType::UInt8 => prim!(UInt8Type, f64::from),
        DataType::UInt16 => prim!(UInt16Type, f64::from),
        DataType::UInt32 => prim!(UInt32Type, f64::from),
        DataType::UInt64 => prim!(UInt64Type, |x: u64| x as f64),
        _ => {
            // Booleans and decimals: through `push_f64`'s conversions, one batch at a time.
            let mut v = Vec::with_capacity(a.len());
            if !push_f64(a, &mut v) {
                return false;
            }
            v.into_iter().for_each(&mut *f);
        }
    }
    true
}

/// One numeric feature column from its Arrow arrays straight into bins (no `f64` copy of the
/// column): a first walk summarises it ([`NumericSummary`], the same thresholds as
/// [`BinMapper::fit`]'s rule on the column, with the shared row `sample`), a second bins it.
fn bin_numeric_column(
    path: &Path,
    name: &str,
    arrays: &[ArrayRef],
    max_bins: usize,
    weights: Option<&[f64]>,
    sample: Option<&[usize]>,
) -> Result<(super::FeatureBins, BinData)> {
    let mut s = NumericSummary::new(max_bins, weights.is_some(), sample.is_some());
    let mut row = 0usize;
    let mut next = 0usize; // position in `sample`
    let mut inf: Option<(usize, f64)> = None;
    for a in arrays {
        let ok = for_each_f64(a.as_ref(), &mut |x| {
            if x.is_infinite() && inf.is_none() {
                inf = Some((row, x));
            }
            let mut times = 0;
            if let Some(sm) = sample {
                while sm.get(next) == Some(&row) {
                    times += 1;
                    next += 1;
                }
            }
            s.push(x, weights.map_or(1.0, |w| w.get(row).copied().unwrap_or(0.0)), times);
            row += 1;
        });
        if !ok {
            return Err(unsupported(path, name, a.data_type()));
        }
    }
    if let Some((r, x)) = inf {
        return Err(Error::InvalidData(format!(
            "{}: column '{name}', row {}: infinite value {x}",
            path.display(),
            r + 1
        )));
    }
    let m = BinMapper::from_summaries(&[name.to_string()], vec![FeatureSummary::Numeric(s)], max_bins)?;
    let fb = m.features.into_iter().next().ok_or_else(|| Error::InvalidData("no bins".into()))?;
    let super::FeatureBins::Numeric { thresholds } = &fb else {
        return Err(Error::InvalidData(format!("{}: column '{name}' is not numeric", path.display())));
    };
    let data = if fb.n_value_bins() + 1 > 256 {
        let mut v: Vec<u16> = Vec::with_capacity(row);
        for a in arrays {
            for_each_f64(a.as_ref(), &mut |x| v.push(super::FeatureBins::bin_of_value(thresholds, x) as u16));
        }
        BinData::U16(v)
    } else {
        let mut v: Vec<u8> = Vec::with_capacity(row);
        for a in arrays {
            for_each_f64(a.as_ref(), &mut |x| v.push(super::FeatureBins::bin_of_value(thresholds, x) as u8));
        }
        BinData::U8(v)
    };
    Ok((fb, data))
}

/// The single-label target of a label column: each distinct value is turned into text once
/// (numbers as Rust prints them, as [`label_strings`] does for every row), then
/// [`Target::from_strings`]'s rule; the same target and the same missing-label error.
fn label_target(path: &Path, name: &str, arrays: &[ArrayRef], positive: Option<&str>) -> Result<Target> {
    check_label_type(path, name, arrays)?;
    let mut names = Interner::default();
    let mut codes: Vec<u32> = Vec::with_capacity(arrays.iter().map(|a| a.len()).sum());
    let mut missing: Option<usize> = None;
    let mut seen: HashMap<u64, u32> = HashMap::new();
    for a in arrays {
        let ok = if is_numeric(a.data_type()) {
            for_each_f64(a.as_ref(), &mut |x| {
                if x.is_nan() {
                    missing.get_or_insert(codes.len());
                    codes.push(0);
                } else {
                    let c = *seen.entry(x.to_bits()).or_insert_with(|| names.code(&x.to_string()));
                    codes.push(c);
                }
            })
        } else {
            each_str(a.as_ref(), &mut |s| {
                let s = s.map(str::trim).unwrap_or("");
                if is_missing(s) {
                    missing.get_or_insert(codes.len());
                }
                codes.push(names.code(s));
            })
        };
        if !ok {
            return Err(unsupported(path, name, a.data_type()));
        }
    }
    if let Some(r) = missing {
        return Err(Error::InvalidData(format!("{}: column '{name}', row {}: missing label", path.display(), r + 1)));
    }
    let mut uniq = names.names().to_vec();
    uniq.sort();
    let classes = super::order_classes(uniq, positive)?;
    let pos: HashMap<&str, u32> = classes.iter().enumerate().map(|(i, c)| (c.as_str(), i as u32)).collect();
    let remap: Vec<u32> = names.names().iter().map(|s| pos.get(s.as_str()).copied().unwrap_or(0)).collect();
    let y = codes.into_iter().map(|c| remap[c as usize]).collect();
    Ok(Target::Classes { y, classes })
}

/// Reads a Parquet or Arrow IPC file into a [`Dataset`] (`opts` as for CSV: label, positive
/// class, weight column, forced kinds, row limit, optional label).
pub fn read_arrow(path: impl AsRef<Path>, format: ArrowFormat, opts: &super::CsvOptions) -> Result<Dataset> {
    let path = path.as_ref();
    let schema = arrow_schema(path, format)?;
    let names: Vec<String> = schema.iter().map(|s| s.0.clone()).collect();
    let (labels, multi, w, feats) =
        roles(path, &names, &opts.label, opts.weight.as_deref(), opts.label_optional || opts.kinds.is_some())?;
    let limit = opts.max_rows;
    if let Some(meta) = parquet_metadata(path, format)? {
        check_declared_rows(path, &meta, limit, names.len(), READ_BYTES_PER_CELL)?;
        check_pages(path, &meta)?;
    }
    let target = read_target(path, format, &names, &labels, multi, opts.positive.as_deref(), limit)?;
    let weights = read_weights(path, format, &names, w, limit)?;
    // The first bad column in file order, whichever thread finished first.
    let columns: Vec<Column> = try_map_in_order(feats.par_iter(), |&c| {
        let want = opts.kinds.as_ref().and_then(|k| k.iter().find(|(n, _)| *n == names[c]).map(|p| p.1));
        to_column(path, &names[c], &schema[c].1, &read_column(path, format, c, limit)?, want)
    })?;
    let features = Features { names: feats.iter().map(|&c| names[c].clone()).collect(), columns };
    Dataset::new(features, target, weights)
}

/// Reads a Parquet or Arrow IPC file straight into bins, one column at a time (in parallel over
/// columns; each column's values are dropped once binned). The result is bit-identical to
/// [`read_arrow`] followed by [`BinMapper::fit`] and [`BinMapper::transform`].
pub fn read_arrow_binned(path: impl AsRef<Path>, format: ArrowFormat, opts: &StreamOptions) -> Result<BinnedTable> {
    let path = path.as_ref();
    if !(2..=65535).contains(&opts.max_bins) {
        return Err(Error::param("max_bins", "an integer in 2..=65535", opts.max_bins));
    }
    if opts.max_rows.is_some() {
        // Rare for training: read the table, then bin it.
        let csv = super::CsvOptions {
            label: opts.label.clone(),
            positive: opts.positive.clone(),
            weight: opts.weight.clone(),
            max_rows: opts.max_rows,
            ..Default::default()
        };
        let d = read_arrow(path, format, &csv)?;
        let mapper = BinMapper::fit(&d.features, opts.max_bins, d.sample_weight.as_deref())?;
        let bins = mapper.transform(&d.features)?;
        let schema = crate::data::Schema::from_features(&d.features);
        let target = d.target.ok_or_else(|| Error::InvalidData("the data have no label column".into()))?;
        return Ok(BinnedTable {
            names: schema.names,
            kinds: schema.kinds,
            levels: schema.levels,
            mapper,
            bins,
            target,
            sample_weight: d.sample_weight,
        });
    }
    let schema = arrow_schema(path, format)?;
    let names: Vec<String> = schema.iter().map(|s| s.0.clone()).collect();
    let (labels, multi, w, feats) = roles(path, &names, &opts.label, opts.weight.as_deref(), false)?;
    if let Some(meta) = parquet_metadata(path, format)? {
        // Bins are one or two bytes a cell: two, to be safe before the bin counts are known.
        check_declared_rows(path, &meta, None, names.len(), 2)?;
        check_pages(path, &meta)?;
    }
    let target = read_target(path, format, &names, &labels, multi, opts.positive.as_deref(), None)?
        .ok_or_else(|| Error::InvalidData("the data have no label column".into()))?;
    let weights = read_weights(path, format, &names, w, None)?;
    let n = target.len();
    if feats.is_empty() {
        return Err(Error::InvalidData("no feature columns".into()));
    }
    let total = std::fs::metadata(path).map_or(0, |m| m.len());
    let done = std::sync::atomic::AtomicU64::new(0);
    // The binning sample depends only on the rows and weights: drawn once for every column.
    let sample = super::bin_sample_rows(n, weights.as_deref());
    // The first bad column in file order, whichever thread finished first.
    let per_col: Vec<(super::FeatureBins, Option<Vec<String>>, BinData)> = try_map_in_order(feats.par_iter(), |&c| {
        let arrays = read_column(path, format, c, None)?;
        if is_numeric(&schema[c].1) {
            let rows: usize = arrays.iter().map(|a| a.len()).sum();
            if rows != n {
                return Err(Error::InvalidData(format!(
                    "{}: column '{}' has {rows} rows, not {n}",
                    path.display(),
                    names[c]
                )));
            }
            let (fb, data) =
                bin_numeric_column(path, &names[c], &arrays, opts.max_bins, weights.as_deref(), sample.as_deref())?;
            if let Some(p) = &opts.progress {
                let bytes = done.fetch_add(total / feats.len() as u64, std::sync::atomic::Ordering::Relaxed);
                p(super::ReadProgress { pass: 3, bytes: bytes + total / feats.len() as u64, total });
            }
            return Ok((fb, None, data));
        }
        let col = to_column(path, &names[c], &schema[c].1, &arrays, None)?;
        if col.len() != n {
            return Err(Error::InvalidData(format!(
                "{}: column '{}' has {} rows, not {n}",
                path.display(),
                names[c],
                col.len()
            )));
        }
        let levels = match &col {
            Column::Categorical { levels, .. } => Some(levels.clone()),
            Column::Numeric(_) => None,
        };
        let one = Features { names: vec![names[c].clone()], columns: vec![col] };
        let m = BinMapper::fit(&one, opts.max_bins, weights.as_deref())?;
        let b = m.transform(&one)?;
        if let Some(p) = &opts.progress {
            let bytes = done.fetch_add(total / feats.len() as u64, std::sync::atomic::Ordering::Relaxed);
            p(super::ReadProgress { pass: 3, bytes: bytes + total / feats.len() as u64, total });
        }
        let fb = m.features.into_iter().next().ok_or_else(|| Error::InvalidData("no bins".into()))?;
        Ok((fb, levels, b.data))
    })?;
    let wide = per_col.iter().any(|(fb, _, _)| fb.n_value_bins() + 1 > 256);
    let mut offsets = vec![0];
    for (fb, _, _) in &per_col {
        offsets.push(offsets.last().copied().unwrap_or(0) + fb.n_value_bins() + 1);
    }
    let mut features = Vec::new();
    let mut levels = Vec::new();
    let data = if wide {
        let mut v: Vec<u16> = Vec::with_capacity(n * per_col.len());
        for (fb, l, d) in per_col {
            match d {
                BinData::U8(x) => v.extend(x.iter().map(|&b| u16::from(b))),
                BinData::U16(x) => v.extend_from_slice(&x),
            }
            features.push(fb);
            levels.push(l);
        }
        BinData::U16(v)
    } else {
        let mut v: Vec<u8> = Vec::with_capacity(n * per_col.len());
        for (fb, l, d) in per_col {
            if let BinData::U8(x) = d {
                v.extend_from_slice(&x);
            }
            features.push(fb);
            levels.push(l);
        }
        BinData::U8(v)
    };
    let kinds = features.iter().map(super::FeatureBins::kind).collect();
    Ok(BinnedTable {
        names: feats.iter().map(|&c| names[c].clone()).collect(),
        kinds,
        levels,
        mapper: BinMapper { features },
        bins: BinnedMatrix { n_rows: n, n_features: feats.len(), offsets, data },
        target,
        sample_weight: weights,
    })
}

/// Blocks of rows of a Parquet or Arrow IPC file, for streamed prediction:
/// features of the given kinds (by name, in the model's order) and, when present, the label
/// column(s).
pub struct ArrowBlocks {
    path: std::path::PathBuf,
    inner: Box<dyn Iterator<Item = Result<RecordBatch>> + Send>,
    kinds: Vec<(String, FeatureKind)>,
    label: LabelSelector,
}

impl ArrowBlocks {
    /// Opens `path`; `kinds` are the model's features (name, kind); `label` the label column(s),
    /// read when present.
    pub fn open(
        path: impl AsRef<Path>,
        format: ArrowFormat,
        kinds: Vec<(String, FeatureKind)>,
        label: LabelSelector,
        block_rows: usize,
    ) -> Result<ArrowBlocks> {
        let path = path.as_ref();
        if let Some(meta) = parquet_metadata(path, format)? {
            check_pages(path, &meta)?;
        }
        let inner = batches(path, format, None, block_rows.max(1))?;
        Ok(ArrowBlocks { path: path.to_path_buf(), inner, kinds, label })
    }

    fn convert(&self, b: &RecordBatch) -> Result<Block> {
        let schema = b.schema();
        let names: Vec<String> = schema.fields().iter().map(|f| f.name().clone()).collect();
        let (labels, multi, _, _) = roles(&self.path, &names, &self.label, None, true)?;
        let mut columns = Vec::new();
        let mut fnames = Vec::new();
        for (name, kind) in &self.kinds {
            let Some(c) = names.iter().position(|n| n == name) else {
                return Err(Error::InvalidData(format!(
                    "{}: no column '{name}', which the model needs",
                    self.path.display()
                )));
            };
            columns.push(to_column(
                &self.path,
                name,
                schema.field(c).data_type(),
                &[b.column(c).clone()],
                Some(*kind),
            )?);
            fnames.push(name.clone());
        }
        let labels = if labels.is_empty() {
            None
        } else if multi {
            let k = labels.len();
            let mut y = vec![0u8; b.num_rows() * k];
            for (l, &c) in labels.iter().enumerate() {
                let v = label_strings(&self.path, &names[c], &[b.column(c).clone()])?;
                for (r, s) in v.iter().enumerate() {
                    y[r * k + l] = u8::from(matches!(s.as_str(), "1" | "1.0" | "true"));
                }
            }
            Some(BlockLabels::Multi(y))
        } else {
            Some(BlockLabels::Single(label_strings(&self.path, &names[labels[0]], &[b.column(labels[0]).clone()])?))
        };
        Ok(Block { features: Features { names: fnames, columns }, labels })
    }
}

impl Iterator for ArrowBlocks {
    type Item = Result<Block>;

    fn next(&mut self) -> Option<Result<Block>> {
        let b = self.inner.next()?;
        Some(b.and_then(|b| self.convert(&b)))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{
        types::Int32Type as Key, BinaryArray, DictionaryArray, Float32Array, Float64Array, Int64Array, StringArray,
    };
    use arrow_schema::{Field, Schema};

    use super::*;
    use crate::data::{read_csv_binned, StreamOptions};

    /// The same values as a CSV file, a Parquet file and an Arrow IPC file.
    fn write_all(dir: &Path, n: usize) -> (std::path::PathBuf, std::path::PathBuf, std::path::PathBuf) {
        let mut s: u64 = 7;
        let mut rnd = || {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (s >> 11) as f64 / (1u64 << 53) as f64
        };
        let x: Vec<Option<f64>> = (0..n)
            .map(|i| {
                if i % 13 == 0 {
                    None
                } else if i % 29 == 0 {
                    Some(f64::NAN)
                } else {
                    Some(rnd() * 10.0 - 3.0)
                }
            })
            .collect();
        let z: Vec<Option<f32>> =
            (0..n).map(|i| if i % 7 == 0 { None } else { Some((rnd() * 100.0) as f32) }).collect();
        let k: Vec<i64> = (0..n).map(|i| (i % 6) as i64).collect();
        let colors = ["red", "green", "blue"];
        let c: Vec<Option<&str>> = (0..n).map(|i| if i % 11 == 0 { None } else { Some(colors[i % 3]) }).collect();
        let d: Vec<Option<&str>> =
            (0..n).map(|i| if i % 5 == 0 { None } else { Some(["u", "v"][(i / 3) % 2]) }).collect();
        let w: Vec<f64> = (0..n).map(|i| (i % 4) as f64 * 0.25).collect();
        let y: Vec<i64> = (0..n).map(|i| i64::from(x[i].is_some_and(|v| v > 1.0) ^ (i % 10 == 0))).collect();
        let schema = Arc::new(Schema::new(vec![
            Field::new("x", DataType::Float64, true),
            Field::new("z", DataType::Float32, true),
            Field::new("k", DataType::Int64, false),
            Field::new("c", DataType::Utf8, true),
            Field::new("d", DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)), true),
            Field::new("w", DataType::Float64, false),
            Field::new("y", DataType::Int64, false),
        ]));
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(Float64Array::from(x.clone())),
                Arc::new(Float32Array::from(z.clone())),
                Arc::new(Int64Array::from(k.clone())),
                Arc::new(StringArray::from(c.clone())),
                Arc::new(d.iter().copied().collect::<DictionaryArray<Key>>()),
                Arc::new(Float64Array::from(w.clone())),
                Arc::new(Int64Array::from(y.clone())),
            ],
        )
        .unwrap();
        let pq = dir.join("t.parquet");
        let mut wr = parquet::arrow::ArrowWriter::try_new(File::create(&pq).unwrap(), schema.clone(), None).unwrap();
        // Two batches: row groups and batches must not matter.
        wr.write(&batch.slice(0, n / 3)).unwrap();
        wr.write(&batch.slice(n / 3, n - n / 3)).unwrap();
        wr.close().unwrap();
        let ipc = dir.join("t.arrow");
        let mut wr = arrow_ipc::writer::FileWriter::try_new(File::create(&ipc).unwrap(), &schema).unwrap();
        wr.write(&batch).unwrap();
        wr.finish().unwrap();
        let csv = dir.join("t.csv");
        let mut t = String::from("x,z,k,c,d,w,y\n");
        let opt = |v: Option<String>| v.unwrap_or_default();
        for i in 0..n {
            t.push_str(&format!(
                "{},{},{},{},{},{},{}\n",
                opt(x[i].map(|v| v.to_string())),
                opt(z[i].map(|v| f64::from(v).to_string())),
                k[i],
                c[i].unwrap_or(""),
                d[i].unwrap_or("NA"),
                w[i],
                y[i]
            ));
        }
        std::fs::write(&csv, t).unwrap();
        (csv, pq, ipc)
    }

    #[test]
    fn csv_parquet_and_arrow_give_the_same_bins() {
        let dir = tempfile::tempdir().unwrap();
        let (csv, pq, ipc) = write_all(dir.path(), 3000);
        for weight in [None, Some("w".to_string())] {
            let o = StreamOptions { weight: weight.clone(), max_bins: 32, chunk_bytes: 10_000, ..Default::default() };
            let from_csv = read_csv_binned(&csv, &o).unwrap();
            assert_eq!(from_csv.kinds[3], FeatureKind::Categorical);
            assert_eq!(read_arrow_binned(&pq, ArrowFormat::Parquet, &o).unwrap(), from_csv);
            assert_eq!(read_arrow_binned(&ipc, ArrowFormat::Ipc, &o).unwrap(), from_csv);
            // And the in-memory reader gives the same dataset as the CSV reader.
            let co = crate::data::CsvOptions { weight, ..Default::default() };
            // (Debug: NaN, the missing value, is not equal to itself.)
            let a = read_arrow(&pq, ArrowFormat::Parquet, &co).unwrap();
            assert_eq!(format!("{a:?}"), format!("{:?}", crate::data::read_csv(&csv, &co).unwrap()));
        }
    }

    #[test]
    fn csv_parquet_and_arrow_give_bit_identical_models() {
        let dir = tempfile::tempdir().unwrap();
        let (csv, pq, ipc) = write_all(dir.path(), 2500);
        let mut params =
            crate::BoostParams { algorithm: crate::Algorithm::RealAdaBoost, n_estimators: 12, ..Default::default() };
        params.tree.max_leaves = 8;
        let co = crate::data::CsvOptions { weight: Some("w".into()), ..Default::default() };
        let reference = crate::fit(&crate::data::read_csv(&csv, &co).unwrap(), &params).unwrap().to_json().unwrap();
        let o = StreamOptions { weight: Some("w".into()), chunk_bytes: 20_000, ..Default::default() };
        let tables = [
            read_csv_binned(&csv, &o).unwrap(),
            read_arrow_binned(&pq, ArrowFormat::Parquet, &o).unwrap(),
            read_arrow_binned(&ipc, ArrowFormat::Ipc, &o).unwrap(),
        ];
        for t in tables {
            let m = crate::fit_binned(&t.into_binned_data().unwrap(), &params, &mut |_| {}).unwrap();
            assert_eq!(m.to_json().unwrap(), reference);
        }
    }

    #[test]
    fn unsupported_and_bad_columns_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let schema = Arc::new(Schema::new(vec![
            Field::new("blob", DataType::Binary, false),
            Field::new("x", DataType::Float64, false),
            Field::new("y", DataType::Int64, false),
        ]));
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(BinaryArray::from(vec![b"a".as_ref(), b"b".as_ref(), b"c".as_ref()])),
                Arc::new(Float64Array::from(vec![1.0, f64::INFINITY, 2.0])),
                Arc::new(Int64Array::from(vec![0, 1, 0])),
            ],
        )
        .unwrap();
        let p = dir.path().join("bad.parquet");
        let mut wr = parquet::arrow::ArrowWriter::try_new(File::create(&p).unwrap(), schema, None).unwrap();
        wr.write(&batch).unwrap();
        wr.close().unwrap();
        let e = read_arrow_binned(&p, ArrowFormat::Parquet, &StreamOptions::default()).unwrap_err().to_string();
        assert!(e.contains("column 'blob' has type Binary"), "{e}");
        let e = read_arrow(&p, ArrowFormat::Parquet, &Default::default()).unwrap_err().to_string();
        assert!(e.contains("column 'blob'"), "{e}");
        // Many bad columns ('blob' unsupported, then twelve with infinities): always the first in
        // file order, whichever thread finishes first (CI once saw 'x' from read_arrow on two
        // cores: rayon's own Result collect reports the first error met in time).
        let mut fields = vec![Field::new("blob", DataType::Binary, false)];
        let mut cols: Vec<ArrayRef> = vec![Arc::new(BinaryArray::from(vec![b"a".as_ref(); 3000]))];
        for j in 0..12 {
            fields.push(Field::new(format!("x{j}"), DataType::Float64, false));
            let v: Vec<f64> = (0..3000).map(|i| if i == 2999 { f64::INFINITY } else { i as f64 }).collect();
            cols.push(Arc::new(Float64Array::from(v)));
        }
        fields.push(Field::new("y", DataType::Int64, false));
        cols.push(Arc::new(Int64Array::from((0..3000).map(|i| i % 2).collect::<Vec<i64>>())));
        let schema = Arc::new(Schema::new(fields));
        let batch = RecordBatch::try_new(schema.clone(), cols).unwrap();
        let many = dir.path().join("many.parquet");
        let mut wr = parquet::arrow::ArrowWriter::try_new(File::create(&many).unwrap(), schema, None).unwrap();
        wr.write(&batch).unwrap();
        wr.close().unwrap();
        let pool = rayon::ThreadPoolBuilder::new().num_threads(4).build().unwrap();
        for _ in 0..30 {
            let e = pool.install(|| read_arrow_binned(&many, ArrowFormat::Parquet, &StreamOptions::default()));
            let e = e.unwrap_err().to_string();
            assert!(e.contains("column 'blob' has type Binary"), "{e}");
            let e = pool.install(|| read_arrow(&many, ArrowFormat::Parquet, &Default::default()));
            let e = e.unwrap_err().to_string();
            assert!(e.contains("column 'blob'"), "{e}");
        }
        let o = crate::data::CsvOptions { kinds: Some(vec![("x".into(), FeatureKind::Numeric)]), ..Default::default() };
        let mut blocks = ArrowBlocks::open(
            &p,
            ArrowFormat::Parquet,
            vec![("x".into(), FeatureKind::Numeric)],
            LabelSelector::None,
            2,
        )
        .unwrap();
        let e = blocks.next().unwrap().unwrap_err().to_string();
        assert!(e.contains("column 'x', row 2: infinite value inf"), "{e}");
        let _ = o;
    }

    #[test]
    fn a_float_column_for_a_categorical_feature_is_refused_and_integers_are_levels() {
        let dir = tempfile::tempdir().unwrap();
        let (_, pq, ipc) = write_all(dir.path(), 60);
        for (path, format) in [(&pq, ArrowFormat::Parquet), (&ipc, ArrowFormat::Ipc)] {
            // `x` is float64 in the file; a model that has `x` categorical must not read it.
            let kinds = vec![("x".into(), FeatureKind::Categorical)];
            let mut blocks = ArrowBlocks::open(path, format, kinds.clone(), LabelSelector::None, 100).unwrap();
            let e = blocks.next().unwrap().unwrap_err().to_string();
            assert!(
                e.contains(
                    "column 'x' holds floating-point numbers (Float64), but the model expects a categorical feature: \
                     store its levels as strings or as an Arrow dictionary"
                ),
                "{e}"
            );
            let o = crate::data::CsvOptions { kinds: Some(kinds), ..Default::default() };
            assert!(read_arrow(path, format, &o).is_err());
            // `k` (int64) is read as the text of each code.
            let kinds = vec![("k".into(), FeatureKind::Categorical)];
            let mut blocks = ArrowBlocks::open(path, format, kinds, LabelSelector::None, 100).unwrap();
            let b = blocks.next().unwrap().unwrap();
            match &b.features.columns[0] {
                Column::Categorical { levels, .. } => assert_eq!(levels, &["0", "1", "2", "3", "4", "5"]),
                other => panic!("categorical, got {other:?}"),
            }
        }
    }

    /// A small table (`x` floats, `c` strings, `y` labels) and the dataset the CSV reader gives
    /// for the same values.
    fn small_batch(n: usize) -> RecordBatch {
        let schema = Arc::new(Schema::new(vec![
            Field::new("x", DataType::Float64, true),
            Field::new("c", DataType::Utf8, true),
            Field::new("y", DataType::Int64, false),
        ]));
        let x: Vec<Option<f64>> = (0..n).map(|i| if i % 9 == 0 { None } else { Some(i as f64 * 0.5) }).collect();
        let c: Vec<&str> = (0..n).map(|i| ["p", "q", "r"][i % 3]).collect();
        let y: Vec<i64> = (0..n).map(|i| (i % 2) as i64).collect();
        RecordBatch::try_new(
            schema,
            vec![Arc::new(Float64Array::from(x)), Arc::new(StringArray::from(c)), Arc::new(Int64Array::from(y))],
        )
        .unwrap()
    }

    fn write_parquet(path: &Path, batch: &RecordBatch, props: Option<parquet::file::properties::WriterProperties>) {
        let mut wr = parquet::arrow::ArrowWriter::try_new(File::create(path).unwrap(), batch.schema(), props).unwrap();
        wr.write(batch).unwrap();
        wr.close().unwrap();
    }

    fn write_ipc(path: &Path, batch: &RecordBatch, compression: Option<arrow_ipc::CompressionType>) {
        let opts = arrow_ipc::writer::IpcWriteOptions::default().try_with_compression(compression).unwrap();
        let mut wr =
            arrow_ipc::writer::FileWriter::try_new_with_options(File::create(path).unwrap(), &batch.schema(), opts)
                .unwrap();
        wr.write(batch).unwrap();
        wr.finish().unwrap();
    }

    /// (Debug: NaN, the missing value, is not equal to itself.)
    fn read_debug(path: &Path, format: ArrowFormat) -> Result<String> {
        read_arrow(path, format, &Default::default()).map(|d| format!("{d:?}"))
    }

    #[test]
    fn parquet_with_corrupt_arrow_schema_is_read_from_its_parquet_schema() {
        let dir = tempfile::tempdir().unwrap();
        let good = dir.path().join("good.parquet");
        write_parquet(&good, &small_batch(50), None);
        let want = read_debug(&good, ArrowFormat::Parquet).unwrap();
        assert!(want.contains("\"p\", \"q\", \"r\""), "{want}");
        let bytes = std::fs::read(&good).unwrap();
        // The key-value metadata: the key, then the value, the base64 of an IPC schema message.
        let key = bytes.windows(12).position(|w| w == b"ARROW:schema").expect("the writer embeds ARROW:schema");
        let start = key + 12 + bytes[key + 12..].iter().position(|b| b.is_ascii_alphanumeric()).unwrap();
        let len = bytes[start..].iter().take_while(|b| b.is_ascii_alphanumeric() || **b == b'+' || **b == b'/').count();
        assert!(len > 100, "the ARROW:schema value has {len} base64 characters");
        let bad = dir.path().join("bad.parquet");
        for i in start..start + len {
            for sub in [b'A', b'/', b'z'] {
                let mut b = bytes.clone();
                if b[i] == sub {
                    continue;
                }
                b[i] = sub;
                std::fs::write(&bad, &b).unwrap();
                // The Parquet schema alone gives the columns: the same dataset, whatever the
                // embedded Arrow schema says.
                assert_eq!(read_debug(&bad, ArrowFormat::Parquet).unwrap(), want, "byte {i} set to {sub}");
                let o = StreamOptions { max_bins: 8, ..Default::default() };
                assert_eq!(read_arrow_binned(&bad, ArrowFormat::Parquet, &o).unwrap().bins.n_rows, 50);
            }
        }
    }

    #[test]
    fn corrupt_parquet_is_an_error_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let good = dir.path().join("good.parquet");
        write_parquet(&good, &small_batch(50), None);
        let bytes = std::fs::read(&good).unwrap();
        let bad = dir.path().join("flipped.parquet");
        let mut errors = 0;
        for i in 0..bytes.len() {
            let mut b = bytes.clone();
            b[i] ^= 0xff;
            std::fs::write(&bad, &b).unwrap();
            if let Err(e) = read_debug(&bad, ArrowFormat::Parquet) {
                assert!(e.to_string().contains("flipped.parquet"), "byte {i}: {e}");
                errors += 1;
            }
        }
        assert!(errors > 10, "only {errors} corrupted files were refused");
    }

    #[test]
    fn every_byte_flip_of_an_arrow_file_is_an_error_naming_it_or_a_dataset() {
        let dir = tempfile::tempdir().unwrap();
        let good = dir.path().join("good.arrow");
        let batch = small_batch(20);
        write_ipc(&good, &batch, None);
        let stream = dir.path().join("good.arrows");
        let mut wr = arrow_ipc::writer::StreamWriter::try_new(File::create(&stream).unwrap(), &batch.schema()).unwrap();
        wr.write(&batch).unwrap();
        wr.finish().unwrap();
        for (src, name) in [(good, "flipped.arrow"), (stream, "flipped.arrows")] {
            let bytes = std::fs::read(&src).unwrap();
            let bad = dir.path().join(name);
            let mut errors = 0;
            for i in 0..bytes.len() {
                for flip in [0xff, 0x80, 0x01] {
                    let mut b = bytes.clone();
                    b[i] ^= flip;
                    std::fs::write(&bad, &b).unwrap();
                    match read_arrow(&bad, ArrowFormat::Ipc, &Default::default()) {
                        // A flip may drop the batch (a count or an offset): never a ragged table.
                        Ok(d) => {
                            assert!(d.n_rows() <= 20, "byte {i} ^ {flip}");
                            assert!(d.features.columns.iter().all(|c| c.len() == d.n_rows()), "byte {i} ^ {flip}");
                        }
                        Err(e) => {
                            assert!(e.to_string().contains(name), "byte {i} ^ {flip}: {e}");
                            errors += 1;
                        }
                    }
                }
            }
            assert!(errors > 50, "{name}: only {errors} corrupted files were refused");
        }
    }

    #[test]
    fn an_eight_byte_arrow_file_is_refused_before_any_allocation() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("tiny.arrow");
        std::fs::write(&p, b"ARROW1\0\0").unwrap();
        let t = std::time::Instant::now();
        let e = read_arrow(&p, ArrowFormat::Ipc, &Default::default()).unwrap_err().to_string();
        assert!(t.elapsed().as_millis() < 500, "{:?}", t.elapsed());
        assert!(
            e.ends_with(
                "tiny.arrow: not a valid Arrow IPC file: it starts like the file layout (ARROW1) but has 8 bytes, \
                 fewer than the 18 that layout needs (a truncated file?)"
            ),
            "{e}"
        );
        // The stream layout: a message claiming 2 GB of metadata, and one claiming a 1 TB body.
        let p = dir.path().join("claims.arrows");
        std::fs::write(&p, [0xff, 0xff, 0xff, 0xff, 0xf0, 0xff, 0xff, 0x7f, 0, 0, 0, 0]).unwrap();
        let e = read_arrow(&p, ArrowFormat::Ipc, &Default::default()).unwrap_err().to_string();
        assert!(
            e.ends_with(
                "claims.arrows: not a valid Arrow IPC file: a message at byte 0 claims 2147483632 bytes of metadata, \
                 the file has 4 bytes after it"
            ),
            "{e}"
        );
        let e = arrow_schema(&p, ArrowFormat::Ipc).unwrap_err().to_string();
        assert!(e.contains("claims 2147483632 bytes of metadata"), "{e}");
    }

    #[test]
    fn a_compressed_arrow_buffer_claiming_terabytes_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("lz4.arrow");
        write_ipc(&p, &small_batch(20), Some(arrow_ipc::CompressionType::LZ4_FRAME));
        let mut bytes = std::fs::read(&p).unwrap();
        // Each compressed buffer starts with its uncompressed length (i64): 20 f64s = 160 bytes.
        let at = bytes.windows(8).position(|w| w == 160i64.to_le_bytes()).expect("the x buffer's length prefix");
        bytes[at..at + 8].copy_from_slice(&(1i64 << 40).to_le_bytes());
        std::fs::write(&p, &bytes).unwrap();
        let e = read_arrow(&p, ArrowFormat::Ipc, &Default::default()).unwrap_err().to_string();
        assert!(e.contains("lz4.arrow: not a valid Arrow IPC file: a compressed buffer of"), "{e}");
        assert!(e.contains("claims to hold 1099511627776 bytes, more than 65536 times its size"), "{e}");
    }

    #[test]
    fn compressed_parquet_and_arrow_files_are_read() {
        use parquet::basic::{Compression, GzipLevel, ZstdLevel};
        let dir = tempfile::tempdir().unwrap();
        let batch = small_batch(300);
        let plain = dir.path().join("plain.parquet");
        write_parquet(&plain, &batch, None);
        let want = read_debug(&plain, ArrowFormat::Parquet).unwrap();
        let codecs = [
            ("snappy", Compression::SNAPPY),
            ("gzip", Compression::GZIP(GzipLevel::default())),
            ("lz4", Compression::LZ4),
            ("lz4_raw", Compression::LZ4_RAW),
            ("zstd", Compression::ZSTD(ZstdLevel::default())),
        ];
        for (name, c) in codecs {
            let p = dir.path().join(format!("{name}.parquet"));
            let props = parquet::file::properties::WriterProperties::builder().set_compression(c).build();
            write_parquet(&p, &batch, Some(props));
            assert_eq!(read_debug(&p, ArrowFormat::Parquet).unwrap(), want, "{name}");
        }
        for (name, c) in [("lz4", arrow_ipc::CompressionType::LZ4_FRAME), ("zstd", arrow_ipc::CompressionType::ZSTD)] {
            let p = dir.path().join(format!("{name}.feather"));
            write_ipc(&p, &batch, Some(c));
            assert_eq!(read_debug(&p, ArrowFormat::Ipc).unwrap(), want, "{name}");
            let o = StreamOptions { max_bins: 16, ..Default::default() };
            assert_eq!(
                read_arrow_binned(&p, ArrowFormat::Ipc, &o).unwrap(),
                read_arrow_binned(&plain, ArrowFormat::Parquet, &o).unwrap(),
                "{name}"
            );
        }
    }

    #[test]
    fn a_parquet_file_declaring_more_rows_than_memory_holds_is_refused_before_decoding() {
        use crate::util::memory::pretending_available;
        // A million missing values and a constant label: run-length encoded, a few kilobytes.
        let n = 1_000_000;
        let schema = Arc::new(Schema::new(vec![
            Field::new("x", DataType::Float64, true),
            Field::new("y", DataType::Int64, false),
        ]));
        let batch = RecordBatch::try_new(
            schema,
            vec![Arc::new(Float64Array::from(vec![None; n])), Arc::new(Int64Array::from(vec![1; n]))],
        )
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("claims.parquet");
        write_parquet(&p, &batch, None);
        assert!(std::fs::metadata(&p).unwrap().len() < 20_000);
        // 10^6 rows × (2 columns × 8 + 64) bytes = 80 MB.
        let e = pretending_available(50_000_000, || read_arrow(&p, ArrowFormat::Parquet, &Default::default()))
            .unwrap_err()
            .to_string();
        assert!(
            e.ends_with(
                "claims.parquet: the file declares 1000000 rows, which would need about 80.0 MB of memory to read, more \
                 than the 50.0 MB available; read fewer rows (max_rows) or use a machine with more memory"
            ),
            "{e}"
        );
        let binned = StreamOptions::default();
        let e = pretending_available(50_000_000, || read_arrow_binned(&p, ArrowFormat::Parquet, &binned))
            .unwrap_err()
            .to_string();
        assert!(e.contains("declares 1000000 rows, which would need about 68.0 MB"), "{e}");
        // A row limit reads that many rows only, and is what the check counts.
        let few = super::super::CsvOptions { max_rows: Some(1000), ..Default::default() };
        let d = pretending_available(50_000_000, || read_arrow(&p, ArrowFormat::Parquet, &few)).unwrap();
        assert_eq!(d.n_rows(), 1000);
        // With the memory there, the file reads.
        let d = pretending_available(100_000_000, || read_arrow(&p, ArrowFormat::Parquet, &Default::default()));
        assert_eq!(d.unwrap().n_rows(), n);
    }

    #[test]
    fn page_headers_declaring_more_than_they_hold_are_refused_before_decoding() {
        // Two fuzzed files (after their options byte) whose dictionary page header holds an
        // unknown field: a list that declares far more elements than the file has bytes (the
        // parquet crate skipped them one system call each: over a minute) and a list of 2³¹
        // booleans (skipped without reading: seconds per field, hours for a page of them).
        let dir = tempfile::tempdir().unwrap();
        for name in ["timeout-thrift-skip-past-end", "timeout-boolean-list-in-page-header"] {
            let input =
                std::fs::read(format!("{}/../../fuzz/regressions/parquet/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap();
            let p = dir.path().join(format!("{name}.parquet"));
            std::fs::write(&p, &input[1..]).unwrap();
            let want = format!("invalid data: {}: not a valid Parquet file: the page header at byte ", p.display());
            let e = read_arrow(&p, ArrowFormat::Parquet, &Default::default()).unwrap_err().to_string();
            assert!(e.starts_with(&want), "{e}");
            let e = read_arrow_binned(&p, ArrowFormat::Parquet, &StreamOptions::default()).unwrap_err().to_string();
            assert!(e.starts_with(&want), "{e}");
            let e = ArrowBlocks::open(&p, ArrowFormat::Parquet, vec![], LabelSelector::None, 10).err().unwrap();
            assert!(e.to_string().starts_with(&want), "{e}");
        }
    }

    #[test]
    fn a_footer_declaring_more_than_it_holds_is_refused_before_decoding() {
        // A fuzzed file (after its options byte) whose footer holds lists of 2³¹ booleans that the
        // parquet crate skipped without reading: seconds each.
        let input = std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../fuzz/regressions/parquet/timeout-boolean-list-in-footer"
        ))
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("footer.parquet");
        std::fs::write(&p, &input[1..]).unwrap();
        let e = arrow_schema(&p, ArrowFormat::Parquet).unwrap_err().to_string();
        assert!(
            e.starts_with(&format!("invalid data: {}: not a valid Parquet file: the footer: ", p.display())),
            "{e}"
        );
        assert!(e.contains("more than its"), "{e}");
    }

    #[test]
    fn strict_parquet_reads_stop_at_the_end_of_the_file() {
        use parquet::file::reader::ChunkReader;
        use std::io::Read;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("ten.bin");
        std::fs::write(&p, b"0123456789").unwrap();
        let f = StrictFile { file: File::open(&p).unwrap(), len: 10 };
        assert_eq!(&f.get_bytes(6, 4).unwrap()[..], b"6789");
        // A range past the end is refused before its buffer is allocated.
        let e = f.get_bytes(6, usize::MAX).unwrap_err().to_string();
        assert!(e.contains("run past the end of the file (10 bytes)"), "{e}");
        assert!(f.get_bytes(u64::MAX, 1).is_err());
        // Reading to the end works; a read at the end is an error, not zero bytes.
        let mut r = f.get_read(4).unwrap();
        let mut buf = [0u8; 6];
        r.read_exact(&mut buf).unwrap();
        assert_eq!(&buf, b"456789");
        let e = r.read(&mut buf).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::UnexpectedEof);
        // What the parquet crate's skip does: copy n bytes to nowhere.
        let mut r = f.get_read(8).unwrap();
        assert!(std::io::copy(&mut (&mut r).take(1 << 40), &mut std::io::sink()).is_err());
    }

    #[test]
    fn duplicate_column_names_are_refused_at_read_time() {
        let dir = tempfile::tempdir().unwrap();
        let schema = Arc::new(Schema::new(vec![
            Field::new("x", DataType::Float64, false),
            Field::new("x", DataType::Float64, false),
            Field::new("y", DataType::Int64, false),
        ]));
        let batch = RecordBatch::try_new(
            schema,
            vec![
                Arc::new(Float64Array::from(vec![1.0, 2.0])),
                Arc::new(Float64Array::from(vec![3.0, 4.0])),
                Arc::new(Int64Array::from(vec![0, 1])),
            ],
        )
        .unwrap();
        let pq = dir.path().join("dup.parquet");
        write_parquet(&pq, &batch, None);
        let ipc = dir.path().join("dup.arrow");
        write_ipc(&ipc, &batch, None);
        for (p, f) in [(&pq, ArrowFormat::Parquet), (&ipc, ArrowFormat::Ipc)] {
            let want = format!(
                "{}: column name 'x' appears more than once: rename one of the columns (each feature and label needs \
                 its own name)",
                p.display()
            );
            assert!(read_arrow(p, f, &Default::default()).unwrap_err().to_string().ends_with(&want));
            let e = read_arrow_binned(p, f, &StreamOptions::default()).unwrap_err().to_string();
            assert!(e.ends_with(&want), "{e}");
        }
    }
}
