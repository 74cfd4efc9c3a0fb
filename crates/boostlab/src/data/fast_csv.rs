//! The streamed CSV reader's record splitter and number parser (CSV parse + bin at
//! ≥ 250 MB/s on 2 threads).
//!
//! **Records.** A chunk of text with no `"` and no `\r` that is valid UTF-8 — the common numeric
//! file — is split directly: records at `\n`, fields at `,`, no allocation per record or field.
//! Anything else goes through the `csv` crate, as before. Both give the same records, fields and
//! record lines as the `csv` crate on that text (its reader, flexible, no quoting needed): empty
//! lines are skipped, and a record's line is the line just after the previous record's end (the
//! `csv` crate records a position before it skips empty lines, and `read_csv`'s messages use it).
//!
//! **Numbers.** [`parse_f64`] returns what `str::parse::<f64>` returns (so type inference and the
//! values are unchanged, bit for bit): plain decimals `[+-]digits[.digits][e[+-]digits]` with at most
//! 19 significant digits whose value is `w · 10^e` with `w ≤ 2^53` and `|e| ≤ 22` take Clinger's
//! fast path — `w` and `10^|e|` are exact `f64`s and one IEEE multiplication or division is
//! correctly rounded, as `str::parse` is — and every other text goes to `str::parse`.

/// Exact powers of ten as `f64` (10^22 is the largest exactly representable one).
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20,
    1e21, 1e22,
];

/// The eight bytes of `s` at `i` as a little-endian word, when all eight are decimal digits.
#[inline]
fn eight_digits(s: &[u8], i: usize) -> Option<u64> {
    let mut a = [0u8; 8];
    a.copy_from_slice(s.get(i..i + 8)?);
    let v = u64::from_le_bytes(a);
    // Every byte in b'0'..=b'9': no byte of v + 0x46.. or of v − 0x30.. has its high bit set.
    let any_other =
        (v.wrapping_add(0x4646_4646_4646_4646) | v.wrapping_sub(0x3030_3030_3030_3030)) & 0x8080_8080_8080_8080;
    (any_other == 0).then_some(v)
}

/// Reads the decimal digits of `s` from `*i` on into `w` (wrapping: the caller gives up above 19
/// digits), eight and four at a time while it can (SWAR, as fast_float's `parse_eight_digits`),
/// then one at a time.
#[inline]
fn digits_into(s: &[u8], i: &mut usize, w: &mut u64, digits: &mut usize) {
    while let Some(v) = eight_digits(s, *i) {
        let d = v.wrapping_sub(0x3030_3030_3030_3030);
        let d = d.wrapping_mul(10).wrapping_add(d >> 8); // byte 2j: the two-digit number of digits 2j, 2j+1
        let lo = (d & 0x0000_00ff_0000_00ff).wrapping_mul(100 + (1_000_000 << 32));
        let hi = ((d >> 16) & 0x0000_00ff_0000_00ff).wrapping_mul(1 + (10_000 << 32));
        let eight = (lo.wrapping_add(hi) >> 32) & 0xffff_ffff;
        *w = w.wrapping_mul(100_000_000).wrapping_add(eight);
        *digits += 8;
        *i += 8;
    }
    if let Some(b) = s.get(*i..*i + 4) {
        let mut a = [0u8; 4];
        a.copy_from_slice(b);
        let v = u32::from_le_bytes(a);
        if (v.wrapping_add(0x4646_4646) | v.wrapping_sub(0x3030_3030)) & 0x8080_8080 == 0 {
            let d = v.wrapping_sub(0x3030_3030);
            let d = d.wrapping_mul(10).wrapping_add(d >> 8);
            let four = (d & 0xff) * 100 + ((d >> 16) & 0xff);
            *w = w.wrapping_mul(10_000).wrapping_add(u64::from(four));
            *digits += 4;
            *i += 4;
        }
    }
    while let Some(&c) = s.get(*i) {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        *w = w.wrapping_mul(10).wrapping_add(u64::from(d));
        *digits += 1;
        *i += 1;
    }
}

/// An optional sign at `*i` (skipped): whether it is `-`.
#[inline]
fn sign(s: &[u8], i: &mut usize) -> bool {
    match s.get(*i) {
        Some(b'-') => {
            *i += 1;
            true
        }
        Some(b'+') => {
            *i += 1;
            false
        }
        _ => false,
    }
}

