// Command sigchld is the Go regression of planctl.h's "Signals": an engine
// runs shell steps on a loop thread of its own while goroutines start
// processes with os/exec, as a Go controller that shells out to kubectl
// or helm does.  libuv's SIGCHLD handler without SA_ONSTACK let the
// kernel push signal frames onto goroutine stacks, and Go crashed
// (corrupted stacks, "unexpected return pc", "fatal error: fault").
//
// It checks, and exits 1 naming what is wrong, that the run completes and
// that SIGCHLD stays Go's own handler (its address and flags) all along:
// the goroutines start before the engine, through its first spawns, and
// any reading of another handler fails the run (planctl spawns without
// libuv's SIGCHLD handler, so there is no instant without SA_ONSTACK
// left).  A crash of the Go runtime exits 2.
//
// Usage: sigchld [-phases N] [-steps N] [-workers N]
package main

/*
#cgo pkg-config: libuv
#cgo LDFLAGS: -lplanctl
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>
#include "planctl.h"

// SIGCHLD's handler as an address, and its flags.
static void sigchld_now(uintptr_t *handler, int *flags)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sigaction(SIGCHLD, NULL, &sa);
	*handler = (uintptr_t)sa.sa_handler;
	*flags = sa.sa_flags;
}

static int onstack_flag(void) { return SA_ONSTACK; }

static void on_stopped(planctl_engine *e, void *data)
{
	(void)e;
	*(int *)data = 1;
}

// Runs an engine on a loop of its own until nothing is left to do, on
// the calling thread.  0, or the step that failed as a negative number
// (-100 - code for the engine's own status).
static int run_engine(planctl *p)
{
	planctl_engine_options o = PLANCTL_ENGINE_OPTIONS_INIT;
	planctl_engine *e;
	uv_loop_t loop;
	int stopped = 0, rc;

	o.until_idle = 1;
	o.change_poll_ms = 20;
	if (uv_loop_init(&loop) != 0)
		return -1;
	if (planctl_engine_new(&e, p, &loop, &o) != 0)
		return -2;
	if (planctl_engine_start(e, on_stopped, &stopped) != 0)
		return -3;
	uv_run(&loop, UV_RUN_DEFAULT);
	rc = stopped ? planctl_engine_status(e) : -4;
	planctl_engine_free(e);
	if (uv_loop_close(&loop) != 0)
		return -5;
	return rc < 0 && rc > -100 ? -100 + rc : rc;
}
*/
import "C"

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"
)

func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "sigchld: "+format+"\n", args...)
	os.Exit(1)
}

func sigchld() (uintptr, int) {
	var h C.uintptr_t
	var f C.int
	C.sigchld_now(&h, &f)
	return uintptr(h), int(f)
}

