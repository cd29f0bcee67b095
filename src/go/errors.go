package planctl

/*
#include "planctl.h"
*/
import "C"

import (
	"errors"
	"fmt"
)

// Code is one of libplanctl's error codes (the PLANCTL_E* values of
// planctl.h).  A Code is itself an error, so that errors.Is matches an
// *Error against it:
//
//	if errors.Is(err, planctl.ErrBusy) { ... }
type Code int

// The codes of planctl.h, one for each PLANCTL_E* value.
const (
	ErrInternal   Code = C.PLANCTL_ERROR       // internal error
	ErrNoMem      Code = C.PLANCTL_ENOMEM      // out of memory
	ErrInvalid    Code = C.PLANCTL_EINVAL      // invalid argument
	ErrIO         Code = C.PLANCTL_EIO         // I/O error
	ErrNotFound   Code = C.PLANCTL_ENOTFOUND   // not found
	ErrConflict   Code = C.PLANCTL_ECONFLICT   // conflict
	ErrTransition Code = C.PLANCTL_ETRANSITION // illegal status transition
	ErrStale      Code = C.PLANCTL_ESTALE      // status changed concurrently
	ErrNotDB      Code = C.PLANCTL_ENOTDB      // not a planctl database
	ErrTooNew     Code = C.PLANCTL_ETOONEW     // database schema is newer than this program
	ErrBusy       Code = C.PLANCTL_EBUSY       // database is busy
	ErrDefinition Code = C.PLANCTL_EDEFINITION // invalid definition
	ErrReadOnly   Code = C.PLANCTL_EREADONLY   // database is read-only
	ErrPreflight  Code = C.PLANCTL_EPREFLIGHT  // preflight checks failed
	ErrMismatch   Code = C.PLANCTL_EMISMATCH   // the tables and the event log disagree
	// ErrInterrupted: a call stopped by its context (planctl_interrupt);
	// the error matches the context's error too.
	ErrInterrupted Code = C.PLANCTL_EINTR
)

// Error returns the library's description of the code ("not found").
func (c Code) Error() string { return C.GoString(C.planctl_strerror(C.int(c))) }

// Name returns the code's symbolic name in planctl.h ("PLANCTL_ENOTFOUND").
func (c Code) Name() string { return C.GoString(C.planctl_errname(C.int(c))) }

// Error is a refusal of libplanctl: its code and the one-line message the
// library left (planctl_errmsg), which names the thing and its state.
// errors.Is(err, planctl.ErrNotFound) and the like match it by its code.
type Error struct {
	Code Code   // the PLANCTL_E* code
	Msg  string // the library's message; may be empty

	cause error // ErrInterrupted: the context's error
}

// Error returns "planctl: MESSAGE", or the code's description when the
// library left no message.
func (e *Error) Error() string {
	if e.Msg == "" {
		return "planctl: " + e.Code.Error()
	}
	return "planctl: " + e.Msg
}

// Unwrap returns the code, for errors.Is.
func (e *Error) Unwrap() error { return e.Code }

// Is matches, for a call its context interrupted (ErrInterrupted), the
// context's error as well: errors.Is(err, context.Canceled).
func (e *Error) Is(target error) bool { return e.cause != nil && e.cause == target }

func newError(rc C.int, msg string) error {
	if rc == 0 {
		return nil
	}
	return &Error{Code: Code(rc), Msg: msg}
}

// NotDone is what an Executor returns (possibly wrapped) when its task is
// not done yet: the engine starts it again after its task poll interval,
// without counting a failed attempt (KUDO's "not done").
var NotDone = errors.New("planctl: task not done yet")

// fatalError marks an executor's error as permanent.
type fatalError struct{ err error }

func (f *fatalError) Error() string { return f.err.Error() }
func (f *fatalError) Unwrap() error { return f.err }

// Fatal marks err as permanent: an Executor that returns Fatal(err) ends
// its step FATAL_ERROR (and its run with it) instead of having it retried.
// Fatal(nil) is nil.
func Fatal(err error) error {
	if err == nil {
		return nil
	}
	return &fatalError{err: err}
}

// IsFatal reports whether err, or an error it wraps, was marked with Fatal.
func IsFatal(err error) bool {
	var f *fatalError
	return errors.As(err, &f)
}

// errorf builds an *Error of the package's own (a bad argument caught
// before calling the library).
func errorf(code Code, format string, args ...interface{}) error {
	return &Error{Code: code, Msg: fmt.Sprintf(format, args...)}
}
