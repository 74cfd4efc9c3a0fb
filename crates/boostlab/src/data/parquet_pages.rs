//! A check of a Parquet file's footer and of every page header before the parquet crate decodes
//! them.
//!
//! The footer and the page headers are Thrift structs (compact protocol). The parquet crate skips
//! the fields it does not know without reading the elements of a list or map of booleans (the
//! compact protocol writes each as one byte), so a header of a few bytes declaring a list of 2³¹
//! booleans costs 2³¹ steps, and a page of such fields hours of CPU, before anything fails. Here every header is
//! walked with the protocol's own sizes — each element of a list, set or map takes at least one
//! byte, so no count may exceed the bytes left — and a header that claims more than its bytes is
//! an error naming the file. The walk reads each header once (a small read per page) and skips
//! the page data by its declared size.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};

/// Bytes of a page header read: first a little (a header is a few dozen bytes), then more while
/// it is cut short, up to far above any real header (kilobytes with statistics).
const HEADER_READS: [usize; 3] = [256, 64 << 10, 1 << 20];

/// What the walk of a header's bytes ends in, short of a header.
#[derive(Debug, PartialEq)]
enum Refusal {
    /// The bytes end inside the header: read more.
    Short,
    /// The header is malformed.
    Bad(String),
}

impl Refusal {
    /// The message refusing `what` (the footer, a page header) for this reason.
    fn describe(self, what: &str) -> String {
        match self {
            Refusal::Bad(why) => format!("{what}: {why}"),
            Refusal::Short => format!("{what} is cut short"),
        }
    }
}

impl From<String> for Refusal {
    fn from(s: String) -> Refusal {
        Refusal::Bad(s)
    }
}

impl From<&str> for Refusal {
    fn from(s: &str) -> Refusal {
        Refusal::Bad(s.to_string())
    }
}

/// Nesting of structs and collections at most (the parquet crate's own limit).
const MAX_DEPTH: u32 = 64;

/// A step of the walk.
type Walk<T> = std::result::Result<T, Refusal>;

/// A cursor over a header's bytes.
struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
    /// Whether `buf` is all the header can have (else running out means: read more).
    last: bool,
}

impl Cursor<'_> {
    fn left(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// Running out of bytes: read more, or (when there are no more) the header is refused.
    fn short(&self, why: impl Into<String>) -> Refusal {
        if self.last {
            Refusal::Bad(why.into())
        } else {
            Refusal::Short
        }
    }

    fn byte(&mut self) -> Walk<u8> {
        let Some(&b) = self.buf.get(self.pos) else { return Err(self.short("the header ends inside a field")) };
        self.pos += 1;
        Ok(b)
    }

    fn skip(&mut self, n: u64) -> Walk<()> {
        if n > self.left() as u64 {
            return Err(self.short(format!("a field declares {n} bytes, more than the {} left", self.left())));
        }
        self.pos += n as usize;
        Ok(())
    }

    fn varint(&mut self) -> Walk<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err("a varint longer than 10 bytes".into())
    }

    fn zigzag(&mut self) -> Walk<i64> {
        let v = self.varint()?;
        Ok((v >> 1) as i64 ^ -((v & 1) as i64))
    }

    /// A count of elements, each taking at least `min_bytes`.
    fn count(&mut self, n: u64, min_bytes: u64) -> Walk<u64> {
        if n.saturating_mul(min_bytes) > self.left() as u64 {
            return Err(self
                .short(format!("a list or map declares {n} elements, more than its {} bytes can hold", self.left())));
        }
        Ok(n)
    }

    /// Skips a value of compact type `t` (`in_collection`: a boolean is then one byte).
    fn value(&mut self, t: u8, in_collection: bool, depth: u32) -> Walk<()> {
        if depth == 0 {
            return Err("fields nested more than 64 deep".into());
        }
        match t {
            1 | 2 => {
                if in_collection {
                    self.byte()?;
                }
            }
            3 => {
                self.byte()?;
            }
            4..=6 => {
                self.varint()?;
            }
            7 => self.skip(8)?,
            8 => {
                let n = self.varint()?;
                self.skip(n)?;
            }
            9 | 10 => {
                let h = self.byte()?;
                let elem = h & 0x0f;
                let n = match h >> 4 {
                    15 => self.varint()?,
                    n => u64::from(n),
                };
                for _ in 0..self.count(n, 1)? {
                    self.value(elem, true, depth - 1)?;
                }
            }
            11 => {
                let n = self.varint()?;
                if n > 0 {
                    let kv = self.byte()?;
                    for _ in 0..self.count(n, 2)? {
                        self.value(kv >> 4, true, depth - 1)?;
                        self.value(kv & 0x0f, true, depth - 1)?;
                    }
                }
            }
            12 => {
                self.fields(depth - 1, &mut |_, _, _| Ok(false))?;
            }
            13 => self.skip(16)?,
            _ => return Err(format!("unknown field type {t}").into()),
        }
        Ok(())
    }

    /// Walks a struct's fields to its stop byte. `take(id, type, cursor)` may read a field's
    /// value itself and return true; otherwise the value is skipped.
    fn fields(&mut self, depth: u32, take: &mut dyn FnMut(i64, u8, &mut Self) -> Walk<bool>) -> Walk<()> {
        let mut id = 0i64;
        loop {
            let h = self.byte()?;
            if h == 0 {
                return Ok(());
            }
            let t = h & 0x0f;
            id = match h >> 4 {
                0 => self.zigzag()?,
                d => id + i64::from(d),
            };
            if !take(id, t, self)? {
                self.value(t, false, depth)?;
            }
        }
    }
}

