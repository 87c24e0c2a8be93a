//! Exact merging of statistics: the `Merge` trait, its error, and `merge_fields!`, which
//! merges a struct field by field from ONE list that the compiler checks is complete.
//!
//! Owns how a value of each kind is added to another: integers with overflow checks,
//! arrays and vectors element by element (a longer vector extends a shorter one),
//! HdrHistograms with `add` (refusing values out of range and counts that overflow).
//! Does not know the fields of `Stats` (see `model/stats/mod.rs`); does no I/O. Called by
//! `Stats::merge` (engines of one run, `rshperf merge` of documents), and by any stats
//! sub-struct (`model/stats/*.rs`) for its own fields.
//!
//! Merging must never panic or wrap: `rshperf merge` adds numbers read from files that
//! anyone can write, so every failure is a `MergeError` naming the field.

use std::fmt;

use hdrhistogram::Histogram;

/// Why two statistics could not be merged, and where (`servers[1].response`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergeError {
    /// Field path, outermost first (empty at the value that failed).
    pub(crate) path: String,
    /// What went wrong.
    pub(crate) what: String,
}

impl MergeError {
    /// An error at the value being merged; callers prefix the path with `within`.
    pub(crate) fn new(what: impl Into<String>) -> Self {
        MergeError {
            path: String::new(),
            what: what.into(),
        }
    }

    /// The same error one level up: `seg` is a field name or an `[index]`.
    pub(crate) fn within(mut self, seg: &str) -> Self {
        self.path = if self.path.is_empty() {
            seg.to_string()
        } else if self.path.starts_with('[') {
            format!("{seg}{}", self.path)
        } else {
            format!("{seg}.{}", self.path)
        };
        self
    }
}

impl fmt::Display for MergeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            f.write_str(&self.what)
        } else {
            write!(f, "{}: {}", self.path, self.what)
        }
    }
}

impl std::error::Error for MergeError {}

/// Adds another value of the same kind into this one, exactly.
pub(crate) trait Merge {
    /// Adds `other` into `self`; on error `self` may be partly merged.
    fn merge(&mut self, other: &Self) -> Result<(), MergeError>;
}

impl Merge for u64 {
    fn merge(&mut self, other: &Self) -> Result<(), MergeError> {
        *self = self
            .checked_add(*other)
            .ok_or_else(|| MergeError::new(format!("{self} + {other} overflows 64 bits")))?;
        Ok(())
    }
}

impl Merge for u128 {
    fn merge(&mut self, other: &Self) -> Result<(), MergeError> {
        *self = self
            .checked_add(*other)
            .ok_or_else(|| MergeError::new(format!("{self} + {other} overflows 128 bits")))?;
        Ok(())
    }
}

impl<T: Merge, const N: usize> Merge for [T; N] {
    fn merge(&mut self, other: &Self) -> Result<(), MergeError> {
        for (i, (a, b)) in self.iter_mut().zip(other).enumerate() {
            a.merge(b).map_err(|e| e.within(&format!("[{i}]")))?;
        }
        Ok(())
    }
}

/// Element by element; elements `other` has beyond `self`'s length are appended.
impl<T: Merge + Clone> Merge for Vec<T> {
    fn merge(&mut self, other: &Self) -> Result<(), MergeError> {
        for (i, (a, b)) in self.iter_mut().zip(other).enumerate() {
            a.merge(b).map_err(|e| e.within(&format!("[{i}]")))?;
        }
        if other.len() > self.len() {
            self.extend_from_slice(&other[self.len()..]);
        }
        Ok(())
    }
}

impl Merge for Histogram<u64> {
    fn merge(&mut self, other: &Self) -> Result<(), MergeError> {
        // `add` saturates counts; an overflowing total is refused instead.
        if self.len().checked_add(other.len()).is_none() {
            return Err(MergeError::new("histogram total count overflows 64 bits"));
        }
        self.add(other)
            .map_err(|e| MergeError::new(format!("histogram values out of range: {e:?}")))
    }
}

/// The larger of two values (extremes such as the longest lifetime).
pub(crate) fn max<T: Ord + Copy>(a: &mut T, b: &T) -> Result<(), MergeError> {
    *a = (*a).max(*b);
    Ok(())
}

/// The smaller of two values (extremes such as the shortest lifetime).
pub(crate) fn min<T: Ord + Copy>(a: &mut T, b: &T) -> Result<(), MergeError> {
    *a = (*a).min(*b);
    Ok(())
}

/// Either of two flags (a merged run was interrupted when any part was).
pub(crate) fn any(a: &mut bool, b: &bool) -> Result<(), MergeError> {
    *a |= *b;
    Ok(())
}

