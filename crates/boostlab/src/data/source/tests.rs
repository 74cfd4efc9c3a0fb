//! Each source gives what the reader functions it wraps give: the same `Dataset`, the same
//! `BinnedData`, the same prediction scores.

use std::path::{Path, PathBuf};

use super::*;
use crate::data::{read_csv, read_csv_binned, read_libsvm, ColumnView, CsvBlocks, LibsvmOptions};
use crate::{BoostParams, Ensemble, Prediction};

/// Rows per prediction block in these tests: several blocks per fixture.
const BLOCK_ROWS: usize = 17;

/// A model trained on `d` (a few trees, so that scores depend on every kind of column).
fn model(d: &Dataset) -> Ensemble {
    let params = BoostParams { n_estimators: 8, ..Default::default() };
    crate::fit(d, &params).unwrap()
}

/// Scores of every block, concatenated.
fn block_scores(m: &Ensemble, blocks: Blocks<'_>) -> (Vec<f64>, Vec<Option<BlockLabels>>) {
    let (mut scores, mut labels) = (Vec::new(), Vec::new());
    for b in blocks {
        let b = b.unwrap();
        scores.extend(m.predict(&b.features, &Prediction::scores()).unwrap());
        labels.push(b.labels);
    }
    (scores, labels)
}

/// `a == b` with NaN equal to NaN (missing values are NaN): the same debug text. `{:?}` prints
/// every float so that it reads back to the same value.
fn same<T: std::fmt::Debug>(a: &T, b: &T) -> bool {
    format!("{a:?}") == format!("{b:?}")
}

fn bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// A CSV fixture: numeric columns with missing values, a categorical column, a weight column and
/// a binary label (last).
fn write_csv(dir: &Path, n: usize) -> PathBuf {
    let mut t = String::from("x,color,z,w,label\n");
    for i in 0..n {
        let x = (i * 37 % 101) as f64 / 7.0;
        let color = ["red", "green", "blue", ""][i % 4];
        let z = if i % 9 == 0 { String::new() } else { format!("{}", i * 13 % 7) };
        let w = 0.5 + (i % 3) as f64;
        let label = if x + (i % 5) as f64 > 8.0 { "yes" } else { "no" };
        t.push_str(&format!("{x},{color},{z},{w},{label}\n"));
    }
    let p = dir.join("t.csv");
    std::fs::write(&p, t).unwrap();
    p
}

#[test]
fn csv_source_reads_as_the_csv_readers() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_csv(dir.path(), 200);
    let options = SourceOptions { weight: Some("w".into()), chunk_bytes: 256, ..Default::default() };
    let src = open(&path, None, options.clone()).unwrap();
    let whole = read_csv(&path, &options.csv()).unwrap();
    assert!(same(&src.read().unwrap(), &whole));
    assert_eq!(src.column_names().unwrap(), ["x", "color", "z", "w", "label"]);

    let binned = src.read_binned(16).unwrap();
    assert!(same(&binned, &read_csv_binned(&path, &options.stream(16)).unwrap().into_binned_data().unwrap()));
    assert!(same(&binned, &BinnedData::from_dataset(&whole, 16).unwrap()));

    let m = model(&whole);
    let src = open(&path, None, SourceOptions { label: LabelSelector::Name("label".into()), ..options }).unwrap();
    let (scores, labels) = block_scores(&m, src.blocks(&m.schema, BLOCK_ROWS).unwrap());
    let direct = CsvBlocks::open(&path, m.schema.kinds_by_name(), LabelSelector::Name("label".into()), BLOCK_ROWS);
    let (want, want_labels) = block_scores(&m, Box::new(direct.unwrap()));
    assert_eq!(bits(&scores), bits(&want));
    assert_eq!(labels, want_labels);
    assert_eq!(labels.len(), 200usize.div_ceil(BLOCK_ROWS));
    assert_eq!(bits(&scores), bits(&m.predict(&whole.features, &Prediction::scores()).unwrap()));
}

#[test]
fn csv_source_reports_progress_and_honours_max_rows() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_csv(dir.path(), 120);
    let seen = std::sync::Arc::new(std::sync::Mutex::new(0u64));
    let s = seen.clone();
    let hook: ProgressFn = std::sync::Arc::new(move |p: ReadProgress| *s.lock().unwrap() = p.bytes);
    let options = SourceOptions { max_rows: Some(50), progress: Some(hook), ..Default::default() };
    let d = CsvSource::new(&path, options.clone()).read().unwrap();
    assert!(same(&d, &read_csv(&path, &options.csv()).unwrap()));
    assert_eq!(d.n_rows(), 50);
    assert_eq!(*seen.lock().unwrap(), std::fs::metadata(&path).unwrap().len());
}