/// Clinger's fast path, or `None` when the text is not a plain decimal it can read exactly.
#[inline]
fn fast_f64(s: &[u8]) -> Option<f64> {
    let mut i = 0;
    let neg = sign(s, &mut i);
    let mut w: u64 = 0;
    let mut digits = 0usize; // digits read into w (leading zeros included)
    let mut exp: i64 = 0;
    let start = i;
    digits_into(s, &mut i, &mut w, &mut digits);
    let int_digits = i - start;
    let mut frac_digits = 0;
    if s.get(i) == Some(&b'.') {
        i += 1;
        let f0 = i;
        digits_into(s, &mut i, &mut w, &mut digits);
        frac_digits = i - f0;
        exp = -(frac_digits as i64);
    }
    if int_digits + frac_digits == 0 || digits > 19 {
        return None;
    }
    if let Some(b'e' | b'E') = s.get(i) {
        i += 1;
        let eneg = sign(s, &mut i);
        let e0 = i;
        let mut e: i64 = 0;
        while let Some(&c) = s.get(i) {
            let d = c.wrapping_sub(b'0');
            if d > 9 || i - e0 >= 6 {
                break;
            }
            e = e * 10 + i64::from(d);
            i += 1;
        }
        if i == e0 {
            return None;
        }
        exp += if eneg { -e } else { e };
    }
    if i != s.len() || w > 1 << 53 {
        return None;
    }
    let m = w as f64; // exact: w ≤ 2^53
    let v = if exp == 0 {
        m
    } else if (1..=22).contains(&exp) {
        m * POW10[exp as usize]
    } else if (-22..0).contains(&exp) {
        m / POW10[(-exp) as usize]
    } else {
        return None;
    };
    Some(if neg { -v } else { v })
}

/// `s.parse::<f64>().ok()`, faster for plain decimals (see the module docs).
#[inline]
pub(super) fn parse_f64(s: &str) -> Option<f64> {
    fast_f64(s.as_bytes()).or_else(|| s.parse::<f64>().ok())
}

/// Skips the decimal digits of `s` from `*i` on (eight at a time while it can); returns how many.
#[inline]
fn skip_digits(s: &[u8], i: &mut usize) -> usize {
    let start = *i;
    while eight_digits(s, *i).is_some() {
        *i += 8;
    }
    while s.get(*i).is_some_and(u8::is_ascii_digit) {
        *i += 1;
    }
    *i - start
}

/// Whether [`parse_f64`] surely gives a finite number for `s`, without computing it (
/// the CSV reader's first pass only needs to know that a field is a number, once the column's
/// distinct values are too many to keep, and the bin pass parses it — one parse per field).
///
/// `true` only for plain decimals `[+-]digits[.digits][e[+-]digits]` with at least one mantissa
/// digit, at most 100 integer digits and an exponent of at most 3 digits (at most 199 when
/// positive): text that `str::parse::<f64>` reads as a number below 10^299 in magnitude, so
/// finite. `false` means "not known": call [`parse_f64`].
#[inline]
pub(super) fn is_plain_finite(s: &str) -> bool {
    let s = s.as_bytes();
    let mut i = 0;
    sign(s, &mut i);
    let int_digits = skip_digits(s, &mut i);
    let mut frac_digits = 0;
    if s.get(i) == Some(&b'.') {
        i += 1;
        frac_digits = skip_digits(s, &mut i);
    }
    if int_digits + frac_digits == 0 || int_digits > 100 {
        return false;
    }
    if let Some(b'e' | b'E') = s.get(i) {
        i += 1;
        let neg = sign(s, &mut i);
        let e0 = i;
        let n = skip_digits(s, &mut i);
        if n == 0 || n > 3 {
            return false;
        }
        // |value| < 10^int_digits · 10^e ≤ 10^(100 + 199): finite. A negative exponent only
        // shrinks it (to 0 at worst, which is finite).
        let e = s[e0..i].iter().fold(0u32, |a, &c| a * 10 + u32::from(c - b'0'));
        if !neg && e > 199 {
            return false;
        }
    }
    i == s.len()
}

/// The reference [`parse_f64`] must equal (tests only).
#[cfg(test)]
fn naive_parse_f64(s: &str) -> Option<f64> {
    s.parse::<f64>().ok()
}

/// `str::trim`, with a shortcut for fields that start and end with a printable ASCII byte.
#[inline]
pub(super) fn trim(s: &str) -> &str {
    let b = s.as_bytes();
    match (b.first(), b.last()) {
        (Some(&f), Some(&l)) if (0x21..0x7f).contains(&f) && (0x21..0x7f).contains(&l) => s,
        _ => s.trim(),
    }
}

