//! Witness policies: C2SP tlog-policy text, and the quorum it sets over a
//! checkpoint's cosignatures.
//!
//! ```text
//! log <vkey> [<url>]
//! witness <name> <vkey> [<url>]
//! group <name> all|any|<k> <name>...
//! quorum <name>|none
//! ```
//!
//! Lines are split on spaces and tabs; blank lines and `#` comments are
//! ignored. A group or the quorum names only witnesses and groups defined
//! on earlier lines, and every name is a group member at most once, so a
//! witness counts toward the quorum in one way only. A checkpoint passes
//! when it is signed by a listed log (the caller checks that signature)
//! and the quorum is met by valid cosignatures of the listed witnesses.
//!
//! A policy is what a verifier pins, like a log key: the service publishes
//! its witnesses' policy, and a verifier keeps the one it first trusted.

use crate::cosignature::{self, CosignatureError, Freshness, Timeliness, WitnessKey};
use crate::note::{self, VerifierKey};

mod text;

/// Largest policy text read. // spec: silent; 64 witnesses with URLs are ~10 KB
pub const POLICY_BYTES_MAX: usize = 64 * 1024;
/// Most `log` lines. // C2SP tlog-policy: support at least 32; a deploy's shards of both environments
pub const POLICY_LOGS_MAX: usize = 256;
/// Most `witness` lines. // C2SP tlog-policy: support at least 32
pub const POLICY_WITNESSES_MAX: usize = 64;
/// Most `group` lines. // C2SP tlog-policy: support at least 32
pub const POLICY_GROUPS_MAX: usize = 64;

/// A policy line that could not be read, by its 1-based number.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("policy line {line}: {reason}")]
pub struct PolicyError {
    pub line: usize,
    pub reason: String,
}

fn at(line: usize, reason: impl Into<String>) -> PolicyError {
    PolicyError {
        line,
        reason: reason.into(),
    }
}

/// A log the policy accepts: its verifier key (type 0x01), origin and URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyLog {
    pub vkey: String,
    pub origin: String,
    pub url: Option<String>,
    key: [u8; 32],
}

/// A witness the policy names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyWitness {
    /// The policy's own name for it (used by groups and the quorum).
    pub name: String,
    pub key: WitnessKey,
    /// Its `add-checkpoint` submission prefix, when given.
    pub url: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Member {
    Witness(usize),
    Group(usize),
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Group {
    name: String,
    /// How the threshold was written: `all`, `any` or the number.
    spelled: String,
    threshold: usize,
    members: Vec<Member>,
}

/// A parsed tlog-policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    logs: Vec<PolicyLog>,
    witnesses: Vec<PolicyWitness>,
    groups: Vec<Group>,
    /// `None` for `quorum none`.
    quorum: Option<Member>,
}

/// One witness's part in a checkpoint, as a verifier tells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cosigned {
    /// A valid cosignature, made at this time, that counts.
    Yes { timestamp: u64 },
    /// A valid cosignature that does not count: too old (or dated ahead)
    /// for the latest head.
    OutOfTime {
        timestamp: u64,
        timeliness: Timeliness,
    },
    /// No cosignature by this witness.
    No,
}

/// Which witnesses cosigned a checkpoint and whether the quorum is met.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuorumReport {
    pub met: bool,
    /// Every witness of the policy, in policy order, with its part.
    pub witnesses: Vec<(String, Cosigned)>,
    /// The quorum rule, in words.
    pub rule: String,
}

impl QuorumReport {
    /// In words: which witnesses cosigned, which did not, and the rule.
    pub fn summary(&self) -> String {
        let mut words = Words::default();
        for (name, c) in &self.witnesses {
            words.add(name, *c);
        }
        words.finish(self.met, &self.rule)
    }
}

/// The words of a quorum check, built one witness at a time (shared by
/// [`QuorumReport::summary`] and the browser verifier's k-of-n check).
#[derive(Default)]
pub struct Words {
    yes: String,
    no: String,
    notes: String,
}

