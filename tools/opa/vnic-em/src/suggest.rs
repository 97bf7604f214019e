// SPDX-License-Identifier: GPL-2.0

//! "Did you mean": the known word nearest a mistyped one, for the keys of
//! the config file and the commands of the command line alike.

/// The edit distance (insertions, deletions, substitutions) of `a` and `b`.
pub fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let sub = diag + usize::from(ca != *cb);
            diag = row[j + 1];
            row[j + 1] = sub.min(diag + 1).min(row[j] + 1);
        }
    }
    row[b.len()]
}

/// The candidate nearest `word`, if it is near enough to be a typo: at
/// most 2 edits, 1 for a word of 3 letters or less (whose every other
/// word is 2 edits away).
pub fn did_you_mean<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    let limit = if word.chars().count() <= 3 { 1 } else { 2 };
    candidates
        .iter()
        .map(|c| (distance(word, c), *c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn near_words_only() {
        assert_eq!(distance("kitten", "sitting"), 3);
        assert_eq!(distance("", "ab"), 2);
        let keys = ["unknown_mcast_dlid", "unknown_mcast_mgid", "pkey"];
        assert_eq!(
            did_you_mean("unknown_mcast_dlidd", &keys),
            Some("unknown_mcast_dlid")
        );
        assert_eq!(did_you_mean("pkye", &keys), Some("pkey"));
        assert_eq!(did_you_mean("mtu", &keys), None);
        assert_eq!(did_you_mean("aply", &["apply", "show"]), Some("apply"));
        assert_eq!(did_you_mean("x", &["id"]), None);
    }
}
