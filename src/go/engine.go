package planctl

/*
#include <stdlib.h>
#include "bridge.h"
*/
import "C"

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"runtime"
	"runtime/cgo"
	"sync"
	"sync/atomic"
	"time"
)

// Engine runs plans: it takes the database's engine lease (on PostgreSQL
// it joins the database's engines), starts the tasks of active runs
// through its executors and records every status change.  It runs on an
// event loop of its own, on one OS thread, inside Run.  It has a database
// handle of its own: use a DB for your own calls while it runs.
//
// An Engine is made with NewEngine, given its executors with Register,
// run once with Run, and freed with Close.  Healthy, Metrics and the HTTP
// handlers may be called from any goroutine at any time until Close.
type Engine struct {
	mu sync.RWMutex // write-held by Close; read-held by the calls from any goroutine
	e  *C.planctl_engine
	p  *C.planctl

	grace   time.Duration
	ran     int32
	handles []cgo.Handle // of the executors and the logger

	wg sync.WaitGroup // executor goroutines
}

type engineConfig struct {
	opts   C.planctl_engine_options
	name   string
	grace  time.Duration
	logger func(LogRecord)
	level  LogLevel
}

// EngineOption changes how NewEngine makes an engine.
type EngineOption func(*engineConfig)

// WithConcurrency sets how many steps run at once (default 64).
func WithConcurrency(n int) EngineOption {
	return func(c *engineConfig) { c.opts.concurrency = C.int(n) }
}

// WithChangePoll sets how often the engine looks for commits of other
// handles and processes (default 100 ms).
func WithChangePoll(d time.Duration) EngineOption {
	return func(c *engineConfig) { c.opts.change_poll_ms = C.int64_t(d / time.Millisecond) }
}

// WithTaskPoll sets after how long a task that returned NotDone is
// started again (default 1 s).
func WithTaskPoll(d time.Duration) EngineOption {
	return func(c *engineConfig) { c.opts.task_poll_ms = C.int64_t(d / time.Millisecond) }
}

// WithLeaseTTL sets after how long without a heartbeat an engine's lease
// counts as stale (default 15 s).
func WithLeaseTTL(d time.Duration) EngineOption {
	return func(c *engineConfig) { c.opts.lease_ttl_ms = C.int64_t(d / time.Millisecond) }
}

// WithUntilIdle makes the engine stop by itself (and Run return) when
// nothing is left to do.
func WithUntilIdle() EngineOption { return func(c *engineConfig) { c.opts.until_idle = 1 } }

// WithOutputSize sets how many bytes of output each attempt keeps (default
// 64 KiB, at most 1 MiB).
func WithOutputSize(n int64) EngineOption {
	return func(c *engineConfig) { c.opts.output_size = C.int64_t(n) }
}

// WithName names the engine among the engines sharing a PostgreSQL
// database (default host:pid).
func WithName(name string) EngineOption { return func(c *engineConfig) { c.name = name } }

// WithCapacity sets how many active runs the engine holds at most on a
// shared PostgreSQL database (0: no limit).
func WithCapacity(n int64) EngineOption {
	return func(c *engineConfig) { c.opts.capacity = C.int64_t(n) }
}

// WithNoShell leaves the built-in shell kind out: the engine then never
// starts a process, so it never touches SIGCHLD (see "Signals" in the
// package documentation).
func WithNoShell() EngineOption { return func(c *engineConfig) { c.opts.no_shell = 1 } }

// WithStopGrace sets how long running steps get to finish once Run's
// context ends, before their executors are cancelled (default 10 s).
func WithStopGrace(d time.Duration) EngineOption { return func(c *engineConfig) { c.grace = d } }

// WithLogger has the engine tell fn about its events at level min and
// above.  fn runs on the engine's loop thread: keep it short, and do not
// call the Engine from it.
func WithLogger(min LogLevel, fn func(LogRecord)) EngineOption {
	return func(c *engineConfig) { c.level, c.logger = min, fn }
}

