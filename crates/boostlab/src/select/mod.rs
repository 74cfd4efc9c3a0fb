//! Model selection around the trainer: parameters chosen from the data by inner
//! cross-validation ([`auto_t`]: t-AdaBoost's temperature) and the probability scale fitted on
//! cross-fitted scores ([`calibration`]).

pub mod auto_t;
pub mod calibration;

/// For the tests of the inner cross-validations: the rows `rows` of `d` binned from their raw
/// values with `full`'s mapper (`BinMapper::transform`), not taken from `full`'s bins as the
/// library's [`auto_t::subset_rows`] does.
#[cfg(test)]
pub(crate) fn rebinned_rows(
    d: &crate::data::Dataset,
    full: &crate::data::BinnedData,
    rows: &[usize],
) -> crate::data::BinnedData {
    let part = d.subset(rows);
    let bins = full.mapper.transform(&part.features).expect("bins");
    crate::data::BinnedData::new(
        full.schema.clone(),
        full.mapper.clone(),
        bins,
        part.target.clone().expect("labels"),
        part.sample_weight.clone(),
    )
    .expect("binned rows")
}
