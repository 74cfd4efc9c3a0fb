//! Every `cli` row of the bad-input table in docs/reference/errors.md is run here,
//! in a directory holding the table's fixture files, and must print its "what the user sees" line
//! exactly (one whole line of standard error), exit with a failure status, and never panic. The
//! table cannot drift from the program: a changed message fails this test.

use std::path::Path;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_boostlab");

/// The rows `(number, where, input, message)` of the table under `## Bad inputs`.
pub fn table_rows() -> Vec<(String, String, String, String)> {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/reference/errors.md")).unwrap();
    let section = doc.split("\n## Bad inputs").nth(1).expect("a `## Bad inputs` section");
    let section = section.split("\n## ").next().unwrap_or(section);
    let mut rows = Vec::new();
    for line in section.lines().filter(|l| l.starts_with("| ") && !l.starts_with("| #")) {
        let cells = split_row(line);
        assert_eq!(cells.len(), 5, "a row of 5 cells: {line}");
        rows.push((cells[0].clone(), cells[1].clone(), code(&cells[3]), code(&cells[4])));
    }
    rows
}

/// The cells of a table row: split at `|` not escaped as `\|`.
fn split_row(line: &str) -> Vec<String> {
    let mut cells = vec![String::new()];
    let mut chars = line.trim().trim_start_matches('|').trim_end_matches('|').chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                cells.last_mut().unwrap().push('|');
                chars.next();
            }
            '|' => cells.push(String::new()),
            c => cells.last_mut().unwrap().push(c),
        }
    }
    cells.into_iter().map(|c| c.trim().to_string()).collect()
}

/// The text of a ``` `` code `` ``` cell.
fn code(cell: &str) -> String {
    cell.strip_prefix("`` ")
        .and_then(|c| c.strip_suffix(" ``"))
        .unwrap_or_else(|| panic!("a `` code `` cell: {cell}"))
        .to_string()
}

/// The fixture files of the table (docs/reference/errors.md lists them).
fn fixtures(dir: &Path) {
    let w = |name: &str, text: &str| std::fs::write(dir.join(name), text).unwrap();
    let mut d = String::from("x,color,z,label\n");
    for i in 0..200 {
        let x = (i * 37 % 101) as f64 / 10.0;
        let color = ["red", "green", "", "blue"][i % 4];
        let bump = if color == "red" { 3.0 } else { 0.0 };
        d.push_str(&format!("{x},{color},{},{}\n", i * 13 % 7, if x + bump > 5.0 { "yes" } else { "no" }));
    }
    w("d.csv", &d);
    w("empty.csv", "");
    w("header.csv", "x,label\n");
    w("ragged.csv", "x,label\n1,a\n2\n");
    w("inf.csv", "x,label\n1,a\ninf,b\n");
    w("one.csv", "x,label\n1,a\n2,a\n");
    w("nolabel.csv", "x,label\n1,a\n2,\n");
    w("long.csv", &format!("x,label\n1,a\n2,b\n3,{}\n", "q".repeat(10_000_000)));
    w("w.csv", "x,w,label\n1,-1,a\n2,1,b\n");
    w("bad.json", "{not json");
    w("nox.csv", "color,z,label\nred,1,yes\n");
    w("text.csv", "x,color,z,label\nabc,red,1,yes\n");
    w("quote.csv", "x,color,label\n1,red,yes\n2,\"blue,no\n3,red,yes\n");
    w("longw.csv", &format!("x,w,label\n1,1,a\n2,{},b\n", "q".repeat(10_000_000)));
    w("nofeat.svm", "1\n0\n1\n");
    let mut typo = String::from("x,label\n");
    for i in 0..300 {
        typo.push_str(&format!("{}.5,{}\n", i, ["a", "b"][i % 2]));
    }
    typo.push_str("1O.5,a\n");
    w("typo.csv", &typo);
    w("wide.csv", &format!("{}\n", ",".repeat(1_000_000)));
    std::fs::write(dir.join("tiny.arrow"), b"ARROW1\0\0").unwrap();
    parquet_fixtures(dir);
    let exp = |name: &str, path: &str, setting: &str| {
        format!(
            "name = \"{name}\"\nfolds = 5\nnoise = [0.0]\n[[datasets]]\nname = \"{}\"\npath = \"{path}\"\n\
             [[settings]]\nname = \"ada\"\n{setting}",
            path.trim_end_matches(".csv")
        )
    };
    w("name.toml", &exp("../../x", "d.csv", ""));
    w("param.toml", &exp("p", "d.csv", "rounds = 0\n"));
    w("missing.toml", &exp("m", "gone.csv", ""));
    let ok = Command::new(BIN)
        .current_dir(dir)
        .args(["train", "--data", "d.csv", "--rounds", "3", "--model", "m.json", "-q"])
        .output()
        .unwrap()
        .status
        .success();
    assert!(ok, "the fixture model trains");
    let ok = Command::new(BIN)
        .current_dir(dir)
        .args(["train", "--data", "d.csv", "--algo", "real-adaboost", "--rounds", "3", "--model", "real.json", "-q"])
        .output()
        .unwrap()
        .status
        .success();
    assert!(ok, "the fixture Real AdaBoost model trains");
    let m = std::fs::read_to_string(dir.join("m.json")).unwrap();
    assert!(m.contains("\"format_version\":1,"));
    w("v1s.json", &m.replacen("\"format_version\":1,", "\"format_version\":\"1\",", 1));
    // `d.csv` with `color` as numbers: the same columns, one of another kind.
    let mut kind = String::from("x,color,z,label\n");
    for line in d.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        kind.push_str(&format!("{},{},{},{}\n", f[0], f[1].len(), f[2], f[3]));
    }
    w("kind.csv", &kind);
}