// NewEngine makes an engine on the database at uri, with a handle of its
// own.  Register executors, then Run it.
func NewEngine(ctx context.Context, uri string, opts ...EngineOption) (*Engine, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cfg := engineConfig{grace: 10 * time.Second}
	cfg.opts.version = C.PLANCTL_ENGINE_OPTIONS_VERSION
	for _, o := range opts {
		o(&cfg)
	}
	oo := C.planctl_open_options{version: C.PLANCTL_OPEN_OPTIONS_VERSION, busy_timeout_ms: 5000}
	p, err := openHandle(uri, &oo)
	if err != nil {
		return nil, err
	}
	name := cstrOrNil(cfg.name)
	defer free(name)
	cfg.opts.name = name
	var e *C.planctl_engine
	if rc := C.planctl_engine_new(&e, p, nil, &cfg.opts); rc != 0 {
		err := newError(rc, C.GoString(C.planctl_errmsg(p)))
		C.planctl_close(p)
		return nil, err
	}
	eng := &Engine{e: e, p: p, grace: cfg.grace}
	if cfg.logger != nil {
		h := cgo.NewHandle(cfg.logger)
		eng.handles = append(eng.handles, h)
		if rc := C.gop_set_logger(e, C.int(cfg.level), C.uintptr_t(h)); rc != 0 {
			err := newError(rc, C.GoString(C.planctl_errmsg(p)))
			eng.Close()
			return nil, err
		}
	}
	return eng, nil
}

// Executor performs the tasks of one kind.  It is called in a goroutine of
// its own for each task; ctx is cancelled when the engine cancels the task
// (its run was cancelled, its step timed out, the engine is stopping) and
// carries the step's deadline.  What it returns is the task's outcome:
//
//	nil                    DONE: the step goes on
//	NotDone (or wrapping)  NOT_DONE: started again after the task poll
//	Fatal(err)             FATAL: the step ends FATAL_ERROR
//	any other error        ERROR: the step is retried by its policy
//
// The error's text becomes the step's message, or Result.Message when set.
// Tasks run at least once (a crash runs them again): make them idempotent.
// A panic is recovered and reported as FATAL with its value.
type Executor func(ctx context.Context, t *Task) (Result, error)

// Result is what an Executor reports besides its outcome.
type Result struct {
	// Message becomes the step's message ("" keeps the error's text,
	// or none).
	Message string
}

// Task is one execution of one task of a step, given to an Executor.
type Task struct {
	Instance, Plan, Phase, Step string
	Name                        string          // the task's name
	Kind                        string          // its kind
	Spec                        json.RawMessage // the task's spec, a JSON object
	Params                      json.RawMessage // the run's parameter values, a JSON object
	// Outputs of the steps of the run that completed with outputs, and
	// of the earlier tasks of this attempt ({"STEP": {"KEY": "value"}}),
	// or nil.
	Outputs  json.RawMessage
	Run      int64
	Attempt  int       // 1-based try of the step
	Deadline time.Time // the step's timeout, or zero; also ctx's deadline
	RunUID   string    // the run's random uid

	js *jobState
}

// jobState is a job's, from start() to release(): a runtime/cgo.Handle to
// it is the job's data (planctl_job_set_data), deleted by release().
type jobState struct {
	mu       sync.Mutex // orders the job calls of the goroutine and its helpers
	job      *C.planctl_job
	cancel   context.CancelFunc
	reported bool
}

type executor struct {
	eng *Engine
	fn  Executor
}

