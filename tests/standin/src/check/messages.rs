//! The engine's wording of names a key could have meant (pulumi-yaml `diags/diags.go`), and the
//! checker's own suggestion (`did you mean …?`): shared by every kind of check.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::program::diag::edit_distance;
use crate::yaml::Node;

/// "Existing properties are: a, b, c, d, e and 3 others", closest names first (pulumi-yaml
/// `diags.NonExistentFieldFormatter`; `max` 0 lists all); `parent` names the owner when there
/// are none.
pub(super) fn existing(fields: &[String], field: &str, noun: &str, max: usize, parent: &str) -> String {
    let mut sorted: Vec<&String> = fields.iter().collect();
    sorted.sort();
    sorted.sort_by_key(|f| edit_distance(f, field));
    if sorted.is_empty() {
        return format!("{parent} has no {noun}");
    }
    let shown: Vec<&str> = sorted
        .iter()
        .take(if max == 0 { usize::MAX } else { max })
        .map(|s| s.as_str())
        .collect();
    let more = if max == 0 { 0 } else { sorted.len().saturating_sub(max) };
    let tail = match more {
        0 => String::new(),
        1 => " and 1 other".to_string(),
        n => format!(" and {n} others"),
    };
    format!("Existing {noun} are: {}{tail}", shown.join(", "))
}

/// The closest name, if close enough to be what was meant (case-insensitive).
pub fn closest<'a>(names: impl IntoIterator<Item = &'a str>, name: &str) -> Option<&'a str> {
    let lower = name.to_lowercase();
    let (best, d) = names
        .into_iter()
        .map(|n| (n, edit_distance(&lower, &n.to_lowercase())))
        .min_by_key(|(_, d)| *d)?;
    (d <= (name.chars().count() / 3).max(2)).then_some(best)
}

pub(super) fn did_you_mean<'a>(names: impl IntoIterator<Item = &'a str>, name: &str) -> Option<String> {
    closest(names, name).map(|n| format!("did you mean `{n}`?"))
}

/// `InvalidFieldBagFormatter.MessageWithDetail`'s detail: where a misplaced key belongs.
pub(super) fn bag_detail(field: &str, bags: &[(&str, &Vec<String>)], resource: &str, value: &Node) -> String {
    // Every name, with the bags it is in, ranked by distance; at most 5 within 3 edits.
    let mut places: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (bag, names) in bags {
        for n in *names {
            places.entry(n.as_str()).or_default().push(bag);
        }
    }
    let mut ranked: Vec<(usize, &str, Vec<&str>)> = places
        .into_iter()
        .map(|(p, b)| (edit_distance(field, p), p, b))
        .filter(|(d, _, _)| *d <= 3)
        .collect();
    ranked.sort_by_key(|(d, _, _)| *d);
    ranked.truncate(5);
    let Some((best, _, _)) = ranked.first() else {
        return String::new();
    };
    if *best == 0 {
        let names: Vec<&str> = ranked
            .iter()
            .filter(|(d, _, _)| *d == 0)
            .flat_map(|(_, _, b)| b.iter().copied())
            .collect();
        let mut detail = format!("'{field}' exists under {}", and_list(&names));
        if let [only] = names.as_slice() {
            let shown = value.scalar_text().unwrap_or_else(|| value.to_json().to_string());
            let _ = write!(
                detail,
                ", e.g.\n\n{resource}:\n  # ...\n  {only}:\n    {field}: {shown}"
            );
        }
        return detail;
    }
    let place = |(_, p, b): &(usize, &str, Vec<&str>)| match b.as_slice() {
        [one] => format!("'{p}' under '{one}'"),
        many => format!(
            "'{p}' under keys {}",
            many.iter().map(|n| format!("'{n}'")).collect::<Vec<_>>().join(" or ")
        ),
    };
    if let [one] = ranked.as_slice() {
        format!("Did you mean {}?", place(one))
    } else {
        let mut d = "Did you mean one of the following:\n".to_string();
        for r in &ranked {
            let _ = writeln!(d, "  * {}", place(r));
        }
        d
    }
}

fn and_list(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => (*one).to_string(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}
