package planctl_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"planctl.dev/planctl"
)

// testURI returns a fresh database for the test: a SQLite file in its
// temporary directory or, when PLANCTL_GO_PG names a PostgreSQL database
// (tests/go/run_package.sh does on the suite's cluster), a schema of its
// own there.
func testURI(t testing.TB) string {
	if base := os.Getenv("PLANCTL_GO_PG"); base != "" {
		name := strings.ToLower(strings.NewReplacer("/", "_", "-", "_").Replace(t.Name()))
		return fmt.Sprintf("%s&schema=go_%s_%d_%d", base, name, os.Getpid(), time.Now().UnixNano()%1000000)
	}
	return filepath.Join(t.TempDir(), "t.db")
}

func open(t testing.TB, uri string, opts ...planctl.OpenOption) *planctl.DB {
	t.Helper()
	db, err := planctl.Open(context.Background(), uri, opts...)
	if err != nil {
		t.Fatalf("open %s: %v", uri, err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// waitRun waits until the instance's plan has a run that ended.
func waitRun(t testing.TB, db *planctl.DB, instance, plan string) *planctl.Run {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	for {
		st, err := db.Status(ctx, instance)
		if err != nil {
			t.Fatalf("status %s: %v", instance, err)
		}
		if p := st.Plan(plan); p != nil && p.Run != nil && p.Run.Status.Terminal() {
			return p.Run
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: plan %s did not end: %s", instance, plan, st.Raw)
		case <-time.After(20 * time.Millisecond):
		}
	}
}