// Register makes fn the executor of kind (replacing one registered
// before, or the built-in Dummy or shell).  Call it before Run.  The kind
// becomes known to the engine's own handle only: call DB.RegisterKind on
// the DB you apply definitions with.
func (e *Engine) Register(kind string, fn Executor) error {
	if fn == nil {
		return errorf(ErrInvalid, "missing argument: the executor of kind %q is nil", kind)
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.e == nil {
		return errorf(ErrInvalid, "the engine is closed")
	}
	if atomic.LoadInt32(&e.ran) != 0 {
		return errorf(ErrInvalid, "kind %q: the engine has run; register executors before Run", kind)
	}
	h := cgo.NewHandle(&executor{eng: e, fn: fn})
	k := cstr(kind)
	defer free(k)
	if rc := C.gop_register(e.e, k, C.uintptr_t(h)); rc != 0 {
		h.Delete()
		return newError(rc, C.GoString(C.planctl_errmsg(e.p)))
	}
	e.handles = append(e.handles, h)
	return nil
}

// Run runs the engine on the calling goroutine, locked to its OS thread,
// until ctx ends (then running steps get the stop grace to finish before
// they are cancelled) or the engine stops by itself (WithUntilIdle, or a
// lost lease); it returns once the engine has stopped and committed
// everything.  It returns nil for a requested stop or an idle engine, the
// error that stopped it otherwise (ErrConflict when another engine holds
// the lease, ErrStale when another took it over).  An Engine runs once.
func (e *Engine) Run(ctx context.Context) error {
	if !atomic.CompareAndSwapInt32(&e.ran, 0, 1) {
		return errorf(ErrInvalid, "the engine has run already; make a new one")
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.e == nil {
		return errorf(ErrInvalid, "the engine is closed")
	}
	done, watched := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(watched)
		select {
		case <-ctx.Done():
			C.planctl_engine_request_stop(e.e, C.int64_t(e.grace/time.Millisecond))
		case <-done:
		}
	}()
	runtime.LockOSThread()
	rc := C.planctl_engine_run(e.e)
	var err error
	if rc < 0 {
		err = newError(rc, C.GoString(C.planctl_errmsg(e.p)))
	}
	runtime.UnlockOSThread()
	close(done)
	<-watched
	e.wg.Wait()
	return err
}

// Healthy reports whether the engine runs and holds its lease (for a
// health check).  Any goroutine.
func (e *Engine) Healthy() bool {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.e != nil && C.planctl_engine_healthy(e.e) == 1
}

// Metrics returns the engine's metrics as Prometheus text, asking the
// loop thread and waiting up to wait for it; after that (or with wait 0)
// it gives the last text the engine published.  Any goroutine.
func (e *Engine) Metrics(wait time.Duration) ([]byte, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.e == nil {
		return nil, errorf(ErrInvalid, "the engine is closed")
	}
	var out *C.char
	rc := C.planctl_engine_metrics_snapshot(&out, e.e, C.int64_t(wait/time.Millisecond))
	b := takeString(out)
	if rc != 0 {
		// The message is on the engine's handle, the loop thread's.
		return nil, newError(rc, "")
	}
	return b, nil
}

// MetricsHandler serves Metrics (waiting up to 1 s for fresh figures) as
// Prometheus text, for a /metrics endpoint.
func (e *Engine) MetricsHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := e.Metrics(time.Second)
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		w.Write(b)
	})
}

// HealthHandler answers 200 "ok" while the engine is Healthy, else 503,
// for a /healthz endpoint.
func (e *Engine) HealthHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if !e.Healthy() {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintln(w, "not healthy")
			return
		}
		fmt.Fprintln(w, "ok")
	})
}

// ProcessInit tunes a process that runs an engine (planctl_process_init):
// it raises the soft limit on open descriptors to the hard limit and turns
// SQLite's memory statistics off, about 7% of an engine's CPU per step.
// Call it first in main, before anything uses SQLite, if nothing in the
// program reads SQLite's memory figures; the package never does it on its
// own.  ErrBusy: SQLite was initialised already (harmless).
func ProcessInit() error {
	runtime.LockOSThread() // the message is the thread's
	defer runtime.UnlockOSThread()
	if rc := C.planctl_process_init(); rc != 0 {
		return newError(rc, C.GoString(C.planctl_thread_errmsg()))
	}
	return nil
}

