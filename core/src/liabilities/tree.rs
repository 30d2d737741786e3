//! The sum tree: built a leaf at a time from a small state (resumable
//! across invocations), its nodes handed out to be stored, and customer
//! paths read back from stored nodes.
//!
//! Stored nodes are the roots of complete, aligned subtrees: [`NodeAddr`]
//! `{level, index}` covers the 2^level leaves from `index · 2^level`
//! (leaves are level 0). Building n leaves completes about 2n of them, each
//! exactly once. A tree of any size is a fold of complete subtrees (the
//! bits of n, largest first), so every node of a path, ragged right edge
//! included, is computed from O(log n) stored nodes.

use super::{parent, root_hash, LiabilitiesError, SumNode, TreeKind, EMPTY_TOP, LEAVES_MAX};
use crate::amount::Amount;
use crate::hash::Hash32;
use std::fmt;

/// A stored node: the root of the complete subtree of 2^`level` leaves
/// that starts at leaf `index · 2^level`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeAddr {
    pub level: u8,
    pub index: u64,
}

impl fmt::Display for NodeAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "(level {}, index {})", self.level, self.index)
    }
}

/// Most subtrees in a frontier: one per bit of the leaf count (≤ 2^32).
const FRONTIER_NODES_MAX: usize = 33;

/// The resumable builder of one tree: the leaf count and the roots of the
/// complete subtrees so far, largest (leftmost) first. O(log n) state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeBuilder {
    kind: TreeKind,
    count: u64,
    frontier: Vec<SumNode>,
}

impl TreeBuilder {
    pub fn new(kind: TreeKind) -> Self {
        Self {
            kind,
            count: 0,
            frontier: Vec::new(),
        }
    }

    pub fn kind(&self) -> TreeKind {
        self.kind
    }

    /// Leaves added so far.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Appends a leaf (its amount checked) and returns every node it
    /// completes, the leaf itself first (level 0), then each new parent
    /// upward: the caller stores them all. On error nothing changes.
    ///
    /// # Errors
    /// An amount out of range (the leaf's, or a sum's on the way up), or
    /// more than [`LEAVES_MAX`] leaves.
    pub fn push(&mut self, leaf: SumNode) -> Result<Vec<(NodeAddr, SumNode)>, LiabilitiesError> {
        if self.count >= LEAVES_MAX {
            return Err(LiabilitiesError::TooManyLeaves);
        }
        super::check_amount(|| format!("the {} leaf's amount", self.kind), leaf.sum)?;
        let index = self.count;
        let mut out = vec![(NodeAddr { level: 0, index }, leaf)];
        // Each trailing 1 bit of the old count is a complete subtree that
        // this leaf completes a parent of.
        let merges = index.trailing_ones() as usize;
        let keep = self.frontier.len().saturating_sub(merges);
        let mut node = leaf;
        for (k, left) in self.frontier[keep..].iter().rev().enumerate() {
            node = parent(self.kind, left, &node)?;
            let level = k as u8 + 1;
            out.push((
                NodeAddr {
                    level,
                    index: index >> level,
                },
                node,
            ));
        }
        self.frontier.truncate(keep);
        self.frontier.push(node);
        self.count += 1;
        Ok(out)
    }

    /// The sum of every leaf so far, from the frontier's sums (no hashing).
    ///
    /// # Errors
    /// [`LiabilitiesError::Overflow`] (only from a state tampered with).
    pub fn total(&self) -> Result<Amount, LiabilitiesError> {
        self.frontier
            .iter()
            .try_fold(Amount::ZERO, |acc, n| acc.checked_add(n.sum))
            .map_err(|_| LiabilitiesError::Overflow {
                what: format!("the {} total", self.kind),
            })
    }

    /// The top node over every leaf so far ([`EMPTY_TOP`] when none): the
    /// fold of the frontier from the right.
    ///
    /// # Errors
    /// A sum out of range (only from a state that was tampered with).
    pub fn top(&self) -> Result<SumNode, LiabilitiesError> {
        let mut iter = self.frontier.iter().rev();
        let Some(last) = iter.next() else {
            return Ok(EMPTY_TOP);
        };
        iter.try_fold(*last, |acc, left| parent(self.kind, left, &acc))
    }

