package planctl

/*
#include <stdlib.h>
#include "planctl.h"
*/
import "C"

import (
	"context"
	"encoding/json"
	"sort"
	"strings"
	"time"
)

// Params are parameter values by name, as text parsed by each parameter's
// type ("3", "true", `["a","b"]`; strings as they are).
type Params map[string]string

// cparams is a C array of planctl_param whose strings are C copies.
type cparams struct {
	arr []C.planctl_param
}

func makeParams(ps Params) *cparams {
	names := make([]string, 0, len(ps))
	for k := range ps {
		names = append(names, k)
	}
	sort.Strings(names)
	c := &cparams{arr: make([]C.planctl_param, len(names))}
	for i, k := range names {
		c.arr[i].name = cstr(k)
		c.arr[i].value = cstr(ps[k])
	}
	return c
}

func (c *cparams) ptr() (*C.planctl_param, C.size_t) {
	if len(c.arr) == 0 {
		return nil, 0
	}
	return &c.arr[0], C.size_t(len(c.arr))
}

func (c *cparams) free() {
	for i := range c.arr {
		free(c.arr[i].name)
		free(c.arr[i].value)
	}
}

// ApplyDefinition checks a definition (planctl-definition(5), JSON) and
// registers it under its name and version; created is false when the same
// content was registered already.  Task kinds must be built-in or
// registered on this DB (RegisterKind).  origin names the source in
// messages ("site.json"; "" for "<definition>").
func (db *DB) ApplyDefinition(ctx context.Context, doc []byte, origin string) (created bool, err error) {
	b, err := db.doJSON(ctx, func(out **C.char, p *C.planctl) C.int {
		o := cstrOrNil(origin)
		defer free(o)
		j, n := bytesArg(doc)
		return C.planctl_definition_apply(out, p, j, n, o)
	})
	if err != nil {
		return false, err
	}
	var r struct {
		Created bool `json:"created"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return false, err
	}
	return r.Created, nil
}

// RegisterKind makes a task kind known to this DB, so that ApplyDefinition
// accepts definitions using it (an Engine's executors are known only to
// the engine's own handle).  Its specs are not checked.
func (db *DB) RegisterKind(ctx context.Context, kind string) error {
	return db.do(ctx, func(p *C.planctl) C.int {
		k := cstr(kind)
		defer free(k)
		return C.planctl_kind_register(p, k, nil, nil)
	})
}

// Validation is the validate document of planctl-json(7): whether a
// definition is valid and every problem found.
type Validation struct {
	Schema int               `json:"schema"`
	Valid  bool              `json:"valid"`
	Errors []ValidationError `json:"errors"`
	Raw    json.RawMessage   `json:"-"`
}

// ValidationError is one problem of a definition.
type ValidationError struct {
	Path    string `json:"path"`
	Type    string `json:"type"`
	Message string `json:"message"`
	Hint    string `json:"hint"`
}

// CheckDefinition checks a definition without any database: every problem
// is listed in the result (an invalid definition is not an error).  Kinds
// other than the built-in ones must be named in extraKinds; their specs
// are not checked.
func CheckDefinition(doc []byte, origin string, extraKinds ...string) (*Validation, error) {
	kinds := make([]*C.char, len(extraKinds)+1)
	for i, k := range extraKinds {
		kinds[i] = cstr(k)
	}
	defer func() {
		for _, k := range kinds {
			free(k)
		}
	}()
	o := cstrOrNil(origin)
	defer free(o)
	var out *C.char
	j, n := bytesArg(doc)
	rc := C.planctl_definition_check(&out, j, n, o, &kinds[0])
	b := takeString(out)
	if rc != 0 {
		return nil, newError(rc, C.GoString(C.planctl_thread_errmsg()))
	}
	v := &Validation{Raw: b}
	return v, json.Unmarshal(b, v)
}

type admitConfig struct {
	version    string
	queue      bool
	reason     string
	deadline   time.Duration
	skip       []string
	unset      []string
	paramFiles bool
}

// AdmitOption changes one admission (Create, Set, Upgrade, Trigger, Retry).
type AdmitOption func(*admitConfig)

// WithVersion makes Create use that version of the definition instead of
// the one registered last.
func WithVersion(v string) AdmitOption { return func(c *admitConfig) { c.version = v } }

// WithQueue makes Trigger queue the run behind an active run instead of
// being refused with ErrConflict.
func WithQueue() AdmitOption { return func(c *admitConfig) { c.queue = true } }

// WithReason records free text with a triggered run.
func WithReason(s string) AdmitOption { return func(c *admitConfig) { c.reason = s } }

// WithPreflightDeadline gives the plan's preflight checks, all together,
// this long (default 10 s, or what is left of the context's deadline when
// that is sooner).
func WithPreflightDeadline(d time.Duration) AdmitOption {
	return func(c *admitConfig) { c.deadline = d }
}

// WithSkipPreflight skips the named preflight checks ("all" alone: every
// check).
func WithSkipPreflight(checks ...string) AdmitOption {
	return func(c *admitConfig) { c.skip = append(c.skip, checks...) }
}

// WithUnset removes the explicit values of these parameters (Set and
// Upgrade), so that their defaults apply again.
func WithUnset(names ...string) AdmitOption {
	return func(c *admitConfig) { c.unset = append(c.unset, names...) }
}

// WithParamFiles reads a value "@PATH" of an array or map parameter as
// JSON from the file PATH.
func WithParamFiles() AdmitOption { return func(c *admitConfig) { c.paramFiles = true } }

// Admitted is what an admission did.
type Admitted struct {
	Run           int64           // the run admitted; 0: none (a Set that changed nothing)
	Status        Status          // PENDING, or QUEUED behind the active run
	QueuePosition int             // QUEUED: 1-based place among the queued runs
	RetryOf       int64           // a retry: the run it retries
	Plan          string          // the plan admitted
	Preflight     json.RawMessage // the preflight report, or nil when no check ran
}

// callAdmit runs one planctl_admit_* call with the options built from
// opts and ctx, and decodes what it admitted.  The preflight report of a
// refused admission comes back too.
func (db *DB) callAdmit(ctx context.Context, opts []AdmitOption,
	f func(out *C.planctl_admitted, p *C.planctl, o *C.planctl_admit_options, version *C.char) C.int) (*Admitted, error) {
	var cfg admitConfig
	for _, o := range opts {
		o(&cfg)
	}
	var o C.planctl_admit_options
	o.version = C.PLANCTL_ADMIT_OPTIONS_VERSION
	o.queue = boolInt(cfg.queue)
	o.reason = cstrOrNil(cfg.reason)
	defer free(o.reason)
	o.preflight_skip = cstrOrNil(strings.Join(cfg.skip, ","))
	defer free(o.preflight_skip)
	d := cfg.deadline
	if dl, ok := ctx.Deadline(); ok {
		left := time.Until(dl)
		if left < time.Millisecond {
			left = time.Millisecond
		}
		if d == 0 && left < 10*time.Second || d > left {
			d = left
		}
	}
	o.preflight_deadline_ms = C.int64_t(d / time.Millisecond)
	unset := make([]*C.char, len(cfg.unset)+1)
	for i, n := range cfg.unset {
		unset[i] = cstr(n)
	}
	defer func() {
		for _, u := range unset {
			free(u)
		}
	}()
	if len(cfg.unset) > 0 {
		o.unset = &unset[0]
		o.nunset = C.size_t(len(cfg.unset))
	}
	o.param_files = boolInt(cfg.paramFiles)
	ver := cstrOrNil(cfg.version)
	defer free(ver)

	var ad C.planctl_admitted
	err := db.do(ctx, func(p *C.planctl) C.int { return f(&ad, p, &o, ver) })
	a := &Admitted{
		Run:           int64(ad.run),
		QueuePosition: int(ad.queue_position),
		RetryOf:       int64(ad.retry_of),
		Plan:          C.GoString(&ad.plan[0]),
	}
	if err == nil {
		a.Status = Status(C.GoString(C.planctl_status_name(ad.status)))
	}
	if ad.preflight_report != nil {
		a.Preflight = json.RawMessage(C.GoString(ad.preflight_report))
	}
	C.planctl_admitted_clear(&ad)
	if err != nil {
		if a.Preflight != nil {
			return a, err
		}
		return nil, err
	}
	return a, nil
}

func boolInt(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

// Create creates instance name from a definition (the version registered
// last, unless WithVersion) with the given parameter values, and admits
// its deploy run.  ErrConflict: the name is taken; ErrNotFound: no such
// definition; ErrInvalid: bad parameters (all listed in the message).
func (db *DB) Create(ctx context.Context, name, definition string, params Params, opts ...AdmitOption) (*Admitted, error) {
	cp := makeParams(params)
	defer cp.free()
	n, d := cstr(name), cstr(definition)
	defer free(n)
	defer free(d)
	return db.callAdmit(ctx, opts, func(out *C.planctl_admitted, p *C.planctl, o *C.planctl_admit_options, ver *C.char) C.int {
		arr, cnt := cp.ptr()
		return C.planctl_admit_create(out, p, n, d, ver, arr, cnt, o)
	})
}

// Set changes parameter values of an instance and admits the plan they
// select; Admitted.Run is 0 when no value actually changed.
func (db *DB) Set(ctx context.Context, instance string, params Params, opts ...AdmitOption) (*Admitted, error) {
	cp := makeParams(params)
	defer cp.free()
	n := cstr(instance)
	defer free(n)
	return db.callAdmit(ctx, opts, func(out *C.planctl_admitted, p *C.planctl, o *C.planctl_admit_options, _ *C.char) C.int {
		arr, cnt := cp.ptr()
		return C.planctl_admit_set(out, p, n, arr, cnt, o)
	})
}

// Upgrade moves an instance to another registered version of its
// definition (with parameter changes, if any) and admits its upgrade,
// update or deploy plan.
func (db *DB) Upgrade(ctx context.Context, instance, version string, params Params, opts ...AdmitOption) (*Admitted, error) {
	cp := makeParams(params)
	defer cp.free()
	n, v := cstr(instance), cstr(version)
	defer free(n)
	defer free(v)
	return db.callAdmit(ctx, opts, func(out *C.planctl_admitted, p *C.planctl, o *C.planctl_admit_options, _ *C.char) C.int {
		arr, cnt := cp.ptr()
		return C.planctl_admit_upgrade(out, p, n, v, arr, cnt, o)
	})
}

// Trigger admits a run of plan (any plan but cleanup).  ErrConflict: the
// instance has an active run (use WithQueue to queue behind it).
func (db *DB) Trigger(ctx context.Context, instance, plan string, opts ...AdmitOption) (*Admitted, error) {
	n, pl := cstr(instance), cstr(plan)
	defer free(n)
	defer free(pl)
	return db.callAdmit(ctx, opts, func(out *C.planctl_admitted, p *C.planctl, o *C.planctl_admit_options, _ *C.char) C.int {
		return C.planctl_admit_trigger(out, p, n, pl, o)
	})
}

// Retry admits a retry of a FATAL_ERROR or CANCELLED run (0: the latest
// run), its COMPLETE phases and steps carried over.
func (db *DB) Retry(ctx context.Context, instance string, run int64, opts ...AdmitOption) (*Admitted, error) {
	n := cstr(instance)
	defer free(n)
	return db.callAdmit(ctx, opts, func(out *C.planctl_admitted, p *C.planctl, o *C.planctl_admit_options, _ *C.char) C.int {
		return C.planctl_admit_retry(out, p, n, C.int64_t(run), o)
	})
}

// CancelOption changes a Cancel.
type CancelOption func(*C.planctl_cancel_options, *[]*C.char)

// WithCancelReason records why, with the cancellation.
func WithCancelReason(s string) CancelOption {
	return func(o *C.planctl_cancel_options, keep *[]*C.char) {
		o.reason = cstr(s)
		*keep = append(*keep, o.reason)
	}
}

// WithCancelRun cancels that run of the instance (a queued one, or the
// active one) instead of the active run.
func WithCancelRun(run int64) CancelOption {
	return func(o *C.planctl_cancel_options, _ *[]*C.char) { o.run = C.int64_t(run) }
}

// Cancel cancels the instance's active run (or the run WithCancelRun
// names) and returns its id; an engine stops its running tasks.
func (db *DB) Cancel(ctx context.Context, instance string, opts ...CancelOption) (int64, error) {
	o := C.planctl_cancel_options{version: C.PLANCTL_CANCEL_OPTIONS_VERSION}
	var keep []*C.char
	for _, f := range opts {
		f(&o, &keep)
	}
	defer func() {
		for _, k := range keep {
			free(k)
		}
	}()
	n := cstr(instance)
	defer free(n)
	var run C.int64_t
	err := db.do(ctx, func(p *C.planctl) C.int { return C.planctl_run_cancel_opts(&run, p, n, &o) })
	return int64(run), err
}

// Pause pauses the instance's IN_PROGRESS run: running steps finish,
// nothing new starts.  It returns the run's id.
func (db *DB) Pause(ctx context.Context, instance string) (int64, error) {
	n := cstr(instance)
	defer free(n)
	var run C.int64_t
	err := db.do(ctx, func(p *C.planctl) C.int { return C.planctl_run_pause(&run, p, n) })
	return int64(run), err
}

// Resume resumes the instance's PAUSED run and returns its id.
func (db *DB) Resume(ctx context.Context, instance string) (int64, error) {
	n := cstr(instance)
	defer free(n)
	var run C.int64_t
	err := db.do(ctx, func(p *C.planctl) C.int { return C.planctl_run_resume(&run, p, n) })
	return int64(run), err
}

// DeleteOption changes a Delete.
type DeleteOption func(*C.planctl_delete_options)

// WithForce removes the instance at once, without its cleanup plan (but
// not while a run is active).
func WithForce() DeleteOption { return func(o *C.planctl_delete_options) { o.force = 1 } }

// WithDryRun checks and does everything a delete would, then rolls it
// back: the result and the error say what it would do.
func WithDryRun() DeleteOption { return func(o *C.planctl_delete_options) { o.dry_run = 1 } }

// Delete deletes an instance: it admits its cleanup run when the
// definition has one (its id is returned; the instance is removed when it
// completes), else removes it at once (0).
func (db *DB) Delete(ctx context.Context, instance string, opts ...DeleteOption) (int64, error) {
	o := C.planctl_delete_options{version: C.PLANCTL_DELETE_OPTIONS_VERSION}
	for _, f := range opts {
		f(&o)
	}
	n := cstr(instance)
	defer free(n)
	var run C.int64_t
	err := db.do(ctx, func(p *C.planctl) C.int { return C.planctl_instance_delete_opts(&run, p, n, &o) })
	return int64(run), err
}

// DataVersion returns a number that changes whenever another handle or
// process commits to the database (not this DB's own commits): a cheap
// way to notice changes by polling.
func (db *DB) DataVersion(ctx context.Context) (int64, error) {
	var v C.int64_t
	err := db.do(ctx, func(p *C.planctl) C.int { return C.planctl_data_version(&v, p) })
	return int64(v), err
}