impl Words {
    /// Adds witness `name`'s part; whether it counts.
    pub fn add(&mut self, name: &str, c: Cosigned) -> bool {
        let counted = matches!(c, Cosigned::Yes { .. });
        if let Cosigned::OutOfTime { timeliness, .. } = c {
            self.notes.push_str(" (");
            self.notes.push_str(name);
            self.notes.push_str(match timeliness {
                Timeliness::InTheFuture { .. } => "'s cosignature is dated ahead of this clock)",
                _ => "'s cosignature is too old for the latest head)",
            });
        }
        let list = if counted { &mut self.yes } else { &mut self.no };
        if !list.is_empty() {
            list.push_str(", ");
        }
        list.push_str(name);
        counted
    }

    /// `witnessed: cosigned by ...; not cosigned by ...; the quorum is <rule>`.
    pub fn finish(self, met: bool, rule: &str) -> String {
        let mut out = String::from(if met {
            "witnessed: cosigned by "
        } else {
            "NOT witnessed: cosigned by "
        });
        out.push_str(if self.yes.is_empty() {
            "no witness"
        } else {
            &self.yes
        });
        if !self.no.is_empty() {
            out.push_str("; not cosigned by ");
            out.push_str(&self.no);
        }
        out.push_str(&self.notes);
        out.push_str("; the quorum is ");
        out.push_str(rule);
        out
    }
}

impl Cosigned {
    /// A witness's part: its cosignature time `found`, judged by `freshness`.
    pub fn judge(found: Option<u64>, freshness: Freshness) -> Cosigned {
        match found {
            None => Cosigned::No,
            Some(timestamp) => match freshness.judge(timestamp) {
                Timeliness::InTime => Cosigned::Yes { timestamp },
                timeliness => Cosigned::OutOfTime {
                    timestamp,
                    timeliness,
                },
            },
        }
    }
}

impl Policy {
    pub fn logs(&self) -> &[PolicyLog] {
        &self.logs
    }

    pub fn witnesses(&self) -> &[PolicyWitness] {
        &self.witnesses
    }

    /// Whether the policy accepts checkpoints signed with the log key
    /// `vkey`: true when it lists no log (the log is known from context,
    /// C2SP tlog-policy), else only for a listed key and origin.
    pub fn accepts_log(&self, vkey: &str) -> bool {
        if self.logs.is_empty() {
            return true;
        }
        VerifierKey::parse(vkey).is_ok_and(|k| {
            self.logs
                .iter()
                .any(|l| l.key == *k.key.as_bytes() && l.origin == k.name)
        })
    }

    /// The listed log's verifier key for `origin`, if any.
    pub fn log_key(&self, origin: &str) -> Option<&str> {
        self.logs
            .iter()
            .find(|l| l.origin == origin)
            .map(|l| l.vkey.as_str())
    }

    /// The quorum as a plain threshold over witnesses, when it is one:
    /// `quorum none` is (0, none), one witness (1, it), a group whose
    /// members are all witnesses (k, them). `None` for nested groups.
    pub fn threshold(&self) -> Option<(usize, Vec<&PolicyWitness>)> {
        match self.quorum {
            None => Some((0, Vec::new())),
            Some(Member::Witness(w)) => Some((1, vec![&self.witnesses[w]])),
            Some(Member::Group(g)) => {
                let g = &self.groups[g];
                g.members
                    .iter()
                    .map(|m| match m {
                        Member::Witness(w) => Some(&self.witnesses[*w]),
                        Member::Group(_) => None,
                    })
                    .collect::<Option<Vec<_>>>()
                    .map(|ws| (g.threshold, ws))
            }
        }
    }

    fn member_name(&self, m: Member) -> &str {
        match m {
            Member::Witness(w) => &self.witnesses[w].name,
            Member::Group(g) => &self.groups[g].name,
        }
    }