    /// The root as a statement states it: [`root_hash`] of the top node and
    /// the leaf count, with the total.
    ///
    /// # Errors
    /// As [`TreeBuilder::top`].
    pub fn root(&self) -> Result<SumNode, LiabilitiesError> {
        let top = self.top()?;
        Ok(SumNode {
            hash: root_hash(self.kind, &top, self.count),
            sum: top.sum,
        })
    }

    /// `<count>:<hash>/<sum>,<hash>/<sum>,...` (largest subtree first), for
    /// storage between invocations.
    pub fn to_text(&self) -> String {
        let nodes: Vec<String> = self
            .frontier
            .iter()
            .map(|n| format!("{}/{}", n.hash, n.sum))
            .collect();
        format!("{}:{}", self.count, nodes.join(","))
    }

    /// Reads [`TreeBuilder::to_text`].
    ///
    /// # Errors
    /// [`LiabilitiesError::MalformedState`]: not that form, the wrong number
    /// of subtrees for the count, or a sum out of range.
    pub fn from_text(kind: TreeKind, text: &str) -> Result<Self, LiabilitiesError> {
        let bad = |why: &str| LiabilitiesError::MalformedState(format!("{kind} tree: {why}"));
        let (count, rest) = text.split_once(':').ok_or_else(|| bad("no count"))?;
        let count: u64 = count.parse().map_err(|_| bad("count is not a number"))?;
        if count > LEAVES_MAX {
            return Err(bad("count above 2^32"));
        }
        let mut frontier = Vec::new();
        if !rest.is_empty() {
            for part in rest.split(',').take(FRONTIER_NODES_MAX + 1) {
                let (hash, sum) = part
                    .split_once('/')
                    .ok_or_else(|| bad("a node without /"))?;
                let hash = Hash32::parse(hash).map_err(|_| bad("a node hash is not hex"))?;
                let sum = Amount::parse(sum).map_err(|_| bad("a node sum is not an amount"))?;
                super::check_amount(String::new, sum).map_err(|e| bad(&e.to_string()))?;
                frontier.push(SumNode { hash, sum });
            }
        }
        if frontier.len() != count.count_ones() as usize {
            return Err(bad("the number of subtrees does not match the count"));
        }
        Ok(Self {
            kind,
            count,
            frontier,
        })
    }
}

/// Largest power of two strictly below `n` (n ≥ 2).
fn largest_power_of_two_below(n: u64) -> u64 {
    1u64 << (63 - (n - 1).leading_zeros())
}

/// The complete aligned subtrees that make up the RFC 9162 subtree over
/// leaves `[lo, hi)` (as it appears in a tree split RFC 9162's way), largest
/// first. Their fold from the right is that subtree's root.
fn parts(lo: u64, hi: u64) -> Vec<NodeAddr> {
    let mut out = Vec::new();
    let mut at = lo;
    while at < hi {
        let level = 63 - (hi - at).leading_zeros();
        out.push(NodeAddr {
            level: level as u8,
            index: at >> level,
        });
        at += 1u64 << level;
    }
    out
}

/// The sibling subtrees of leaf `index` in a tree of `count` leaves, as
/// leaf ranges, leaf side first (RFC 9162 PATH).
fn sibling_ranges(index: u64, count: u64) -> Result<Vec<(u64, u64)>, LiabilitiesError> {
    if index >= count {
        return Err(LiabilitiesError::IndexOutOfRange { index, count });
    }
    let mut out = Vec::new();
    let (mut lo, mut hi) = (0u64, count);
    while hi - lo > 1 {
        let k = largest_power_of_two_below(hi - lo);
        if index < lo + k {
            out.push((lo + k, hi));
            hi = lo + k;
        } else {
            out.push((lo, lo + k));
            lo += k;
        }
    }
    out.reverse();
    Ok(out)
}