// Close frees the engine and closes its handle.  While Run runs, it asks
// the engine to stop at once (running executors are cancelled) and waits
// for Run to return.  Closing twice is harmless.
func (e *Engine) Close() error {
	e.mu.RLock()
	if e.e != nil {
		C.planctl_engine_request_stop(e.e, 0)
	}
	e.mu.RUnlock()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.e == nil {
		return nil
	}
	C.planctl_engine_free(e.e)
	C.planctl_close(e.p)
	e.e, e.p = nil, nil
	for _, h := range e.handles {
		h.Delete()
	}
	e.handles = nil
	return nil
}

// start is the executor's start(), on the loop thread: it copies the task
// and starts its goroutine.
func (x *executor) start(job *C.planctl_job, info *C.planctl_task_info) C.int {
	t := &Task{
		Instance: C.GoString(info.instance),
		Plan:     C.GoString(info.plan),
		Phase:    C.GoString(info.phase),
		Step:     C.GoString(info.step),
		Name:     C.GoString(info.task),
		Kind:     C.GoString(info.kind),
		Spec:     rawOrNil(info.spec),
		Params:   rawOrNil(info.params),
		Outputs:  rawOrNil(info.outputs),
		Run:      int64(info.run),
		Attempt:  int(info.attempt),
		RunUID:   C.GoString(info.run_uid),
	}
	ctx, cancel := context.WithCancel(context.Background())
	if info.deadline_ms > 0 {
		t.Deadline = time.UnixMilli(int64(info.deadline_ms))
		ctx, cancel = context.WithDeadline(context.Background(), t.Deadline)
	}
	js := &jobState{job: job, cancel: cancel}
	t.js = js
	C.gop_job_set_handle(job, C.uintptr_t(cgo.NewHandle(js)))
	e := x.eng
	e.wg.Add(1)
	go e.runJob(ctx, x.fn, t)
	return 0
}

func rawOrNil(s *C.char) json.RawMessage {
	if s == nil {
		return nil
	}
	return json.RawMessage(C.GoString(s))
}

// cancelJob is the executor's cancel(), on the loop thread: it cancels
// the job's context (nothing more, so a cancel after the report does no
// harm).
func (x *executor) cancelJob(job *C.planctl_job) {
	if h := C.gop_job_handle(job); h != 0 {
		cgo.Handle(h).Value().(*jobState).cancel()
	}
}

// releaseJob is the executor's release(), on the loop thread, once no call
// on the job can follow: it deletes the job's handle.
func releaseJob(job *C.planctl_job) {
	if h := C.gop_job_handle(job); h != 0 {
		C.gop_job_set_handle(job, 0)
		cgo.Handle(h).Delete()
	}
}

func (e *Engine) runJob(ctx context.Context, fn Executor, t *Task) {
	defer e.wg.Done()
	res, err := callExecutor(ctx, fn, t)
	outcome := C.PLANCTL_OUTCOME_DONE
	msg := res.Message
	switch {
	case err == nil:
	case IsFatal(err):
		outcome = C.PLANCTL_OUTCOME_FATAL
	case isNotDone(err):
		outcome = C.PLANCTL_OUTCOME_NOT_DONE
	default:
		outcome = C.PLANCTL_OUTCOME_ERROR
	}
	if msg == "" && err != nil && err != NotDone {
		msg = err.Error()
	}
	js := t.js
	js.mu.Lock()
	js.reported = true
	cm := cstrOrNil(msg)
	var ebuf [256]C.char
	C.gop_step_finish(js.job, C.int(outcome), cm, &ebuf[0], C.size_t(len(ebuf)))
	free(cm)
	js.job = nil
	js.mu.Unlock()
	js.cancel()
}

func callExecutor(ctx context.Context, fn Executor, t *Task) (res Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			res, err = Result{}, Fatal(fmt.Errorf("executor of kind %q panicked: %v", t.Kind, r))
		}
	}()
	return fn(ctx, t)
}