    /// The quorum rule in words, e.g. `local: 2 of w1, w2, w3`.
    pub fn rule(&self) -> String {
        let mut out = String::new();
        match self.quorum {
            None => out.push_str("none (no cosignature is required)"),
            Some(m) => self.describe(m, &mut out),
        }
        out
    }

    fn describe(&self, m: Member, out: &mut String) {
        match m {
            Member::Witness(w) => {
                out.push_str(&self.witnesses[w].name);
                out.push_str(" alone");
            }
            Member::Group(g) => {
                let g = &self.groups[g];
                out.push_str(&g.name);
                out.push_str(": ");
                if g.threshold == g.members.len() && g.members.len() > 1 {
                    out.push_str("all");
                } else {
                    out.push_str(&g.threshold.to_string());
                }
                out.push_str(" of ");
                for (i, m) in g.members.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    match m {
                        Member::Witness(w) => out.push_str(&self.witnesses[*w].name),
                        Member::Group(_) => {
                            out.push('(');
                            self.describe(*m, out);
                            out.push(')');
                        }
                    }
                }
            }
        }
    }

    /// Whether the quorum is met when exactly the witnesses marked in
    /// `cosigned` (policy order) count.
    pub fn quorum_met(&self, cosigned: &[bool]) -> bool {
        // Groups name only earlier groups, so one pass in order decides each.
        let mut group_met = Vec::with_capacity(self.groups.len());
        let met = |m: &Member, group_met: &[bool]| match m {
            Member::Witness(w) => cosigned.get(*w).copied().unwrap_or(false),
            Member::Group(g) => group_met.get(*g).copied().unwrap_or(false),
        };
        for g in &self.groups {
            let count = g.members.iter().filter(|m| met(m, &group_met)).count();
            group_met.push(count >= g.threshold);
        }
        self.quorum.as_ref().is_none_or(|q| met(q, &group_met))
    }

    /// The witnesses' part in the signed note `note_text` and whether the
    /// quorum is met. With [`Freshness::Latest`], a cosignature counts
    /// only when made within the bound; with [`Freshness::Offline`] (a
    /// saved document), whatever its time.
    ///
    /// # Errors
    /// A malformed note, or a line of a listed witness that does not
    /// verify (the note is then not to be trusted at all).
    pub fn check(
        &self,
        note_text: &str,
        freshness: Freshness,
    ) -> Result<QuorumReport, CosignatureError> {
        let keys: Vec<WitnessKey> = self.witnesses.iter().map(|w| w.key.clone()).collect();
        let parts = parts(note_text, &keys, freshness)?;
        let counted: Vec<bool> = parts
            .iter()
            .map(|c| matches!(c, Cosigned::Yes { .. }))
            .collect();
        Ok(QuorumReport {
            met: self.quorum_met(&counted),
            witnesses: self
                .witnesses
                .iter()
                .zip(parts)
                .map(|(w, c)| (w.name.clone(), c))
                .collect(),
            rule: self.rule(),
        })
    }
}

/// Each witness's part in the signed note, judged by `freshness`.
fn parts(
    note_text: &str,
    keys: &[WitnessKey],
    freshness: Freshness,
) -> Result<Vec<Cosigned>, CosignatureError> {
    Ok(cosignature::cosignatures(note_text, keys)?
        .into_iter()
        .map(|t| Cosigned::judge(t, freshness))
        .collect())
}

/// Whether `vkey` is a log's verifier key (type 0x01), for a caller that
/// builds a policy from configuration.
pub fn is_log_key(vkey: &str) -> bool {
    note::VerifierKey::parse(vkey).is_ok()
}

