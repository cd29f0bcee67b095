// Package planctl is the Go binding of libplanctl, the plan execution
// engine for controllers: plans -> phases -> steps -> tasks, every status
// change one database transaction and one event, kept in a SQLite file or
// a PostgreSQL schema that several engines share.
//
// It uses the standard library and cgo only, and links the installed
// library through pkg-config (`#cgo pkg-config: planctl`):
//
//	PKG_CONFIG_PATH=$prefix/lib/pkgconfig CGO_LDFLAGS=-Wl,-rpath,$prefix/lib go build
//
// A build without cgo (CGO_ENABLED=0, or a cross build without a C
// compiler for the target) fails, naming the reason in the undefined
// identifier planctl_package_needs_cgo__build_with_CGO_ENABLED_1_and_libplanctl_installed.
// go.mod says go 1.19 (Debian 12's golang-go), and the package uses
// nothing of the standard library newer than that.
//
// # Handles
//
// A DB is one connection.  Open takes a file path or a postgres:// URI
// and functional options (WithReadOnly, WithBusyTimeout, WithActor, ...).
// Every call takes a context.Context first; a DB serialises its callers
// (the library allows one thread at a time per handle), and a call waiting
// for its turn gives up when its context ends.  A context that ends while
// the call runs interrupts it (planctl_interrupt: a wait for the write
// lock, a statement, an admission's preflight checks): the call returns an
// *Error with ErrInterrupted that also matches the context's error
// (errors.Is(err, context.Canceled)), having changed nothing.  An
// admission also maps the context's deadline onto its preflight checks'
// deadline, so that checks that run out of time are reported as such.
//
// # Errors
//
// A refusal of the library is an *Error: its Code and the library's
// one-line message, which names the thing and its state.  Match codes with
// errors.Is:
//
//	_, err := db.Trigger(ctx, "zk", "deploy")
//	if errors.Is(err, planctl.ErrConflict) { ... } // a run is active
//
// # Documents
//
// Status, History, Events, Engines and Instances return the documents of
// planctl-json(7) decoded into structs; each keeps the document as the
// library gave it in Raw.  Times are time.Time, absent values nil.
//
// # Engines and executors
//
// An Engine has a database handle of its own and an event loop of its own
// (the package never sees libuv).  Register a Go function as the executor
// of a task kind, then Run it:
//
//	engine.Register("File", func(ctx context.Context, t *planctl.Task) (planctl.Result, error) {
//		...                                // t.Spec, t.Params, t.Outputs
//		t.AddOutput("CERT", pem)          // for the later tasks of the run
//		return planctl.Result{}, nil       // DONE
//	})
//	err := engine.Run(ctx)                 // until ctx ends, then a graceful stop
//
// Each task runs in a goroutine of its own.  Its context is cancelled when
// the engine cancels the task: its run was cancelled, its step timed out
// (the context carries the deadline), or the engine is stopping and the
// grace (WithStopGrace) is over.  The error returned is the outcome: nil
// DONE, NotDone NOT_DONE (started again after the task poll), Fatal(err)
// FATAL (the step ends FATAL_ERROR), any other ERROR (retried by the
// step's policy).  Tasks run at least once: make them idempotent.
//
// Run locks its goroutine to its OS thread, which is the engine's loop
// thread while it runs; executors' starts and the logger (WithLogger) are
// called there, so the package keeps them short.  Healthy, Metrics and
// the handlers MetricsHandler and HealthHandler may be used from any
// goroutine, while Run runs and after.
//
// A task kind registered with an engine, or with DB.RegisterKind on any
// DB, is known to every handle of the process: a DB applies definitions
// using it once it is registered anywhere in the program.
//
// # Following changes
//
// DB.Follow returns an EventStream: Next waits for the next event of the
// event log after a cursor (a seq), so a controller sees every status
// change, in order, also those of other processes.  DB.DataVersion is the
// cheap way to notice that another connection committed.
//
// # The web page
//
// DB.WebHandler serves planctl's web page and its JSON API (/api/v1), as
// `planctl serve` does, mountable in an http.ServeMux at "/" beside
// /metrics and /healthz.  Read-only unless WithWebActions.  Its pages
// stay live over Server-Sent Events (/stream?path=PAGE), which it answers
// too: one goroutine per handler notices what other handles commit, and
// each open page whose instance changed gets its live part again.
//
// # Signals
//
// planctl installs, blocks and ignores no signal: shell tasks are started
// with posix_spawn and their exit learnt from a pidfd (Linux 5.3 and
// later; before, a thread of planctl's with every signal blocked waits
// for each child by its pid), so SIGCHLD stays Go's, and os/exec and
// signal.Notify work as usual beside them.  Only in a process that
// ignores SIGCHLD does libuv handle it while an engine runs, with
// SA_ONSTACK as Go requires, and what was there before is put back when
// it stops (planctl.h, "Signals").  WithNoShell leaves the shell kind out
// altogether.
//
// # Threads and memory
//
// No Go pointer is kept by C: executors, loggers and each job's state are
// passed as runtime/cgo handles (a job's is deleted by the executor's
// release hook, once the engine is done with the job), and every string
// crosses as a copy.  ProcessInit is planctl_process_init, for main to
// call first in a program that runs an engine.  Starting a
// shell task forks the process on the engine's loop thread, which costs
// time in proportion to the Go heap (tools/bench/RESULTS.md).
//
// # The example controller
//
// examples/controller keeps one small web site per spec file in a
// directory: each reconcile pass creates, changes or deletes the sites'
// instances, whose plans write files through a task kind of its own and
// check them with a shell step.
package planctl
