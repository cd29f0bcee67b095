// Command gobench measures what the Go package costs an engine (issue 35
// item 6):
//
//	gobench steps [-rounds 5] [-instances 20] [-steps 50]
//	    steps/s of an engine whose executor of kind Work is written in Go
//	    (the planctl package: a goroutine per task, the report from it)
//	    against the same executor written in C (it reports from inside
//	    start()), in alternated rounds of one process, each on a fresh
//	    SQLite database; prints both medians and their ratio.
//
//	gobench fork [-heap-mb 2048] [-tasks 20]
//	    the time an engine takes per shell task (`true`), one after the
//	    other, with no extra Go heap and then with heap-mb MiB of live,
//	    touched Go heap: libuv forks on the engine's loop thread, and the
//	    fork copies the page tables of the whole process.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
	"time"

	"planctl.dev/planctl"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: gobench steps|fork [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "steps":
		err = steps(os.Args[2:])
	case "fork":
		err = fork(os.Args[2:])
	default:
		err = fmt.Errorf("unknown benchmark %q: steps or fork", os.Args[1])
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "gobench: %v\n", err)
		os.Exit(1)
	}
}

// definition: one plan of one parallel phase of n steps of kind kind.
func definition(kind, command string, n int, parallel bool) string {
	var b strings.Builder
	strategy := "serial"
	if parallel {
		strategy = "parallel"
	}
	fmt.Fprintf(&b, `{"name":"b","version":"1","tasks":[{"name":"t","kind":%q,"spec":{%s}}],`, kind, command)
	fmt.Fprintf(&b, `"plans":{"deploy":{"phases":[{"name":"p","strategy":%q,"steps":[`, strategy)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"name":"s%d","tasks":["t"]}`, i)
	}
	b.WriteString("]}]}}}")
	return b.String()
}

// prepare makes a database with instances instances of the definition,
// each with its deploy run admitted.
func prepare(path, def, kind string, instances int) error {
	ctx := context.Background()
	db, err := planctl.Open(ctx, path)
	if err != nil {
		return err
	}
	defer db.Close()
	if kind != "shell" {
		if err := db.RegisterKind(ctx, kind); err != nil {
			return err
		}
	}
	if _, err := db.ApplyDefinition(ctx, []byte(def), "b.json"); err != nil {
		return err
	}
	for i := 0; i < instances; i++ {
		if _, err := db.Create(ctx, fmt.Sprintf("i%d", i), "b", nil); err != nil {
			return err
		}
	}
	return nil
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func steps(args []string) error {
	fs := flag.NewFlagSet("steps", flag.ExitOnError)
	rounds := fs.Int("rounds", 5, "rounds of each")
	instances := fs.Int("instances", 20, "instances per round")
	nsteps := fs.Int("steps", 50, "parallel steps per instance")
	concurrency := fs.Int("concurrency", 64, "the engine's concurrency")
	fs.Parse(args)
	dir, err := os.MkdirTemp("", "gobench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	def := definition("Work", "", *nsteps, true)
	total := float64(*instances * *nsteps)
	var cRates, ctRates, goRates []float64
	ctx := context.Background()
	for r := 0; r < 3**rounds; r++ {
		path := filepath.Join(dir, fmt.Sprintf("r%d.db", r))
		if err := prepare(path, def, "Work", *instances); err != nil {
			return err
		}
		kind := r % 3 // 0: C reporting in start(), 1: Go, 2: C reporting from a thread
		useGo := kind == 1
		var d time.Duration
		if useGo {
			e, err := planctl.NewEngine(ctx, path, planctl.WithUntilIdle(), planctl.WithNoShell(),
				planctl.WithConcurrency(*concurrency))
			if err != nil {
				return err
			}
			if err := e.Register("Work", func(ctx context.Context, t *planctl.Task) (planctl.Result, error) {
				return planctl.Result{}, nil
			}); err != nil {
				return err
			}
			start := time.Now()
			err = e.Run(ctx)
			d = time.Since(start)
			e.Close()
			if err != nil {
				return err
			}
			goRates = append(goRates, total/d.Seconds())
		} else {
			runtime.LockOSThread()
			var rc int
			rc, d = cRound(path, *concurrency, kind == 2)
			runtime.UnlockOSThread()
			if rc != 0 {
				return fmt.Errorf("C round: %s", planctl.Code(rc).Name())
			}
			if kind == 2 {
				ctRates = append(ctRates, total/d.Seconds())
			} else {
				cRates = append(cRates, total/d.Seconds())
			}
		}
		if err := check(path, *instances); err != nil {
			return err
		}
		which := []string{"C, report in start()", "Go, report from its goroutine", "C, report from a thread"}[kind]
		fmt.Printf("round %2d %-31s %6.0f steps/s (%d steps in %v)\n", r+1, which, total/d.Seconds(), int(total), d.Round(time.Millisecond))
		os.Remove(path)
	}
	c, ct, g := median(cRates), median(ctRates), median(goRates)
	fmt.Printf("name=go_executor_steps value=%.0f baseline=%.0f ratio=%.2f unit=steps/s target=0.8 ok=%s (baseline: the C executor reporting from a thread)\n",
		g, ct, g/ct, yes(g/ct >= 0.8))
	fmt.Printf("name=go_executor_steps_vs_instart value=%.0f baseline=%.0f ratio=%.2f unit=steps/s target=0.8 ok=%s (baseline: the C executor reporting inside start())\n",
		g, c, g/c, yes(g/c >= 0.8))
	return nil
}

func yes(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// check: every instance's deploy completed.
func check(path string, instances int) error {
	ctx := context.Background()
	db, err := planctl.Open(ctx, path)
	if err != nil {
		return err
	}
	defer db.Close()
	list, err := db.Instances(ctx)
	if err != nil {
		return err
	}
	done := 0
	for _, in := range list.Instances {
		if in.Status == planctl.StatusComplete {
			done++
		}
	}
	if done != instances {
		return fmt.Errorf("%d of %d deploys completed", done, instances)
	}
	return nil
}

var heap [][]byte

func fork(args []string) error {
	fs := flag.NewFlagSet("fork", flag.ExitOnError)
	heapMB := fs.Int("heap-mb", 2048, "MiB of live Go heap for the second measure")
	tasks := fs.Int("tasks", 20, "shell tasks, one after the other")
	fs.Parse(args)
	dir, err := os.MkdirTemp("", "gobench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	def := definition("shell", `"command":"true"`, *tasks, false)
	debug.SetGCPercent(-1) // the heap stays as it is while measured
	var per [2]time.Duration
	for i, mb := range []int{0, *heapMB} {
		for len(heap) < mb {
			b := make([]byte, 1<<20)
			for j := 0; j < len(b); j += 4096 {
				b[j] = 1 // touched: really mapped
			}
			heap = append(heap, b)
		}
		path := filepath.Join(dir, fmt.Sprintf("f%d.db", i))
		if err := prepare(path, def, "shell", 1); err != nil {
			return err
		}
		e, err := planctl.NewEngine(context.Background(), path, planctl.WithUntilIdle())
		if err != nil {
			return err
		}
		start := time.Now()
		err = e.Run(context.Background())
		d := time.Since(start)
		e.Close()
		if err != nil {
			return err
		}
		if err := check(path, 1); err != nil {
			return err
		}
		per[i] = d / time.Duration(*tasks)
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		fmt.Printf("live Go heap %5d MiB (HeapAlloc %5d MiB): %d shell tasks in %v, %v per task; a bare fork+exec+wait from C: %v\n",
			mb, ms.HeapAlloc>>20, *tasks, d.Round(time.Millisecond), per[i].Round(100*time.Microsecond),
			rawFork(5).Round(100*time.Microsecond))
	}
	extra := per[1] - per[0]
	fmt.Printf("name=go_heap_fork value=%.1f baseline=%.1f unit=ms/shell-task extra_per_GiB=%.1fms target=none\n",
		float64(per[1])/1e6, float64(per[0])/1e6, float64(extra)/1e6/(float64(*heapMB)/1024))
	return nil
}