fn write_libsvm(dir: &Path, n: usize) -> PathBuf {
    let mut t = String::new();
    for i in 0..n {
        let label = if (i * 7 % 11) > 5 { "+1" } else { "-1" };
        t.push_str(label);
        for f in 1..=5usize {
            if (i + f) % 3 != 0 {
                t.push_str(&format!(" {f}:{}", ((i * f * 31) % 97) as f64 / 10.0 + f64::from(label == "+1")));
            }
        }
        t.push('\n');
    }
    let p = dir.join("t.svm");
    std::fs::write(&p, t).unwrap();
    p
}

#[test]
fn libsvm_source_reads_as_the_libsvm_reader() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_libsvm(dir.path(), 150);
    let src = open(&path, None, SourceOptions::default()).unwrap();
    let whole = read_libsvm(&path, &LibsvmOptions::default()).unwrap();
    assert!(same(&src.read().unwrap(), &whole));
    assert!(src.column_names().unwrap().is_empty());
    assert!(same(&src.read_binned(32).unwrap(), &BinnedData::from_dataset(&whole, 32).unwrap()));

    let m = model(&whole);
    // The model is wider than a file that leaves its last feature out: blocks use the model's width.
    let wide = Schema { names: [m.schema.names.clone(), vec!["f_extra".into()]].concat(), ..m.schema.clone() };
    let wide = Schema { kinds: [wide.kinds.clone(), vec![FeatureKind::Numeric]].concat(), ..wide };
    let wide = Schema { levels: [wide.levels.clone(), vec![None]].concat(), ..wide };
    let blocks: Vec<Block> = src.blocks(&wide, BLOCK_ROWS).unwrap().map(|b| b.unwrap()).collect();
    assert_eq!(blocks.len(), 1);
    let opts = LibsvmOptions { n_features: Some(wide.names.len()), ..Default::default() };
    let want = read_libsvm(&path, &opts).unwrap();
    assert!(same(&blocks[0].features, &want.features));
    let (scores, _) = block_scores(&m, src.blocks(&m.schema, BLOCK_ROWS).unwrap());
    assert_eq!(bits(&scores), bits(&m.predict(&whole.features, &Prediction::scores()).unwrap()));
    let Some(BlockLabels::Single(y)) = &blocks[0].labels else { panic!("labels expected") };
    assert_eq!(y.len(), 150);
    assert!(y.iter().all(|l| l == "+1" || l == "-1"));

    let src = open(&path, None, SourceOptions { max_rows: Some(40), ..Default::default() }).unwrap();
    assert!(same(&src.read().unwrap(), &whole.subset(&(0..40).collect::<Vec<_>>())));
    let src = open(&path, None, SourceOptions { weight: Some("w".into()), ..Default::default() }).unwrap();
    assert!(src.read().unwrap_err().to_string().contains("weight"));
}

#[test]
fn array_source_reads_the_callers_columns() {
    let n = 90;
    let x: Vec<f64> = (0..n).map(|i| if i % 10 == 0 { f64::NAN } else { (i * 37 % 101) as f64 / 7.0 }).collect();
    let z: Vec<f32> = (0..n).map(|i| (i * 13 % 7) as f32).collect();
    // Code 7 is outside the three levels: missing, as the binner reads it.
    let codes: Vec<u32> = (0..n).map(|i| if i % 8 == 0 { 7 } else { (i % 3) as u32 }).collect();
    let y: Vec<u32> = (0..n).map(|i| u32::from(x[i] > 6.0 || i % 7 == 0)).collect();
    let levels = vec!["a".to_string(), "b".into(), "c".into()];
    let schema = Schema {
        names: vec!["x".into(), "z".into(), "c".into()],
        kinds: vec![FeatureKind::Numeric, FeatureKind::Numeric, FeatureKind::Categorical],
        levels: vec![None, None, Some(levels.clone())],
    };
    let views = vec![
        ColumnView::Numeric(crate::data::NumericView::f64(&x)),
        ColumnView::Numeric(crate::data::NumericView::f32(&z)),
        ColumnView::Categorical { codes: &codes, n_levels: 3 },
    ];
    let target = Target::Classes { y, classes: vec!["0".into(), "1".into()] };
    let weights: Vec<f64> = (0..n).map(|i| 1.0 + (i % 2) as f64).collect();
    let src = ArraySource::new(schema.clone(), views.clone(), Some(target.clone()), Some(weights.clone())).unwrap();

    let binned = src.read_binned(16).unwrap();
    let want = BinnedData::from_views(schema.clone(), &views, target.clone(), Some(weights.clone()), 16).unwrap();
    assert!(same(&binned, &want));
    let whole = src.read().unwrap();
    assert!(same(&BinnedData::from_dataset(&whole, 16).unwrap(), &want));
    assert_eq!(src.column_names().unwrap(), ["x", "z", "c"]);

    let m = crate::fit_binned(&binned, &BoostParams { n_estimators: 8, ..Default::default() }, &mut |_| {}).unwrap();
    let (scores, labels) = block_scores(&m, src.blocks(&m.schema, BLOCK_ROWS).unwrap());
    let mut direct = vec![0.0; n * m.n_outputs];
    m.predict_into(&views, &Prediction::scores(), &mut direct).unwrap();
    assert_eq!(bits(&scores), bits(&direct));
    let shown: Vec<String> = labels
        .into_iter()
        .flat_map(|l| match l {
            Some(BlockLabels::Single(v)) => v,
            _ => panic!("single labels expected"),
        })
        .collect();
    let Target::Classes { y, classes } = &target else { unreachable!() };
    assert_eq!(shown, y.iter().map(|&c| classes[c as usize].clone()).collect::<Vec<_>>());

    let short = Target::Classes { y: vec![0, 1], classes: vec!["0".into(), "1".into()] };
    assert!(ArraySource::new(schema, views, Some(short), None).is_err());
}

