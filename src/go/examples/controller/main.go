// Command controller is the example controller of the planctl Go package:
// it keeps one small static web site per spec file in a directory, each
// site an instance of the definition site.json, whose plans write,
// rewrite and remove its files through the controller's own task kind,
// File (file_kind.go), and check them with a shell step.
//
// Each reconcile pass reads the directory of site specs (NAME.json:
// {"title": "...", "owner": "..."}) and makes the instances match: a new
// spec creates its site (deploy), a changed one sets its parameters
// (update), a removed one deletes its site (cleanup).  Then it waits for
// the runs it admitted and says how they ended.  The engine runs all the
// while, on a loop of its own, in a goroutine.
//
// Usage:
//
//	controller -sites DIR -out DIR [-db FILE|URI] [-once] [-every 2s]
//
// -once runs one pass and exits (0 when every run completed); without it
// a pass runs every -every until SIGTERM or SIGINT.
package main

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"planctl.dev/planctl"
)

//go:embed site.json
var siteDefinition []byte

// siteSpec is one file of the sites directory.
type siteSpec struct {
	Title string `json:"title"`
	Owner string `json:"owner"`
}

func main() {
	sites := flag.String("sites", "sites", "the directory of site specs (NAME.json)")
	out := flag.String("out", "www", "where the sites' files go (one directory per site)")
	dbURI := flag.String("db", "controller.db", "the database: a file, or a postgres:// URI")
	once := flag.Bool("once", false, "run one reconcile pass and exit")
	every := flag.Duration("every", 2*time.Second, "time between passes")
	flag.Parse()
	if err := run(*sites, *out, *dbURI, *once, *every); err != nil {
		fmt.Fprintf(os.Stderr, "controller: %v\n", err)
		os.Exit(1)
	}
}

func say(format string, args ...interface{}) {
	fmt.Printf("controller: "+format+"\n", args...)
}

func run(sites, out, uri string, once bool, every time.Duration) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	outAbs, err := filepath.Abs(out)
	if err != nil {
		return err
	}

	// Our own handle, for admissions and status; the engine has its own.
	db, err := planctl.Open(ctx, uri, planctl.WithActor("controller"))
	if err != nil {
		return err
	}
	defer db.Close()
	if err := db.RegisterKind(ctx, "File"); err != nil {
		return err
	}
	created, err := db.ApplyDefinition(ctx, siteDefinition, "site.json")
	if err != nil {
		return err
	}
	if created {
		say("definition site@1.0.0 registered")
	}

	engine, err := planctl.NewEngine(ctx, uri, planctl.WithStopGrace(10*time.Second))
	if err != nil {
		return err
	}
	defer engine.Close()
	if err := engine.Register("File", fileTask); err != nil {
		return err
	}
	engineCtx, stopEngine := context.WithCancel(context.Background())
	engineDone := make(chan error, 1)
	go func() { engineDone <- engine.Run(engineCtx) }()

	failed := false
	for {
		ok, err := reconcile(ctx, db, sites, outAbs)
		if err != nil {
			if ctx.Err() == nil {
				say("pass failed: %v", err)
			}
			failed = true
		} else if !ok {
			failed = true
		}
		if once || ctx.Err() != nil {
			break
		}
		select {
		case <-ctx.Done():
		case <-time.After(every):
		}
		if ctx.Err() != nil {
			break
		}
	}
	stopEngine()
	if err := <-engineDone; err != nil {
		return fmt.Errorf("engine: %w", err)
	}
	say("engine stopped")
	if failed && once {
		return errors.New("a run did not complete")
	}
	return nil
}

// reconcile runs one pass: it admits what the specs ask for, then waits for
// those runs.  ok is false when one of them did not complete.
func reconcile(ctx context.Context, db *planctl.DB, sites, out string) (ok bool, err error) {
	specs, err := readSpecs(sites)
	if err != nil {
		return false, err
	}
	list, err := db.Instances(ctx)
	if err != nil {
		return false, err
	}
	have := map[string]planctl.InstanceInfo{}
	for _, in := range list.Instances {
		have[in.Name] = in
	}
	type admitted struct{ name, plan string }
	var runs []admitted
	names := make([]string, 0, len(specs))
	for n := range specs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		spec := specs[name]
		params := planctl.Params{"TITLE": spec.Title, "OWNER": spec.Owner}
		in, exists := have[name]
		switch {
		case !exists:
			params["DIR"] = filepath.Join(out, name)
			a, err := db.Create(ctx, name, "site", params)
			if err != nil {
				return false, err
			}
			say("%s: created, %s is run %d", name, a.Plan, a.Run)
			runs = append(runs, admitted{name, a.Plan})
		case in.ActiveRun != nil || in.Deleting:
			// A run is going on: the next pass looks again.
		default:
			a, err := db.Set(ctx, name, params)
			if err != nil {
				return false, err
			}
			if a.Run != 0 {
				say("%s: changed, %s is run %d", name, a.Plan, a.Run)
				runs = append(runs, admitted{name, a.Plan})
			}
		}
	}
	for _, in := range list.Instances {
		if _, wanted := specs[in.Name]; wanted || in.Deleting || in.ActiveRun != nil {
			continue
		}
		run, err := db.Delete(ctx, in.Name)
		if err != nil {
			return false, err
		}
		say("%s: spec removed, cleanup is run %d", in.Name, run)
		runs = append(runs, admitted{in.Name, "cleanup"})
	}
	ok = true
	for _, r := range runs {
		status, msg, err := waitRun(ctx, db, r.name, r.plan)
		if err != nil {
			return false, err
		}
		if status != planctl.StatusComplete {
			ok = false
		}
		say("%s: %s %s%s", r.name, r.plan, status, msg)
	}
	if len(runs) == 0 {
		say("nothing to do")
	}
	return ok, nil
}

// waitRun waits until the instance's latest run of plan has ended; a
// cleanup that completed removes the instance, which is how it ends.
func waitRun(ctx context.Context, db *planctl.DB, name, plan string) (planctl.Status, string, error) {
	for {
		h, err := db.History(ctx, name, planctl.WithHistoryPlan(plan), planctl.WithHistoryLimit(1))
		if errors.Is(err, planctl.ErrNotFound) && plan == "cleanup" {
			return planctl.StatusComplete, ": the site is gone", nil
		}
		if err != nil {
			return "", "", err
		}
		if len(h.Runs) > 0 && h.Runs[0].Status.Terminal() {
			msg := ""
			if h.Runs[0].Message != nil && h.Runs[0].Status != planctl.StatusComplete {
				msg = ": " + *h.Runs[0].Message
			}
			return h.Runs[0].Status, msg, nil
		}
		select {
		case <-ctx.Done():
			return "", "", ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func readSpecs(dir string) (map[string]siteSpec, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	specs := map[string]siteSpec{}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		var s siteSpec
		if err := json.Unmarshal(b, &s); err != nil {
			return nil, fmt.Errorf("%s: %v", e.Name(), err)
		}
		if s.Title == "" {
			s.Title = "Hello"
		}
		if s.Owner == "" {
			s.Owner = "nobody"
		}
		specs[strings.TrimSuffix(e.Name(), ".json")] = s
	}
	return specs, nil
}