/// The size of a page header at the start of `buf` and the page's compressed size, or why the
/// header is refused.
fn page_header(buf: &[u8], last: bool) -> Walk<(usize, u64)> {
    let mut c = Cursor { buf, pos: 0, last };
    let mut compressed: Option<i64> = None;
    c.fields(MAX_DEPTH, &mut |id, t, c| {
        if id == 3 && t == 5 {
            compressed = Some(c.zigzag()?);
            return Ok(true);
        }
        Ok(false)
    })?;
    match compressed {
        Some(n) if n >= 0 => Ok((c.pos, n as u64)),
        Some(n) => Err(format!("a page declares a compressed size of {n} bytes").into()),
        None => Err("a page header without its compressed size".into()),
    }
}

/// Walks the footer (the file metadata: the Thrift struct before the last 8 bytes, its length in
/// the first 4 of them) of a Parquet file of `len` bytes with the same sizes as the page headers.
/// A footer whose length does not fit the file is left to the parquet crate, which refuses it.
pub(super) fn check_footer(file: &File, len: u64) -> std::result::Result<(), String> {
    let mut f = file.try_clone().map_err(|e| e.to_string())?;
    if len < 12 {
        return Ok(());
    }
    let mut tail = [0u8; 8];
    f.seek(SeekFrom::Start(len - 8)).map_err(|e| e.to_string())?;
    f.read_exact(&mut tail).map_err(|e| e.to_string())?;
    let n = u64::from(u32::from_le_bytes([tail[0], tail[1], tail[2], tail[3]]));
    if &tail[4..] != b"PAR1" || n > len - 8 {
        return Ok(());
    }
    let mut buf = vec![0u8; n as usize];
    f.seek(SeekFrom::Start(len - 8 - n)).map_err(|e| e.to_string())?;
    f.read_exact(&mut buf).map_err(|e| e.to_string())?;
    let mut c = Cursor { buf: &buf, pos: 0, last: true };
    c.fields(MAX_DEPTH, &mut |_, _, _| Ok(false)).map_err(|r| r.describe("the footer"))
}

/// Walks the pages of each column chunk `(start, length)` of `file` (`len` bytes): every page
/// header must be well formed within its bytes, and every page must end within its chunk.
pub(super) fn check_page_headers(file: &File, len: u64, chunks: &[(i64, i64)]) -> std::result::Result<(), String> {
    let mut f = file.try_clone().map_err(|e| e.to_string())?;
    let mut buf = Vec::new();
    for &(start, length) in chunks {
        if start < 0 || length < 0 || (start as u64).saturating_add(length as u64) > len {
            return Err(format!(
                "a column chunk of {length} bytes at byte {start} lies outside the file ({len} bytes)"
            ));
        }
        let (mut pos, end) = (start as u64, start as u64 + length as u64);
        while pos < end {
            let mut walked = Err(Refusal::Short);
            for (i, &want) in HEADER_READS.iter().enumerate() {
                let n = ((end - pos) as usize).min(want);
                buf.resize(n, 0);
                f.seek(SeekFrom::Start(pos)).map_err(|e| e.to_string())?;
                f.read_exact(&mut buf).map_err(|e| e.to_string())?;
                walked = page_header(&buf, n < want || i + 1 == HEADER_READS.len());
                if walked != Err(Refusal::Short) {
                    break;
                }
            }
            let (header, data) = walked.map_err(|r| r.describe(&format!("the page header at byte {pos}")))?;
            pos = pos.saturating_add(header as u64).saturating_add(data);
            if pos > end {
                return Err(format!("a page ends at byte {pos}, past the end of its column chunk (byte {end})"));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A page header: type 0, uncompressed 10, compressed 4, then `extra` fields, then stop.
    fn header(extra: &[u8]) -> Vec<u8> {
        let mut h = vec![0x15, 0x00, 0x15, 0x14, 0x15, 0x08];
        h.extend_from_slice(extra);
        h.push(0);
        h
    }

    #[test]
    fn a_header_gives_its_length_and_the_page_size() {
        let h = header(&[]);
        assert_eq!(page_header(&h, true), Ok((h.len(), 4)));
        // An unknown struct field with a list of three booleans, a binary and a map.
        let h = header(&[0x1c, 0x19, 0x31, 1, 0, 1, 0x18, 2, b'a', b'b', 0x1b, 1, 0x55, 2, 4, 0]);
        assert_eq!(page_header(&h, true), Ok((h.len(), 4)));
        // Cut short: read more, unless there is no more.
        assert_eq!(page_header(&h[..9], false), Err(Refusal::Short));
        assert!(matches!(page_header(&h[..9], true), Err(Refusal::Bad(_))));
    }

    #[test]
    fn counts_beyond_the_bytes_left_are_refused_at_once() {
        let bad = |extra: &[u8]| match page_header(&header(extra), true) {
            Err(Refusal::Bad(why)) => why,
            other => panic!("refused, got {other:?}"),
        };
        // A list field (type 9) of 2^31 booleans: the parquet crate's skip loops 2^31 times.
        let e = bad(&[0x19, 0xf1, 0x80, 0x80, 0x80, 0x80, 0x08]);
        assert_eq!(e, "a list or map declares 2147483648 elements, more than its 1 bytes can hold");
        // A map of 2^31 boolean pairs.
        assert!(bad(&[0x1b, 0x80, 0x80, 0x80, 0x80, 0x08, 0x11]).contains("declares 2147483648 elements"));
        // A binary longer than the header.
        assert!(bad(&[0x18, 0x7f]).contains("a field declares 127 bytes"));
        // Too deep.
        let deep: Vec<u8> = std::iter::repeat_n(0x1c, 70).collect();
        assert!(bad(&deep).contains("nested more than 64 deep"));
        assert_eq!(page_header(&[0x00], true), Err(Refusal::Bad("a page header without its compressed size".into())));
    }
}
