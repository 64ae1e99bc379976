//! Best and worst of a row, marked only where the repetitions say the difference is real:
//! Welch's t-test (the stats crate) of the best (worst) series against every other one. Two
//! means whose confidence intervals overlap widely ("486 ± 605" vs "412 ± 458") are not
//! coloured; the row says "n.s." instead.

use crate::model::{Cell, Mark};
use fsarena_core::Better;
use fsarena_stats::welch;

/// The significance level of the marks.
pub(crate) const ALPHA: f64 = 0.05;

/// What a row's marks say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Contrast {
    /// Fewer than two values to compare, or all means equal: nothing to mark.
    Nothing,
    /// The best and/or the worst differ significantly from every other cell: marked.
    Marked,
    /// The means differ, but not significantly: no mark, "n.s.".
    NotSignificant,
    /// Some cell has a single repetition: no test, no mark.
    Untested,
}

impl Contrast {
    /// The note shown beside the metric; empty when there is nothing to say.
    pub(crate) fn note(self) -> &'static str {
        match self {
            Contrast::NotSignificant => "n.s.",
            Contrast::Untested => "untested",
            Contrast::Nothing | Contrast::Marked => "",
        }
    }

    /// The note's explanation (a tooltip in HTML, a footnote elsewhere).
    pub(crate) fn explanation(self) -> &'static str {
        match self {
            Contrast::NotSignificant => "the difference is not significant (Welch's t-test, p ≥ 0.05)",
            Contrast::Untested => "a target has a single repetition: no significance test, no colour",
            Contrast::Nothing | Contrast::Marked => "",
        }
    }
}

/// Marks the best and the worst cell of a row where each differs significantly from every
/// other cell, and says what the marks mean.
pub(crate) fn mark(cells: &mut [Option<Cell>], better: Better) -> Contrast {
    let present: Vec<usize> =
        (0..cells.len()).filter(|&i| cells[i].as_ref().is_some_and(|c| c.summary.mean.is_finite())).collect();
    let mean = |i: usize| cells[i].as_ref().map_or(f64::NAN, |c| c.summary.mean);
    if present.len() < 2 {
        return Contrast::Nothing;
    }
    // `a` better than `b` by the metric's direction.
    let beats = |a: f64, b: f64| if better == Better::Higher { a > b } else { a < b };
    let mut best = present[0];
    let mut worst = present[0];
    for &i in &present[1..] {
        if beats(mean(i), mean(best)) {
            best = i;
        }
        if beats(mean(worst), mean(i)) {
            worst = i;
        }
    }
    if mean(best) == mean(worst) {
        return Contrast::Nothing;
    }
    if present.iter().any(|&i| cells[i].as_ref().is_some_and(|c| c.values.len() < 2)) {
        return Contrast::Untested;
    }
    // `i` differs significantly from every other cell, in the direction of its mean.
    let stands_out = |i: usize| {
        present.iter().filter(|&&j| j != i).all(|&j| {
            let (Some(a), Some(b)) = (&cells[j], &cells[i]) else { return false };
            a.summary.mean != b.summary.mean && welch(&a.values, &b.values).is_some_and(|c| c.p_value < ALPHA)
        })
    };
    let (best_out, worst_out) = (stands_out(best), stands_out(worst));
    if best_out {
        if let Some(c) = cells[best].as_mut() {
            c.mark = Mark::Best;
        }
    }
    if worst_out {
        if let Some(c) = cells[worst].as_mut() {
            c.mark = Mark::Worst;
        }
    }
    if best_out || worst_out {
        Contrast::Marked
    } else {
        Contrast::NotSignificant
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::summary::summarize;

    fn cell(values: &[f64]) -> Option<Cell> {
        Some(Cell { values: values.to_vec(), summary: summarize(values).unwrap(), mark: Mark::None })
    }

    fn marks(cells: &[Option<Cell>]) -> Vec<Mark> {
        cells.iter().map(|c| c.as_ref().map_or(Mark::None, |c| c.mark)).collect()
    }

    #[test]
    fn wide_overlapping_intervals_are_not_coloured() {
        // The case: ext4 "486 ± 605" against ext3 "412 ± 458" over three repetitions.
        let mut cells = vec![cell(&[250.0, 400.0, 808.0]), cell(&[230.0, 380.0, 626.0])];
        assert_eq!(mark(&mut cells, Better::Higher), Contrast::NotSignificant);
        assert_eq!(marks(&cells), [Mark::None, Mark::None]);
        assert_eq!(Contrast::NotSignificant.note(), "n.s.");
    }

    #[test]
    fn a_clear_difference_is_marked_in_the_metric_direction() {
        let mut cells = vec![cell(&[100.0, 101.0, 99.0]), cell(&[200.0, 202.0, 198.0])];
        assert_eq!(mark(&mut cells, Better::Higher), Contrast::Marked);
        assert_eq!(marks(&cells), [Mark::Worst, Mark::Best]);
        let mut cells = vec![cell(&[100.0, 101.0, 99.0]), cell(&[200.0, 202.0, 198.0])];
        mark(&mut cells, Better::Lower);
        assert_eq!(marks(&cells), [Mark::Best, Mark::Worst]);
    }

    #[test]
    fn only_the_extreme_that_stands_out_is_marked() {
        // 300 stands out; 100 and 104 are within noise of each other, so no worst.
        let mut cells = vec![cell(&[100.0, 110.0, 90.0]), cell(&[300.0, 301.0, 299.0]), cell(&[104.0, 114.0, 94.0])];
        assert_eq!(mark(&mut cells, Better::Higher), Contrast::Marked);
        assert_eq!(marks(&cells), [Mark::None, Mark::Best, Mark::None]);
    }

    #[test]
    fn single_repetitions_and_single_cells_are_not_marked() {
        let mut cells = vec![cell(&[100.0]), cell(&[200.0])];
        assert_eq!(mark(&mut cells, Better::Higher), Contrast::Untested);
        assert_eq!(marks(&cells), [Mark::None, Mark::None]);
        let mut cells = vec![cell(&[100.0, 120.0]), None];
        assert_eq!(mark(&mut cells, Better::Higher), Contrast::Nothing);
        let mut cells = vec![cell(&[5.0, 5.0]), cell(&[5.0, 5.0])];
        assert_eq!(mark(&mut cells, Better::Higher), Contrast::Nothing);
    }
}
