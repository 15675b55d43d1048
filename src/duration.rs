//! Durations a person gives the runner (`--timeout`, `--grace`, a project's `timeout`):
//! humantime's syntax (`45m`, `2h`, `1h 30m`, `30s`), more than zero and at most [`MAX`], so
//! that an instant plus any of them is an instant (a timer set past what a clock holds would
//! panic) and a typo of many digits is named rather than obeyed.

use std::time::Duration;

/// The longest duration the runner takes: 30 days, far past any `pulumi` operation.
pub(crate) const MAX: Duration = Duration::from_secs(30 * 24 * 3600);

/// [`MAX`] as the user would write it.
pub(crate) const MAX_SHOWN: &str = "30 days (720h)";

/// Why a duration was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum DurationError {
    #[error("a duration must be more than zero")]
    Zero,
    #[error("longer than the most the runner takes, {MAX_SHOWN}")]
    TooLong,
    #[error("{0} (write it as 45m, 2h, 1h 30m or 30s)")]
    Syntax(String),
}

/// A duration as written, checked (see the module comment).
pub(crate) fn parse(text: &str) -> Result<Duration, DurationError> {
    match humantime::parse_duration(text) {
        Ok(d) if d.is_zero() => Err(DurationError::Zero),
        Ok(d) if d > MAX => Err(DurationError::TooLong),
        Ok(d) => Ok(d),
        // A number past what humantime holds is too long too.
        Err(humantime::DurationError::NumberOverflow) => Err(DurationError::TooLong),
        Err(e) => Err(DurationError::Syntax(e.to_string())),
    }
}

/// `at` plus `d`, or `None` when no clock holds that instant: a deadline never reached.
pub(crate) fn after(at: tokio::time::Instant, d: Duration) -> Option<tokio::time::Instant> {
    at.checked_add(d)
}

/// Seconds as a [`Duration`], zero for what is negative or not a number, [`Duration::MAX`] for
/// what is too large (a learned or predicted time is arithmetic on what a file held).
pub(crate) fn of_seconds(seconds: f64) -> Duration {
    if seconds.is_nan() || seconds <= 0.0 {
        Duration::ZERO
    } else {
        Duration::try_from_secs_f64(seconds).unwrap_or(Duration::MAX)
    }
}

/// A time in the largest units that matter: `12s`, `3m 05s`, `1h 02m` (the live view's clocks).
pub(crate) fn clock(d: Duration) -> String {
    match d.as_secs() {
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m {:02}s", s / 60, s % 60),
        s => format!("{}h {:02}m", s / 3600, s % 3600 / 60),
    }
}

/// How long ago: a [`clock`], in days and hours past a day (`5d 14h`, a lock left last week).
pub(crate) fn age(d: Duration) -> String {
    match d.as_secs() {
        s if s >= 86_400 => format!("{}d {}h", s / 86_400, s % 86_400 / 3_600),
        _ => clock(d),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_age_reads_in_its_two_largest_units() {
        let age = |s| age(Duration::from_secs(s));
        assert_eq!(
            [
                age(12),
                age(250),
                age(3 * 3_600 + 300),
                age(5 * 86_400 + 14 * 3_600 + 1_813)
            ],
            ["12s", "4m 10s", "3h 05m", "5d 14h"]
        );
    }

    #[test]
    fn a_duration_is_more_than_zero_and_at_most_thirty_days() {
        assert_eq!(parse("45m"), Ok(Duration::from_secs(45 * 60)));
        assert_eq!(parse("1h 30m"), Ok(Duration::from_secs(90 * 60)));
        assert_eq!(parse("720h"), Ok(MAX));
        assert_eq!(parse("0s"), Err(DurationError::Zero));
        assert_eq!(parse("721h"), Err(DurationError::TooLong));
        assert_eq!(parse("18446744073709551615s"), Err(DurationError::TooLong));
        assert_eq!(parse("18446744073709551616s"), Err(DurationError::TooLong));
        assert_eq!(parse("99999999999999999999h"), Err(DurationError::TooLong));
        assert!(matches!(parse("soon"), Err(DurationError::Syntax(_))));
        assert!(matches!(parse(""), Err(DurationError::Syntax(_))));
    }

    #[test]
    fn seconds_of_any_value_become_a_duration() {
        assert_eq!(of_seconds(f64::NAN), Duration::ZERO);
        assert_eq!(of_seconds(-3.0), Duration::ZERO);
        assert_eq!(of_seconds(f64::INFINITY), Duration::MAX);
        assert_eq!(of_seconds(1e300), Duration::MAX);
        assert_eq!(of_seconds(1.5), Duration::from_millis(1500));
        let now = tokio::time::Instant::now();
        assert_eq!(after(now, Duration::MAX), None);
        assert!(after(now, MAX).is_some());
    }
}
