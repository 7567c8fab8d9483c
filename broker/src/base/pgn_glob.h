/*
 * Lease patterns (glob.c, decision 0153): gitignore-style globs relative
 * to the scope root, checked and normalized, matched against a path, and
 * two patterns' overlap decided exactly. No database, no allocation.
 */
#ifndef PGN_GLOB_H
#define PGN_GLOB_H

#include <stddef.h>
#include <stdint.h>

#include "pigeon/lease.h"
#include "pigeon/pigeon.h"

/* PGN_MAX_LEASE_PATTERN and PGN_LEASE_NORM_SIZE: pigeon/lease.h */

/*
 * Check lease pattern 'pattern' and write its normal form to 'norm'
 * (at most 'normlen' bytes with the NUL; PGN_LEASE_NORM_SIZE always
 * suffices). The pattern is relative to the scope root; an absolute path
 * is refused: the CLI first turns an absolute path inside the scope into
 * a relative one. Semantics (decision 0153): gitignore's, case-sensitive;
 * a pattern without a '/' (a trailing one aside) matches at any depth, a
 * leading './' anchors one at the root; a pattern covers the files it
 * matches, and a trailing '/' what is below the directories it names
 * (a '*' never crosses a '/', nor covers what is below a directory it
 * matches). The normal form is anchored at the root (an
 * unanchored pattern gains a leading '**' component) and is what
 * pgn_glob_match and pgn_glob_overlap take; it is stored, not shown (show the
 * pattern as given). Equal normal forms cover the same paths. PGN_EINVAL or
 * PGN_ETOOBIG with one line in 'err'; 'norm' is then "".
 */
PGN_NODISCARD pgn_status pgn_glob_check(const char *pattern, char *norm,
    size_t normlen, struct pgn_err *err);

/*
 * 1 when normalized pattern 'norm' covers 'path': a file's path relative
 * to the scope root in normal form (no leading or trailing '/', no empty,
 * '.' or '..' component, under PGN_MAX_PATH bytes). Anything else, and a
 * 'norm' pgn_glob_check did not make, is 0: not covered.
 */
int pgn_glob_match(const char *norm, const char *path);

/*
 * 1 when some path is covered by both normalized patterns 'a' and 'b'
 * (exact, in time proportional to the product of their lengths and
 * memory proportional to their sum). An invalid pattern overlaps nothing.
 */
int pgn_glob_overlap(const char *a, const char *b);

/*
 * pgn_glob_overlap, also adding to '*cells' the automaton states it
 * visited: the tests' proof of the bound on its work.
 */
int pgn_glob_overlap_cells(const char *a, const char *b, uint64_t *cells);

#endif
