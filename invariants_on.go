//go:build invariants

package tsdb

import "fmt"

// invariantsEnabled: built with the tag invariants, the head checks its
// invariants at safe points and panics on a violation (see invariants.go).
const invariantsEnabled = true

// assertInvariants panics if checkInvariants(quiescent) finds a violation;
// after names the safe point.
func (h *head) assertInvariants(after string, quiescent bool) {
	if err := h.checkInvariants(quiescent); err != nil {
		panic(fmt.Sprintf("tsdb: invariant violated after %s: %v", after, err))
	}
}

// assertCommitInvariants panics if checkCommitInvariants finds a violation.
func (h *head) assertCommitInvariants(b *appendBatch) {
	if err := h.checkCommitInvariants(b); err != nil {
		panic(fmt.Sprintf("tsdb: invariant violated after a commit: %v", err))
	}
}