/// `dup.parquet`: two columns named `x` (and a label `y`).
#[cfg(feature = "arrow")]
fn parquet_fixtures(dir: &Path) {
    use std::sync::Arc;

    use arrow_array::{ArrayRef, Float64Array, Int64Array, RecordBatch};
    use arrow_schema::{DataType, Field, Schema};
    let schema = Arc::new(Schema::new(vec![
        Field::new("x", DataType::Float64, false),
        Field::new("x", DataType::Float64, false),
        Field::new("y", DataType::Int64, false),
    ]));
    let cols: Vec<ArrayRef> = vec![
        Arc::new(Float64Array::from(vec![1.0, 2.0, 3.0, 4.0])),
        Arc::new(Float64Array::from(vec![4.0, 3.0, 2.0, 1.0])),
        Arc::new(Int64Array::from(vec![0, 1, 0, 1])),
    ];
    let batch = RecordBatch::try_new(schema.clone(), cols).unwrap();
    let file = std::fs::File::create(dir.join("dup.parquet")).unwrap();
    let mut wr = parquet::arrow::ArrowWriter::try_new(file, schema, None).unwrap();
    wr.write(&batch).unwrap();
    wr.close().unwrap();
}

#[cfg(not(feature = "arrow"))]
fn parquet_fixtures(_dir: &Path) {}

#[test]
fn every_cli_row_of_the_bad_input_table() {
    let rows = table_rows();
    assert!(rows.len() >= 30, "at least 30 bad inputs, the table has {}", rows.len());
    let dir = tempfile::tempdir().unwrap();
    fixtures(dir.path());
    let mut n_cli = 0;
    let mut wrong = Vec::new();
    for (n, place, input, want) in rows.iter().filter(|r| r.1 == "cli") {
        n_cli += 1;
        let args: Vec<&str> = input.strip_prefix("boostlab ").expect("a boostlab command").split(' ').collect();
        let out = Command::new(BIN).current_dir(dir.path()).args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "row {n} ({place}) panics: {err}");
        assert!(!out.status.success(), "row {n}: `{input}` succeeded");
        if !err.lines().any(|l| l == want) {
            wrong.push(format!(
                "row {n}: `{input}`\nwanted: {want}\nstderr: {}",
                err.chars().take(2000).collect::<String>()
            ));
        }
    }
    // Every row whose message differs, at once.
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(n_cli >= 15, "{n_cli} cli rows");
    // Refused before any cell ran: no results directory.
    assert!(!dir.path().join("results/p").exists());
}