#[test]
fn an_unknown_extension_is_an_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("table.xlsx");
    std::fs::write(&path, "x,label\n1,a\n").unwrap();
    let msg = open(&path, None, SourceOptions::default()).err().expect("an error").to_string();
    assert!(msg.contains(&path.display().to_string()), "{msg}");
    assert!(msg.contains("'.xlsx'") && msg.contains(".csv") && msg.contains(".parquet"), "{msg}");
    let msg = open(dir.path().join("table"), None, SourceOptions::default()).err().expect("an error").to_string();
    assert!(msg.contains("table") && msg.contains("without an extension"), "{msg}");
    // A format named explicitly reads any file name.
    let d = open(&path, Some(SourceFormat::Csv), SourceOptions::default()).unwrap().read().unwrap();
    assert_eq!(d.n_rows(), 1);
}

#[test]
fn extensions_name_their_formats() {
    for (name, f) in [
        ("a.csv", SourceFormat::Csv),
        ("a.CSV", SourceFormat::Csv),
        ("a.svm", SourceFormat::Libsvm),
        ("a.libsvm", SourceFormat::Libsvm),
        ("a.svmlight", SourceFormat::Libsvm),
        ("a.parquet", SourceFormat::Parquet),
        ("a.pq", SourceFormat::Parquet),
        ("a.arrow", SourceFormat::Arrow),
        ("a.feather", SourceFormat::Arrow),
        ("a.ipc", SourceFormat::Arrow),
        ("a.arrows", SourceFormat::Arrow),
    ] {
        assert_eq!(SourceFormat::from_path(Path::new(name)), Some(f), "{name}");
    }
    assert_eq!(SourceFormat::from_path(Path::new("a.txt")), None);
}

#[cfg(not(feature = "arrow"))]
#[test]
fn columnar_formats_need_the_arrow_feature() {
    for name in ["t.parquet", "t.feather"] {
        let msg = open(name, None, SourceOptions::default()).err().expect("an error").to_string();
        assert!(msg.contains(name) && msg.contains("cargo feature `arrow`"), "{msg}");
    }
}

#[cfg(feature = "arrow")]
mod columnar {
    use std::fs::File;
    use std::sync::Arc;

    use arrow_array::{
        types::Int32Type, DictionaryArray, Float32Array, Float64Array, Int64Array, RecordBatch, StringArray,
    };
    use arrow_schema::{DataType, Field};

    use super::*;
    use crate::data::{read_arrow, read_arrow_binned, ArrowBlocks, ArrowFormat};