/// Every stored node the path of leaf `index` in a tree of `count` leaves
/// is computed from (O(log n), each once), for the caller to fetch.
///
/// # Errors
/// [`LiabilitiesError::IndexOutOfRange`].
pub fn path_addrs(index: u64, count: u64) -> Result<Vec<NodeAddr>, LiabilitiesError> {
    Ok(sibling_ranges(index, count)?
        .into_iter()
        .flat_map(|(lo, hi)| parts(lo, hi))
        .collect())
}

/// The sibling path of leaf `index` in the tree of `count` leaves, leaf side
/// first, each sibling a (hash, sum): computed from the stored nodes that
/// [`path_addrs`] names, read through `node`.
///
/// # Errors
/// [`LiabilitiesError::IndexOutOfRange`], [`LiabilitiesError::MissingNode`],
/// or a stored sum out of range.
pub fn path(
    kind: TreeKind,
    index: u64,
    count: u64,
    node: impl Fn(NodeAddr) -> Option<SumNode>,
) -> Result<Vec<SumNode>, LiabilitiesError> {
    sibling_ranges(index, count)?
        .into_iter()
        .map(|(lo, hi)| subtree_root(kind, lo, hi, &node))
        .collect()
}

/// The root over leaves `[lo, hi)` (an RFC 9162 subtree) from stored nodes.
fn subtree_root(
    kind: TreeKind,
    lo: u64,
    hi: u64,
    node: &impl Fn(NodeAddr) -> Option<SumNode>,
) -> Result<SumNode, LiabilitiesError> {
    let nodes = parts(lo, hi)
        .into_iter()
        .map(|a| node(a).ok_or(LiabilitiesError::MissingNode(a)))
        .collect::<Result<Vec<_>, _>>()?;
    let mut iter = nodes.iter().rev();
    let last = iter
        .next()
        .copied()
        .ok_or(LiabilitiesError::IndexOutOfRange {
            index: lo,
            count: hi,
        })?;
    iter.try_fold(last, |acc, left| parent(kind, left, &acc))
}

/// A whole tree in memory: every stored node by level. For tests, the
/// bench and small statements; the service stores nodes in D1 instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SumTree {
    kind: TreeKind,
    /// `levels[l][i]` is [`NodeAddr`] `{l, i}`.
    levels: Vec<Vec<SumNode>>,
    root: SumNode,
}

impl SumTree {
    /// Builds the tree over `leaves` in order.
    ///
    /// # Errors
    /// As [`TreeBuilder::push`].
    pub fn build(kind: TreeKind, leaves: &[SumNode]) -> Result<SumTree, LiabilitiesError> {
        let mut builder = TreeBuilder::new(kind);
        let mut levels: Vec<Vec<SumNode>> = Vec::new();
        for leaf in leaves {
            for (addr, node) in builder.push(*leaf)? {
                let level = usize::from(addr.level);
                if levels.len() <= level {
                    levels.resize(level + 1, Vec::new());
                }
                levels[level].push(node);
            }
        }
        Ok(SumTree {
            kind,
            levels,
            root: builder.root()?,
        })
    }

    pub fn kind(&self) -> TreeKind {
        self.kind
    }

    /// The root as a statement states it (sealed with the leaf count).
    pub fn root(&self) -> SumNode {
        self.root
    }

    /// Leaves in the tree.
    pub fn count(&self) -> u64 {
        self.levels.first().map_or(0, |l| l.len() as u64)
    }

    /// A stored node, if the tree has it.
    pub fn node(&self, addr: NodeAddr) -> Option<SumNode> {
        let index = usize::try_from(addr.index).ok()?;
        self.levels
            .get(usize::from(addr.level))?
            .get(index)
            .copied()
    }

    /// The sibling path of leaf `index`, leaf side first.
    ///
    /// # Errors
    /// [`LiabilitiesError::IndexOutOfRange`].
    pub fn path(&self, index: u64) -> Result<Vec<SumNode>, LiabilitiesError> {
        path(self.kind, index, self.count(), |a| self.node(a))
    }
}