/// Follows the `csv` crate's quoting (csv-core's reader states: a `"` opens a quoted field only at
/// a field's start, `""` inside it is a quote, a field or record ends at `,`, `\r` or `\n` outside
/// quotes) over text fed in pieces, to find a quote that is never closed: the `csv` crate then
/// reads the rest of the file as one field, and the row count or field count it reports hides the
/// cause.
#[derive(Debug, Clone)]
pub(super) struct QuoteScan {
    state: QuoteState,
    /// The current line (1-based).
    line: usize,
    /// The line a record's position names: the line after the previous record's end (the `csv`
    /// crate's, which [`Records::line`] follows).
    rec_line: usize,
    in_record: bool,
    pending: bool,
    /// Where the open quote is: (its line, its record's line).
    open: (usize, usize),
    /// Fields of the first record (the header) so far, and whether it has ended.
    header_fields: usize,
    header_done: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum QuoteState {
    FieldStart,
    Field,
    Quoted,
    QuoteInQuoted,
}

impl Default for QuoteScan {
    fn default() -> QuoteScan {
        QuoteScan {
            state: QuoteState::FieldStart,
            line: 1,
            rec_line: 1,
            in_record: false,
            pending: false,
            open: (0, 0),
            header_fields: 0,
            header_done: false,
        }
    }
}

impl QuoteScan {
    /// Reads the next piece of the text.
    pub(super) fn feed(&mut self, bytes: &[u8]) {
        use QuoteState::*;
        for &b in bytes {
            if b == b'\n' {
                self.line += 1;
            }
            if self.state == Quoted {
                if b == b'"' {
                    self.state = QuoteInQuoted;
                }
                continue;
            }
            let end = b == b'\n' || b == b'\r';
            if end {
                if self.in_record || (self.pending && b == b'\n') {
                    self.header_done |= self.in_record;
                    self.pending = b == b'\r';
                    self.rec_line = self.line;
                    self.in_record = false;
                }
                self.state = FieldStart;
                continue;
            }
            if !self.in_record {
                if self.pending {
                    self.rec_line = self.line;
                    self.pending = false;
                }
                self.in_record = true;
                if !self.header_done {
                    self.header_fields = 1;
                }
            }
            if b == b',' && !self.header_done {
                self.header_fields += 1;
            }
            self.state = match (self.state, b) {
                (FieldStart, b'"') | (QuoteInQuoted, b'"') => {
                    if self.state == FieldStart {
                        self.open = (self.line, self.rec_line);
                    }
                    Quoted
                }
                (_, b',') => FieldStart,
                _ => Field,
            };
        }
    }

    /// The fields of the header (the first record) seen so far.
    pub(super) fn header_fields(&self) -> usize {
        self.header_fields
    }

    /// Whether the header (the first record) has ended.
    pub(super) fn header_done(&self) -> bool {
        self.header_done
    }

    /// At the end of the text: (the line of a quote that never closes, its record's line).
    pub(super) fn unterminated(&self) -> Option<(usize, usize)> {
        (self.state == QuoteState::Quoted).then_some(self.open)
    }
}

/// The most columns a CSV file may have: per-column state costs a few hundred bytes, so a header
/// of millions of short names would take gigabytes before anything else is checked (a feature
/// also costs a histogram of 256 bins per tree node). Wider data: the LIBSVM format.
pub const MAX_CSV_COLUMNS: usize = 1_000_000;

/// The message for a header wider than [`MAX_CSV_COLUMNS`].
pub(super) fn too_many_columns_message() -> String {
    format!(
        "the header has more than {MAX_CSV_COLUMNS} columns, the most boostlab reads from a CSV file (for wider, \
         sparse data use the LIBSVM format)"
    )
}

/// Refuses, before the header is parsed, a CSV file whose header has more than
/// [`MAX_CSV_COLUMNS`] fields: a streaming count of its first record in blocks of 64 KiB.
pub(super) fn check_header_width(path: &std::path::Path) -> crate::error::Result<()> {
    use std::io::Read;
    let mut f = std::fs::File::open(path).map_err(|e| crate::error::Error::io(path, e))?;
    let mut q = QuoteScan::default();
    let mut buf = vec![0u8; 1 << 16];
    while !q.header_done() {
        let n = f.read(&mut buf).map_err(|e| crate::error::Error::io(path, e))?;
        if n == 0 {
            break;
        }
        q.feed(&buf[..n]);
        if q.header_fields() > MAX_CSV_COLUMNS {
            return Err(crate::error::Error::Parse {
                file: path.display().to_string(),
                line: 1,
                column: None,
                message: too_many_columns_message(),
            });
        }
    }
    Ok(())
}

/// The message for a quote that never closes, opened at `line`.
pub(super) fn unterminated_quote_message(line: usize) -> String {
    format!(
        "unterminated quote starting at line {line}: a field opens with \" and is never closed, so the rest of the \
         file reads as one field (close the quote, or write a quote inside a quoted field as \"\")"
    )
}

/// The records of one chunk of CSV text (see the module docs).
pub(super) struct Records<'a> {
    kind: Kind<'a>,
    line: usize,
}