    /// The same table as Parquet (two row groups) and Arrow IPC: floats and integers with nulls
    /// and NaN, a string column, a dictionary column, weights and a binary label.
    fn write_columnar(dir: &Path, n: usize) -> (PathBuf, PathBuf) {
        let x: Vec<Option<f64>> = (0..n)
            .map(|i| match i {
                _ if i % 13 == 0 => None,
                _ if i % 29 == 0 => Some(f64::NAN),
                _ => Some((i * 37 % 101) as f64 / 7.0),
            })
            .collect();
        let z: Vec<Option<f32>> = (0..n).map(|i| (i % 7 != 0).then_some((i * 13 % 17) as f32)).collect();
        let k: Vec<i64> = (0..n).map(|i| (i % 6) as i64).collect();
        let c: Vec<Option<&str>> = (0..n).map(|i| (i % 11 != 0).then_some(["red", "green", "blue"][i % 3])).collect();
        let d: Vec<Option<&str>> = (0..n).map(|i| (i % 5 != 0).then_some(["u", "v"][(i / 3) % 2])).collect();
        let w: Vec<f64> = (0..n).map(|i| 0.5 + (i % 4) as f64 * 0.25).collect();
        let y: Vec<i64> = (0..n).map(|i| i64::from(x[i].is_some_and(|v| v > 6.0) ^ (i % 10 == 0))).collect();
        let schema = Arc::new(arrow_schema::Schema::new(vec![
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
                Arc::new(Float64Array::from(x)),
                Arc::new(Float32Array::from(z)),
                Arc::new(Int64Array::from(k)),
                Arc::new(StringArray::from(c)),
                Arc::new(d.into_iter().collect::<DictionaryArray<Int32Type>>()),
                Arc::new(Float64Array::from(w)),
                Arc::new(Int64Array::from(y)),
            ],
        )
        .unwrap();
        let pq = dir.join("t.parquet");
        let mut wr = ::parquet::arrow::ArrowWriter::try_new(File::create(&pq).unwrap(), schema.clone(), None).unwrap();
        wr.write(&batch.slice(0, n / 3)).unwrap();
        wr.write(&batch.slice(n / 3, n - n / 3)).unwrap();
        wr.close().unwrap();
        let ipc = dir.join("t.feather");
        let mut wr = arrow_ipc::writer::FileWriter::try_new(File::create(&ipc).unwrap(), &schema).unwrap();
        // IPC blocks are the file's batches, whatever the block size asked for.
        wr.write(&batch.slice(0, n / 2)).unwrap();
        wr.write(&batch.slice(n / 2, n - n / 2)).unwrap();
        wr.finish().unwrap();
        (pq, ipc)
    }

    fn check(path: &Path, format: ArrowFormat) {
        let options = SourceOptions { weight: Some("w".into()), ..Default::default() };
        let src = open(path, None, options.clone()).unwrap();
        let whole = read_arrow(path, format, &options.csv()).unwrap();
        assert!(same(&src.read().unwrap(), &whole));
        assert_eq!(src.column_names().unwrap(), ["x", "z", "k", "c", "d", "w", "y"]);

        let binned = src.read_binned(16).unwrap();
        assert!(same(
            &binned,
            &read_arrow_binned(path, format, &options.stream(16)).unwrap().into_binned_data().unwrap()
        ));
        assert!(same(&binned, &BinnedData::from_dataset(&whole, 16).unwrap()));

        let m = model(&whole);
        let label = LabelSelector::Name("y".into());
        let src = open(path, None, SourceOptions { label: label.clone(), ..options }).unwrap();
        let (scores, labels) = block_scores(&m, src.blocks(&m.schema, BLOCK_ROWS).unwrap());
        let direct = ArrowBlocks::open(path, format, m.schema.kinds_by_name(), label, BLOCK_ROWS).unwrap();
        let (want, want_labels) = block_scores(&m, Box::new(direct));
        assert_eq!(bits(&scores), bits(&want));
        assert_eq!(labels, want_labels);
        assert!(labels.len() > 1);
        assert_eq!(bits(&scores), bits(&m.predict(&whole.features, &Prediction::scores()).unwrap()));
    }

    #[test]
    fn parquet_source_reads_as_the_arrow_readers() {
        let dir = tempfile::tempdir().unwrap();
        let (pq, _) = write_columnar(dir.path(), 160);
        check(&pq, ArrowFormat::Parquet);
    }

    #[test]
    fn arrow_source_reads_as_the_arrow_readers() {
        let dir = tempfile::tempdir().unwrap();
        let (_, ipc) = write_columnar(dir.path(), 160);
        check(&ipc, ArrowFormat::Ipc);
    }

    #[test]
    fn parquet_and_arrow_sources_read_the_same_table() {
        let dir = tempfile::tempdir().unwrap();
        let (pq, ipc) = write_columnar(dir.path(), 60);
        let a = open(&pq, None, SourceOptions::default()).unwrap().read().unwrap();
        let b = open(&ipc, None, SourceOptions::default()).unwrap().read().unwrap();
        assert!(same(&a, &b));
    }
}