func isNotDone(err error) bool {
	for ; err != nil; err = unwrap(err) {
		if err == NotDone {
			return true
		}
	}
	return false
}

func unwrap(err error) error {
	u, ok := err.(interface{ Unwrap() error })
	if !ok {
		return nil
	}
	return u.Unwrap()
}

// AddOutput adds an output of the task, a value handed to the later tasks
// of its run (Task.Outputs, and PLANCTL_OUTPUT_<STEP>_<KEY> for shell
// tasks).  key: letters, digits and _, not starting with a digit.  Call it
// before the Executor returns.  A refused output also fails the attempt
// (ERROR), whatever the executor returns.
func (t *Task) AddOutput(key, value string) error { return t.addOutput(key, value, 0) }

// AddSecretOutput adds an output that planctl never prints ("***").
func (t *Task) AddSecretOutput(key, value string) error {
	return t.addOutput(key, value, C.PLANCTL_OUTPUT_SECRET)
}

func (t *Task) addOutput(key, value string, flags C.uint) error {
	k, v := cstr(key), cstr(value)
	defer free(k)
	defer free(v)
	return t.jobCall(func(job *C.planctl_job, ebuf *C.char, n C.size_t) C.int {
		return C.gop_add_output(job, k, v, flags, ebuf, n)
	})
}

// SetOutput records an exit code and the task's output (its last bytes,
// the engine's output size) with the attempt, as `planctl logs` shows
// them.  Call it before the Executor returns.
func (t *Task) SetOutput(exitCode int, output string) error {
	o := cstr(output)
	defer free(o)
	return t.jobCall(func(job *C.planctl_job, ebuf *C.char, n C.size_t) C.int {
		return C.gop_set_output(job, C.int(exitCode), o, ebuf, n)
	})
}

func (t *Task) jobCall(f func(job *C.planctl_job, ebuf *C.char, n C.size_t) C.int) error {
	js := t.js
	js.mu.Lock()
	defer js.mu.Unlock()
	if js.reported {
		return errorf(ErrInvalid, "task %s of step %s: the executor has returned; add outputs before it returns", t.Name, t.Step)
	}
	var ebuf [256]C.char
	if rc := f(js.job, &ebuf[0], C.size_t(len(ebuf))); rc < 0 {
		return newError(rc, C.GoString(&ebuf[0]))
	}
	return nil
}

// LogLevel is the level of an engine's log record.
type LogLevel int

// The levels of planctl_log_level.
const (
	LogDebug LogLevel = C.PLANCTL_LOG_DEBUG
	LogInfo  LogLevel = C.PLANCTL_LOG_INFO
	LogWarn  LogLevel = C.PLANCTL_LOG_WARN
	LogError LogLevel = C.PLANCTL_LOG_ERROR
)

// String returns "debug", "info", "warn" or "error".
func (l LogLevel) String() string {
	return C.GoString(C.planctl_log_level_name(C.planctl_log_level(l)))
}

// LogRecord is one event of the engine: what happened, and its context
// (empty or zero when absent).
type LogRecord struct {
	Level    LogLevel
	Time     time.Time
	Msg      string // "run started", "step failed", ...
	Instance string
	Run      int64
	Plan     string
	Phase    string
	Step     string
	Attempt  int
	Status   string // the status it went to
	Detail   string // the step's or run's message, an error
	Actor    string // a change another writer made: its actor
}

func logRecord(r *C.planctl_log_record) LogRecord {
	return LogRecord{
		Level:    LogLevel(r.level),
		Time:     time.UnixMilli(int64(r.ts_ms)),
		Msg:      C.GoString(r.msg),
		Instance: C.GoString(r.instance),
		Run:      int64(r.run),
		Plan:     C.GoString(r.plan),
		Phase:    C.GoString(r.phase),
		Step:     C.GoString(r.step),
		Attempt:  int(r.attempt),
		Status:   C.GoString(r.status),
		Detail:   C.GoString(r.detail),
		Actor:    C.GoString(r.actor),
	}
}