#[cfg(test)]
#[cfg(feature = "server")]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::cosignature::cosign;
    use crate::hash::Hash32;
    use crate::merkle::TreeSize;
    use crate::test_notes::{vkey, LOG_SEED, ORIGIN};

    fn local(quorum: &str) -> String {
        format!(
            "# three local witnesses\nwitness w1 {}\nwitness w2 {} http://127.0.0.1:7381\n\twitness  w3\t{}  \n\ngroup local {quorum} w1 w2 w3\nquorum local\n",
            vkey(1),
            vkey(2),
            vkey(3)
        )
    }

    fn head_cosigned_by(ns: &[u8], at: u64) -> String {
        let note =
            note::sign_tree_head(ORIGIN, TreeSize(9), &Hash32::digest(b"root"), &LOG_SEED).unwrap();
        let mut out = note.clone();
        for n in ns {
            out.push_str(&cosign(&note, &format!("w{n}.example"), &[*n; 32], at).unwrap());
        }
        out
    }

    #[test]
    fn two_of_three_is_met_by_any_two_and_not_by_one() {
        let p = Policy::parse(&local("2")).unwrap();
        assert_eq!(p.witnesses().len(), 3);
        assert_eq!(
            p.witnesses()[1].url.as_deref(),
            Some("http://127.0.0.1:7381")
        );
        for (ns, met) in [
            (&[1u8, 2][..], true),
            (&[2, 3], true),
            (&[1, 2, 3], true),
            (&[3], false),
            (&[], false),
        ] {
            let r = p
                .check(&head_cosigned_by(ns, 100), Freshness::Offline)
                .unwrap();
            assert_eq!(r.met, met, "{ns:?}: {}", r.summary());
        }
        let r = p
            .check(&head_cosigned_by(&[1, 3], 100), Freshness::Offline)
            .unwrap();
        assert_eq!(
            r.summary(),
            "witnessed: cosigned by w1, w3; not cosigned by w2; the quorum is local: 2 of w1, w2, w3"
        );
        let r = p
            .check(&head_cosigned_by(&[2], 100), Freshness::Offline)
            .unwrap();
        assert!(r
            .summary()
            .starts_with("NOT witnessed: cosigned by w2; not cosigned by w1, w3"));
    }

    #[test]
    fn the_latest_head_needs_fresh_cosignatures_a_saved_one_does_not() {
        let p = Policy::parse(&local("2")).unwrap();
        let note = head_cosigned_by(&[1, 2], 1_000);
        let latest = Freshness::Latest {
            now: 1_000 + 7200,
            max_age: 3600,
        };
        let r = p.check(&note, latest).unwrap();
        assert!(!r.met);
        assert!(
            r.summary()
                .contains("(w1's cosignature is too old for the latest head)"),
            "{}",
            r.summary()
        );
        assert!(p.check(&note, Freshness::Offline).unwrap().met);
    }

    #[test]
    fn nested_groups_need_each_part() {
        let text = format!(
            "witness X1 {}\nwitness X2 {}\ngroup X any X1 X2\nwitness Y1 {}\ngroup XY all X Y1\nquorum XY\n",
            vkey(1),
            vkey(2),
            vkey(3)
        );
        let p = Policy::parse(&text).unwrap();
        assert_eq!(p.rule(), "XY: all of (X: 1 of X1, X2), Y1");
        assert!(p.quorum_met(&[true, false, true]));
        assert!(!p.quorum_met(&[true, true, false]));
        assert!(p.threshold().is_none());
        // The text written reads back to the same policy.
        assert_eq!(Policy::parse(&p.to_text()).unwrap(), p);
    }

    #[test]
    fn quorum_none_and_a_single_witness() {
        let none = Policy::parse("quorum none\n").unwrap();
        assert!(none.quorum_met(&[]));
        assert_eq!(none.threshold().map(|(k, w)| (k, w.len())), Some((0, 0)));
        let one = Policy::parse(&format!("witness a {}\nquorum a", vkey(1))).unwrap();
        assert!(!one.quorum_met(&[false]));
        assert!(one.quorum_met(&[true]));
    }

    #[test]
    fn bad_policies_are_refused_by_line() {
        let w1 = format!("witness w1 {}\n", vkey(1));
        let log = note::public_key_string(ORIGIN, &LOG_SEED).unwrap();
        for (text, line, why) in [
            (String::new(), 0, "no quorum line"),
            (
                format!("{w1}quorum w1\nquorum w1\n"),
                3,
                "a second quorum line",
            ),
            (
                format!("{w1}group g 2 w1\nquorum g\n"),
                2,
                "2 is not all, any or a number from 1 to the members",
            ),
            (
                format!("{w1}group g 0 w1\nquorum g\n"),
                2,
                "0 is not all, any",
            ),
            (
                format!("{w1}group g some w1\nquorum g\n"),
                2,
                "not all, any or a number",
            ),
            (
                format!("{w1}quorum g\n"),
                2,
                "g is not a witness or group defined",
            ),
            (
                format!("group g any w1\n{w1}quorum g\n"),
                1,
                "w1 is not a witness or group defined",
            ),
            (
                format!("{w1}group g any w1\ngroup h any w1\nquorum h\n"),
                3,
                "already a member",
            ),
            (
                format!("{w1}group g any none\nquorum g\n"),
                2,
                "none is not a witness or group",
            ),
            (format!("{w1}{w1}quorum w1\n"), 2, "w1 is defined twice"),
            (
                format!("witness none {}\nquorum none\n", vkey(1)),
                1,
                "reserved",
            ),
            (
                format!("{w1}witness w2 {}\nquorum w1\n", vkey(1)),
                2,
                "same witness key",
            ),
            (
                format!("witness w1 {log}\nquorum none\n"),
                1,
                "not a cosignature/v1 witness key",
            ),
            (
                format!("log {}\nquorum none\n", vkey(1)),
                1,
                "unknown verifier algorithm",
            ),
            (
                format!("log {log}\nlog {log}\nquorum none\n"),
                2,
                "same log key",
            ),
            (format!("{w1}quorum w1\r\n"), 2, "control character"),
            (
                "witnesses w1 x\nquorum none\n".to_owned(),
                1,
                "unknown keyword",
            ),
            (format!("{w1}quorum w1 extra\n"), 2, "wrong number of items"),
        ] {
            let e = Policy::parse(&text).unwrap_err();
            assert_eq!(e.line, line, "{text:?}: {e}");
            assert!(e.reason.contains(why), "{text:?}: {e}");
        }
    }

    #[test]
    fn logs_listed_in_a_policy_are_the_only_ones_it_accepts() {
        let log = note::public_key_string(ORIGIN, &LOG_SEED).unwrap();
        let other = note::public_key_string(ORIGIN, &[8; 32]).unwrap();
        let p = Policy::parse(&local("2")).unwrap();
        assert!(p.accepts_log(&other), "no log lines: any log");
        let p = p.with_logs(&[&log]).unwrap();
        assert!(p.accepts_log(&log));
        assert!(!p.accepts_log(&other));
        assert_eq!(p.log_key(ORIGIN), Some(log.as_str()));
        assert!(p.to_text().starts_with(&format!("log {log}\nwitness w1 ")));
        let (k, ws) = p.threshold().unwrap();
        assert_eq!((k, ws.len()), (2, 3));
    }

    #[test]
    fn a_forged_line_of_a_listed_witness_spoils_the_note() {
        let p = Policy::parse(&local("2")).unwrap();
        let note = head_cosigned_by(&[1, 2], 100);
        // w3's name with w3's key id, but w1's signature bytes.
        let w1_line = note.lines().find(|l| l.contains("w1.example")).unwrap();
        let w3_id = cosign(&note, "w3.example", &[3; 32], 100).unwrap();
        let id = &note::base64_decode(w3_id.trim_end().rsplit(' ').next().unwrap()).unwrap()[..4];
        let mut bytes = note::base64_decode(w1_line.rsplit(' ').next().unwrap()).unwrap();
        bytes[..4].copy_from_slice(id);
        let forged = format!(
            "{note}\u{2014} w3.example {}\n",
            note::base64_encode(&bytes)
        );
        assert_eq!(
            p.check(&forged, Freshness::Offline),
            Err(CosignatureError::InvalidCosignature("w3.example".into()))
        );
    }
}
