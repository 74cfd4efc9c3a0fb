//! Distinct texts coded in order of first sight: how the columnar readers (Arrow files, Arrow
//! input from Python) turn a column of strings into category codes without a text per row.

use std::collections::HashMap;

use super::MISSING_CODE;

/// Distinct texts and their codes, in order of first sight.
#[derive(Debug, Default)]
pub struct Interner {
    index: HashMap<String, u32>,
    names: Vec<String>,
}

impl Interner {
    /// The code of `s`: the one it was given when first seen, else the next.
    pub fn code(&mut self, s: &str) -> u32 {
        if let Some(&c) = self.index.get(s) {
            return c;
        }
        let c = self.names.len() as u32;
        self.index.insert(s.to_string(), c);
        self.names.push(s.to_string());
        c
    }

    /// The texts seen, in order of first sight (text `c` has code `c`).
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// The texts sorted (a categorical feature's levels), and `codes` re-coded onto them;
    /// [`MISSING_CODE`] stays missing.
    pub fn into_sorted(self, mut codes: Vec<u32>) -> (Vec<u32>, Vec<String>) {
        let mut order: Vec<u32> = (0..self.names.len() as u32).collect();
        order.sort_by(|&a, &b| self.names[a as usize].cmp(&self.names[b as usize]));
        let mut remap = vec![0u32; order.len()];
        for (new, &old) in order.iter().enumerate() {
            remap[old as usize] = new as u32;
        }
        for c in &mut codes {
            if *c != MISSING_CODE {
                *c = remap[*c as usize];
            }
        }
        let mut names = self.names;
        let levels = order.iter().map(|&o| std::mem::take(&mut names[o as usize])).collect();
        (codes, levels)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_follow_first_sight_and_sorting_recodes_them() {
        let mut i = Interner::default();
        let codes: Vec<u32> = ["b", "a", "b", "c"].iter().map(|s| i.code(s)).collect();
        assert_eq!(codes, [0, 1, 0, 2]);
        assert_eq!(i.names(), ["b", "a", "c"]);
        let (codes, levels) = i.into_sorted(vec![0, 1, MISSING_CODE, 0, 2]);
        assert_eq!(levels, ["a", "b", "c"]);
        assert_eq!(codes, [1, 0, MISSING_CODE, 1, 2]);
    }
}
