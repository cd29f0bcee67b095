package planctl

/*
#include <stdlib.h>
#include "planctl.h"
*/
import "C"

import (
	"context"
	"time"
	"unsafe"
)

// DB is a handle on a planctl database: a SQLite file, or a schema of a
// PostgreSQL database (a postgres:// or postgresql:// URI).  It owns one
// connection, which the library allows one thread at a time; DB
// serialises its callers, so any number of goroutines may share one (each
// call waits its turn, or gives up when its context ends).  Open several
// for calls at once: handles on one database are independent.
type DB struct {
	sem chan struct{} // holds a token while a call uses p
	p   *C.planctl
	uri string
}

type openConfig struct {
	opts  C.planctl_open_options
	actor string
}

// OpenOption changes how Open opens a database.
type OpenOption func(*openConfig)

// WithReadOnly opens the database for reading only: nothing is written or
// migrated, and a database that does not exist is ErrNotFound.
func WithReadOnly() OpenOption {
	return func(c *openConfig) { c.opts.flags |= C.PLANCTL_OPEN_READONLY }
}

// WithNoCreate refuses (ErrNotFound) a database file that does not exist
// instead of creating it.
func WithNoCreate() OpenOption {
	return func(c *openConfig) { c.opts.flags |= C.PLANCTL_OPEN_NOCREATE }
}

// WithBusyTimeout sets how long a writer waits for the database's lock
// before ErrBusy (default 5 s).
func WithBusyTimeout(d time.Duration) OpenOption {
	return func(c *openConfig) { c.opts.busy_timeout_ms = C.int(d / time.Millisecond) }
}

// WithFullDurability makes every commit synchronous (SQLite's
// synchronous=FULL); on PostgreSQL the server's synchronous_commit rules.
func WithFullDurability() OpenOption {
	return func(c *openConfig) { c.opts.durability = C.PLANCTL_DURABILITY_FULL }
}

// WithActor names who acts through the handle: the actor of the events its
// admissions, cancels, pauses and resumes record ("user" by default).
func WithActor(name string) OpenOption {
	return func(c *openConfig) { c.actor = name }
}

// Open opens (creating and migrating it if needed) the database at uri, a
// file path or a postgres:// URI.  Close the DB when done.
func Open(ctx context.Context, uri string, opts ...OpenOption) (*DB, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cfg := openConfig{opts: C.planctl_open_options{
		version: C.PLANCTL_OPEN_OPTIONS_VERSION, busy_timeout_ms: 5000}}
	for _, o := range opts {
		o(&cfg)
	}
	p, err := openHandle(uri, &cfg.opts)
	if err != nil {
		return nil, err
	}
	db := &DB{sem: make(chan struct{}, 1), p: p, uri: uri}
	if cfg.actor != "" {
		if err := db.do(ctx, func(p *C.planctl) C.int {
			a := cstr(cfg.actor)
			defer free(a)
			return C.planctl_set_actor(p, a)
		}); err != nil {
			db.Close()
			return nil, err
		}
	}
	return db, nil
}

func openHandle(uri string, o *C.planctl_open_options) (*C.planctl, error) {
	cu := cstr(uri)
	defer free(cu)
	var p *C.planctl
	rc := C.planctl_open(&p, cu, o)
	if rc != 0 {
		msg := "out of memory"
		if p != nil {
			msg = C.GoString(C.planctl_errmsg(p))
			C.planctl_close(p)
		}
		return nil, newError(rc, msg)
	}
	return p, nil
}

// Close closes the handle, once the call using it (if any) has returned.
// Closing twice is harmless.
func (db *DB) Close() error {
	db.sem <- struct{}{}
	C.planctl_close(db.p)
	db.p = nil
	<-db.sem
	return nil
}

// URI returns what the DB was opened with.
func (db *DB) URI() string { return db.uri }

// do runs f with the handle once it is free (or returns ctx's error if ctx
// ends first), interrupting it should ctx end while it runs, and turns a
// negative return into an *Error carrying the handle's message, read
// before anyone else may use the handle.
func (db *DB) do(ctx context.Context, f func(p *C.planctl) C.int) error {
	select {
	case db.sem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-db.sem }()
	if err := ctx.Err(); err != nil {
		return err
	}
	if db.p == nil {
		return errorf(ErrInvalid, "the DB is closed")
	}
	var stop chan struct{}
	var watched chan struct{}
	if done := ctx.Done(); done != nil {
		// While the call runs, a context that ends interrupts it (a busy
		// wait, a statement, preflight checks), as often as needed: an
		// interrupt between two transactions of a call does nothing.
		stop, watched = make(chan struct{}), make(chan struct{})
		go func(p *C.planctl) {
			defer close(watched)
			select {
			case <-stop:
				return
			case <-done:
			}
			t := time.NewTicker(5 * time.Millisecond)
			defer t.Stop()
			for {
				C.planctl_interrupt(p)
				select {
				case <-stop:
					return
				case <-t.C:
				}
			}
		}(db.p)
	}
	rc := f(db.p)
	if stop != nil {
		close(stop)
		<-watched
	}
	if rc < 0 {
		err := &Error{Code: Code(rc), Msg: C.GoString(C.planctl_errmsg(db.p))}
		if err.Code == ErrInterrupted {
			err.cause = ctx.Err()
		}
		return err
	}
	return nil
}

// doJSON runs f, which fills a char **out, and returns the document.
func (db *DB) doJSON(ctx context.Context, f func(out **C.char, p *C.planctl) C.int) ([]byte, error) {
	var out *C.char
	err := db.do(ctx, func(p *C.planctl) C.int { return f(&out, p) })
	b := takeString(out)
	if err != nil {
		return nil, err
	}
	return b, nil
}

// bytesArg passes b to C for the duration of a call (the library reads it
// only during the call).
func bytesArg(b []byte) (*C.char, C.size_t) {
	if len(b) == 0 {
		return (*C.char)(unsafe.Pointer(&zeroByte)), 0
	}
	return (*C.char)(unsafe.Pointer(&b[0])), C.size_t(len(b))
}

var zeroByte byte
