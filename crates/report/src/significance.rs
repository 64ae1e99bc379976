//! Best and worst of a row, marked only where the repetitions say the difference is real: the
//! stats crate's one comparison (ratio of geometric means, Welch's interval on the logarithms,
//! as Findings, `compare` and the claims use it) of the best (worst) series against every other
//! one. Two series whose intervals overlap widely ("486 ± 605" vs "412 ± 458") are not
//! coloured; the row says "n.s." instead, or why nothing can be told.

use crate::model::{Cell, Mark};
use fsarena_core::Better;
use fsarena_stats::{center, ratio, Reading, Untold, MIN_REPETITIONS};

/// What a row's marks say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Contrast {
    /// Fewer than two values to compare, or all means equal: nothing to mark.
    Nothing,
    /// The best and/or the worst differ significantly from every other cell: marked.
    Marked,
    /// The means differ, but not significantly: no mark, "n.s.".
    NotSignificant,
    /// Some cell has fewer than three repetitions: no test, no mark.
    Untested,
    /// An interval against an extreme spans more than ten times: no mark.
    TooNoisy,
}

impl Contrast {
    /// The note shown beside the metric; empty when there is nothing to say.
    pub(crate) fn note(self) -> &'static str {
        match self {
            Contrast::NotSignificant => "n.s.",
            Contrast::Untested => "too few",
            Contrast::TooNoisy => "too noisy",
            Contrast::Nothing | Contrast::Marked => "",
        }
    }

    /// The note's explanation (a tooltip in HTML, a footnote elsewhere).
    pub(crate) fn explanation(self) -> &'static str {
        match self {
            Contrast::NotSignificant => "the difference is not significant (the 95% interval of the ratio contains 1)",
            Contrast::Untested => "a target has fewer than three repetitions: too few to tell, no colour",
            Contrast::TooNoisy => "the 95% interval of the ratio spans more than 10×: too noisy to tell, no colour",
            Contrast::Nothing | Contrast::Marked => "",
        }
    }
}

/// Marks the best and the worst cell of a row where each differs significantly from every
/// other cell, and says what the marks mean.
pub(crate) fn mark(cells: &mut [Option<Cell>], better: Better) -> Contrast {
    let center_of = |i: usize| cells[i].as_ref().and_then(|c| center(&c.values)).unwrap_or(f64::NAN);
    let present: Vec<usize> = (0..cells.len()).filter(|&i| center_of(i).is_finite()).collect();
    if present.len() < 2 {
        return Contrast::Nothing;
    }
    // `a` better than `b` by the metric's direction, on the central values Findings rank by.
    let beats = |a: f64, b: f64| if better == Better::Higher { a > b } else { a < b };
    let mut best = present[0];
    let mut worst = present[0];
    for &i in &present[1..] {
        if beats(center_of(i), center_of(best)) {
            best = i;
        }
        if beats(center_of(worst), center_of(i)) {
            worst = i;
        }
    }
    if center_of(best) == center_of(worst) {
        return Contrast::Nothing;
    }
    if present.iter().any(|&i| cells[i].as_ref().is_some_and(|c| c.values.len() < MIN_REPETITIONS)) {
        return Contrast::Untested;
    }
    let mut noisy = false;
    // `i` reads `want` against every other cell.
    let mut stands_out = |i: usize, want: Reading| {
        present.iter().filter(|&&j| j != i).all(|&j| {
            let (Some(a), Some(b)) = (&cells[j], &cells[i]) else { return false };
            let reading = ratio(&a.values, &b.values).map(|r| r.reading(better));
            noisy |= reading == Some(Reading::Untold(Untold::TooWide));
            reading == Some(want)
        })
    };
    let (best_out, worst_out) = (stands_out(best, Reading::Better), stands_out(worst, Reading::Worse));
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
    } else if noisy {
        Contrast::TooNoisy
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
        // The case: ext4 "486 ± 605" against ext3 "412 ± 458" over three repetitions:
        // their ratio's interval spans more than 10×.
        let mut cells = vec![cell(&[250.0, 400.0, 808.0]), cell(&[230.0, 380.0, 626.0])];
        assert_eq!(mark(&mut cells, Better::Higher), Contrast::TooNoisy);
        assert_eq!(marks(&cells), [Mark::None, Mark::None]);
        // Narrower, and still overlapping: not significant.
        let mut cells = vec![cell(&[450.0, 500.0, 520.0]), cell(&[430.0, 480.0, 530.0])];
        assert_eq!(mark(&mut cells, Better::Higher), Contrast::NotSignificant);
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
        let mut cells = vec![cell(&[100.0, 101.0]), cell(&[200.0, 201.0])];
        assert_eq!(mark(&mut cells, Better::Higher), Contrast::Untested);
        assert_eq!(marks(&cells), [Mark::None, Mark::None]);
        let mut cells = vec![cell(&[100.0, 120.0]), None];
        assert_eq!(mark(&mut cells, Better::Higher), Contrast::Nothing);
        let mut cells = vec![cell(&[5.0, 5.0]), cell(&[5.0, 5.0])];
        assert_eq!(mark(&mut cells, Better::Higher), Contrast::Nothing);
    }
}
