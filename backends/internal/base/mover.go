package base

import (
	"fmt"

	"github.com/aebench/aebench/jobstore"
)

// Who promotes due jobs in a backend that keeps delayed jobs apart and
// implements jobstore.Mover: the values of its option OptionMover.
const (
	OptionMover = "mover"
	// MoverClaim: every Claim promotes what is due before it takes jobs. The default.
	MoverClaim = "claim"
	// MoverBackground: promotion is left to a loop calling Promote.
	MoverBackground = "background"
)

// ClaimMoves checks a configured mover mode ("" means MoverClaim) and
// reports whether Claim promotes.
func ClaimMoves(backend, mode string) (bool, error) {
	switch mode {
	case "", MoverClaim:
		return true, nil
	case MoverBackground:
		return false, nil
	}
	return false, moverError(backend, mode)
}

// MoverOption reads OptionMover from a backend's string options (as the
// registry passes them): absent gives "", present must be a mode.
func MoverOption(backend string, extra map[string]string) (string, error) {
	v, ok := extra[OptionMover]
	if ok && v != MoverClaim && v != MoverBackground {
		return "", moverError(backend, v)
	}
	return v, nil
}

func moverError(backend, v string) error {
	return fmt.Errorf("%w: backend %s: option %s %q: allowed are %q and %q", jobstore.ErrInvalid, backend, OptionMover, v, MoverClaim, MoverBackground)
}

// CheckPromote validates a jobstore.Mover's Promote call: max from 1 to
// MaxClaim (one promotion is one script call), on an open store.
func (c *Core) CheckPromote(max int) error {
	if err := jobstore.CheckMax("Promote", max); err != nil {
		return err
	}
	return c.Check()
}