/// Keeps the first known of two optional facts (the name a server gave first).
pub(crate) fn first<T: Clone>(a: &mut Option<T>, b: &Option<T>) -> Result<(), MergeError> {
    if a.is_none() {
        a.clone_from(b);
    }
    Ok(())
}

/// Two optional sums, known only when both are (a document written before a group of
/// counters existed makes the merged group unknown too).
pub(crate) fn both<T: Merge>(a: &mut Option<T>, b: &Option<T>) -> Result<(), MergeError> {
    match (a.as_mut(), b) {
        (Some(x), Some(y)) => x.merge(y),
        _ => {
            *a = None;
            Ok(())
        }
    }
}

/// Keeps `a` (facts that are the same in both, such as an interval's length).
pub(crate) fn keep<T>(_a: &mut T, _b: &T) -> Result<(), MergeError> {
    Ok(())
}

/// `Merge::merge` as a rule of `merge_fields!`.
pub(crate) fn sum<T: Merge>(a: &mut T, b: &T) -> Result<(), MergeError> {
    a.merge(b)
}

/// Merges `$other` into `$self` (both `$ty`) field by field, one `field: rule` per
/// line, where rule is `sum` (the field's `Merge`: counters added with overflow
/// checks, containers element by element, histograms added, sub-structs by their own
/// `Merge`), `max`, `min`, `any`, `first`, `both` or `keep` (functions of `stats::merge`). Evaluates to
/// `Result<(), MergeError>`; an error names the field.
///
/// The list cannot miss a field: it also destructures `$other` without `..`, so a
/// field added to `$ty` and not listed here is a compile error.
///
/// Reached by its path (`stats::merge::merge_fields`, the `pub(crate) use` below), not
/// exported at the crate root: a lower layer puts nothing in `lib.rs`.
macro_rules! merge_fields {
    ($ty:ident, $self:expr, $other:expr; $($field:ident: $rule:ident),+ $(,)?) => {{
        let $ty { $($field),+ } = $other;
        (|| -> Result<(), $crate::model::stats::merge::MergeError> {
            $(
                $crate::model::stats::merge::$rule(&mut $self.$field, $field)
                    .map_err(|e| e.within(stringify!($field)))?;
            )+
            Ok(())
        })()
    }};
}
pub(crate) use merge_fields;

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, PartialEq)]
    struct Two {
        n: u64,
        hi: u64,
        list: Vec<[u64; 2]>,
    }

    impl Merge for Two {
        fn merge(&mut self, o: &Self) -> Result<(), MergeError> {
            merge_fields!(Two, self, o; n: sum, hi: max, list: sum)
        }
    }

    #[test]
    fn fields_merge_by_their_rule_and_vectors_extend() {
        let mut a = Two {
            n: 1,
            hi: 7,
            list: vec![[1, 2]],
        };
        let b = Two {
            n: 2,
            hi: 5,
            list: vec![[10, 20], [3, 4]],
        };
        a.merge(&b).expect("no overflow");
        assert_eq!(
            a,
            Two {
                n: 3,
                hi: 7,
                list: vec![[11, 22], [3, 4]]
            }
        );
    }

    #[test]
    fn overflow_is_an_error_naming_the_place() {
        let mut a = vec![Two {
            n: 0,
            hi: 0,
            list: vec![[0, u64::MAX]],
        }];
        let b = a.clone();
        let e = a.merge(&b).expect_err("overflow");
        assert_eq!(
            e.to_string(),
            "[0].list[0][1]: 18446744073709551615 + 18446744073709551615 overflows 64 bits"
        );
        let mut x = u128::MAX;
        assert!(x.merge(&1).is_err());
    }

    #[test]
    fn histograms_refuse_out_of_range_values_and_overflowing_counts() {
        let mut small = Histogram::<u64>::new_with_bounds(1, 1000, 3).expect("bounds");
        let mut big = Histogram::<u64>::new_with_bounds(1, 1_000_000, 3).expect("bounds");
        big.record(500_000).expect("in range");
        let e = small.merge(&big).expect_err("out of range");
        assert!(e.what.starts_with("histogram values out of range"), "{e}");
        assert!(small.is_empty());
        let mut a = Histogram::<u64>::new_with_bounds(1, 1000, 3).expect("bounds");
        a.record_n(5, u64::MAX - 1).expect("in range");
        let mut b = a.clone();
        b.merge(&small).expect("adding nothing");
        let e = a.merge(&b).expect_err("count overflow");
        assert_eq!(e.what, "histogram total count overflows 64 bits");
    }
}