enum Kind<'a> {
    /// Quote-free, CR-free UTF-8 text, split directly.
    Fast {
        text: &'a str,
        pos: usize,
        /// The line `pos` is on (1-based).
        cur_line: usize,
        /// The line after the previous record's end: the next record's reported line.
        next_line: usize,
        /// The current record's bytes.
        line: (usize, usize),
        /// Field byte ranges of the current record (once split).
        fields: Vec<(usize, usize)>,
        split: bool,
    },
    /// Anything else: the `csv` crate.
    Csv { rdr: csv::Reader<&'a [u8]>, rec: csv::ByteRecord },
}

impl<'a> Records<'a> {
    /// A reader of `buf`'s records, by the fast splitter when the text allows it.
    pub(super) fn new(buf: &'a [u8]) -> Records<'a> {
        let simple = memchr::memchr2(b'"', b'\r', buf).is_none();
        let kind = match std::str::from_utf8(buf) {
            Ok(text) if simple => Kind::Fast {
                text,
                pos: 0,
                cur_line: 1,
                next_line: 1,
                line: (0, 0),
                fields: Vec::with_capacity(64),
                split: true,
            },
            _ => Kind::Csv {
                rdr: csv::ReaderBuilder::new().has_headers(false).flexible(true).from_reader(buf),
                rec: csv::ByteRecord::new(),
            },
        };
        Records { kind, line: 1 }
    }

    /// Whether the fast splitter reads this chunk (tests).
    #[cfg(test)]
    fn is_fast(&self) -> bool {
        matches!(self.kind, Kind::Fast { .. })
    }

    /// Reads the next record: `Ok(false)` at the end, `Err((line, message))` on a CSV syntax error.
    #[inline]
    pub(super) fn next_record(&mut self) -> std::result::Result<bool, (usize, String)> {
        let more = self.next_unsplit()?;
        self.split();
        Ok(more)
    }

    /// [`Records::next_record`] without splitting the record into fields: only
    /// [`Records::is_blank`] and [`Records::line`] may be asked before [`Records::split`].
    #[inline]
    pub(super) fn next_unsplit(&mut self) -> std::result::Result<bool, (usize, String)> {
        match &mut self.kind {
            Kind::Fast { text, pos, cur_line, next_line, line, split, .. } => {
                let bytes = text.as_bytes();
                loop {
                    if *pos >= bytes.len() {
                        return Ok(false);
                    }
                    let start = *pos;
                    let end = memchr::memchr(b'\n', &bytes[start..]).map_or(bytes.len(), |i| start + i);
                    *pos = end + 1;
                    *cur_line += 1;
                    if end == start {
                        // An empty line: skipped; the next record keeps the reported line.
                        continue;
                    }
                    self.line = *next_line;
                    *next_line = *cur_line;
                    *line = (start, end);
                    *split = false;
                    return Ok(true);
                }
            }
            Kind::Csv { rdr, rec } => match rdr.read_byte_record(rec) {
                Ok(true) => {
                    self.line = rec.position().map_or(1, |p| p.line() as usize);
                    Ok(true)
                }
                Ok(false) => Ok(false),
                Err(e) => Err((e.position().map_or(0, |p| p.line() as usize), e.to_string())),
            },
        }
    }

    /// Splits the current record into fields (once).
    #[inline]
    pub(super) fn split(&mut self) {
        if let Kind::Fast { text, line: (start, end), fields, split, .. } = &mut self.kind {
            if !*split {
                *split = true;
                fields.clear();
                split_commas(&text.as_bytes()[*start..*end], *start, fields);
            }
        }
    }

    /// The current record's line (1-based, within the chunk).
    #[inline]
    pub(super) fn line(&self) -> usize {
        self.line
    }

    /// The current record's number of fields.
    #[inline]
    pub(super) fn len(&self) -> usize {
        match &self.kind {
            Kind::Fast { fields, .. } => fields.len(),
            Kind::Csv { rec, .. } => rec.len(),
        }
    }

    /// Field `i`, trimmed; "" when absent or not UTF-8 (the reader's passes check UTF-8 first).
    #[inline]
    pub(super) fn field(&self, i: usize) -> &str {
        match &self.kind {
            Kind::Fast { text, fields, .. } => fields.get(i).and_then(|&(a, b)| text.get(a..b)).map_or("", trim),
            Kind::Csv { rec, .. } => rec.get(i).map_or("", |b| std::str::from_utf8(b).map_or("", str::trim)),
        }
    }

    /// The first field that is not UTF-8: (index, message).
    pub(super) fn utf8_error(&self) -> Option<(usize, String)> {
        match &self.kind {
            Kind::Fast { .. } => None,
            Kind::Csv { rec, .. } => rec
                .iter()
                .enumerate()
                .find_map(|(i, b)| std::str::from_utf8(b).err().map(|e| (i, format!("invalid UTF-8 ({e})")))),
        }
    }

    /// A blank record: one field, empty once trimmed (`read_csv`'s rule; a line of spaces or a
    /// lone vertical tab is blank).
    #[inline]
    pub(super) fn is_blank(&self) -> bool {
        match &self.kind {
            // A record that is all whitespace has no comma: one field.
            Kind::Fast { text, line: (a, b), .. } => text.get(*a..*b).is_some_and(|t| t.trim().is_empty()),
            Kind::Csv { rec, .. } => {
                rec.len() == 1 && rec.get(0).is_some_and(|s| std::str::from_utf8(s).is_ok_and(|t| t.trim().is_empty()))
            }
        }
    }
}

/// Pushes the ranges of the comma-separated fields of `line` (which starts at byte `at`): eight
/// bytes at a time, with an exact per-byte equality mask.
#[inline]
fn split_commas(line: &[u8], at: usize, fields: &mut Vec<(usize, usize)>) {
    const LO: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    const HI: u64 = 0x8080_8080_8080_8080;
    const COMMAS: u64 = 0x2c2c_2c2c_2c2c_2c2c;
    let mut a = at;
    let mut base = 0;
    let mut words = line.chunks_exact(8);
    for w in &mut words {
        let mut b = [0u8; 8];
        b.copy_from_slice(w);
        let x = u64::from_le_bytes(b) ^ COMMAS; // a comma is a zero byte
                                                // High bit set exactly in the zero bytes (no carry crosses a byte: 0x7f + 0x7f < 0x100).
        let mut m = !(((x & LO) + LO) | x) & HI;
        while m != 0 {
            let i = base + (m.trailing_zeros() / 8) as usize;
            fields.push((a, at + i));
            a = at + i + 1;
            m &= m - 1;
        }
        base += 8;
    }
    for (j, &c) in words.remainder().iter().enumerate() {
        if c == b',' {
            fields.push((a, at + base + j));
            a = at + base + j + 1;
        }
    }
    fields.push((a, at + line.len()));
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Every record of `text` as (line, fields) by the `csv` crate (the reference).
    fn by_csv(text: &[u8]) -> Vec<(usize, Vec<String>)> {
        let mut rdr = csv::ReaderBuilder::new().has_headers(false).flexible(true).from_reader(text);
        let mut rec = csv::ByteRecord::new();
        let mut out = Vec::new();
        while rdr.read_byte_record(&mut rec).unwrap() {
            let f = rec.iter().map(|b| std::str::from_utf8(b).unwrap().trim().to_string()).collect();
            out.push((rec.position().unwrap().line() as usize, f));
        }
        out
    }

    fn by_records(text: &[u8]) -> (bool, Vec<(usize, Vec<String>)>) {
        let mut r = Records::new(text);
        let fast = r.is_fast();
        let mut out = Vec::new();
        while r.next_record().unwrap() {
            out.push((r.line(), (0..r.len()).map(|i| r.field(i).to_string()).collect()));
        }
        (fast, out)
    }

    #[test]
    fn fast_records_equal_the_csv_crate() {
        let cases: &[&str] = &[
            "1,2,3\n4,5,6\n",
            "1,2,3\n4,5,6",
            "\n\n1,2\n\n\n3,4\n\n",
            " a , b ,\n,,\n  \n\u{b}\nx\n",
            "1,2\n\n3\n,\n",
            "",
            "\n",
            "é,ü\n1,\u{a0}2\u{a0}\n",
        ];
        for t in cases {
            let (fast, got) = by_records(t.as_bytes());
            assert!(fast, "{t:?} should take the fast path");
            assert_eq!(got, by_csv(t.as_bytes()), "{t:?}");
        }
        // Quotes and CR go to the csv crate.
        for t in ["\"a,b\",c\n1,2\n", "1,2\r\n3,4\r\n"] {
            let (fast, got) = by_records(t.as_bytes());
            assert!(!fast);
            assert_eq!(got, by_csv(t.as_bytes()), "{t:?}");
        }
    }

    proptest! {
        #[test]
        fn fast_records_property(t in "[0-9a ,\n\u{b}é.]{0,200}") {
            let (fast, got) = by_records(t.as_bytes());
            prop_assert!(fast);
            prop_assert_eq!(got, by_csv(t.as_bytes()));
        }

        #[test]
        fn plain_finite_implies_a_finite_parse(t in "[-+]?[0-9]{0,120}(\\.[0-9]{0,30})?([eE][-+]?[0-9]{0,4})?") {
            if is_plain_finite(&t) {
                prop_assert!(naive_parse_f64(&t).is_some_and(f64::is_finite), "{}", t);
            }
        }

        #[test]
        fn plain_finite_accepts_printed_floats(bits in any::<u64>(), e in -30i32..30) {
            // The fields a numeric file holds are recognised (else the first pass would parse them).
            let x = f64::from_bits(bits);
            if x.is_finite() && x.abs() < 1e30 {
                let f = x as f32;
                for t in [format!("{x}"), format!("{f}"), format!("{x:e}"), format!("{f:e}"), format!("{:.6}", f64::from(f) * 10f64.powi(e))] {
                    prop_assert!(is_plain_finite(&t), "{}", t);
                }
            }
        }

        #[test]
        fn parse_f64_equals_std_on_random_text(t in "[-+]?[0-9]{0,22}(\\.[0-9]{0,22})?([eE][-+]?[0-9]{0,4})?") {
            let got = parse_f64(&t).map(f64::to_bits);
            prop_assert_eq!(got, naive_parse_f64(&t).map(f64::to_bits), "{}", t);
        }

        #[test]
        fn parse_f64_equals_std_on_printed_floats(bits in any::<u64>(), e in -30i32..30) {
            let x = f64::from_bits(bits);
            let f = x as f32;
            for t in [format!("{x}"), format!("{f}"), format!("{x:e}"), format!("{f:e}"), format!("{:.6}", f64::from(f) * 10f64.powi(e))] {
                prop_assert_eq!(parse_f64(&t).map(f64::to_bits), naive_parse_f64(&t).map(f64::to_bits), "{}", t);
            }
        }
    }

    #[test]
    fn parse_f64_edge_cases() {
        for t in [
            "0",
            "-0",
            "+0",
            "0.",
            ".0",
            ".",
            "-",
            "+",
            "",
            "e5",
            "1e",
            "1e+",
            "1.5e-3",
            "9007199254740992",
            "9007199254740993",
            "1e22",
            "1e23",
            "123456789e-22",
            "1234567890123456789",
            "12345678901234567890",
            "0.000000000000000000001",
            "1_0",
            "inf",
            "-infinity",
            "NaN",
            "nan",
            "1e-400",
            "1e400",
            "0x10",
            "1,5",
            "00000000000000000001",
            "-0.91545165",
            "1.0E+2",
            "1e0000005",
        ] {
            assert_eq!(parse_f64(t).map(f64::to_bits), naive_parse_f64(t).map(f64::to_bits), "{t:?}");
        }
        for t in [
            "", "+", "-", ".", "-.", "e5", "1e", "1e+", "1e1000", "1e200", "inf", "NaN", "1,5", "0x10", "1_0", " 1",
            "1 ",
        ] {
            assert!(!is_plain_finite(t), "{t:?}");
        }
        for t in ["0", "-0", "+.5", "5.", "1e199", "1E-999", "-0.91545165", "1.0E+2", "007"] {
            assert!(is_plain_finite(t) && naive_parse_f64(t).is_some_and(f64::is_finite), "{t:?}");
        }
        assert_eq!(trim(" a\u{a0}"), "a");
        assert_eq!(trim("1.5"), "1.5");
    }
}