// definition: phases of parallel shell steps, each step one `true`.
func definition(phases, steps int) string {
	var b strings.Builder
	b.WriteString(`{"name":"sig","version":"1","tasks":[` +
		`{"name":"t","kind":"shell","spec":{"command":"true"}}],` +
		`"plans":{"deploy":{"phases":[`)
	for i := 0; i < phases; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"name":"p%d","strategy":"parallel","steps":[`, i)
		for j := 0; j < steps; j++ {
			if j > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `{"name":"s%d","tasks":["t"]}`, j)
		}
		b.WriteString("]}")
	}
	b.WriteString("]}}}")
	return b.String()
}

func errmsg(p *C.planctl) string {
	return C.GoString(C.planctl_errmsg(p))
}

// deep recurses to keep goroutine stacks busy and near their end.
func deep(n int) int {
	var pad [64]byte
	pad[n%64] = byte(n)
	if n == 0 {
		return int(pad[0])
	}
	return deep(n-1) + int(pad[n%64])
}

func main() {
	phases := flag.Int("phases", 4, "phases of the plan")
	steps := flag.Int("steps", 6, "parallel shell steps per phase")
	workers := flag.Int("workers", 6, "goroutines running os/exec")
	flag.Parse()

	dir, err := os.MkdirTemp("", "planctl-sigchld-")
	if err != nil {
		fail("%v", err)
	}
	defer os.RemoveAll(dir)

	goHandler, goFlags := sigchld()
	if goFlags&int(C.onstack_flag()) == 0 {
		fail("Go's own SIGCHLD handler has no SA_ONSTACK (flags %#x)", goFlags)
	}

	path := C.CString(filepath.Join(dir, "sig.db"))
	defer C.free(unsafe.Pointer(path))
	var p *C.planctl
	if rc := C.planctl_open(&p, path, nil); rc != 0 {
		fail("open: %s", errmsg(p))
	}
	defer C.planctl_close(p)
	def := definition(*phases, *steps)
	cdef := C.CString(def)
	defer C.free(unsafe.Pointer(cdef))
	if C.planctl_definition_apply(nil, p, cdef, C.size_t(len(def)), nil) != 0 {
		fail("apply: %s", errmsg(p))
	}
	name, defname := C.CString("i"), C.CString("sig")
	defer C.free(unsafe.Pointer(name))
	defer C.free(unsafe.Pointer(defname))
	var ad C.planctl_admitted
	if C.planctl_admit_create(&ad, p, name, defname, nil, nil, 0, nil) != 0 {
		fail("create: %s", errmsg(p))
	}
	C.planctl_admitted_clear(&ad)

	// Goroutines that start processes, and watch SIGCHLD, from before the
	// engine's first spawn until it is done: shell steps and os/exec side
	// by side, and SIGCHLD Go's own at every reading (planctl.h,
	// "Signals").
	var done int32
	var execs, bad, other int64
	var badFlags int64
	var wg sync.WaitGroup
	for w := 0; w < *workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for atomic.LoadInt32(&done) == 0 {
				if err := exec.Command("true").Run(); err != nil {
					fail("os/exec: %v", err)
				}
				atomic.AddInt64(&execs, 1)
				deep(20 + w)
				if h, f := sigchld(); h != goHandler || f != goFlags {
					atomic.AddInt64(&other, 1)
					if f&int(C.onstack_flag()) == 0 {
						atomic.AddInt64(&bad, 1)
						atomic.StoreInt64(&badFlags, int64(f))
					}
				}
			}
		}(w)
	}

	rc := make(chan int)
	go func() {
		runtime.LockOSThread()
		rc <- int(C.run_engine(p))
	}()
	engineRC := <-rc
	atomic.StoreInt32(&done, 1)
	wg.Wait()

	if atomic.LoadInt64(&execs) == 0 {
		fail("no os/exec command ran while the engine ran shell steps")
	}
	if n := atomic.LoadInt64(&other); n > 0 {
		fail("SIGCHLD was not Go's handler %d times while the engine ran "+
			"(%d of them without SA_ONSTACK, flags %#x)", n,
			atomic.LoadInt64(&bad), atomic.LoadInt64(&badFlags))
	}
	if engineRC != 0 {
		fail("the engine failed (%d): %s", engineRC, errmsg(p))
	}
	var st *C.char
	if C.planctl_status_json(&st, p, name, nil) != 0 {
		fail("status: %s", errmsg(p))
	}
	status := C.GoString(st)
	C.planctl_free(unsafe.Pointer(st))
	if !strings.Contains(status, `"status":"COMPLETE"`) {
		fail("the run did not complete: %s", status)
	}
	if h, f := sigchld(); h != goHandler || f != goFlags {
		fail("after the engine SIGCHLD is %#x flags %#x, not Go's %#x flags %#x",
			h, f, goHandler, goFlags)
	}
	fmt.Printf("ok: %d shell steps, %d os/exec commands; SIGCHLD seen "+
		"without SA_ONSTACK %d times (flags %#x)\n", *phases**steps,
		atomic.LoadInt64(&execs), atomic.LoadInt64(&bad),
		atomic.LoadInt64(&badFlags))
}
